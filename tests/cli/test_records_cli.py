"""`partida games` and `partida replay` read by a person and by a pipe: whole lines when piped
(rich took 80 columns and cut them), winners by name (they were seat numbers), and help text
as the shell shows it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from partida.client import Client
from partida.server.app import Server
from tests.helpers import play_two

PARTIDA = [sys.executable, "-m", "partida"]
ADA = "ada-who-has-a-long-name"
BOB = "bob-who-has-a-longer-name"


async def _partida(*args: str) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    process = await asyncio.create_subprocess_exec(
        *PARTIDA, *args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    out, err = await asyncio.wait_for(process.communicate(), 90)
    return process.returncode or 0, out.decode(), err.decode()


@pytest.mark.processes
async def test_games_piped_are_whole_lines_naming_the_winners(server: Server, db_url: str) -> None:
    ada = await Client.connect(server.url, name=ADA)
    bob = await Client.connect(server.url, name=BOB)
    finals = [await play_two(ada, bob, "tictactoe"), await play_two(ada, bob, "tictactoe")]
    await ada.close()
    await bob.close()
    async with asyncio.timeout(30):  # the results are written after the last update is sent
        while len(await server.store.list_games(10, None, "finished")) < 2:
            await asyncio.sleep(0.1)
    code, out, err = await _partida("games", "--db", db_url)
    assert code == 0, err
    rows = [line for line in out.splitlines() if "tictactoe" in line]
    assert len(rows) == 2, out
    for row in rows:
        assert f"{ADA} (guest) vs {BOB} (guest)" in row, row  # not cut at 80 columns
        assert "…" not in row
    for final, row in zip(reversed(finals), rows, strict=True):  # newest first
        winners = final[0]["result"]["winners"]
        expected = "draw" if len(winners) == 2 else [ADA, BOB][winners[0]]
        assert row.split("│")[7].strip() == expected, row


@pytest.mark.processes
def test_match_help_shows_a_percent_sign_once() -> None:
    out = subprocess.run([*PARTIDA, "match", "--help"], capture_output=True, text=True, timeout=60)
    assert "95% interval" in out.stdout and "%%" not in out.stdout
