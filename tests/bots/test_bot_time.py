"""A bot's time is shared by the people it plays: a guest in many rooms, under a new name in each,
is one party (the server tells the bot so in `seated`), holds at most its share of the bot's
games, and never every core the bot thinks on; another player's decision starts beside its
searches. Searches here wait at a gate the test opens, so what is asserted is which searches run
together, never how long anything takes."""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from typing import Any

from websockets.asyncio.client import connect as ws_connect

from partida.bots.base import Agent, AgentSpec, Turn
from partida.bots.registry import all_agents
from partida.bots.runner import answer_within
from partida.bots.thinking import FairThinking
from partida.server import parties


class Gate:
    """The searches under way, by game, and the most that ran together."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.lock = threading.Lock()
        self.running: Counter[str] = Counter()
        self.together: list[Counter[str]] = []  # the running searches each time one started


class GateAgent(Agent):
    name = "gate-test"
    gate = Gate()

    def act(self, turn: Turn) -> Any:
        gate = self.gate
        with gate.lock:
            gate.running[turn.game.name] += 1
            gate.together.append(Counter(gate.running))
        gate.open.wait(30)
        with gate.lock:
            gate.running[turn.game.name] -= 1
        return turn.prompt.answers()[0]


async def raw_guest(url: str, address: str, name: str) -> Any:
    ws = await ws_connect(url, local_addr=(address, 0))
    await ws.send(json.dumps({"type": "hello", "version": 2, "id": 0, "name": name}))
    assert json.loads(await ws.recv())["type"] == "welcome"
    return ws


async def ask(ws: Any, **request: Any) -> dict[str, Any]:
    await ws.send(json.dumps({"id": "q", **request}))
    while True:
        message = json.loads(await asyncio.wait_for(ws.recv(), 30))
        if message.get("id") == "q":
            return message


async def test_a_guest_in_many_rooms_does_not_take_the_bots_every_core(server, runners) -> None:
    all_agents()["gate-test"] = AgentSpec("gate-test", GateAgent, "waits at the test's gate")
    gate = GateAgent.gate = Gate()
    guests: list[Any] = []
    try:
        runner = await runners("gatebot", "gate-test")
        runner.thinking = FairThinking(cores=2)
        for _ in range(200):
            if any(s.name == "gatebot" for s in server.bot_sessions()):
                break
            await asyncio.sleep(0.02)
        # one guest from one address, a new name (and connection) per room: the bot moves first
        for i in range(server.limiter.limits.games_per_bot_per_address):
            guests.append(await raw_guest(server.url, "127.0.0.2", f"hog{i}"))
            created = await ask(guests[-1], type="create_room", game="tictactoe", seat=1, bots={"0": "gatebot"})
            assert created["type"] == "room_created", created
        over = await ask(guests[0], type="create_room", game="tictactoe", seat=1, bots={"0": "gatebot"})
        assert over["code"] == "rate_limited" and "gatebot" in over["message"]  # its share of the bot's games
        while gate.running["tictactoe"] < 1:
            await asyncio.sleep(0.02)
        # another player, from another address, against the same bot
        guests.append(await raw_guest(server.url, "127.0.0.3", "ann"))
        created = await ask(guests[-1], type="create_room", game="othello", seat=1, bots={"0": "gatebot"})
        assert created["type"] == "room_created", created
        for _ in range(1500):  # until ann's search runs beside the hog's (the gate is shut)
            if gate.running["othello"]:
                break
            await asyncio.sleep(0.02)
        assert gate.running == Counter({"tictactoe": 1, "othello": 1})
        assert max(sum(t.values()) for t in gate.together) <= 2
        assert max(t["tictactoe"] for t in gate.together) == 1  # four rooms, one core of two
    finally:
        gate.open.set()
        del all_agents()["gate-test"]
        for ws in guests:
            await ws.close()


async def test_the_party_a_bot_is_told_names_nobody(server, connect, runners) -> None:
    """`seated` carries one opaque party for one address's guests, another for another address,
    and none of them holds the address; another bot is told other strings for the same people."""
    told: dict[str, list[dict[str, Any]]] = {}
    for name in ("oak", "elm"):
        runner = await runners(name, "random")
        for _ in range(200):
            if runner.client is not None:
                break
            await asyncio.sleep(0.02)
        assert runner.client is not None
        told[name] = []
        seated = runner.client.seated
        original = seated.put_nowait

        def keep(notice: dict[str, Any], original: Any = original, into: list[Any] = told[name]) -> None:
            into.append(notice)
            original(notice)

        seated.put_nowait = keep  # type: ignore[method-assign]
    rooms = []
    for address, guest in (("127.0.0.4", "a1"), ("127.0.0.4", "a2"), ("127.0.0.5", "b1")):
        ws = await raw_guest(server.url, address, guest)
        for bot in ("oak", "elm"):
            created = await ask(ws, type="create_room", game="tictactoe", seat=0, bots={"1": bot})
            assert created["type"] == "room_created", created
        rooms.append(ws)
    for _ in range(500):
        if all(len(notices) == 3 for notices in told.values()):
            break
        await asyncio.sleep(0.02)
    oak = [n["party"] for n in told["oak"]]
    elm = [n["party"] for n in told["elm"]]
    assert oak[0] == oak[1] != oak[2] and elm[0] == elm[1] != elm[2]
    assert not set(oak) & set(elm)
    assert all("127.0.0" not in p and len(p) == 16 for p in oak + elm)
    assert parties.holder(None, "127.0.0.4", "a1") == parties.holder(None, "127.0.0.4", "a2")
    assert parties.holder(7, "127.0.0.4", "ada") == parties.holder(7, "10.1.2.3", "ada")  # an account, anywhere
    for ws in rooms:
        await ws.close()


async def test_a_runner_stopped_as_an_answer_arrives_stops() -> None:
    """The stop (a cancel) and the search's answer arrive in the same turn of the loop: the stop
    wins. Under Python 3.11's `wait_for` the answer won and the stop was lost, and a runner
    stopped mid-game waited for its next decision forever."""
    loop = asyncio.get_running_loop()
    search = loop.create_future()
    deciding = asyncio.ensure_future(answer_within(search, 30))
    await asyncio.sleep(0)  # the decision waits for its search
    search.set_result("a move")
    deciding.cancel()
    try:
        await deciding
    except asyncio.CancelledError:
        pass
    assert deciding.cancelled()
    # and without a stop, the answer comes, or TimeoutError when the time is up
    assert await answer_within(asyncio.ensure_future(asyncio.sleep(0, "a move")), 30) == "a move"
    slow = loop.create_future()
    try:
        await answer_within(slow, 0.01)
    except TimeoutError:
        pass
    assert not slow.cancelled()  # the search itself goes on (its thread keeps its core)
