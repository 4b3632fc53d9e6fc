"""The protocol guide's JavaScript bot (docs/examples/bot.mjs), run as the guide tells a bot author
to run it: `npm install ws` beside it (from the npm registry), then `node bot.mjs`, here started by
`partida match --seat-cmd` on a server of its own against the built-in random agent. Duel asks
every prompt kind of it (choices, attackers as a subset, blockers as an assignment, damage orders),
so games that end by the rules mean it answered each of them as the protocol wants."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

EXAMPLE = REPO / "docs" / "examples" / "bot.mjs"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")


@pytest.mark.processes
def test_the_javascript_example_plays_duel_against_a_built_in_bot(tmp_path: Path) -> None:
    shutil.copy(EXAMPLE, tmp_path / "bot.mjs")
    npm = shutil.which("npm")
    assert npm is not None, "node without npm: the guide's `npm install ws` cannot be followed"
    installed = subprocess.run(
        [npm, "install", "ws", "--no-audit", "--no-fund"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert installed.returncode == 0, installed.stderr
    seats = ("--seat-cmd", f"{NODE} bot.mjs", "--seat", "random")
    done = subprocess.run(
        [sys.executable, "-m", "partida", "match", "duel", *seats, "--games", "2", "--rotate", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    games, summary = lines[:-1], lines[-1]["summary"]
    assert summary["games"] == len(games) == 2
    for game in games:
        assert f"{NODE} bot.mjs" in [seat["agent"] for seat in game["seats"]]
        assert game["result"]["reason"] == "normal" and game["moves"] > 20
    # the bot prints the server's refusals of its answers: there were none
    assert "server error" not in done.stderr, done.stderr
