"""`partida match` through a server, run as a bot author runs it: paired games between a bot
account's own process (tests/data/tiny_bot.py, a websocket bot written without the SDK) and the
server's pool, on a `partida serve` of its own or one the match starts for `--seat-cmd`; a bot
that crashes or drops its connection ends the match with one line naming its seat."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from tests.fixtures.programs import free_port
from tests.helpers import DATA

PARTIDA = [sys.executable, "-m", "partida"]
TINY_BOT = str(DATA / "tiny_bot.py")


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PARTIDA, *args], capture_output=True, text=True, timeout=timeout)


def _lines(out: str) -> tuple[list[dict], dict]:
    lines = [json.loads(line) for line in out.splitlines()]
    return lines[:-1], lines[-1]["summary"]


@pytest.mark.processes
def test_seat_cmd_starts_a_server_and_the_bot_and_plays_pairs() -> None:
    cmd = f"{sys.executable} {TINY_BOT}"
    done = run("match", "tictactoe", "--seat-cmd", cmd, "--seat", "alphabeta", "--games", "6", "--rotate", "--json")
    assert done.returncode == 0, done.stderr
    games, summary = _lines(done.stdout)
    assert len(games) == summary["games"] == 6 and summary["pentanomial"]["trials"] == 3
    assert (
        sorted(tuple(s["agent"] for s in g["seats"]) for g in games)
        == [(cmd, "alphabeta")] * 3 + [("alphabeta", cmd)] * 3
    )
    # alphabeta never loses at tictactoe: the tiny bot, counted as the first seat, never wins
    assert summary["wins"] == 0 and summary["losses"] + summary["draws"] == 6
    assert summary["agents"]["alphabeta"]["losses"] == 0
    assert "fresh seeds" in summary["pairing"]


@pytest.mark.processes
def test_a_seat_cmd_that_crashes_ends_the_match_naming_its_seat() -> None:
    cmd = f"{sys.executable} {TINY_BOT} --crash-after 7"
    done = run(
        "match", "tictactoe", "--seat", "random", "--seat-cmd", cmd, "--games", "20", "--rotate", "--parallel", "1"
    )
    assert done.returncode == 2, done.stdout
    error = done.stderr.strip().splitlines()[-1]
    assert error.startswith("partida: error: the match stopped after "), done.stderr
    assert error.endswith(f"seat 2 ({cmd}): its process exited with code 3"), error
    assert "Traceback" not in done.stderr
    assert "random against" in done.stdout and "random:" in done.stdout  # the games so far, reported


@pytest.mark.processes
def test_an_sprt_through_a_server_plays_until_it_decides() -> None:
    """`partida bot alphabeta` in its own process against the pool's random agent, no --games:
    the match goes on past the plain default of one game, and stops at H1 long before the cap."""
    cmd = f"{sys.executable} -m partida bot alphabeta --log-level warning"
    done = run("match", "tictactoe", "--seat-cmd", cmd, "--seat", "random", "--sprt", "elo0=0 elo1=100", "--json")
    assert done.returncode == 0, done.stderr
    games, summary = _lines(done.stdout)
    assert summary["sprt"]["accepted"] == "H1" and summary["verdict"] == "H1 accepted"
    assert 2 < summary["pentanomial"]["trials"] * 2 <= len(games) < 200


@pytest.mark.processes
def test_bad_seat_commands_are_one_line_errors() -> None:
    for args, text in (
        (("--seat-cmd", "no-such-program-here", "--seat", "random"), "seat 1 (no-such-program-here): cannot start it"),
        (("--seat-cmd", "python 'open", "--seat", "random"), "cannot split"),
        (("--seat-cmd", "true", "--seat", "random", "--local"), "--local plays in-process"),
        (("--seat-cmd", "true", "--seat", "random", "--server", "ws://127.0.0.1:9"), "drop --server"),
        (("--games", "2"), "give the agents"),
        (("--seat-cmd", "true", "--seat", "mcts[iterations=3]"), "agents with parameters play in-process"),
        (("--seat-cmd", "true", "--seat", "nosuchagent"), "unknown agent 'nosuchagent'"),
    ):
        done = run("match", "tictactoe", *args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert text in done.stderr and "Traceback" not in done.stderr, (args, done.stderr)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A `partida serve` with a random pool bot, and a bot account `tiny`; yields (URL, token)."""
    folder = tmp_path_factory.mktemp("serve")
    db = f"sqlite:///{folder / 'partida.db'}"
    created = run("db", "create-bot", "tiny", "--db", db)
    assert created.returncode == 0, created.stderr
    token = created.stdout.splitlines()[1].strip()
    port = free_port()
    url = f"ws://127.0.0.1:{port}"
    log = open(folder / "serve.log", "w")
    server = subprocess.Popen(
        [*PARTIDA, "serve", "--port", str(port), "--db", db, "--bots", "random"], stdout=log, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 60
        while run("match", "tictactoe", "--seat", "random", "--seat", "random", "--server", url).returncode != 0:
            assert time.monotonic() < deadline and server.poll() is None, "the server did not come up"
            time.sleep(0.5)
        yield url, token
    finally:
        server.terminate()
        server.wait(20)
        log.close()


def _start_tiny(url: str, token: str, *extra: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PARTIDA_SERVER": url, "PARTIDA_BOT_TOKEN": token}
    return subprocess.Popen([sys.executable, TINY_BOT, *extra], env=env)


@pytest.mark.processes
def test_server_match_pairs_a_bot_account_and_runs_the_sprt(served: tuple[str, str]) -> None:
    url, token = served
    bot = _start_tiny(url, token)
    try:
        done = run(
            "match", "tictactoe", "--seat", "tiny", "--seat", "random", "--games", "8",
            "--sprt", "elo0=0 elo1=100", "--server", url, "--json",
        )  # fmt: skip
    finally:
        bot.terminate()
        bot.wait(10)
    games, summary = _lines(done.stdout)
    # 8 games rarely decide: the exit status tells the verdict (0 H1, 3 H0, 4 none within the cap)
    assert done.returncode == {"H1": 0, "H0": 3, None: 4}[summary["sprt"]["accepted"]], done.stderr
    assert summary["games"] == len(games) and summary["games"] % 2 == 0
    assert summary["pentanomial"]["trials"] * 2 == summary["games"]
    assert summary["sprt"]["counts"] == "pentanomial" and summary["sprt"]["elo1"] == 100
    by_deal: dict[int, list[tuple[str, ...]]] = {}
    for game in games:  # printed as they end: a pair's games need not be next to each other
        by_deal.setdefault(game["deal"], []).append(tuple(s["agent"] for s in game["seats"]))
    assert all(sorted(seatings) == [("random", "tiny"), ("tiny", "random")] for seatings in by_deal.values())
    assert {s["agent"] for g in games for s in g["seats"]} == {"tiny", "random"}


@pytest.mark.processes
def test_a_bot_account_that_drops_its_connection_ends_the_match(served: tuple[str, str]) -> None:
    url, token = served
    bot = _start_tiny(url, token, "--crash-after", "7")
    try:
        args = ("match", "tictactoe", "--seat", "tiny", "--seat", "random", "--games", "20", "--rotate")
        done = run(*args, "--parallel", "1", "--server", url)
    finally:
        bot.kill()
        bot.wait(10)
    assert done.returncode == 2, done.stdout
    error = done.stderr.strip().splitlines()[-1]
    assert "seat 1 (tiny): its bot lost its connection to the server in room" in error, done.stderr
    assert "Traceback" not in done.stderr and "tiny:" in done.stdout


@pytest.mark.processes
def test_a_match_longer_than_the_rooms_one_connection_may_watch(served: tuple[str, str]) -> None:
    """The watching connection never left a finished room: the 101st game was refused
    (rate_limited: watching 100 rooms already)."""
    url, _ = served
    args = ("match", "tictactoe", "--seat", "random", "--seat", "random", "--games", "102", "--rotate")
    done = run(*args, "--server", url, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["summary"]["games"] == 102
