"""The GTP bridge through a real server: Debian's `gtp-rhino` (GRhino's Othello engine,
installed from the `grhino` package when missing) plays the built-in bots, with and without a
clock, and for a seat of `partida match --seat-cmd gtp:...`; an engine that crashes is started
again and the game replayed into it; an engine that answers an illegal move, never answers, or
will not stay up loses by resignation, the reason in the game's record and the log, never a
hung seat."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest

from partida.cli.play import play_bot_game
from tests.fixtures.programs import ensure_debian_package
from tests.helpers import seat_bot, wait_for

pytestmark = [pytest.mark.timeout(180), pytest.mark.processes]  # GTP engines are programs


@pytest.fixture(scope="module")
def rhino() -> str:
    return ensure_debian_package("grhino", "gtp-rhino")


def script(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return f"{sys.executable} {path}"


# A GTP engine that agrees to everything and then moves where it likes: a1 (never legal early).
ALWAYS_A1 = """
import sys
for line in sys.stdin:
    word = line.split()[0] if line.split() else ""
    print("= A1" if word == "genmove" else "=", flush=True)
    print(flush=True)
    if word == "quit":
        break
"""

# One that never answers genmove.
SILENT = """
import sys, time
for line in sys.stdin:
    if line.startswith("genmove"):
        time.sleep(60)
    print("=\\n", flush=True)
"""

# One that dies at once, every time.
DYING = """
import sys
print("cannot find my opening book", file=sys.stderr)
sys.exit(3)
"""

# gtp-rhino behind a proxy that dies (once: a marker file says so) at its third genmove.
CRASH_ONCE = """
import os, subprocess, sys
marker, engine = sys.argv[1], sys.argv[2]
rhino = subprocess.Popen([engine, "-l", "1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
moves = 0
for line in sys.stdin:
    if line.startswith("genmove"):
        moves += 1
        if moves == 3 and not os.path.exists(marker):
            open(marker, "w").close()
            print("crashing on purpose", file=sys.stderr, flush=True)
            os._exit(3)
    rhino.stdin.write(line)
    rhino.stdin.flush()
    while True:
        out = rhino.stdout.readline()
        sys.stdout.write(out)
        sys.stdout.flush()
        if not out.strip():
            break
"""


async def test_gtp_rhino_plays_both_colours_against_a_built_in_bot(connect, runners, bots, server, rhino) -> None:
    await bots("othello-engine", depth=1)
    await seat_bot(server, runners, "rhino", "gtp", command=f"{rhino} -l 1")
    watcher = await connect(name="watcher")
    records = []
    for seats in (["rhino", "othello-engine"], ["othello-engine", "rhino"]):
        records.append(await play_bot_game(watcher, "othello", {}, seats))
    for record in records:
        result = record["result"]
        assert result["reason"] == "normal" and "notes" not in result
        assert record["moves"] >= 20  # a whole game, passes implicit


async def test_under_a_clock_the_engine_is_told_its_time(connect, runners, bots, server, rhino, caplog) -> None:
    caplog.set_level(logging.DEBUG, logger="partida.bots.engines.gtp")
    await bots("othello-engine", depth=1)
    await seat_bot(server, runners, "rhino", "gtp", command=f"{rhino} -l 1")
    watcher = await connect(name="watcher")
    record = await play_bot_game(watcher, "othello", {}, ["rhino", "othello-engine"], {"initial": 60, "increment": 1})
    assert record["result"]["reason"] == "normal"
    said = caplog.text
    assert "< boardsize 8" in said and "< time_settings 60 0 0" in said
    assert re.search(r"< time_left black \d+ 0\n", said)  # whole seconds, no stones (no byo-yomi)
    assert said.index("< time_left black") < said.index("< genmove black")

    async def said_quit() -> bool:  # told once the game is over for the bot, after the watcher
        return "< quit" in caplog.text

    await wait_for(said_quit, "the engine to be told quit", timeout=10)


async def test_a_crashed_engine_is_restarted_and_the_game_goes_on(
    connect, runners, bots, server, rhino, tmp_path, caplog
) -> None:
    caplog.set_level(logging.INFO)
    command = script(tmp_path, "crash_once.py", CRASH_ONCE) + f" {tmp_path / 'crashed'} {rhino}"
    await bots("othello-engine", depth=1)
    await seat_bot(server, runners, "rhino", "gtp", command=command)
    watcher = await connect(name="watcher")
    record = await play_bot_game(watcher, "othello", {}, ["rhino", "othello-engine"])
    assert (tmp_path / "crashed").exists()
    assert record["result"]["reason"] == "normal" and "notes" not in record["result"]
    assert "crashing on purpose" in caplog.text  # its stderr, in the bot's log
    assert "starting it again" in caplog.text


@pytest.mark.parametrize(
    ("program", "params", "said"),
    [
        (ALWAYS_A1, {}, "illegal move 'A1' for black"),
        (SILENT, {"move_timeout": 1}, "no move in time: no answer within 1.0 s"),
        (DYING, {"restarts": 1}, "crashed: the engine died 2 times in a row; its stderr ended with: 'cannot find"),
    ],
    ids=["illegal", "silent", "dying"],
)
async def test_an_engine_that_fails_loses_with_the_reason_recorded(
    connect, runners, bots, server, tmp_path, caplog, program, params, said
) -> None:
    caplog.set_level(logging.WARNING)
    command = script(tmp_path, "engine.py", program)
    await bots("othello-engine", depth=1)
    await seat_bot(server, runners, "broken", "gtp", command=command, **params)
    watcher = await connect(name="watcher")
    record = await play_bot_game(watcher, "othello", {}, ["broken", "othello-engine"])
    result = record["result"]
    assert result["reason"] == "resign" and result["winners"] == [1]
    assert said in result["notes"]["0"] and result["notes"]["0"].startswith("GTP engine")
    stored = await server.store.load_game(record["game_id"])
    assert stored.result["notes"] == result["notes"]  # the game's record keeps it
    assert said in caplog.text


def test_partida_match_plays_a_gtp_engine_for_a_seat(rhino) -> None:
    seat = f"gtp:{rhino} -l 1"
    argv = [sys.executable, "-m", "partida", "match", "othello", "--seat-cmd", seat, "--seat", "random"]
    done = subprocess.run([*argv, "--games", "2", "--rotate", "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    *games, summary = [json.loads(line) for line in done.stdout.splitlines()]
    assert [g["result"]["reason"] for g in games] == ["normal", "normal"]
    assert summary["summary"]["seats"] == [seat, "random"]
