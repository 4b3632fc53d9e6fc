"""Tournaments on a real server with real bot processes' runners: a round robin of four bots to
its end, a Swiss of nine over four rounds, an arena, entry rules and errors."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from partida.bots.runner import BotRunner
from partida.client import Client, ServerError
from partida.server.app import Server

CLOCK = {"initial": 60.0, "increment": 0.0}


@pytest.fixture
async def bots(server: Server) -> AsyncIterator[Callable[..., Awaitable[list[str]]]]:
    """Start `n` random bots entered in a tournament; returns their names."""
    tasks: list[asyncio.Task[None]] = []

    async def start(n: int, tournament: str, prefix: str = "bot") -> list[str]:
        names = []
        for i in range(n):
            name = f"{prefix}{i}"
            _, token = await server.store.create_bot(name)
            runner = BotRunner(server.url, "random", name=name, token=token, tournaments=[tournament])
            tasks.append(asyncio.get_running_loop().create_task(runner.run(reconnect=False)))
            names.append(name)
        return names

    yield start
    for task in tasks:
        task.cancel()
    with contextlib.suppress(BaseException):
        await asyncio.gather(*tasks, return_exceptions=True)


async def organizer(server: Server) -> Client:
    await server.store.create_user("org", "a long password")
    return await Client.connect(server.url, name="org", password="a long password")


def start_now(server: Server) -> None:
    """The service's clock an hour and a minute ahead: what was due to start within the hour starts."""
    server.tournament_director.now = lambda: time.time() + 3660
    server.tournament_director.wake()


async def wait_finished(client: Client, name: str, timeout: float = 90.0) -> dict[str, Any]:
    async with asyncio.timeout(timeout):
        while True:
            found = {t["name"]: t for t in await client.tournament_list()}
            if found[name]["status"] == "finished":
                return found[name]
            await asyncio.sleep(0.3)


async def entered(client: Client, name: str, n: int) -> None:
    async with asyncio.timeout(30):
        while {t["name"]: t for t in await client.tournament_list()}[name]["entrants"] < n:
            await asyncio.sleep(0.1)


@pytest.mark.slow
async def test_a_round_robin_of_four_bots_plays_every_pair_once(server: Server, bots: Any) -> None:
    org = await organizer(server)
    await org.tournament_create("rr4", "tictactoe", "round-robin", CLOCK, entry="bots", starts_in=3600)
    await bots(4, "rr4")
    await entered(org, "rr4", 4)
    start_now(server)
    summary = await wait_finished(org, "rr4")
    assert summary["round"] == 3
    tables = await org.tournament_pairings("rr4")
    pairs = Counter(frozenset(t["players"]) for t in tables)
    assert len(pairs) == 6 and set(pairs.values()) == {1}
    assert all(t["status"] == "finished" for t in tables)
    rows = await org.tournament_standings("rr4")
    assert [r["games"] for r in rows] == [3, 3, 3, 3]
    assert sum(r["points"] for r in rows) == 6  # one point a game
    assert all(r["bot"] for r in rows)
    assert [r["points"] for r in rows] == sorted((r["points"] for r in rows), reverse=True)
    await org.close()


@pytest.mark.slow
async def test_a_swiss_of_nine_has_one_bye_a_round_and_no_repeats(server: Server, bots: Any) -> None:
    org = await organizer(server)
    await org.tournament_create("sw9", "tictactoe", "swiss", CLOCK, entry="both", rounds=4, starts_in=3600)
    await bots(9, "sw9")
    await entered(org, "sw9", 9)
    start_now(server)
    await wait_finished(org, "sw9", timeout=120)
    tables = await org.tournament_pairings("sw9")
    for round in (1, 2, 3, 4):
        this = [t for t in tables if t["round"] == round]
        assert sum(1 for t in this if t["status"] == "bye") == 1
        assert sorted(p for t in this for p in t["players"]) == sorted(f"bot{i}" for i in range(9))
    games = [frozenset(t["players"]) for t in tables if t["status"] != "bye"]
    assert len(games) == len(set(games)) == 16
    byes = [t["players"][0] for t in tables if t["status"] == "bye"]
    assert len(set(byes)) == 4
    rows = await org.tournament_standings("sw9")
    assert sum(r["points"] for r in rows) == 16 + 4  # a point a game, a point a bye
    await org.close()


