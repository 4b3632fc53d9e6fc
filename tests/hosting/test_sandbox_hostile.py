"""Hostile hosted programs, each at the HostedAgent's level with plain values: every attack of
tests/data/hostile/hostile.py is contained with the verdict it deserves. Attacks meant to fail
inside the program (reading the database and the server's files, sockets, signals, filling
/tmp) report what they managed on stderr and go on playing: the test reads the report. The
others end in a verdict (time, memory, output), and the machine keeps nothing of them."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from partida.bots.base import Forfeit, Turn
from partida.cli.play import play_bot_game
from partida.games.registry import default_registry
from partida.hosting import cgroup
from partida.hosting.agent import HostedAgent
from partida.hosting.limits import Limits
from partida.hosting.sandbox import missing_with
from partida.hosting.verdicts import Failure, Verdict
from tests.helpers import REPO, wait_for

pytestmark = [pytest.mark.processes, pytest.mark.timeout(120)]

TICTACTOE = default_registry().get("tictactoe")
QUICK = Limits(decision_seconds=3.0)


class Seat:
    """A HostedAgent playing tic-tac-toe's first seat, its failures collected."""

    def __init__(self, bundle_dir: Path, run: str, limits: Limits = QUICK) -> None:
        self.failures: list[Failure] = []
        self.agent = HostedAgent(bundle_dir, run, limits, "hostile", on_failure=self.failures.append)
        self.agent.new_game(TICTACTOE, 0)
        self.state = TICTACTOE.create(seed=0)

    def move(self) -> object:
        """The program's answer to the next decision of seat 0 (seat 1 answers at once)."""
        decision = self.state.pending()[0]
        if decision.seat == 1:
            self.state.apply(1, decision.prompt.random_answer(__import__("random").Random(0)))
            decision = self.state.pending()[0]
        action = self.agent.act(Turn(TICTACTOE, 0, decision.prompt, self.state.view(0)))
        self.state.apply(0, action)
        return action

    def forfeit(self, moves: int = 1) -> Failure:
        """The failure that ends the seat within `moves` decisions."""
        with pytest.raises(Forfeit) as raised:
            for _ in range(moves):
                self.move()
        assert len(self.failures) == 1
        failure = self.failures[0]
        assert raised.value.note.startswith(f"hosted bot hostile: {failure.verdict}: ")
        return failure

    def report(self) -> dict[str, object]:
        """The program's REPORT line (its stderr is read by a thread of its own: wait for it)."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            for line in self.agent.program.last_stderr:
                if line.startswith("REPORT "):
                    return json.loads(line.removeprefix("REPORT "))
            time.sleep(0.02)
        raise AssertionError(f"no report; stderr: {list(self.agent.program.last_stderr)}")

    def close(self) -> None:
        self.agent.close()


@pytest.fixture
def seats():
    made: list[Seat] = []

    def make(*args: object, **kwargs: object) -> Seat:
        made.append(Seat(*args, **kwargs))  # type: ignore[arg-type]
        return made[-1]

    yield make
    for seat in made:
        seat.close()


def test_an_honest_program_plays_as_nobody_in_a_world_of_its_own(bundle, seats) -> None:
    probe = "import os, json, sys; print('REPORT ' + json.dumps({'uid': os.getuid(), 'pid': os.getpid(), "
    probe += "'ppid': os.getppid(), 'root': sorted(os.listdir('/')), 'cwd': os.getcwd(), 'nice': os.nice(0)}), "
    probe += "file=sys.stderr)\n"
    hostile = (REPO / "tests/data/hostile/hostile.py").read_text()
    seat = seats(bundle({"probe.py": probe + hostile}), "python3 probe.py honest")
    assert seat.move() == 0 and seat.move() is not None
    seen = seat.report()
    assert seen["uid"] == 65534 and seen["cwd"] == "/bot"
    assert seen["nice"] == 10  # the server's games come first
    assert seen["ppid"] == 1  # its parent is the sandbox's init: the server is not in its world
    assert set(seen["root"]) <= {"bin", "bot", "dev", "etc", "lib", "lib64", "proc", "sbin", "tmp", "usr"}
    assert not seat.failures


def test_the_database_the_servers_files_and_another_bundle_are_not_there(bundle, seats, tmp_path) -> None:
    database = tmp_path / "partida.db"
    database.write_text("secret")
    other = bundle({"secret.txt": "another bot's"})
    targets = [str(database), str(tmp_path), str(REPO), str(REPO / "pyproject.toml"), os.getcwd(), str(other)]
    targets += [str(other / "secret.txt"), "/etc/shadow", "/root", "/home", "/work", "/bot/../../etc/passwd"]
    seat = seats(bundle(), "python3 hostile.py read " + " ".join(targets))
    assert seat.move() is not None
    seen = seat.report()["read"]
    assert seen == {t: "failed: FileNotFoundError" for t in targets}, seen
    assert not seat.failures


def test_a_bundle_of_symlinks_to_the_root_and_the_database_reads_nothing_outside(bundle, seats, tmp_path) -> None:
    database = tmp_path / "partida.db"
    database.write_text("secret")
    mine = bundle()
    (mine / "root").symlink_to("/")
    (mine / "db").symlink_to(database)
    seat = seats(mine, "python3 hostile.py read /bot/db /bot/root/work /bot/root/etc/shadow /bot/root/bot/hostile.py")
    assert seat.move() is not None
    seen = seat.report()["read"]
    assert seen["/bot/db"] == seen["/bot/root/work"] == seen["/bot/root/etc/shadow"] == "failed: FileNotFoundError"
    assert seen["/bot/root/bot/hostile.py"].startswith("read ")  # "/" is the sandbox's own root


def test_no_socket_reaches_the_server_or_the_outside(bundle, seats) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.setblocking(False)
    port = server.getsockname()[1]
    targets = [f"127.0.0.1:{port}", f"localhost:{port}", "1.1.1.1:443", "10.0.0.1:80", f"::1:{port}"]
    seat = seats(bundle(), "python3 hostile.py connect " + " ".join(targets))
    assert seat.move() is not None
    seen = seat.report()["connect"]
    assert all(result.startswith("failed") for result in seen.values()), seen
    with pytest.raises(BlockingIOError):
        server.accept()  # nobody came
    server.close()


@pytest.mark.realtime
def test_a_fork_bomb_is_held_to_its_processes_and_dies_with_its_seat(bundle, seats) -> None:
    limits = Limits(decision_seconds=3.0, processes=16)
    counted = seats(bundle(), "python3 hostile.py fork_count", limits)
    assert counted.move() is not None
    assert 0 < counted.report()["forked"] <= 16
    bomb = seats(bundle(), "python3 hostile.py fork_bomb", limits)
    failure = bomb.forfeit()
    assert failure.verdict is Verdict.TIME_EXCEEDED
    assert not bomb.agent.program.alive


def test_allocating_8_gib_at_once_is_memory_exceeded(bundle, seats) -> None:
    failure = seats(bundle(), "python3 hostile.py alloc_8g").forfeit()
    assert failure.verdict is Verdict.MEMORY_EXCEEDED
    assert any("MemoryError" in line for line in failure.stderr_tail)


@pytest.mark.slow
def test_touching_memory_past_the_limit_is_memory_exceeded(bundle, seats) -> None:
    """Past resident memory: the cgroup's OOM killer where there is one, the address space
    (MemoryError) where not; either way the verdict is the same."""
    limits = Limits(decision_seconds=20.0, memory_mib=256, address_space_mib=1024)
    failure = seats(bundle(), "python3 hostile.py alloc_touch", limits).forfeit()
    assert failure.verdict is Verdict.MEMORY_EXCEEDED, failure
    if cgroup.usable():
        assert "killed at its memory limit" in failure.detail


def test_filling_tmp_stops_at_its_size_and_the_program_plays_on(bundle, seats) -> None:
    seat = seats(bundle(), "python3 hostile.py fill_tmp", Limits(decision_seconds=10.0, tmp_mib=16))
    assert seat.move() is not None and seat.move() is not None
    seen = seat.report()
    assert seen["error"] and seen["written"] <= 16 << 20


def test_nothing_outside_tmp_is_writable(bundle, seats) -> None:
    seat = seats(bundle(), "python3 hostile.py fill_root")
    assert seat.move() is not None
    assert "written" not in seat.report()["wrote"].values()


@pytest.mark.parametrize("mode", ["flood_line", "flood_stderr"])
def test_printing_100_mib_is_output_too_large_and_never_read_whole(bundle, seats, mode) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    failure = seats(bundle(), f"python3 hostile.py {mode}", Limits(decision_seconds=20.0)).forfeit(moves=3)
    assert failure.verdict is Verdict.OUTPUT_TOO_LARGE, failure
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 32 << 10  # 100 MiB was written; a few lines of it were read


def test_output_past_its_total_is_output_too_large(bundle, seats) -> None:
    seat = seats(bundle(), "python3 hostile.py padded", Limits(output_bytes=150_000))
    assert seat.move() is not None and seat.move() is not None  # 120 kB of answers so far
    failure = seat.forfeit()
    assert failure.verdict is Verdict.OUTPUT_TOO_LARGE
    assert failure.detail == "more than 150000 characters of output"


@pytest.mark.realtime
def test_sleeping_forever_is_time_exceeded(bundle, seats) -> None:
    failure = seats(bundle(), "python3 hostile.py sleep", Limits(decision_seconds=1.0)).forfeit()
    assert failure.verdict is Verdict.TIME_EXCEEDED
    assert failure.detail == "nothing within 1.0 s"


@pytest.mark.slow
def test_spinning_past_its_cpu_time_is_time_exceeded(bundle, seats) -> None:
    limits = Limits(decision_seconds=30.0, cpu_seconds=1.0)
    failure = seats(bundle(), "python3 hostile.py spin", limits).forfeit()
    assert failure.verdict is Verdict.TIME_EXCEEDED
    assert "CPU time" in failure.detail


@pytest.mark.slow
def test_processes_spinning_together_past_its_cpu_time_are_time_exceeded(bundle, seats) -> None:
    seat = seats(bundle(), "python3 hostile.py spin_children", Limits(decision_seconds=5.0, cpu_seconds=1.0))
    assert seat.move() is not None  # it answers at once; its children spin on
    deadline = time.monotonic() + 30
    while seat.agent.program.cpu_used() <= 1.0 and time.monotonic() < deadline:
        time.sleep(0.05)
    failure = seat.forfeit()
    assert failure.verdict is Verdict.TIME_EXCEEDED
    assert failure.detail.startswith("past its CPU time in total")


def test_killing_its_parent_reaches_nothing_and_it_plays_on(bundle, seats) -> None:
    seat = seats(bundle(), "python3 hostile.py kill_parent")
    assert seat.move() is not None and seat.move() is not None
    seen = seat.report()["kill"]
    assert seen["ppid"] == 1  # the sandbox's init, which ignores signals from inside
    assert not seat.failures and seat.agent.program.alive


@pytest.mark.parametrize(
    ("run", "said"),
    [
        ("python3 missing.py", "'missing.py' is not a file in the bundle"),
        ("no-such-program --flag", "'no-such-program' is not a program the sandbox has"),
        ("./hostile.py honest", "'./hostile.py' is not an executable file"),
    ],
)
def test_a_command_that_cannot_start_would_not_start(bundle, seats, run, said) -> None:
    failure = seats(bundle(), run).forfeit()
    assert failure.verdict is Verdict.WOULD_NOT_START
    assert failure.detail.startswith(said)


def test_a_bundle_closed_to_the_sandbox_would_not_start(bundle, seats) -> None:
    closed = bundle()
    closed.chmod(0o700)
    failure = seats(closed, "python3 hostile.py honest").forfeit()
    assert failure.verdict is Verdict.WOULD_NOT_START and "closed to others" in failure.detail


BAD = """
import json, sys
for line in sys.stdin:
    mode = sys.argv[1]
    if mode == "crash":
        print("ZeroDivisionError: oops", file=sys.stderr, flush=True)
        sys.exit(1)
    print({"bad_json": "move 4", "bad_answer": "[0]", "illegal": '{"action": 99}'}[mode], flush=True)
