"""Tournament calls across nodes: a person entered in a tournament run by another node is pushed
`tournament_game` on the node they are connected to, with the room's node's `url`, and the SDK
takes the seat kept for them there (three nodes on loopback ports, real PostgreSQL and Mosquitto)."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from partida.client import Client
from partida.server.app import Server
from tests.fixtures.nodes import user_on

CLOCK = {"initial": 60, "increment": 1}
pytestmark = pytest.mark.slow


async def runner_of(servers: list[Server]) -> Server:
    """The node holding the tournaments' lock (each node tries it every second)."""
    async with asyncio.timeout(15):
        while True:
            name = await servers[0].tournament_director.lock.holder()  # type: ignore[union-attr]
            for server in servers:
                if server.cluster is not None and server.cluster.name == name:
                    return server
            await asyncio.sleep(0.2)


async def play_calls(client: Client, games: int, seed: int) -> list[dict[str, Any]]:
    """Play every `tournament_game` pushed to `client` until `games` are over."""
    rng = random.Random(seed)
    calls = []
    while len(calls) < games:
        message = await client.tournament_events.get()
        if message["type"] == "tournament_started":
            calls.append(message)  # told through this client's own node too
        if message["type"] != "tournament_game":
            continue
        calls.append(message)
        final = await client.play(message["room"], lambda update, prompt: prompt.random_answer(rng))
        assert final["status"] == "finished"
    return calls


async def test_a_swiss_calls_people_connected_to_other_nodes_and_they_play(three: list[Server]) -> None:
    runner = await runner_of(three)
    others = [s for s in three if s is not runner]
    org = await user_on(others[0], "org")
    ada = await user_on(others[0], "ada")
    bea = await user_on(others[1], "bea")
    try:
        await org.tournament_create("far", "tictactoe", "swiss", CLOCK, entry="people", rounds=2, starts_in=2)
        for person in (ada, bea):
            await person.tournament_join("far")
        told = await asyncio.wait_for(asyncio.gather(play_calls(ada, 3, 1), play_calls(bea, 3, 2)), 90)
        assert all(mine[0]["type"] == "tournament_started" for mine in told)
        calls = [mine[1:] for mine in told]
        for mine in calls:
            assert [c["round"] for c in mine] == [1, 2]
            first = mine[0]  # through their own node: no seat token crosses the broker, the seat is kept
            assert first["url"] == runner.cluster.public_url and "token" not in first  # type: ignore[union-attr]
            # Once the SDK has followed the call, the person is connected to the running node too,
            # and seated there directly for the next round, as on one node.
            assert all(call["room"] in runner.rooms for call in mine)
        async with asyncio.timeout(30):
            while (await org.tournament_list())[0]["status"] != "finished":
                await asyncio.sleep(0.2)
        rows = {r["name"]: r for r in await org.tournament_standings("far")}
        assert rows["ada"]["games"] == rows["bea"]["games"] == 2
        assert rows["ada"]["points"] + rows["bea"]["points"] == 2
    finally:
        for client in (org, ada, bea):
            await client.close()


async def test_an_arena_pairs_bots_connected_to_every_node(three: list[Server]) -> None:
    """Six bots, two on each node: the node running the arena finds those connected elsewhere
    free (their nodes' presence), summons them to its tables, and every bot plays."""
    from tests.fixtures.nodes import bot_on

    runner = await runner_of(three)
    org = await user_on(three[0], "org")
    names = [f"arena{i}" for i in range(6)]
    bots: list[asyncio.Task[None]] = []
    try:
        await org.tournament_create(
            "spread", "tictactoe", "arena", {"initial": 10.0, "increment": 0.0}, entry="bots", duration=25, starts_in=3
        )
        for i, name in enumerate(names):
            bots.append(await bot_on(three[i % 3], name, games=["tictactoe"], tournaments=["spread"]))
        async with asyncio.timeout(90):
            while (await org.tournament_list())[0]["status"] != "finished":
                await asyncio.sleep(0.5)
        rows = {r["name"]: r for r in await org.tournament_standings("spread")}
        assert sorted(rows) == names
        assert all(rows[name]["games"] >= 1 for name in names), rows  # every bot played, wherever it was
        tables = await runner.tournament_director.store.tables(
            (await runner.tournament_director.store.require("spread")).id
        )
        assert all(t.decided for t in tables) and all(t.result and not t.result.get("void") for t in tables)
    finally:
        await org.close()
        for bot in bots:
            bot.cancel()
        await asyncio.gather(*bots, return_exceptions=True)