@pytest.mark.slow
async def test_entry_rules_and_errors(server: Server) -> None:
    org = await organizer(server)
    guest = await Client.connect(server.url, name="passer-by")
    with pytest.raises(ServerError) as refused:
        await guest.tournament_create("g", "tictactoe", "swiss", CLOCK)
    assert refused.value.code == "accounts_only"
    await org.tournament_create("people", "tictactoe", "swiss", CLOCK, entry="people", starts_in=600)
    _, token = await server.store.create_bot("lonely")
    bot = await Client.connect(server.url, token=token, agent="random")
    with pytest.raises(ServerError) as refused:
        await bot.tournament_join("people")
    assert refused.value.code == "entry_refused"
    with pytest.raises(ServerError) as refused:
        await org.tournament_create("people", "tictactoe", "swiss", CLOCK)
    assert refused.value.code == "tournament_exists"
    for bad, code in [
        ({"format": "knockout"}, "bad_field"),
        ({"format": "arena"}, "bad_field"),  # no duration
        ({"clock": {"initial": -1}}, "bad_clock"),
        ({"game": "chess"}, "unknown_game"),
        ({"name": "a/b"}, "bad_field"),
    ]:
        fields = {"name": "x", "game": "tictactoe", "format": "swiss", "clock": CLOCK} | bad
        with pytest.raises(ServerError) as refused:
            await org.tournament_create(**fields)
        assert refused.value.code == code, bad
    with pytest.raises(ServerError) as refused:
        await org.tournament_join("nope")
    assert refused.value.code == "no_such_tournament"
    with pytest.raises(ServerError) as refused:
        await org.tournament_withdraw("people")
    assert refused.value.code == "not_entered"
    await org.tournament_join("people")
    assert (await org.tournament_withdraw("people"))["tournament"] == "people"
    assert {t["name"] for t in await org.tournament_list()} == {"people"}
    for client in (org, guest, bot):
        await client.close()


