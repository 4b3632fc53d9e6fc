"""Hosted bots playing for real: a server, the hosting supervisor with its runner process, each
program in bubblewrap. Two honest bots (Python and JavaScript, examples/hosted/) play a ladder
with built-in bots, every game they play ends normally, the version that played each seat is
stored, and their owners read their logs; a bot that always crashes is paused with its reason
until its owner submits again."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from partida.bots.runner import BotRunner
from partida.client import Client
from partida.hosting.bundles import pack
from partida.hosting.limits import Limits
from partida.hosting.supervisor import HostingPlan, HostingSupervisor
from partida.server.app import Server, ServerConfig
from partida.server.services.hosted_bots import HostingSettings
from partida.storage.hosted import HostedStore
from tests.helpers import REPO, random_decider, reachable_directory, wait_for

pytestmark = [
    pytest.mark.processes,
    pytest.mark.realtime,
    pytest.mark.slow,
    pytest.mark.usefixtures("bubblewrap", "node"),  # installed when missing, as every program the tests use
]

EXAMPLES = REPO / "examples" / "hosted"
PASSWORDS = {"ada": "ada lovelace", "bo": "bo diddley"}


@pytest.fixture
def bundles() -> Any:
    with reachable_directory() as directory:
        yield directory


@pytest.fixture
async def hosting(db_url: str, bundles: Path) -> AsyncIterator[Callable[..., Any]]:
    """Start a hosting server and its supervisor (with a real runner process) for a plan."""
    parts: list[Any] = []

    async def start(**plan: Any) -> tuple[Server, HostingSupervisor]:
        server = Server(ServerConfig(port=0, db_url=db_url, hosting=HostingSettings(bundles)))
        await server.start()
        parts.append(server)
        for name, password in PASSWORDS.items():
            await server.store.create_user(name, password)

        async def new_token(name: str) -> str:
            return (await server.store.create_bot(name))[1]

        async def ladder_game(name: str) -> str | None:
            ladder = await server.store.ladders.get(name)
            return None if ladder is None else ladder.game

        supervisor = HostingSupervisor(
            server.url, HostingPlan(bundles, **plan), HostedStore(server.db), new_token, ladder_game
        )
        server.hosted_bots.on_change(supervisor.changed)
        supervisor.start()
        parts.append(supervisor)
        return server, supervisor

    yield start
    for task in BUILT_IN:
        task.cancel()
    await asyncio.gather(*BUILT_IN, return_exceptions=True)
    BUILT_IN.clear()
    for part in reversed(parts):
        with contextlib.suppress(Exception):
            await part.stop()


BUILT_IN: list[asyncio.Task[None]] = []


async def built_in(server: Server, name: str, agent: str, ladder: str, **params: Any) -> None:
    """A built-in bot in the ladder, under a bot account of its own (stopped by `hosting`)."""
    _, token = await server.store.create_bot(name)
    runner = BotRunner(server.url, agent, name=name, token=token, ladders=[ladder], params=params)
    BUILT_IN.append(asyncio.create_task(runner.run(reconnect=False)))


@contextlib.asynccontextmanager
async def owner(server: Server, name: str) -> AsyncIterator[Client]:
    client = await Client.connect(server.url, name=name, password=PASSWORDS[name])
    try:
        yield client
    finally:
        await client.close()


async def test_two_hosted_bots_play_a_ladder_with_built_in_bots_and_their_owners_read_their_logs(
    hosting: Any,
) -> None:
    server, _ = await hosting(ladders=["hosted"], max_programs=4)
    ladder = await server.store.ladders.create("hosted", "othello", {}, 2, {"initial": 30, "increment": 0.5}, 2)
    async with owner(server, "ada") as ada:
        await ada.bot_submit("ada-greedy", ["othello"], "python3 bot.py", pack(EXAMPLES / "python-greedy"))
    async with owner(server, "bo") as bo:
        await bo.bot_submit("bo-weights", ["othello"], "node bot.js", pack(EXAMPLES / "js-weights"))
    await built_in(server, "builtin-random", "random", "hosted")
    await built_in(server, "builtin-alphabeta", "alphabeta", "hosted", depth=1)
    hosted = {"ada-greedy", "bo-weights"}

    async def each_played_three() -> bool:
        games = await server.store.list_games(200, status="finished")
        played = [name for g in games for _, _, name in g.seat_list if name in hosted]
        return all(played.count(name) >= 3 for name in hosted)

    await wait_for(each_played_three, "each hosted bot to finish three ladder games", timeout=240)
    await server.ladder_director.stop()  # no more pairings: the games in play end by themselves

    async def none_in_play() -> bool:
        return not await server.store.list_games(200, status="playing")

    await wait_for(none_in_play, "the ladder's games in play to end", timeout=120)
    games = [g for g in await server.store.list_games(200) if any(n in hosted for _, _, n in g.seat_list)]
    assert games and {g.status for g in games} == {"finished"}
    for game in games:
        assert game.result is not None and game.result["reason"] == "normal", game.result  # no forfeit
        for seat, _, name in game.seat_list:
            if name in hosted:
                assert game.seat_versions.get(seat) == 1  # the version that played the seat
    standings = {s.name for s in await server.store.ladders.standings(ladder.id)}
    assert hosted <= standings
    async with owner(server, "ada") as ada:
        logs = await ada.bot_logs("ada-greedy")
        assert logs["bot"]["status"] == "active"
        assert all(entry["verdict"] == "finished" for entry in logs["logs"])  # no verdict: nothing failed
        assert any("greedy: playing othello" in line for entry in logs["logs"] for line in entry["stderr_tail"])
        assert logs["games"] and all(g["version"] == 1 for g in logs["games"])
        [listed] = await ada.games(player="ada-greedy", limit=1)
        assert any(seat.get("version") == 1 for seat in listed["seats"] if seat["name"] == "ada-greedy")
    async with owner(server, "bo") as bo:
        logs = await bo.bot_logs("bo-weights")
        assert any("weights: playing othello" in line for entry in logs["logs"] for line in entry["stderr_tail"])


async def test_a_bot_that_always_crashes_is_paused_until_its_owner_submits_again_and_then_plays(
    hosting: Any, tmp_path: Path
) -> None:
    server, _ = await hosting(ladders=["crashes"], pause_after=3, limits=Limits(decision_seconds=5.0))
    await server.store.ladders.create("crashes", "tictactoe", {}, 2, {"initial": 20, "increment": 0.5}, 1)
    crasher = tmp_path / "crasher"
    crasher.mkdir()
    (crasher / "bot.py").write_text("import sys\nsys.stdin.readline()\nprint('boom', file=sys.stderr)\nsys.exit(3)\n")
    async with owner(server, "ada") as ada:
        await ada.bot_submit("ada-crash", ["tictactoe"], "python3 bot.py", pack(crasher))
    await built_in(server, "builtin-random", "random", "crashes")

    async def paused() -> bool:
        bot = await server.store.get_account_by_name("ada-crash")
        info = await HostedStore(server.db).bot(bot.id) if bot is not None else None
        return info is not None and info.status == "paused"

    await wait_for(paused, "the crashing bot to be paused", timeout=180)
    async with owner(server, "ada") as ada:
        [bot] = await ada.bot_list()
        assert bot["status"] == "paused" and "3 failed games in a row" in bot["reason"]
        logs = await ada.bot_logs("ada-crash")
        verdicts = [entry for entry in logs["logs"] if entry["verdict"] != "finished"]
        assert len(verdicts) >= 3 and {entry["verdict"] for entry in verdicts} == {"crashed"}
        assert all(any("boom" in line for line in entry["stderr_tail"]) for entry in verdicts)
        assert all(entry["game_id"] is not None for entry in verdicts)
        noted = [g for g in logs["games"] if g["note"]]
        assert noted and all("hosted bot ada-crash v1: crashed" in g["note"] for g in noted)
        fixed = tmp_path / "fixed"
        fixed.mkdir()
        shutil.copy(REPO / "examples" / "bots" / "tictactoe.py", fixed / "bot.py")
        again = await ada.bot_submit("ada-crash", ["tictactoe"], "python3 bot.py", pack(fixed))
        assert again["version"] == 2 and again["bot"]["status"] == "active" and again["bot"]["reason"] is None

        async def version_2_played() -> bool:
            games = (await ada.bot_logs("ada-crash"))["games"]
            return any(g["version"] == 2 and g["status"] == "finished" and g["note"] is None for g in games)

        await wait_for(version_2_played, "the new version to play a game to its end", timeout=120)


async def test_a_hosted_bot_answers_a_seek_and_is_seated_by_its_name(hosting: Any, tmp_path: Path) -> None:
    """Beyond ladders: with --host-bots-seeks it takes a seek that allows bots, of a game it
    declares; a room asks for it by its account's name; each game is played to its end."""
    server, _ = await hosting(answer_seeks=True)
    bot = tmp_path / "ttt"
    bot.mkdir()
    shutil.copy(REPO / "examples" / "bots" / "tictactoe.py", bot / "bot.py")
    async with owner(server, "ada") as ada:
        await ada.bot_submit("ada-ttt", ["tictactoe"], "python3 bot.py", pack(bot))

    async def connected() -> bool:
        return any(s.identity is not None and s.identity.name == "ada-ttt" for s in server.bot_sessions())

    await wait_for(connected, "the hosted bot to connect")
    guest = await Client.connect(server.url, name="kim")
    try:
        await guest.seek("tictactoe", clock={"initial": 30, "increment": 1}, allow_bots=True)
        paired = await asyncio.wait_for(guest.seek_events.get(), 60)
        final = await guest.play(paired["room"], random_decider(1))
        assert final["result"]["reason"] == "normal"
        room = await guest.create_room("tictactoe", seats=2, seat=0, bots={1: "ada-ttt"})
        final = await guest.play(room["room"], random_decider(2))
        assert final["result"]["reason"] == "normal"
        assert await refused_code(guest.create_room("othello", seats=2, seat=0, bots={1: "ada-ttt"})) == "bot_declines"
    finally:
        await guest.close()
    games = await server.store.list_games(10, status="finished")
    assert len(games) == 2 and all(g.seat_versions for g in games)


