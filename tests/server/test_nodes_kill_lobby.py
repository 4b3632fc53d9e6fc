"""The deployment's one lobby when a node dies: three `partida serve --node` processes on one
PostgreSQL and one Mosquitto. The node holding the seeks is killed with SIGKILL while two bots on
the other nodes race to take them: no seek is taken twice, every seek taken has its game, the
dead node's seeks leave every list once its lease has run out, and seeking goes on between the
live nodes. The node running a Swiss of two people connected elsewhere is killed mid-round: the
game in play is taken over and finished, the next round is paired by the next node and pushed
to both through their own nodes, and each round is counted once."""

from __future__ import annotations

import asyncio
import random
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from partida.client import Client, ServerError
from partida.server.competition.tournament_director import LOCK_KEY
from partida.server.scheduler_lock import SchedulerLock
from partida.storage.database import Database
from partida.storage.store import Store
from partida.storage.tournaments import TournamentStore
from tests.server.test_nodes_kill import Node, cluster, held_by  # noqa: F401  (`cluster`: the fixture)

pytestmark = [pytest.mark.processes, pytest.mark.realtime, pytest.mark.slow]

PASSWORD = "correct horse battery"
CLOCK = {"initial": 60, "increment": 1}


async def seek_taker(client: Client, taken: dict[int, list[str]], me: str, stop: asyncio.Event) -> None:
    """Take every seek this bot's node lists, as it appears (`--answer-seeks` does the same)."""
    await client.list_seeks(watch=True)
    while not stop.is_set():
        try:
            message = await asyncio.wait_for(client.lobby_events.get(), 0.5)
        except TimeoutError:
            continue
        for seek in message.get("added") or []:
            try:
                reply = await client.seek_take(seek["id"])
            except ServerError:
                continue
            taken.setdefault(seek["id"], []).append(f"{me}:{reply['room']}:{reply['summary']['game_id']}")


async def listed_ids(client: Client) -> set[int]:
    return {s["id"] for s in await client.list_seeks()}


async def test_the_node_holding_the_seeks_dies_while_two_nodes_take_them(cluster: list[Node]) -> None:  # noqa: F811
    a, b, c = cluster
    await asyncio.gather(*(node.ready() for node in cluster))
    db = await Database.open(a.db, migrate=False)
    clients: list[Client] = []
    stop = asyncio.Event()
    try:
        store = Store(db)
        for name in ("alice", "bob"):
            await store.create_user(name, PASSWORD)
        _, token_b = await store.create_bot("takerb")
        _, token_c = await store.create_bot("takerc")
        alice = await Client.connect(a.url, name="alice", password=PASSWORD)
        bob = await Client.connect(b.url, name="bob", password=PASSWORD)
        taker_b = await Client.connect(b.url, token=token_b)
        taker_c = await Client.connect(c.url, token=token_c)
        clients += [alice, bob, taker_b, taker_c]
        taken: dict[int, list[str]] = {}
        racers = [  # noqa: F841  (they run until `stop`)
            asyncio.create_task(seek_taker(taker_b, taken, "b", stop)),
            asyncio.create_task(seek_taker(taker_c, taken, "c", stop)),
        ]
        posted: list[int] = []
        for _ in range(12):
            posted.append((await alice.seek("tictactoe", clock=CLOCK, allow_bots=True))["seek"]["id"])
            async with asyncio.timeout(15):
                while posted[-1] not in taken:
                    await asyncio.sleep(0.02)
        for _ in range(3):  # the last ones are being taken as their node dies
            posted.append((await alice.seek("tictactoe", clock=CLOCK, allow_bots=True))["seek"]["id"])
        a.kill()
        await asyncio.sleep(8)  # its lease (2 s) and a read-back of the seeks (every 5 s)
        assert all(len(rooms) == 1 for rooms in taken.values()), taken  # never taken twice
        assert set(taken) <= set(posted)
        assert len(taken) >= 12  # those posted before the kill were all taken
        for game_id in (int(entry.split(":")[2]) for rooms in taken.values() for entry in rooms):
            game = await store.load_game(game_id)  # every seek taken has its game, started
            assert game is not None and game.status in ("playing", "finished"), (game_id, game and game.status)
        for client in (bob, taker_b, taker_c):
            assert not (await listed_ids(client)) & set(posted)  # the dead node's seeks are gone everywhere

        # Seeking goes on between the live nodes.
        seek_id = (await bob.seek("tictactoe", clock=CLOCK, allow_bots=True))["seek"]["id"]
        async with asyncio.timeout(15):
            while seek_id not in taken:
                await asyncio.sleep(0.1)
        assert len(taken[seek_id]) == 1
        paired = await asyncio.wait_for(bob.seek_events.get(), 10)
        assert paired["room"] == taken[seek_id][0].split(":")[1]
    finally:
        stop.set()
        for client in clients:
            await client.close()
        await db.close()