@pytest.mark.processes
def test_serve_fills_a_round_robin_of_built_in_bots_by_itself(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Nothing but `partida serve --tournament-bots` and the operator's `tournament create --db`:
    the pool bots enter once the tournament exists, and it runs to its end."""
    import json
    import os
    import socket
    import subprocess
    import sys

    from tests.fixtures.programs import free_port

    port = free_port()
    db = tmp_path / "p.db"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    partida = [sys.executable, "-m", "partida"]
    serve = subprocess.Popen(
        [
            *partida,
            "serve",
            "--port",
            str(port),
            "--db",
            str(db),
            "--bots",
            "random,mcts,alphabeta",
            "--tournament-bots",
            "cup=random,mcts,alphabeta",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        for _ in range(600):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            time.sleep(0.1)
        created = subprocess.run(
            [
                *partida,
                "tournament",
                "create",
                "cup",
                "--game",
                "tictactoe",
                "--format",
                "round-robin",
                "--clock",
                "30s+0",
                "--entry",
                "bots",
                "--start",
                "8",
                "--db",
                str(db),
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        assert json.loads(created.stdout)["status"] == "registering"
        server = f"ws://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            listed = subprocess.run(
                [*partida, "tournament", "list", "--server", server, "--json"],
                capture_output=True,
                text=True,
                timeout=60,
                check=True,
            )
            if json.loads(listed.stdout)[0]["status"] == "finished":
                break
            time.sleep(1)
        standings = subprocess.run(
            [*partida, "tournament", "standings", "cup", "--server", server, "--json"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        rows = json.loads(standings.stdout)
        assert sorted(r["name"] for r in rows) == ["pool-alphabeta", "pool-mcts", "pool-random"]
        assert [r["games"] for r in rows] == [2, 2, 2] and [r["byes"] for r in rows] == [1, 1, 1]
        table = subprocess.run(
            [*partida, "tournament", "standings", "cup", "--server", server],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        assert "pool-alphabeta (bot)" in table.stdout and "Sonneborn-Berger" in table.stdout
        assert "Buchholz" not in table.stdout  # a round robin ranks by no Buchholz: none explained
    finally:
        serve.terminate()
        serve.wait(30)


@pytest.mark.slow
async def test_a_person_is_pushed_their_game_and_plays_a_bot(server: Server, bots: Any) -> None:
    """A person and a bot in one event: the person's seat comes with its token, the bot is marked
    as a bot in the standings, and the game counts once."""
    from partida.games.prompts import Prompt

    org = await organizer(server)
    await org.tournament_create("mix", "tictactoe", "swiss", CLOCK, entry="both", rounds=1, starts_in=3600)
    await server.store.create_user("ada", "another long password")
    ada = await Client.connect(server.url, name="ada", password="another long password")
    await ada.tournament_join("mix")
    await bots(1, "mix")
    await entered(org, "mix", 2)
    start_now(server)
    async with asyncio.timeout(30):
        while (pushed := await ada.tournament_events.get())["type"] != "tournament_game":
            pass
    assert pushed["tournament"] == "mix" and pushed["token"] and pushed["players"][pushed["seat"]] == "ada"

    def decide(update: dict[str, Any], prompt: Prompt) -> Any:
        return prompt.random_answer(__import__("random").Random(7))

    final = await ada.play(pushed["room"], decide)
    assert final["status"] == "finished"
    await wait_finished(org, "mix")
    rows = {r["name"]: r for r in await org.tournament_standings("mix")}
    assert rows["ada"]["games"] == rows["bot0"]["games"] == 1
    assert not rows["ada"]["bot"] and rows["bot0"]["bot"]
    assert rows["ada"]["points"] + rows["bot0"]["points"] == 1
    for client in (org, ada):
        await client.close()


@pytest.mark.slow
async def test_an_absent_entrants_seat_is_kept_for_them(server: Server, bots: Any) -> None:
    """The room of a table is public (anyone may watch it), and its code shown on the event: a
    seat waiting for an entrant who is not connected is theirs alone, not a stranger's who joins."""
    org = await organizer(server)
    await org.tournament_create("kept", "tictactoe", "swiss", CLOCK, entry="both", rounds=1, starts_in=3600)
    await server.store.create_user("ada", "another long password")
    ada = await Client.connect(server.url, name="ada", password="another long password")
    await ada.tournament_join("kept")
    await ada.close()
    await bots(1, "kept")
    await entered(org, "kept", 2)
    start_now(server)
    async with asyncio.timeout(30):
        while not (tables := await org.tournament_pairings("kept")) or not tables[0].get("room"):
            await asyncio.sleep(0.1)
    room = tables[0]["room"]
    await server.store.create_user("eve", "a third long password")
    eve = await Client.connect(server.url, name="eve", password="a third long password")
    guest = await Client.connect(server.url, name="mallory")
    for stranger in (eve, guest):
        with pytest.raises(ServerError) as refused:
            await stranger.join(room)
        assert refused.value.code == "seat_kept"
        for seat in (0, 1):
            with pytest.raises(ServerError) as refused:
                await stranger.join(room, seat=seat)
            assert refused.value.code in ("seat_kept", "seat_taken")
        assert (await stranger.watch(room))["summary"]["code"] == room  # watching is open to all
    ada = await Client.connect(server.url, name="ada", password="another long password")
    joined = await ada.join(room)
    assert joined["summary"]["seats"][joined["seat"]]["name"] == "ada"
    for client in (org, ada, eve, guest):
        await client.close()


@pytest.mark.processes
def test_a_kill_mid_round_loses_and_double_counts_nothing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`kill -9` of the server while a round is being played: after a restart the games in play
    resume from their logs, the tournament goes on from its rows, and every pair of a round robin
    still meets exactly once."""
    import json
    import os
    import signal
    import socket
    import subprocess
    import sys

    from tests.fixtures.programs import free_port

    port = free_port()
    db = tmp_path / "p.db"
    partida = [sys.executable, "-m", "partida"]
    server = f"ws://127.0.0.1:{port}"
    agents = "random,mcts,alphabeta,othello-engine-easy"

    def serve() -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            [
                *partida,
                "serve",
                "--port",
                str(port),
                "--db",
                str(db),
                "--bots",
                agents,
                "--tournament-bots",
                f"kill9={agents}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
            start_new_session=True,
        )
        for _ in range(600):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                return process
            time.sleep(0.1)
        raise RuntimeError("the server did not start")

    def run(*args: str) -> Any:
        done = subprocess.run([*partida, *args, "--json"], capture_output=True, text=True, timeout=60, check=True)
        return json.loads(done.stdout)

    process = serve()
    try:
        run(
            "tournament",
            "create",
            "kill9",
            "--game",
            "othello",
            "--format",
            "round-robin",
            "--clock",
            "20s+0",
            "--entry",
            "bots",
            "--start",
            "8",
            "--db",
            str(db),
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            tables = run("tournament", "pairings", "kill9", "--server", server)
            if any(t["status"] == "playing" for t in tables):
                break
            time.sleep(0.5)
        else:
            raise AssertionError("no game of round 1 got going")
        os.killpg(process.pid, signal.SIGKILL)  # the server and its pool bots, at once
        process.wait(30)
        process = serve()
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            if run("tournament", "list", "--server", server)[0]["status"] == "finished":
                break
            time.sleep(1)
        else:
            raise AssertionError("the tournament did not finish after the restart")
        tables = run("tournament", "pairings", "kill9", "--server", server)
        pairs = [frozenset(t["players"]) for t in tables]
        assert len(pairs) == len(set(pairs)) == 6 and all(t["status"] == "finished" for t in tables)
        rows = run("tournament", "standings", "kill9", "--server", server)
        assert [r["games"] for r in rows] == [3, 3, 3, 3]
        assert sum(r["points"] for r in rows) == 6
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        process.wait(30)


@pytest.mark.slow
async def test_the_scheduler_reads_only_tournaments_still_to_run(server: Server, bots: Any) -> None:
    """A finished tournament is never read again by the scheduler: it reads the registering and
    running ones' ids, status and times only, and looks at none of them while nothing is due."""
    org = await organizer(server)
    await org.tournament_create("done", "tictactoe", "round-robin", CLOCK, entry="bots", starts_in=3600)
    await org.tournament_create("later", "tictactoe", "swiss", CLOCK, entry="bots", starts_in=7 * 24 * 3600)
    await bots(2, "done")
    await entered(org, "done", 2)
    start_now(server)
    await wait_finished(org, "done")
    store = server.tournaments.store
    later = await store.require("later")
    slots: list[Any] = []
    looked: list[int] = []
    real_schedule, real_by_id = store.schedule, store.by_id

    async def schedule() -> Any:
        found = await real_schedule()
        slots.extend(found)
        return found

    async def by_id(tournament_id: int) -> Any:
        looked.append(tournament_id)
        return await real_by_id(tournament_id)

    try:
        store.schedule, store.by_id = schedule, by_id  # type: ignore[method-assign]
        server.tournament_director.rescan()
        await server.tournament_director.tick()
    finally:
        del store.schedule, store.by_id
    assert [(slot.id, slot.status) for slot in slots] == [(later.id, "registering")]
    assert not hasattr(slots[0], "options")
    assert looked == []  # nothing due: "later" starts in a week
    await org.close()


@pytest.mark.realtime
async def test_an_arena_runs_its_length_on_a_real_server(server: Server, bots: Any) -> None:
    """The arena's proof that the parts work together (its rules, pairing continuously for its
    length and scoring streaks, are tests/server/test_tournament_director.py's): forty seconds
    on the service's clock run four times fast, four random bots on 10-second clocks, to its end."""
    org = await organizer(server)
    await org.tournament_create(
        "short", "tictactoe", "arena", {"initial": 10.0, "increment": 0.0}, entry="bots", duration=40, starts_in=3600
    )
    await bots(4, "short")
    await entered(org, "short", 4)
    base = time.time()
    server.tournament_director.now = lambda: base + 3600 + (time.time() - base) * 4
    server.tournament_director.wake()
    await wait_finished(org, "short", timeout=60)
    tables = await org.tournament_pairings("short")
    assert tables and all(t["status"] == "finished" and len(t["players"]) == 2 for t in tables)
    assert len({t["round"] for t in tables}) >= 2  # paired again after its first games
    rows = await org.tournament_standings("short")
    assert sum(r["games"] for r in rows) == 2 * len(tables)
    assert [r["points"] for r in rows] == sorted((r["points"] for r in rows), reverse=True)
    await org.close()


async def test_a_tournament_list_watcher_is_told_when_tournaments_change(server: Server) -> None:
    """`tournament_list` with `watch`: `lobby_tournaments` when one is created or entered, so a
    lobby lists again instead of polling."""
    org = await organizer(server)
    watcher = await Client.connect(server.url, name="cy")
    try:
        await watcher.tournaments_page(watch=True)
        await org.tournament_create("told", "tictactoe", "swiss", CLOCK, rounds=1, starts_in=3600)
        async with asyncio.timeout(10):
            while (await watcher.lobby_events.get())["type"] != "lobby_tournaments":
                pass
        assert [t["name"] for t in (await watcher.tournaments_page())["tournaments"]] == ["told"]
        await watcher.tournaments_page(watch=False)
        await org.tournament_join("told")
        await asyncio.sleep(1.5)  # more than a push interval: nothing comes once it stopped watching
        assert watcher.lobby_events.empty()
    finally:
        await org.close()
        await watcher.close()
