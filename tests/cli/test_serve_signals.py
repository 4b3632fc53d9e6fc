"""`partida serve 2>&1 | tee log` and a Ctrl-C: the terminal sends SIGINT to the whole process
group, so `tee` is gone before the server writes its last line. The server must stop all the same
(it stayed up with its port open, its bots gone, waiting on its database's threads)."""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fixtures.programs import free_port


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), 1).close()
    except OSError:
        return False
    return True


def _group(pgid: int) -> list[str]:
    listed = subprocess.run(["ps", "-o", "pid=,stat=,args=", "-g", str(pgid)], capture_output=True, text=True)
    return [line for line in listed.stdout.splitlines() if " Z" not in line and "<defunct>" not in line]


@pytest.mark.processes
def test_one_ctrl_c_stops_a_server_piped_into_tee(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "log"
    serve = [sys.executable, "-m", "partida", "serve", "--port", str(port), "--db", f"sqlite:///{tmp_path / 'p.db'}"]
    line = f"{shlex.join([*serve, '--bots', 'random'])} 2>&1 | tee {shlex.quote(str(log))}"
    # its own process group, as a terminal's job is; SIGINT not ignored (a terminal's Ctrl-C)
    shell = subprocess.Popen(["bash", "-c", line], start_new_session=True, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while "Stop: Ctrl-C" not in (log.read_text() if log.exists() else ""):
            assert time.monotonic() < deadline and shell.poll() is None, log.read_text()
            time.sleep(0.2)
        # a game, so the database's writer and its threads are at work (once the pool's bot,
        # a process of its own, has connected: the server says it is ready before)
        deadline = time.monotonic() + 60
        while True:
            played = subprocess.run(
                [sys.executable, "-m", "partida", "match", "tictactoe", "--seat", "random", "--seat", "random",
                 "--server", f"ws://127.0.0.1:{port}"],
                capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            if "is connected" not in played.stderr or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert played.returncode == 0, played.stderr
        os.killpg(shell.pid, signal.SIGINT)  # the one Ctrl-C
        deadline = time.monotonic() + 30
        while _group(shell.pid) or _accepts(port):
            assert time.monotonic() < deadline, f"still running after a Ctrl-C: {_group(shell.pid)}"
            time.sleep(0.2)
        assert shell.wait(10) is not None
    finally:
        if _group(shell.pid):
            os.killpg(shell.pid, signal.SIGKILL)
        shell.wait(10)
