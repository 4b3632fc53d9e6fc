"""`partida export` as a user runs it, in its own process: a game read from the server's
database and from the server itself, as GGF and as the replay's JSON; a tournament's games as one
file; and `partida replay` telling a takeback."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from datetime import UTC, datetime

import pytest

from partida.server.app import Server
from partida.storage.tournaments import TournamentStore
from tests.helpers import final_update

WIPEOUT = ["d3", "c3", "b3", "d2", "e1", "d6", "d7", "e3", "f4"]


async def partida(*args: str) -> subprocess.CompletedProcess[str]:
    # in a thread: the server this test talks to runs on this test's event loop
    return await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "partida", *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.processes
async def test_export_reads_the_database_or_asks_the_server(connect, server: Server, db_url: str) -> None:
    alice, bob = await connect(name="alice"), await connect(name="bob")
    code = (await alice.create_room("othello", seat=0, public=True))["room"]
    await bob.join(code)
    for seq, square in enumerate(WIPEOUT):
        await (alice if seq % 2 == 0 else bob).act(code, square, seq=seq)
    game_id = str((await final_update(alice, code))["game_id"])
    text = await partida("export", game_id, "--db", db_url)
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("(;GM[Othello]") and "B[d3]W[c3]B[b3]W[d2]B[e1]W[d6]B[d7]W[e3]B[f4];)" in text.stdout
    remote = await partida("export", game_id, "--server", server.url, "--format", "json")
    assert remote.returncode == 0, remote.stderr
    assert json.loads(remote.stdout) == await bob.game(int(game_id), steps=True)
    missing = await partida("export", "99999", "--db", db_url)
    assert missing.returncode != 0 and "there is no game 99999" in missing.stderr and "Traceback" not in missing.stderr


@pytest.mark.processes
async def test_replay_and_export_tell_a_takeback(connect, server: Server, db_url: str) -> None:
    alice, bob = await connect(name="alice"), await connect(name="bob")
    code = (await alice.create_room("tictactoe", seat=0, public=True))["room"]
    await bob.join(code)
    await alice.act(code, 4, seq=0)
    await bob.act(code, 0, seq=1)
    await alice.offer_takeback(code)
    await bob.accept_takeback(code)
    await alice.act(code, 8, seq=3)
    await bob.resign(code)
    game_id = str((await final_update(alice, code))["game_id"])
    replay = await partida("replay", game_id, "--db", db_url)
    assert replay.returncode == 0, replay.stderr
    assert "matches the hash" in replay.stdout
    assert (
        "seat 0 (alice): b2 (taken back)" in replay.stdout and "3. seat 0 (alice): takes back 2 moves" in replay.stdout
    )
    text = await partida("export", game_id, "--db", db_url)
    assert "3. alice takes back 2 moves" in text.stdout and "4. alice: c3" in text.stdout


@pytest.mark.processes
@pytest.mark.slow  # two accounts' password hashes
async def test_a_tournaments_games_export_as_one_file(connect, server: Server, db_url: str) -> None:
    ada = await server.store.create_user("ada", "a long password")
    bea = await server.store.create_user("bea", "a long password")
    games = []
    for first, second in (("ada", "bea"), ("bea", "ada")):
        x, o = await connect(name=f"{first}-guest"), await connect(name=f"{second}-guest")
        code = (await x.create_room("tictactoe", seat=0, public=True))["room"]
        await o.join(code)
        await x.act(code, 4, seq=0)
        await o.resign(code)
        games.append((await final_update(x, code))["game_id"])
    tournaments = TournamentStore(server.store.db)
    cup = await tournaments.create(
        "cup", "tictactoe", {}, 2, {"initial": 60, "increment": 0}, "round-robin", "people", datetime.now(UTC)
    )
    await tournaments.open_round(cup.id, 1, [(1, [ada.id, bea.id], games[0], None)])
    await tournaments.open_round(cup.id, 2, [(1, [bea.id, ada.id], games[1], None), (2, [ada.id], None, {"bye": 1})])
    out = await partida("export", "--tournament", "cup", "--db", db_url)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count('[Event "cup"]') == 2 and '[Round "1"]' in out.stdout and '[Round "2"]' in out.stdout
    assert f'[GameId "{games[0]}"]' in out.stdout and f'[GameId "{games[1]}"]' in out.stdout
    both = await partida("export", "--tournament", "cup", "--db", db_url, "--format", "json")
    assert [g["game_id"] for g in json.loads(both.stdout)["games"]] == games
    nothing = await partida("export", "--tournament", "nope", "--db", db_url)
    assert nothing.returncode != 0 and "there is no tournament 'nope'" in nothing.stderr