async def play_calls(client: Client, games: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    calls: list[dict[str, Any]] = []
    while len(calls) < games:
        message = await client.tournament_events.get()
        if message["type"] != "tournament_game":
            continue
        calls.append(message)
        final = await client.play(message["room"], lambda update, prompt: prompt.random_answer(rng), on_error=bearable)
        assert final["status"] == "finished"
    return calls


def bearable(exc: ServerError) -> None:
    """A move refused while its room's node is dying, or before the room is taken over: asked again."""
    if exc.code not in ("storage_unavailable", "connection_lost", "stale_decision"):
        raise exc


async def test_a_swiss_goes_on_for_people_elsewhere_when_its_node_dies(cluster: list[Node]) -> None:  # noqa: F811
    await asyncio.gather(*(node.ready() for node in cluster))
    db = await Database.open(cluster[0].db, migrate=False)
    clients: list[Client] = []
    try:
        store, tournaments = Store(db), TournamentStore(db)
        holder = await held_by(SchedulerLock(db, "probe", LOCK_KEY))
        runner = next(node for node in cluster if node.name == holder)
        others = [node for node in cluster if node is not runner]
        for name in ("ada", "bea"):
            await store.create_user(name, PASSWORD)
        starts = datetime.now(UTC) + timedelta(seconds=3)
        clock = {"initial": 120.0, "increment": 0.0}
        info = await tournaments.create("farcup", "othello", {}, 2, clock, "swiss", "people", starts, rounds=2)
        ada = await Client.connect(others[0].url, name="ada", password=PASSWORD)
        bea = await Client.connect(others[1].url, name="bea", password=PASSWORD)
        clients += [ada, bea]
        for person in (ada, bea):
            await person.tournament_join("farcup")
        playing = asyncio.gather(play_calls(ada, 2, 1), play_calls(bea, 2, 2))
        deadline = time.monotonic() + 60
        while not any(t.status == "playing" for t in await tournaments.tables(info.id)):
            assert time.monotonic() < deadline, "no tournament game got going"
            await asyncio.sleep(0.1)
        await asyncio.sleep(1.0)  # a few moves in
        runner.kill()
        calls = await asyncio.wait_for(playing, 240)
        for mine in calls:
            assert [c["round"] for c in mine] == [1, 2]
            assert mine[0].get("url") == runner.url and "token" not in mine[0]  # called through its own node
        deadline = time.monotonic() + 60
        while (await tournaments.require("farcup")).status != "finished":
            assert time.monotonic() < deadline, "the Swiss did not finish after its node died"
            await asyncio.sleep(0.5)
        tables = await tournaments.tables(info.id)
        assert sorted(t.round for t in tables) == [1, 2]  # each round paired once
        for t in tables:
            assert t.result is not None and t.result.get("reason") == "normal", t  # played to its end
    finally:
        for client in clients:
            await client.close()
        await db.close()
