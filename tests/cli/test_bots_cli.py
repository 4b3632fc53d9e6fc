"""`partida serve --host-bots` and `partida bots`: the operator turns hosting on (never without
the sandbox), a person submits a bot from a directory, it plays a ladder, and its owner lists
it and reads its logs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from partida.cli import main
from tests.fixtures.programs import free_port
from tests.helpers import REPO, reachable_directory

PARTIDA = [sys.executable, "-m", "partida"]


def partida(*args: str, stdin: str = "") -> tuple[int, str]:
    done = subprocess.run([*PARTIDA, *args], input=stdin, capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout + done.stderr


def test_serve_host_bots_refuses_to_start_without_the_sandbox(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    said = "hosted bots need bubblewrap to run submissions in a sandbox, and `bwrap` is not installed"
    monkeypatch.setattr("partida.hosting.sandbox.sandbox_missing", lambda: said)
    code = main(["serve", "--host-bots", "--no-bots", "--port", "0", "--db", str(tmp_path / "p.db")])
    out, err = capsys.readouterr()
    assert code == 2 and said in err and "Traceback" not in err
    assert "serving" not in out and not (tmp_path / "p.db").exists()


def test_bots_commands_need_a_person_s_password(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bots", "list", "--name", "ada", "--server", "ws://127.0.0.1:9"]) == 2
    assert "log in with --name and --password" in capsys.readouterr().err


@pytest.mark.processes
@pytest.mark.realtime
@pytest.mark.slow
@pytest.mark.usefixtures("bubblewrap")
def test_a_bot_submitted_from_a_directory_plays_a_ladder_and_its_owner_reads_its_logs(tmp_path: Path) -> None:
    db = str(tmp_path / "partida.db")
    assert partida("db", "create-user", "ada", "--password-stdin", "--db", db, stdin="ada lovelace\n")[0] == 0
    assert partida("ladder", "create", "ttt", "--game", "tictactoe", "--clock", "move:5", "--db", db)[0] == 0
    bot = tmp_path / "mybot"
    bot.mkdir()
    shutil.copy(REPO / "examples" / "bots" / "tictactoe.py", bot / "bot.py")
    port = free_port()
    server = f"ws://127.0.0.1:{port}"
    account = ["--name", "ada", "--password", "ada lovelace", "--server", server]
    with reachable_directory() as bundles, open(tmp_path / "serve.log", "w") as log:
        serve = subprocess.Popen(
            [
                *PARTIDA,
                *["serve", "--port", str(port), "--db", db, "--no-bots", "--ladder-bots", "ttt=random"],
                *(["--cpu", "0"] if len(os.sched_getaffinity(0)) > 1 else []),
                *["--host-bots", "--host-bots-dir", str(bundles), "--host-bots-ladder", "ttt", "--host-bots-max", "2"],
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                code, out = partida(
                    "bots",
                    "submit",
                    "adabot",
                    "--dir",
                    str(bot),
                    "--run",
                    "python3 bot.py",
                    "--game",
                    "tictactoe",
                    *account,
                )
                if code == 0 or time.monotonic() > deadline or serve.poll() is not None:
                    break
                time.sleep(0.5)  # the server is still starting
            assert code == 0 and "adabot: version 1 submitted" in out, out + (tmp_path / "serve.log").read_text()
            deadline = time.monotonic() + 120
            while True:
                code, out = partida("bots", "logs", "adabot", "--json", *account)
                logs = json.loads(out) if code == 0 else {"games": []}
                finished = [g for g in logs["games"] if g["status"] == "finished"]
                if len(finished) >= 3:
                    break
                assert serve.poll() is None and time.monotonic() < deadline, (tmp_path / "serve.log").read_text()
                time.sleep(0.5)
            code, out = partida("bots", "list", *account)
            if len(os.sched_getaffinity(0)) > 1:  # the server on CPU 0: its hosted programs never there
                runners = [pid for pid in _children(serve.pid) if b"partida.hosting.runner" in _cmdline(pid)]
                assert runners and all(0 not in os.sched_getaffinity(pid) for pid in runners)
        finally:
            serve.terminate()
            serve.wait(timeout=30)
    assert code == 0 and "adabot (v1, active)" in out and "'python3 bot.py'" in out, out
    assert all(g["version"] == 1 and g["note"] is None for g in finished)
    assert [entry for entry in logs["logs"] if entry["verdict"] != "finished"] == []
    assert "Hosting submitted bots" in (tmp_path / "serve.log").read_text()
    code, out = partida("games", "--json", "--db", db)
    played = [g for g in json.loads(out) if "adabot" in g["seats"] and g["status"] == "finished"]
    assert played and all(g["versions"][g["seats"].index("adabot")] == 1 for g in played)


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--host-bots-limit", "nope=1"], "unknown limit 'nope=1'"),
        (["--host-bots-limit", "memory_mib=lots"], "memory_mib takes a number"),
        (["--host-bots-limit", "processes=2"], "processes must be at least 4"),
        (["--host-bots-max", "0"], "--host-bots-max is 1 to 1000"),
        (["--host-bots-pause-after", "0"], "--host-bots-pause-after is at least 1"),
    ],
)
def test_serve_refuses_bad_hosting_flags_in_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    flags: list[str],
    says: str,
) -> None:
    monkeypatch.setattr("partida.hosting.sandbox.sandbox_missing", lambda: None)  # this test is about the flags
    code = main(["serve", "--host-bots", "--no-bots", "--port", "0", "--db", str(tmp_path / "p.db"), *flags])
    err = capsys.readouterr().err
    assert code == 2 and says in err and "Traceback" not in err, err


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""
