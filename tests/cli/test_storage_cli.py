"""`partida db`: upgrade, create-bot and create-user, run as a person would (in-process, SQLite)."""

from __future__ import annotations

import asyncio
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from partida.cli import main
from partida.storage.database import Database, head_revision
from partida.storage.models import Account
from partida.storage.store import Store


def check(url: str, token: str | None = None, name: str = "", password: str = "") -> Account | None:
    async def work() -> Account | None:
        db = await Database.open(url, migrate=False)
        try:
            store = Store(db)
            return await (store.check_token(token) if token is not None else store.check_password(name, password))
        finally:
            await db.close()

    return asyncio.run(work())


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'partida.db'}"


def test_upgrade_creates_the_schema_and_says_at_which_revision(url: str, tmp_path: Path, capsys) -> None:
    assert main(["db", "upgrade", "--db", url]) == 0
    assert f"schema revision {head_revision()}" in capsys.readouterr().out
    assert (tmp_path / "partida.db").is_file()


def test_upgrade_uses_partida_db_when_no_flag_is_given(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("PARTIDA_DB", str(tmp_path / "from-env.db"))
    assert main(["db", "upgrade"]) == 0
    assert "from-env.db" in capsys.readouterr().out


def test_create_bot_prints_a_working_token_once(url: str, capsys) -> None:
    assert main(["db", "create-bot", "robo", "--db", url]) == 0
    out = capsys.readouterr().out
    assert "shown only this once" in out
    token = out.splitlines()[1]
    bot = check(url, token=token)
    assert bot is not None and (bot.name, bot.kind) == ("robo", "bot")
    database = Path(url.removeprefix("sqlite:///"))
    stored = b"".join(path.read_bytes() for path in database.parent.glob(database.name + "*"))
    assert token.encode() not in stored, "only a hash of the token is stored"


def test_create_bot_prints_a_command_a_shell_takes_whatever_the_name(url: str, capsys) -> None:
    assert main(["db", "create-bot", "deep blue's son", "--db", url]) == 0
    command = capsys.readouterr().out.splitlines()[-1].removeprefix("Run it with: ")
    assert shlex.split(command)[-2:] == ["--name", "deep blue's son"]


def test_create_bot_again_replaces_the_token(url: str, capsys) -> None:
    main(["db", "create-bot", "robo", "--db", url])
    old = capsys.readouterr().out.splitlines()[1]
    assert main(["db", "create-bot", "robo", "--db", url]) == 0
    out = capsys.readouterr().out
    assert "new token" in out
    assert check(url, token=old) is None
    assert check(url, token=out.splitlines()[1]) is not None


@pytest.mark.slow
def test_create_user_with_a_password_flag(url: str, capsys) -> None:
    assert main(["db", "create-user", "ada", "--password", "correct horse", "--db", url]) == 0
    assert "User 'ada' is created" in capsys.readouterr().out
    assert check(url, name="ada", password="correct horse") is not None
    assert check(url, name="ada", password="wrong") is None


def test_create_user_asks_for_the_password_twice(url: str, monkeypatch) -> None:
    answers = iter(["s3cret-pw", "s3cret-pw"])
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)  # as at a terminal
    monkeypatch.setattr("getpass.getpass", lambda prompt="": next(answers))
    assert main(["db", "create-user", "ada", "--db", url]) == 0
    assert check(url, name="ada", password="s3cret-pw") is not None


def test_create_user_refuses_two_different_passwords(url: str, monkeypatch, capsys) -> None:
    answers = iter(["s3cret-pw", "typo"])
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)  # as at a terminal
    monkeypatch.setattr("getpass.getpass", lambda prompt="": next(answers))
    assert main(["db", "create-user", "ada", "--db", url]) == 2
    assert "differ" in capsys.readouterr().err


@pytest.mark.processes
def test_ctrl_d_at_the_password_prompt_is_one_line(url: str, tmp_path: Path) -> None:
    """At a real terminal (a pty): Ctrl-D at "Password for ada:" ended in an EOFError traceback."""
    import os
    import pty
    import select
    import time

    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "partida", "db", "create-user", "ada", "--db", url],
        stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
    )  # fmt: skip
    os.close(slave)
    seen = b""
    try:
        deadline = time.monotonic() + 60
        while b"Password for ada:" not in seen:
            assert time.monotonic() < deadline, seen
            if select.select([master], [], [], 0.2)[0]:
                seen += os.read(master, 4096)
        os.write(master, b"\x04")  # Ctrl-D
        assert process.wait(30) == 2
        while select.select([master], [], [], 0.5)[0]:
            try:
                seen += os.read(master, 4096)
            except OSError:
                break
    finally:
        if process.poll() is None:
            process.kill()
        os.close(master)
    said = seen.decode(errors="replace")
    assert "partida: error: no password was typed; nothing was created." in said and "Traceback" not in said, said


@pytest.mark.processes
def test_create_user_without_a_terminal_reads_stdin_or_says_how(url: str, tmp_path: Path) -> None:
    """Run as a script would: a real process with no terminal on standard input."""
    command = [sys.executable, "-m", "partida", "db", "create-user", "ada", "--db", url]
    bare = subprocess.run(command, input="", capture_output=True, text=True, timeout=60)
    assert bare.returncode == 2 and "--password-stdin" in bare.stderr and "Traceback" not in bare.stderr
    piped = subprocess.run(
        [*command, "--password-stdin"], input="s3cret-pw\n", capture_output=True, text=True, timeout=60
    )
    assert piped.returncode == 0, piped.stderr
    assert check(url, name="ada", password="s3cret-pw") is not None


def test_a_taken_name_is_one_line_on_stderr(url: str, capsys) -> None:
    main(["db", "create-user", "ada", "--password", "pass-word", "--db", url])
    capsys.readouterr()
    assert main(["db", "create-user", "ada", "--password", "pass-word", "--db", url]) == 2
    assert main(["db", "create-bot", "ada", "--db", url]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("partida: error: ") and "'ada'" in line for line in err)


def test_an_unsupported_url_is_one_line_on_stderr(capsys) -> None:
    assert main(["db", "upgrade", "--db", "mysql://root:hunter2@localhost/partida"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("partida: error: unsupported database URL") and "hunter2" not in err


def test_invite_prints_a_code_good_for_its_uses_and_stores_only_its_hash(url: str, capsys) -> None:
    from partida.storage.invites import InviteStore

    assert main(["db", "invite", "--uses", "2", "--db", url]) == 0
    out = capsys.readouterr().out
    assert "2 sign-ups" in out and "shown only this once" in out
    code = out.splitlines()[1]
    database = Path(url.removeprefix("sqlite:///"))
    stored = b"".join(path.read_bytes() for path in database.parent.glob(database.name + "*"))
    assert code.encode() not in stored, "only a hash of the code is stored"

    async def spend() -> list[bool]:
        db = await Database.open(url, migrate=False)
        try:
            invites = InviteStore(db)
            return [await invites.spend(code) for _ in range(3)]
        finally:
            await db.close()

    assert asyncio.run(spend()) == [True, True, False]
    assert main(["db", "invite", "--uses", "0", "--db", url]) == 2
    assert "--uses is 1 to" in capsys.readouterr().err
