"""`Client.play` (partida/client/bot_loop.py) against a fake node: it answers each decision
once, skips a decision a newer update overtook, asks again after a rejected answer, waits for
the next update after one the game overtook, and stops at the end of the game or of its own
connection."""

from __future__ import annotations

from typing import Any

import pytest

from partida.client import ConnectionLost, ServerError
from partida.games.prompts import ChooseOne, Prompt
from tests.client.fake_socket import FakeSocket, Message, client_on

ROOM = "ABCD"
MOVE = ChooseOne(name="move", options=[3, 4, 5]).to_data()


def update(seq: int, decision: dict[str, Any] | None = MOVE, status: str = "playing") -> Message:
    return {"type": "update", "room": ROOM, "seat": 0, "seq": seq, "status": status, "decision": decision}


def finished(seq: int) -> Message:
    return {**update(seq, None, "finished"), "result": {"ranks": [0, 1], "reason": "win"}}


class Game:
    """A node's side of one game: each `act` is answered with the next of `replies` (an error
    code, or None for taken), and a taken answer is followed by the next update, the game
    ending after `moves` taken answers."""

    def __init__(self, moves: int, replies: list[str | None] | None = None) -> None:
        self.moves = moves
        self.replies = list(replies or [])
        self.taken = 0

    def __call__(self, message: Message) -> list[Message]:
        if message["type"] != "act":
            return [{"type": "ok", "id": message["id"]}]
        code = self.replies.pop(0) if self.replies else None
        if code is not None:
            out = [{"type": "error", "id": message["id"], "code": code, "message": "refused"}]
            if code in ("stale_decision", "game_over"):  # the game went on without this answer
                out.append(update(message["seq"] + 1))
            return out
        self.taken += 1
        seq = message["seq"] + 1
        return [{"type": "acted", "id": message["id"]}, finished(seq) if self.taken == self.moves else update(seq)]


class Decider:
    """A bot: answers the first option, and notes each decision it was asked (by seq)."""

    def __init__(self) -> None:
        self.asked: list[int] = []

    def __call__(self, state: Message, prompt: Prompt) -> Any:
        assert isinstance(prompt, ChooseOne)
        self.asked.append(state["seq"])
        return prompt.options[0]


def acts(socket: FakeSocket) -> list[tuple[int, Any]]:
    return [(m["seq"], m["action"]) for m in socket.sent if m["type"] == "act"]


async def test_play_answers_each_decision_and_returns_the_final_update() -> None:
    socket = FakeSocket(Game(moves=3))
    client = client_on(socket)
    decide, seen = Decider(), []
    socket.push(update(1))
    final = await client.play(ROOM, decide, on_update=lambda u: seen.append(u["seq"]))
    assert final["status"] == "finished" and final["result"]["reason"] == "win" and final["seq"] == 4
    assert decide.asked == [1, 2, 3] and seen == [1, 2, 3, 4]
    assert acts(socket) == [(1, 3), (2, 3), (3, 3)]
    assert all(m["seat"] == 0 and m["room"] == ROOM for m in socket.sent)
    await client.close()


async def test_a_coroutine_decides_as_well() -> None:
    socket = FakeSocket(Game(moves=1))
    client = client_on(socket)

    async def decide(state: Message, prompt: Prompt) -> Any:
        assert isinstance(prompt, ChooseOne)
        return prompt.options[-1]

    socket.push(update(1))
    await client.play(ROOM, decide)
    assert acts(socket) == [(1, 5)]
    await client.close()


async def test_an_overtaken_decision_is_not_answered() -> None:
    socket = FakeSocket(Game(moves=1))
    client = client_on(socket)
    socket.push(update(1))
    socket.push(update(2))
    socket.push({"type": "seated", "room": "WXYZ", "seat": 0})
    await client.seated.get()  # pushed after both updates: both are queued now
    decide = Decider()
    await client.play(ROOM, decide)
    assert decide.asked == [2] and acts(socket) == [(2, 3)]
    await client.close()


async def test_a_rejected_answer_is_reported_and_the_decision_asked_again() -> None:
    socket = FakeSocket(Game(moves=1, replies=["illegal_action"]))
    client = client_on(socket)
    decide, rejected = Decider(), []
    socket.push(update(1))
    await client.play(ROOM, decide, on_error=rejected.append)
    assert [e.code for e in rejected] == ["illegal_action"]
    assert decide.asked == [1, 1] and acts(socket) == [(1, 3), (1, 3)]
    await client.close()


async def test_a_rejected_answer_without_on_error_raises() -> None:
    socket = FakeSocket(Game(moves=1, replies=["illegal_action"]))
    client = client_on(socket)
    socket.push(update(1))
    with pytest.raises(ServerError) as refused:
        await client.play(ROOM, Decider())
    assert refused.value.code == "illegal_action"
    await client.close()


@pytest.mark.parametrize("code", ["stale_decision", "game_over"])
async def test_an_answer_the_game_overtook_waits_for_the_next_update(code: str) -> None:
    socket = FakeSocket(Game(moves=1, replies=[code]))
    client = client_on(socket)
    decide, rejected = Decider(), []
    socket.push(update(1))
    await client.play(ROOM, decide, on_error=rejected.append)
    assert rejected == []  # not a rejection: nothing to report
    assert decide.asked == [1, 2] and acts(socket) == [(1, 3), (2, 3)]
    await client.close()


async def test_other_news_of_the_room_goes_to_on_message() -> None:
    socket = FakeSocket(Game(moves=1))
    client = client_on(socket)
    news, decide = [], Decider()
    socket.push({"type": "room", "room": ROOM, "summary": {"code": ROOM}})
    socket.push(update(1, decision=None))  # someone else's turn: nothing to answer
    socket.push(update(2))
    await client.play(ROOM, decide, on_message=news.append)
    assert [m["type"] for m in news] == ["room"] and decide.asked == [2]
    await client.close()


async def test_its_own_lost_connection_ends_play() -> None:
    socket = FakeSocket()
    client = client_on(socket)
    socket.push(update(1, decision=None))
    socket.drop()
    with pytest.raises(ConnectionLost):
        await client.play(ROOM, Decider())
    await client.close()
