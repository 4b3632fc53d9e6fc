"""Challenges: a named account (person or bot) is asked for a game, answers accept or decline,
and an accepted challenge is a private room with both seated; bots answer by their games."""

from __future__ import annotations

import asyncio
import random
import sqlite3

import pytest

from partida.client import ServerError
from partida.server.app import Server
from tests.helpers import sqlite_path, wait_for

PASSWORD = "correct horse battery"


async def _user(server: Server, connect, name: str):  # type: ignore[no-untyped-def]
    await server.store.create_user(name, PASSWORD)
    return await connect(name=name, password=PASSWORD)


def _random(seed: int):  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    return lambda update, prompt: prompt.random_answer(rng)


@pytest.mark.slow
async def test_a_person_accepts_a_challenge_and_both_play(server: Server, connect) -> None:
    alice = await _user(server, connect, "Alice")
    bob = await _user(server, connect, "Bob")
    clock = {"initial": 600, "increment": 5}
    sent = await alice.challenge("bob", "tictactoe", clock=clock)
    assert sent["from"] == {"name": "Alice", "kind": "user"} and sent["to"] == "Bob"
    pushed = await asyncio.wait_for(bob.challenges.get(), 5)
    assert pushed["type"] == "challenge" and pushed["challenge"]["id"] == sent["id"]
    assert pushed["challenge"]["game"] == "tictactoe" and pushed["challenge"]["clock"]["initial"] == 600

    accepted = await bob.accept(sent["id"])
    theirs = await asyncio.wait_for(alice.challenges.get(), 5)
    assert theirs["type"] == "challenge_accepted" and theirs["challenge"] == sent["id"]
    assert (theirs["seat"], accepted["seat"]) == (0, 1) and theirs["token"] and accepted["token"]
    room = accepted["summary"]
    assert room["code"] == theirs["room"] and not room["public"]
    assert [s["name"] for s in room["seats"]] == ["Alice", "Bob"]
    assert room["clock"]["initial"] == 600
    code = room["code"]
    finals = await asyncio.wait_for(asyncio.gather(alice.play(code, _random(1)), bob.play(code, _random(2))), 20)
    assert all(final["status"] == "finished" for final in finals)

    with pytest.raises(ServerError) as refused:  # answered once only
        await bob.accept(sent["id"])
    assert refused.value.code == "no_such_challenge"


@pytest.mark.slow
async def test_a_declined_challenge_tells_the_challenger(server: Server, connect) -> None:
    carol = await _user(server, connect, "carol")
    dave = await _user(server, connect, "dave")
    eve = await _user(server, connect, "eve")
    sent = await carol.challenge("DAVE", "othello")
    pushed = await asyncio.wait_for(dave.challenges.get(), 5)
    with pytest.raises(ServerError) as refused:  # not eve's to answer, nor a guest's
        await eve.accept(pushed["challenge"]["id"])
    assert refused.value.code == "no_such_challenge"
    await dave.decline(pushed["challenge"]["id"])
    answer = await asyncio.wait_for(carol.challenges.get(), 5)
    assert (answer["type"], answer["challenge"], answer["by"]) == ("challenge_declined", sent["id"], "dave")
    assert not [r for r in server.rooms.values() if r.core.game.name == "othello"]


async def test_a_challenge_lapses_when_its_challenger_leaves(server: Server, connect) -> None:
    fred = await _user(server, connect, "fred")
    gina = await _user(server, connect, "gina")
    sent = await fred.challenge("gina", "tictactoe")
    await asyncio.wait_for(gina.challenges.get(), 5)
    await fred.close()
    for _ in range(100):
        if sent["id"] not in server.challenges.open:
            break
        await asyncio.sleep(0.02)
    with pytest.raises(ServerError) as refused:
        await gina.accept(sent["id"])
    assert refused.value.code == "no_such_challenge"


@pytest.mark.slow
async def test_a_challenge_ends_when_the_challenged_person_leaves(server: Server, connect) -> None:
    """The challenger waited the whole five minutes for someone gone, who could not answer: a new
    connection of the account is not told of challenges made before it."""
    fay = await _user(server, connect, "fay")
    gil = await _user(server, connect, "gil")
    second = await connect(name="gil", password=PASSWORD)  # two connections of one account
    sent = await fay.challenge("gil", "tictactoe")
    await asyncio.wait_for(gil.challenges.get(), 5)
    connected = len(server.sessions)
    await gil.close()
    for _ in range(250):  # the server has let the connection go, and told whom it had to, in one step
        if len(server.sessions) == connected - 1:
            break
        await asyncio.sleep(0.02)
    assert len(server.sessions) == connected - 1
    await fay.request("ping")  # answered after anything sent to fay before it
    assert fay.challenges.empty()  # gil is still there on the other connection
    await second.close()
    told = await asyncio.wait_for(fay.challenges.get(), 5)
    assert told == {"type": "challenge_declined", "challenge": sent["id"], "by": "gil", "reason": "left"}
    assert not server.challenges.open


