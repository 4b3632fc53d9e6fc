"""`partida tournament` as a person runs it, in its own process against a real server: the tables
of a finished round robin name their winners and draws; `create` writes its clock in the one
notation (minutes+seconds) and refuses other text with the accepted forms; the standings explain
only the tie-breaks they show."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from partida.bots.runner import BotRunner
from partida.client import Client
from partida.server.app import Server
from tests.helpers import plain

PARTIDA = [sys.executable, "-m", "partida"]


async def _partida(*args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        *PARTIDA, *args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, COLUMNS="200")
    )
    out, err = await asyncio.wait_for(process.communicate(), 90)
    return process.returncode or 0, plain(out), plain(err)


@pytest.mark.processes
@pytest.mark.slow
async def test_pairings_name_the_winner_and_say_draw(server: Server) -> None:
    """Ranks start at 1: the tables printed `[ won]` with no name for a draw, and never `[draw]`.
    Two perfect tic-tac-toe players always draw; against a random player they win or draw."""
    await server.store.create_user("org", "a long password")
    org = await Client.connect(server.url, name="org", password="a long password")
    clock = {"initial": 60.0, "increment": 0.0}
    await org.tournament_create("rr", "tictactoe", "round-robin", clock, entry="bots", starts_in=3600)
    tasks = []
    for name, agent in (("perfect1", "alphabeta"), ("perfect2", "alphabeta"), ("rando", "random")):
        _, token = await server.store.create_bot(name)
        runner = BotRunner(server.url, agent, name=name, token=token, tournaments=["rr"])
        tasks.append(asyncio.get_running_loop().create_task(runner.run(reconnect=False)))
    try:
        async with asyncio.timeout(90):
            while {t["name"]: t for t in await org.tournament_list()}["rr"]["entrants"] < 3:
                await asyncio.sleep(0.1)
            server.tournament_director.now = lambda: time.time() + 3660  # it is due: start it
            server.tournament_director.wake()
            while {t["name"]: t for t in await org.tournament_list()}["rr"]["status"] != "finished":
                await asyncio.sleep(0.3)
        code, out, err = await _partida("tournament", "pairings", "rr", "--server", server.url)
        assert code == 0, err
        lines = out.splitlines()
        duel = next(line for line in lines if "perfect1 vs perfect2" in line or "perfect2 vs perfect1" in line)
        assert duel.endswith("[draw]"), out
        assert "[ won" not in out
        for line in lines:
            if "won]" in line:
                winner = line.rsplit("[", 1)[1].removesuffix(" won]")
                assert winner in line.split(":", 1)[1].split("(")[0], line  # a player of that table
        byes = [line for line in lines if "(bye)" in line]
        assert len(byes) == 3  # three entrants: one rests each round
        code, out, err = await _partida("tournament", "standings", "rr", "--server", server.url)
        assert code == 0, err
        assert "Buchholz" not in out and "Sonneborn-Berger" in out  # a round robin ranks by SB, not BH
    finally:
        for task in tasks:
            task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.gather(*tasks, return_exceptions=True)
        await org.close()


@pytest.mark.processes
async def test_create_writes_its_clock_in_minutes_and_seconds_and_refuses_other_text(tmp_path: Path) -> None:
    """`--clock 5+3` is five minutes and three seconds, as `--seek 5+3` is (it was 5 seconds);
    the line printed writes it so, not as a Python dict; `300` is refused with the forms."""
    db = f"sqlite:///{tmp_path / 'partida.db'}"
    base = ("tournament", "create", "--game", "tictactoe", "--format", "swiss", "--db", db)
    code, out, err = await _partida(*base[:2], "cup", *base[2:], "--clock", "5+3")
    assert code == 0, err
    assert "clock 5+3," in out and "{" not in out, out
    code, out, err = await _partida(*base[:2], "blitz", *base[2:], "--clock", "2s+0.05", "--json")
    assert code == 0, err
    assert json.loads(out)["clock"] | {"timeouts": 3} == {"initial": 2.0, "increment": 0.05, "timeouts": 3}
    code, out, err = await _partida(*base[:2], "odd", *base[2:], "--clock", "300")
    assert code == 2 and out == ""
    assert err.startswith("partida: error: --clock: '300' is not a clock"), err
    assert all(form in err for form in ("5+3", "2s+0.05", "move:30")), err
    assert len(err.strip().splitlines()) == 1
