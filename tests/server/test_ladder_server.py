"""Ladders through a real server: bot accounts join over the websocket, the scheduler seats them,
results are rated as they are stored, and every bad request gets its code and changes nothing."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from partida.bots.runner import BotRunner
from partida.client import Client, ServerError
from partida.server.app import Server
from tests.helpers import make_bot, wait_for

CLOCK = {"per_move": 5.0}


async def rated_games(server: Server, ladder: str) -> int:
    return (await server.store.ladders.require(ladder)).rated_games


@pytest.mark.realtime
async def test_bots_play_a_ladder_to_a_rated_table_and_rerate_agrees(
    server: Server, runners: Callable[..., Awaitable[BotRunner]], connect: Callable[..., Awaitable[Client]]
) -> None:
    ladder = await server.store.ladders.create("ttt", "tictactoe", {}, 2, CLOCK, 2)
    assert server.bus is not None
    events = server.bus.subscribe("partida/ladders/ttt/#")
    for name in ("ann", "bob", "cid"):
        await runners(name, ladders=["ttt"])
    seen: dict[str, int] = {"ladder_game": 0, "rating": 0}

    async def twelve_announced() -> bool:
        # events: a ladder_game when each game opens, a rating when it is rated
        while events.pending():
            event = await anext(events)
            seen[event.payload["type"]] += 1
            if event.payload["type"] == "rating":
                assert {r["name"] for r in event.payload["ratings"]} <= {"ann", "bob", "cid"}
        return seen["rating"] >= 12

    await wait_for(twelve_announced, "twelve rated games")
    events.close()
    assert seen["ladder_game"] >= seen["rating"]

    watcher = await connect(name="watcher")
    standings = await watcher.ladder_standings("ttt")
    assert sorted(row["name"] for row in standings) == ["ann", "bob", "cid"]
    assert [row["rank"] for row in standings] == [1, 2, 3]
    assert all(row["connected"] for row in standings)
    assert [row["rating"] for row in standings] == sorted((row["rating"] for row in standings), reverse=True)
    for row in standings:
        assert row["rating"] == pytest.approx(row["mu"] - 3 * row["sigma"])
        assert row["games"] == row["wins"] + row["draws"] + row["losses"] > 0
    listed = {x["name"]: x for x in await watcher.ladder_list()}
    assert listed["ttt"]["game"] == "tictactoe" and listed["ttt"]["connected"] == 3
    assert listed["ttt"]["rated_games"] >= 12
    await watcher.close()

    await server.ladder_director.stop()  # no new games; the ones in play finish

    async def all_over() -> bool:
        # the scheduler stopped after opening whole the game it was opening: those in play end
        return all(g.status != "playing" for g in await server.store.ladders.games(ladder.id, live=True))

    await wait_for(all_over, "the last games to end")
    # read once nothing is being rated any more (while games go on, a game rated between two
    # reads would make them disagree)
    games = await server.store.ladders.games(ladder.id)
    finished = [g for g in games if g.status == "finished"]
    assert all(g.rated_seq is not None for g in finished)
    assert all(len({account for _, account, _ in g.seats}) == 2 for g in finished)
    assert len(await server.store.ladders.history(ladder.id)) == 2 * ladder_rated(finished)
    report = await server.store.ladders.rerate(ladder.id)
    assert report.differences == []
    live = await server.store.ladders.standings(ladder.id)
    assert [s.record() for s in report.standings] == [s.record() for s in live]
    # What a rating plot draws: each member's mu before its first game and after each one.
    reader = await connect(name="reader")
    series = await reader.ladder_history("ttt")
    assert [b["name"] for b in series] == [s.name for s in live]
    for bot, standing in zip(series, live, strict=True):
        assert [p["games"] for p in bot["points"]] == list(range(standing.games + 1))
        assert bot["points"][-1]["mu"] == pytest.approx(standing.mu)
        assert bot["points"][-1]["rating"] == pytest.approx(standing.mu - 3 * standing.sigma)
        assert bot["points"][0]["mu"] == pytest.approx(25.0)


def ladder_rated(games: list[Any]) -> int:
    return sum(1 for g in games if g.rated_seq is not None)


async def _at_least(server: Server, ladder: str, n: int) -> bool:
    return await rated_games(server, ladder) >= n


@pytest.mark.realtime
async def test_a_bot_receives_its_games_and_ratings(server: Server) -> None:
    await server.store.ladders.create("duo", "tictactoe", {}, 2, CLOCK, 1)
    tokens = [await make_bot(server, name) for name in ("p1", "p2")]
    clients = [await Client.connect(server.url, token=t, agent="random") for t in tokens]
    try:
        joined = await clients[0].ladder_join("duo")
        assert joined["ladder"] == "duo" and joined["summary"]["name"] == "duo" and joined["max_games"] == 1
        assert joined["standing"]["games"] == 0 and joined["standing"]["rating"] == pytest.approx(0.0)
        await clients[1].ladder_join("duo", max_games=2)
        notice = await asyncio.wait_for(clients[0].ladder_events.get(), 10)
        assert notice["type"] == "ladder_game" and notice["ladder"] == "duo" and notice["clock"] == CLOCK
        assert sorted(s["name"] for s in notice["seats"]) == ["p1", "p2"]
        room = notice["room"]
        for client in clients:  # play it out by hand: both answer at random
            seated = await asyncio.wait_for(client.seated.get(), 10)
            assert seated["room"] == room

        async def play(client: Client) -> dict[str, Any]:
            import random

            rng = random.Random(1)
            return await client.play(room, lambda update, prompt: prompt.random_answer(rng))

        finals = await asyncio.gather(*(play(c) for c in clients))
        assert finals[0]["result"] == finals[1]["result"]
        rating = await asyncio.wait_for(clients[0].ladder_events.get(), 10)
        assert rating["type"] == "rating" and rating["game_id"] == notice["game_id"]
        assert [r["seat"] for r in rating["ratings"]] == [0, 1]
        assert {r["name"] for r in rating["ratings"]} == {"p1", "p2"}
        left = await clients[0].request("ladder_leave", ladder="duo")
        assert left["type"] == "ladder_left"
        with pytest.raises(ServerError) as info:
            await clients[0].ladder_leave("duo")
        assert info.value.code == "not_in_ladder"
        await server.ladder_director.stop()
    finally:
        for client in clients:
            with contextlib.suppress(Exception):
                await client.close()


async def test_bad_ladder_requests_get_codes_and_change_nothing(
    server: Server, connect: Callable[..., Awaitable[Client]]
) -> None:
    ladder = await server.store.ladders.create("oth", "othello", {}, 2, CLOCK, 1)
    guest = await connect(name="guesty")
    token = await make_bot(server, "tic")
    tic = await connect(token=token, agent="random", games=["tictactoe"])
    other_token = await make_bot(server, "engine")
    engine = await connect(token=other_token, agent="othello-engine-easy")
    cases = [
        (guest, {"ladder": "oth"}, "bots_only"),
        (engine, {"ladder": "nope"}, "no_such_ladder"),
        (tic, {"ladder": "oth"}, "wrong_game"),  # declared tictactoe only
        (engine, {"ladder": "oth", "max_games": 0}, "bad_field"),
        (engine, {"ladder": "oth", "max_games": 99}, "bad_field"),
        (engine, {"ladder": 5}, "bad_field"),
        (engine, {}, "bad_field"),
    ]
    for client, fields, code in cases:
        with pytest.raises(ServerError) as info:
            await client.request("ladder_join", **fields)
        assert info.value.code == code, (fields, info.value)
    hearts = await server.store.ladders.create("tt", "tictactoe", {}, 2, CLOCK, 1)
    with pytest.raises(ServerError) as info:
        await engine.ladder_join("tt")  # the Othello engine plays only Othello
    assert info.value.code == "wrong_game"
    for request, fields, code in [
        ("ladder_standings", {"ladder": "nope"}, "no_such_ladder"),
        ("ladder_history", {"ladder": "nope"}, "no_such_ladder"),
        ("ladder_leave", {"ladder": "nope"}, "no_such_ladder"),
        ("ladder_leave", {"ladder": "oth"}, "not_in_ladder"),
    ]:
        with pytest.raises(ServerError) as info:
            await engine.request(request, **fields)
        assert info.value.code == code
    assert await server.store.ladders.standings(ladder.id) == []
    assert await server.store.ladders.standings(hearts.id) == []

    await engine.ladder_join("oth")
    assert [s.name for s in await server.store.ladders.standings(ladder.id)] == ["engine"]
    for client in (guest, tic, engine):
        await client.close()


def engine_id(server: Server, name: str) -> int:
    for session in server.sessions:
        if session.identity is not None and session.identity.name == name:
            assert session.identity.account_id is not None
            return session.identity.account_id
    raise AssertionError(name)


@pytest.mark.processes
@pytest.mark.slow
async def test_bot_processes_play_a_ladder_from_the_command_line(server: Server) -> None:
    """`partida bot AGENT --ladder NAME` as real processes, to a finished and rated table."""
    ladder = await server.store.ladders.create("cli", "tictactoe", {}, 2, CLOCK, 1)
    processes = []
    try:
        for name in ("proc-a", "proc-b"):
            env = dict(os.environ, PARTIDA_BOT_TOKEN=await make_bot(server, name))
            processes.append(
                await asyncio.create_subprocess_exec(
                    sys.executable,
                    "-m",
                    "partida",
                    "bot",
                    "random",
                    "--server",
                    server.url,
                    "--ladder",
                    "cli",
                    "--log-level",
                    "warning",
                    env=env,
                )
            )
        await wait_for(lambda: _at_least(server, "cli", 4), "four rated games from bot processes")
        report = await server.store.ladders.rerate(ladder.id)
        assert report.differences == [] and report.games >= 4
        assert {s.name for s in report.standings} == {"proc-a", "proc-b"}
    finally:
        for process in processes:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
            await process.wait()


@pytest.mark.realtime
async def test_a_ladder_game_ending_wakes_the_scheduler_and_no_game_builds_an_event_for_it(
    server: Server, connect: Callable[..., Awaitable[Client]]
) -> None:
    """The scheduler learns of its games' ends from its rooms directly: nothing subscribes to
    every room's `game_over` event (which made every game build and deliver one), and a game
    that is not the ladder's does not wake it."""
    assert server.bus is not None
    assert not server.bus.wants("partida/rooms/ABCDEF/game_over")
    assert not server.bus.wants("partida/rooms/game-1/game_over")
    wakes = 0
    wake = server.ladder_director.wake

    def counted() -> None:
        nonlocal wakes
        wakes += 1
        wake()

    server.ladder_director.wake = counted  # type: ignore[method-assign]
    import random

    rng = random.Random(3)
    ann, bea = await connect(name="ann"), await connect(name="bea")
    created = await ann.create_room("tictactoe", seat=0)
    await bea.join(created["room"])
    before = wakes
    await asyncio.gather(*(c.play(created["room"], lambda u, p: p.random_answer(rng)) for c in (ann, bea)))
    assert wakes == before  # not a ladder game

    await server.store.ladders.create("duo", "tictactoe", {}, 2, CLOCK, 1)
    tokens = [await make_bot(server, name) for name in ("p1", "p2")]
    clients = [await Client.connect(server.url, token=t, agent="random") for t in tokens]
    try:
        for client in clients:
            await client.ladder_join("duo")
        notice = await asyncio.wait_for(clients[0].ladder_events.get(), 10)
        for client in clients:
            await asyncio.wait_for(client.seated.get(), 10)
        before = wakes
        await asyncio.gather(*(c.play(notice["room"], lambda u, p: p.random_answer(rng)) for c in clients))
        assert wakes > before
        assert not server.bus.wants(f"partida/rooms/{notice['room']}/game_over")
        await server.ladder_director.stop()
    finally:
        for client in clients:
            with contextlib.suppress(Exception):
                await client.close()


@pytest.mark.realtime
async def test_four_bots_two_at_a_time_meet_everyone(
    server: Server, runners: Callable[..., Awaitable[BotRunner]]
) -> None:
    """The two bots whose game ends first are not paired again at once while the other two are
    still playing: the scheduler waits for them, so the ladder does not lock into two pairs."""
    ladder = await server.store.ladders.create("mix", "tictactoe", {}, 2, CLOCK, 2)
    names = ("ann", "bob", "cid", "dan")
    for name in names:
        await runners(name, ladders=["mix"])
    await wait_for(lambda: _at_least(server, "mix", 12), "twelve rated games")
    await server.ladder_director.stop()
    games = [g for g in await server.store.ladders.games(ladder.id) if g.status == "finished"]
    pairs = [frozenset(account for _, account, _ in g.seats) for g in games]
    assert len(set(pairs)) >= 4, pairs  # today's pairs were two, for ever
    last: dict[int, frozenset[int]] = {}
    for pair in pairs:
        for account in pair:
            assert last.get(account) != pair, pairs
            last[account] = pair