async def refused_code(call: Any) -> str:
    from partida.client import ServerError

    with pytest.raises(ServerError) as error:
        await call
    return error.value.code


async def test_hosted_bots_enter_a_tournament_and_play_every_round(hosting: Any, tmp_path: Path) -> None:
    """--host-bots-tournament: each hosted bot enters (it plays the tournament's game) and plays
    its games of a bots-only round robin beside a built-in bot, each game to its end."""
    server, _ = await hosting(tournaments=["cup"])
    clock = {"initial": 30.0, "increment": 1.0}
    bot = tmp_path / "ttt"
    bot.mkdir()
    shutil.copy(REPO / "examples" / "bots" / "tictactoe.py", bot / "bot.py")
    async with owner(server, "ada") as ada:
        await ada.tournament_create("cup", "tictactoe", "round-robin", clock, entry="bots", starts_in=3600)
        await ada.bot_submit("ada-ttt", ["tictactoe"], "python3 bot.py", pack(bot))
    async with owner(server, "bo") as bo:
        await bo.bot_submit("bo-ttt", ["tictactoe"], "python3 bot.py", pack(bot))
    _, token = await server.store.create_bot("builtin-random")
    runner = BotRunner(server.url, "random", name="builtin-random", token=token, tournaments=["cup"])
    BUILT_IN.append(asyncio.create_task(runner.run(reconnect=False)))
    async with owner(server, "ada") as ada:

        async def all_entered() -> bool:
            return {t["name"]: t for t in await ada.tournament_list()}["cup"]["entrants"] == 3

        await wait_for(all_entered, "the three bots to enter the tournament", timeout=60)
        server.tournament_director.now = lambda: time.time() + 3660  # its start is due now
        server.tournament_director.wake()

        async def finished() -> bool:
            return {t["name"]: t for t in await ada.tournament_list()}["cup"]["status"] == "finished"

        await wait_for(finished, "the tournament to finish", timeout=120)
        rows = {row["name"]: row for row in await ada.tournament_standings("cup")}
        assert set(rows) == {"ada-ttt", "bo-ttt", "builtin-random"} and all(r["games"] == 2 for r in rows.values())
        played = [t for t in await ada.tournament_pairings("cup") if t["room"] is not None]  # byes have none
        assert len(played) == 3 and all(t["status"] == "finished" for t in played)
    games = await server.store.list_games(20, status="finished")
    assert len(games) == 3 and not any((g.result or {}).get("notes") for g in games)