"""


@pytest.mark.parametrize(
    ("mode", "verdict"),
    [
        ("bad_json", Verdict.BAD_OUTPUT),
        ("bad_answer", Verdict.BAD_OUTPUT),
        ("illegal", Verdict.ILLEGAL_ANSWER),
        ("crash", Verdict.CRASHED),
    ],
)
def test_the_bridges_errors_are_verdicts_with_the_tail_of_stderr(bundle, seats, mode, verdict) -> None:
    failure = seats(bundle({"bad.py": BAD}), f"python3 bad.py {mode}").forfeit()
    assert failure.verdict is verdict
    if mode == "crash":
        assert failure.stderr_tail[-1] == "ZeroDivisionError: oops"
        assert "exit code 1" in failure.detail


def test_sandbox_missing_says_why_in_a_sentence(bundle) -> None:
    assert "bubblewrap" in (missing_with(None) or "") and "apt-get install bubblewrap" in (missing_with(None) or "")
    fake = bundle() / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    said = missing_with(str(fake)) or ""
    assert "cannot create its namespaces (bwrap: No permissions to creating new namespace)" in said


# On a real server: `partida bot --cmd ... --sandbox` as its own process, a hostile program
# behind it, while two built-in bots play another game.


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "verdict"),
    [
        ("read", None),
        ("connect", None),
        ("kill_parent", None),
        ("fork_bomb", Verdict.TIME_EXCEEDED),
        ("alloc_8g", Verdict.MEMORY_EXCEEDED),
        ("flood_line", Verdict.OUTPUT_TOO_LARGE),
        ("sleep", Verdict.TIME_EXCEEDED),
    ],
)
async def test_a_hostile_sandboxed_bot_on_a_real_server_harms_no_other_game(
    bundle, connect, bots, server, tmp_path, mode, verdict
) -> None:
    database = tmp_path / "partida.db"  # the server's own database file (the db_url fixture)
    assert database.exists()
    port = server.url.rsplit(":", 1)[1].split("/")[0]
    targets = {
        "read": [str(database), str(REPO), os.getcwd()],
        "connect": [f"127.0.0.1:{port}", f"localhost:{port}", "1.1.1.1:443"],
    }.get(mode, [])
    _, token = await server.store.create_bot("hostile")
    command = " ".join(["python3", "hostile.py", mode, *targets])
    argv = [sys.executable, "-m", "partida", "bot", "--cmd", command, "--sandbox", "--dir", str(bundle())]
    argv += ["--game", "tictactoe", "--move-timeout", "2", "--token", token, "--server", server.url]
    bot = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    try:
        await bots("random", "alphabeta", seconds=0.02)

        async def hostile_connected() -> bool:
            return "hostile" in {s.identity.name for s in server.bot_sessions()}

        await wait_for(hostile_connected, "the sandboxed bot to connect", timeout=30)
        watcher = await connect(name="watcher")
        bystander = await connect(name="bystander")
        hostile, other = await asyncio.gather(
            play_bot_game(watcher, "tictactoe", {}, ["hostile", "random"]),
            play_bot_game(bystander, "othello", {}, ["random", "alphabeta"]),
        )
        assert other["result"]["reason"] == "normal" and "notes" not in other["result"]
        if verdict is None:
            assert hostile["result"]["reason"] == "normal" and "notes" not in hostile["result"]
        else:
            assert hostile["result"]["reason"] == "resign"
            assert hostile["result"]["notes"]["0"].startswith(f"hosted bot '{command}': {verdict}: ")
        fresh = await connect(name="after")
        assert "tictactoe" in {g["name"] for g in await fresh.list_games()}  # the server still answers
    finally:
        bot.terminate()
        _, said = await asyncio.wait_for(bot.communicate(), 30)
    log = said.decode(errors="replace")
    if mode in ("read", "connect"):
        report = json.loads(log.split("REPORT ", 1)[1].splitlines()[0])[mode]
        assert report and all(result.startswith("failed") for result in report.values()), report


@pytest.mark.processes
@pytest.mark.parametrize(
    "args",
    [
        ("bot", "--sandbox", "--token", "x", "--game", "tictactoe", "random"),
        ("bot", "--cmd", "python3 bot.py", "--dir", ".", "--token", "x", "--game", "tictactoe"),
    ],
)
def test_sandbox_flags_go_with_a_program(args: tuple[str, ...]) -> None:
    done = subprocess.run([sys.executable, "-m", "partida", *args], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "--sandbox runs the program of --cmd, and --dir goes with --sandbox" in done.stderr, done.stderr


@pytest.mark.parametrize(("run", "game"), [("python3 tictactoe.py", "tictactoe"), ("node corners.js", "othello")])
def test_the_example_bots_play_in_the_sandbox(bubblewrap, node, run, game) -> None:
    """Both runtimes start and answer under the default limits (node needs its address space)."""
    played = default_registry().get(game)
    state = played.create(seed=0)
    agent = HostedAgent(REPO / "examples" / "bots", run, Limits(), "example")
    try:
        agent.new_game(played, 0)
        for _ in range(2):
            decision = state.pending()[0]
            if decision.seat == 0:
                state.apply(0, agent.act(Turn(played, 0, decision.prompt, state.view(0))))
            else:
                state.apply(decision.seat, decision.prompt.random_answer(__import__("random").Random(1)))
        assert agent.failure is None and agent.program.started == 1
    finally:
        agent.close()


def _running_with(marker: str) -> list[int]:
    """The processes on this machine whose command line holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


