"""The `partida` command end to end, as a user runs it: `partida serve` in its own process with its
bot pool (separate processes), then `match`, `play`, `games` and `replay` from other processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.programs import free_port

PARTIDA = [sys.executable, "-m", "partida"]


def run(*args: str, input: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PARTIDA, *args], capture_output=True, text=True, input=input, timeout=timeout)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A `partida serve` with a small bot pool; yields (server URL, database URL)."""
    folder = tmp_path_factory.mktemp("serve")
    db = f"sqlite:///{folder / 'partida.db'}"
    port = free_port()
    url = f"ws://127.0.0.1:{port}"
    log = open(folder / "serve.log", "w")
    server = subprocess.Popen(
        [*PARTIDA, "serve", "--port", str(port), "--db", db, "--bots", "random,alphabeta"],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=dict(os.environ),
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            out = run("match", "tictactoe", "--seat", "random", "--seat", "alphabeta", "--server", url, "--json")
            if out.returncode == 0:
                break
            if time.monotonic() > deadline or server.poll() is not None:
                raise RuntimeError(f"server did not come up: {out.stderr}\n{Path(log.name).read_text()}")
            time.sleep(0.5)
        yield url, db
    finally:
        server.terminate()
        server.wait(20)
        log.close()


@pytest.mark.processes
def test_match_prints_a_json_line_per_game_and_a_summary(served: tuple[str, str]) -> None:
    url, _ = served
    out = run(
        "match", "tictactoe", "--seat", "alphabeta", "--seat", "random", "--games", "3", "--server", url, "--json"
    )
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    games, summary = lines[:-1], lines[-1]["summary"]
    assert len(games) == 3
    for game in games:
        assert set(game) >= {"game_id", "seats", "result", "moves", "seconds"}
        assert game["result"]["ranks"][0] == 1
    assert summary["agents"]["alphabeta"]["losses"] == 0


@pytest.mark.processes
def test_match_plays_games_at_the_same_time_and_counts_each_once(served: tuple[str, str]) -> None:
    url, _ = served
    args = ("match", "tictactoe", "--seat", "random", "--seat", "random", "--games", "6", "--rotate")
    out = run(*args, "--parallel", "3", "--server", url, "--json")
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    games, summary = lines[:-1], lines[-1]["summary"]
    assert len({game["game_id"] for game in games}) == 6
    assert summary["games"] == 6 and summary["agents"]["random"]["games"] == 12


@pytest.mark.processes
def test_match_under_a_clock_bots_answer_in_time(served: tuple[str, str]) -> None:
    url, _ = served
    out = run("match", "tictactoe", "--seat", "alphabeta", "--seat", "random", "--clock", "move:2", "--server", url)
    assert out.returncode == 0, out.stderr
    assert "alphabeta: 1 wins, 0 draws, 0 losses" in out.stdout or "alphabeta: 0 wins, 1 draws" in out.stdout


@pytest.mark.processes
def test_play_against_a_bot_in_the_terminal(served: tuple[str, str]) -> None:
    url, _ = served
    # Type every square in turn; squares already taken are refused and the prompt asks again.
    moves = "\n".join(["a1", "zz", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"] * 2) + "\n"
    out = run(
        "play", "tictactoe", "--vs", "random", "--clock", "10+5", "--server", url, "--name", "tester", input=moves
    )
    assert out.returncode == 0, out.stderr
    assert "write a square as a1..c3" in out.stdout
    assert any(word in out.stdout for word in ("You win!", "Draw.", "wins."))


@pytest.mark.processes
def test_games_and_replay_read_the_database(served: tuple[str, str]) -> None:
    _, db = served
    out = run("games", "--db", db, "--json")
    assert out.returncode == 0, out.stderr
    games = json.loads(out.stdout)
    finished = [g for g in games if g["status"] == "finished"]
    assert finished
    replay = run("replay", str(finished[0]["id"]), "--db", db, "--json")
    assert replay.returncode == 0, replay.stderr
    data = json.loads(replay.stdout)
    assert data["seed_verified"] and data["result"] == {k: finished[0]["result"][k] for k in data["result"]}
    text = run("replay", str(finished[0]["id"]), "--db", db)
    assert "matches the hash" in text.stdout


@pytest.mark.processes
def test_user_errors_are_one_line_not_a_traceback(served: tuple[str, str]) -> None:
    url, db = served
    for args in (
        ("match", "chess", "--seat", "random", "--seat", "random", "--server", url),
        ("play", "--room", "NOPE99", "--server", url),
        ("replay", "999999", "--db", db),
        ("play", "tictactoe", "--server", "ws://127.0.0.1:9"),
        ("play", "tictactoe", "--clock", "fast", "--server", url),
        ("play", "tictactoe", "--clock", "move:0", "--server", url),
        ("match", "tictactoe", "--seat", "nobody", "--seat", "random", "--server", url),
        ("match", "tictactoe", "--seat", "random", "--seat", "random", "--parallel", "0", "--server", url),
    ):
        out = run(*args)
        assert out.returncode == 2, (args, out.stdout, out.stderr)
        assert out.stderr.startswith("partida: error:"), out.stderr
        assert "Traceback" not in out.stderr


@pytest.mark.processes
def test_limits_from_the_environment_are_checked_like_the_flag(tmp_path: Path) -> None:
    env = {**os.environ, "PARTIDA_LIMITS": "requests_per_second=100 no_such_limit=3"}
    out = subprocess.run(
        [*PARTIDA, "serve", "--no-bots", "--port", "0", "--db", str(tmp_path / "p.db")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("partida: error:") and "no_such_limit" in out.stderr


@pytest.mark.processes
def test_rules_shows_a_games_rules_text() -> None:
    out = run("rules", "hearts")
    assert out.returncode == 0, out.stderr
    assert "Hearts" in out.stdout and "queen of spades" in out.stdout
    assert run("rules").stdout.count("\n") >= 8  # one line per game
    unknown = run("rules", "chess")
    assert unknown.returncode == 2 and "unknown game 'chess'" in unknown.stderr


def _cpus(pid: int) -> set[str]:
    """Each thread's allowed CPUs (as /proc lists them) of process `pid`."""
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        for line in (task / "status").read_text().splitlines():
            if line.startswith("Cpus_allowed_list:"):
                found.add(line.split(":", 1)[1].strip())
    return found


@pytest.mark.processes
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="pinning to a CPU is Linux's")
def test_serve_on_one_cpu_pins_its_threads_its_writer_elsewhere_and_not_its_bots(tmp_path: Path) -> None:
    every = os.sched_getaffinity(0)
    cpu = max(every)
    port = free_port()
    url = f"ws://127.0.0.1:{port}"
    server = subprocess.Popen(
        [*PARTIDA, "serve", "--port", str(port), "--db", str(tmp_path / "p.db"), "--bots", "random"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PARTIDA_CPU": str(cpu)},
    )
    try:
        deadline = time.monotonic() + 60
        while run("match", "tictactoe", "--seat", "random", "--seat", "random", "--server", url).returncode != 0:
            assert time.monotonic() < deadline and server.poll() is None, "the server did not come up"
            time.sleep(0.5)
        assert _cpus(server.pid) == {str(cpu)}  # the event loop, any other thread
        tasks = Path(f"/proc/{server.pid}/task").iterdir()
        children = [int(pid) for task in tasks for pid in (task / "children").read_text().split()]
        writers = [c for c in children if "partida.storage.sqlite_process" in Path(f"/proc/{c}/cmdline").read_text()]
        bots = [c for c in children if c not in writers]
        assert bots, "no pool bot running"
        assert len(writers) == 1, "no SQLite writer's process"
        for child, expected in [(writers[0], every - {cpu} or every), *((bot, every) for bot in bots)]:
            (listed,) = _cpus(child)
            assert _cpu_list(listed) == expected
    finally:
        server.terminate()
        server.wait(20)


def _cpu_list(listed: str) -> set[int]:
    """'0-2,5' as {0, 1, 2, 5}."""
    cpus: set[int] = set()
    for part in listed.split(","):
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return cpus


@pytest.mark.processes
def test_serve_on_a_cpu_it_may_not_use_is_one_line_of_error(tmp_path: Path) -> None:
    for cpu in ("x", "4096"):
        out = run("serve", "--no-bots", "--port", "0", "--db", str(tmp_path / "p.db"), "--cpu", cpu, timeout=60)
        assert out.returncode == 2, out.stderr
        assert out.stderr.startswith("partida: error: --cpu") and "Traceback" not in out.stderr


@pytest.mark.processes
def test_serve_on_a_port_out_of_range_is_a_usage_error(tmp_path: Path) -> None:
    for port, said in (("99999", "a port is 0 to 65535, not 99999"), ("-5", "not -5"), ("http", "not a port number")):
        out = run("serve", "--no-bots", "--port", port, "--db", str(tmp_path / "p.db"), timeout=60)
        assert out.returncode == 2, out.stderr
        assert said in out.stderr and "Traceback" not in out.stderr


@pytest.mark.processes
def test_a_server_url_that_is_not_a_websocket_url_is_a_usage_error_naming_the_right_one() -> None:
    """The browser's address is what people have at hand; it used to end in a traceback."""
    for args, said in (
        (("play", "tictactoe", "--server", "http://127.0.0.1:9/"), "the server's websocket URL is ws://127.0.0.1:9"),
        (("watch", "K7QX2M", "--server", "https://example.org"), "websocket URL is wss://example.org"),
        (("games", "--server", "127.0.0.1:9"), "is not a server URL: write ws://HOST:PORT"),
        (("bot", "random", "--server", "foo", "--token", "x"), "is not a server URL"),
        (("games", "--server", "ws://127.0.0.1:port"), "has a port that is not a number"),
        (("bot", "random", "--server", "ws://127.0.0.1:9,ws://h:x", "--token", "x"), "port that is not a number"),
    ):
        out = run(*args, timeout=60)
        assert out.returncode == 2, (args, out.stdout, out.stderr)
        assert said in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_the_client_sdk_refuses_a_url_that_is_not_a_websocket_url_without_a_traceback() -> None:
    import asyncio

    from partida.client import Client, ConnectionLost

    for url in ("http://127.0.0.1:9", "ws://127.0.0.1:port"):
        with pytest.raises(ConnectionLost, match="is not a websocket URL"):
            asyncio.run(Client.connect(url))


@pytest.mark.processes
def test_more_bots_than_other_seats_is_an_error_not_a_game_without_them(served: tuple[str, str]) -> None:
    """The extra --vs were dropped without a word; an unknown game needed a server to be told."""
    url, _ = served
    out = run("play", "othello", "--vs", "random", "--vs", "alphabeta", "--server", url, input="")
    assert out.returncode == 2 and "othello has 2 seats here: at most 1 --vs" in out.stderr, out.stderr
    assert "Room" not in out.stdout
    out = run("play", "chess", "--server", "ws://127.0.0.1:9")
    assert out.returncode == 2 and "unknown game 'chess'" in out.stderr, out.stderr


@pytest.mark.processes
def test_play_vs_a_bot_that_cannot_play_the_game_is_refused_at_once(served: tuple[str, str]) -> None:
    """The pool's alphabeta was seated at crazyeights and never moved: 15 minutes a decision."""
    url, _ = served
    out = run("play", "crazyeights", "--vs", "alphabeta", "--server", url, "--name", "carla", input="", timeout=60)
    assert out.returncode == 2, out.stderr
    assert "alphabeta does not play crazyeights, a game of hidden information" in out.stderr, out.stderr
    assert "it plays dicepoints, othello, tictactoe" in out.stderr and "Room" not in out.stdout


@pytest.mark.processes
def test_a_bot_asked_for_games_its_agent_cannot_play_is_refused_at_once() -> None:
    out = run("bot", "mcts", "--game", "hearts", "--token", "x", "--server", "ws://127.0.0.1:9", timeout=30)
    assert out.returncode == 2 and "agent 'mcts' plays none of the games asked for" in out.stderr, out.stderr
    out = run("bot", "random", "--game", "hearts:four", "--token", "x", "--server", "ws://127.0.0.1:9", timeout=30)
    assert out.returncode == 2 and "seat counts are numbers" in out.stderr, out.stderr


@pytest.mark.processes
def test_a_bot_for_a_game_nobody_knows_is_refused_at_once() -> None:
    """`partida bot random --game chess` connected and waited for seats that never came."""
    out = run("bot", "random", "--game", "chess", "--token", "x", "--server", "ws://127.0.0.1:9", timeout=30)
    assert out.returncode == 2 and "unknown game 'chess'" in out.stderr, out.stderr


@pytest.mark.processes
def test_a_games_folder_that_is_not_there_is_one_line(tmp_path: Path) -> None:
    """`serve --games-dir` with a mistyped folder ended in a FileNotFoundError traceback."""
    gone, db = tmp_path / "gone", str(tmp_path / "p.db")
    for args in (
        ("serve", "--no-bots", "--port", "0", "--db", db, "--games-dir", str(gone)),
        ("ladder", "create", "x", "--game", "y", "--clock", "5s", "--games-dir", str(gone), "--db", db),
    ):
        out = run(*args, timeout=60)
        assert out.returncode == 2 and out.stderr == f"partida: error: {gone}: No such file or directory\n", out.stderr


@pytest.mark.processes
def test_the_play_command_serve_prints_plays_on_that_server(tmp_path: Path) -> None:
    """It said `partida play tictactoe --vs alphabeta` whatever the port and the bot pool: off
    the default port that reached no server, and with no alphabeta in the pool no bot."""
    port = free_port()
    log = open(tmp_path / "serve.log", "w")
    server = subprocess.Popen(
        [*PARTIDA, "serve", "--port", str(port), "--db", str(tmp_path / "p.db"), "--bots", "random"],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while "Play: " not in (text := (tmp_path / "serve.log").read_text()):
            assert time.monotonic() < deadline and server.poll() is None, text
            time.sleep(0.1)
        hint = text.split("Play: ")[1].split("   Stop")[0]
        assert hint == f"partida play tictactoe --vs random --server ws://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while (played := run(*hint.split()[1:], input="resign\nn\n")).returncode != 0:  # the bot may not be in yet
            assert time.monotonic() < deadline and "no random bot is connected" in played.stderr, played.stderr
            time.sleep(0.5)
        assert "(by resignation)" in played.stdout, played.stdout
    finally:
        server.terminate()
        server.wait(20)
        log.close()


@pytest.mark.processes
def test_a_limit_below_one_is_a_usage_error_not_every_game(tmp_path: Path) -> None:
    """`games --limit -3` listed every stored game (SQLite reads a negative LIMIT as none)."""
    db = str(tmp_path / "p.db")
    assert run("ladder", "create", "x", "--game", "tictactoe", "--clock", "5s", "--db", db).returncode == 0
    for args in (("games", "--limit", "-3", "--db", db), ("ladder", "games", "x", "--limit", "0", "--db", db)):
        out = run(*args)
        assert out.returncode == 2 and "argument --limit: at least 1" in out.stderr, out.stderr


@pytest.mark.processes
def test_the_bot_pool_plays_a_game_the_server_was_given_as_a_file(tmp_path: Path) -> None:
    """`serve --game-file` loaded the game but not its pool bots: a match in it hung for good."""
    import shutil

    import partida.games.recycle

    description = tmp_path / "mydice.rcl"
    shutil.copy(Path(partida.games.recycle.__file__).parent / "descriptions" / "dicepoints.rcl", description)
    port = free_port()
    log = open(tmp_path / "serve.log", "w")
    server = subprocess.Popen(
        [*PARTIDA, "serve", "--port", str(port), "--db", str(tmp_path / "p.db"), "--bots", "random",
         "--game-file", str(description)],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        match = ("match", "mydice", *["--seat", "random"] * 4, "--server", f"ws://127.0.0.1:{port}", "--json")
        while (out := run(*match, timeout=60)).returncode != 0:  # until the server and its pool bot are up
            assert time.monotonic() < deadline and server.poll() is None, out.stderr
            assert "cannot reach" in out.stderr or "no random bot is connected" in out.stderr, out.stderr
            time.sleep(0.5)
        assert json.loads(out.stdout.splitlines()[-1])["summary"]["games"] == 1
    finally:
        server.terminate()
        server.wait(20)
        log.close()


@pytest.mark.processes
def test_a_description_that_cannot_be_read_names_its_file_once(tmp_path: Path) -> None:
    """The file was named twice, once inside the line and column (docs/recycle.md shows the
    form: FILE: line L, column C: what was expected)."""
    bad, gone = tmp_path / "bad.rcl", tmp_path / "gone.rcl"
    bad.write_text("(game\n  (setup (create players 4)\n  (foo))")
    db = str(tmp_path / "p.db")
    for path, said in ((bad, f"{bad}: line 3, column 9: the description ends too early"), (gone, f"{gone}: No such")):
        out = run("serve", "--no-bots", "--port", "0", "--db", db, "--game-file", str(path), timeout=60)
        assert out.returncode == 2 and out.stderr.startswith(f"partida: error: {said}"), out.stderr
        assert out.stderr.count(str(path)) == 1, out.stderr


def test_serve_takes_only_the_three_sign_up_modes(capsys: pytest.CaptureFixture[str]) -> None:
    from partida.cli import main

    with pytest.raises(SystemExit) as refused:
        main(["serve", "--sign-up", "sometimes"])
    assert refused.value.code == 2
    assert "invalid choice: 'sometimes' (choose from" in capsys.readouterr().err