async def test_a_bot_accepts_the_games_it_declared(server: Server, connect) -> None:
    _, token = await server.store.create_bot("TacBot")
    bot = await connect(token=token, agent="my-brain", games=["tictactoe"])

    games: set[asyncio.Task[dict]] = set()

    async def play_when_seated() -> None:
        while True:
            notice = await bot.seated.get()
            game = asyncio.create_task(bot.play(notice["room"], _random(3)))
            games.add(game)
            game.add_done_callback(games.discard)

    player = asyncio.create_task(play_when_seated())
    try:
        guest = await connect(name="hana")
        sent = await guest.challenge("tacbot", "tictactoe")
        accepted = await asyncio.wait_for(guest.challenges.get(), 5)
        assert accepted["type"] == "challenge_accepted" and accepted["challenge"] == sent["id"]
        seats = accepted["summary"]["seats"]
        assert (seats[0]["name"], seats[0]["kind"]) == ("hana", "guest")
        final = await asyncio.wait_for(guest.play(accepted["room"], _random(4)), 20)
        assert final["status"] == "finished"

        with pytest.raises(ServerError) as refused:  # at once: no challenge is sent
            await guest.challenge("TacBot", "othello")
        assert refused.value.code == "bot_declines" and "does not play othello" in refused.value.message
        assert refused.value.message.endswith("it plays tictactoe") and guest.challenges.empty()
    finally:
        player.cancel()


async def test_bad_challenges_get_clear_errors(server: Server, connect) -> None:
    ivan = await _user(server, connect, "ivan")
    guest = await connect(name="jo")
    cases = [
        ({"to": "jo", "game": "tictactoe"}, "no_such_player"),  # guests cannot be challenged
        ({"to": "nobody", "game": "tictactoe"}, "no_such_player"),
        ({"to": "ivan", "game": "chess"}, "unknown_game"),
        ({"to": "ivan", "game": "tictactoe", "clock": {"per_move": -1}}, "bad_clock"),
        ({"to": "ivan", "game": "tictactoe", "seats": 9}, "bad_options"),
        ({"to": 5, "game": "tictactoe"}, "bad_field"),
    ]
    for fields, code in cases:
        with pytest.raises(ServerError) as refused:
            await guest.request("challenge", **fields)
        assert refused.value.code == code, fields
    with pytest.raises(ServerError) as refused:
        await ivan.challenge("IVAN", "tictactoe")
    assert refused.value.code == "bad_field"
    for kind in ("accept", "decline"):
        with pytest.raises(ServerError) as refused:
            await guest.request(kind, challenge="nope")
        assert refused.value.code == "no_such_challenge"
    assert not server.challenges.open and await guest.list_rooms() == []


async def test_a_challenge_accepted_as_its_challenger_leaves_seats_nobody(server: Server, connect, db_url: str) -> None:
    """The challenger leaves while the room of its accepted challenge is being stored: the room
    must not start with a seat whose connection is gone. The database is held locked meanwhile,
    so the room's row waits until the challenger's departure has been handled."""
    alice = await _user(server, connect, "Alice")
    bob = await _user(server, connect, "Bob")
    sent = await alice.challenge("bob", "tictactoe", clock={"per_move": 30})
    await asyncio.wait_for(bob.challenges.get(), 5)
    session = next(s for s in server.connections.sessions if s.name == "Alice")
    lock = sqlite3.connect(sqlite_path(db_url), timeout=10, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")  # the server's writes wait for it
    try:
        answer = asyncio.ensure_future(bob.accept(sent["id"]))
        await wait_for(lambda: _taken(server, sent["id"]), "the challenge to be taken", timeout=10)
        await alice.close()
        await wait_for(lambda: _gone(server, session), "the challenger's departure to be handled", timeout=10)
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    with pytest.raises(ServerError) as refused:
        await answer
    assert refused.value.code == "no_such_challenge" and "its challenger left" in refused.value.message
    assert not [room for room in server.rooms.values() if room.core.status == "playing"]
    assert all(room.core.status == "aborted" for room in server.rooms.values())


async def _taken(server: Server, challenge: str) -> bool:
    return challenge not in server.challenges.open


async def _gone(server: Server, session: object) -> bool:
    return session not in server.connections.sessions