@pytest.mark.realtime
async def test_a_sandboxed_program_dies_with_the_bot_process_that_started_it(bundle, connect, bots, server) -> None:
    """`partida bot` killed with SIGKILL (no chance to close anything): its program goes too."""
    marker = f"marker-{os.getpid()}-{time.monotonic_ns()}"
    _, token = await server.store.create_bot("sleeper")
    argv = [sys.executable, "-m", "partida", "bot", "--cmd", f"python3 hostile.py sleep {marker}", "--sandbox"]
    argv += ["--dir", str(bundle()), "--game", "tictactoe", "--move-timeout", "60", "--token", token]
    bot = await asyncio.create_subprocess_exec(*argv, "--server", server.url, stderr=asyncio.subprocess.DEVNULL)
    try:
        await bots("random")

        async def connected() -> bool:
            return "sleeper" in {s.identity.name for s in server.bot_sessions()}

        await wait_for(connected, "the sandboxed bot to connect", timeout=30)
        watcher = await connect(name="watcher")
        await watcher.create_room("tictactoe", {}, seats=2, bots={0: "sleeper", 1: "random"})

        async def sleeping() -> bool:
            return any(pid != bot.pid for pid in _running_with(marker))

        await wait_for(sleeping, "the program to start", timeout=30)
    finally:
        bot.kill()
        await bot.wait()

    async def gone() -> bool:
        return not _running_with(marker)

    await wait_for(gone, "the program to die with its bot", timeout=15)
