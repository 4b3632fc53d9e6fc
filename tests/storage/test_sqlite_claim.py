"""One server per SQLite file: a second server on the same file stops at its start with a
sentence naming the first (two servers handed out the same game ids and wrote into each other's
games), the first plays on, and the claim ends with the server, however it ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from partida.client import Client
from partida.server.app import Server, ServerConfig
from partida.storage.database import StorageError
from tests.fixtures.programs import free_port

PARTIDA = [sys.executable, "-m", "partida"]


def config(db_url: str) -> ServerConfig:
    return ServerConfig(host="127.0.0.1", port=0, db_url=db_url)


async def test_a_second_server_on_the_file_stops_at_its_start_and_the_first_plays_on(db_url: str) -> None:
    first = Server(config(db_url))
    await first.start()
    try:
        second = Server(config(db_url))
        with pytest.raises(StorageError, match=rf"another Partida server \(pid {os.getpid()}\) is using the database"):
            await second.start()
        client = await Client.connect(first.url, name="ada")
        try:
            created = await client.request("create_room", game="tictactoe", seat=0)
            assert created["type"] == "room_created"
        finally:
            await client.close()
    finally:
        await first.stop()
    after = Server(config(db_url))  # stopped: the file is free again
    await after.start()
    await after.stop()


@pytest.mark.processes
def test_partida_serve_twice_on_one_file_and_after_a_kill(tmp_path: Path) -> None:
    db = str(tmp_path / "partida.db")

    def serve() -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*PARTIDA, "serve", "--no-bots", "--port", str(free_port()), "--db", db],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )

    def claimed_by(process: subprocess.Popen[str]) -> None:
        lock = Path(db + ".server.lock")
        deadline = time.monotonic() + 60
        while not (lock.exists() and lock.read_text().strip() == str(process.pid)):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the server did not claim its file"
            time.sleep(0.1)

    first = serve()
    try:
        claimed_by(first)
        second = serve()
        _, err = second.communicate(timeout=60)
        assert second.returncode == 2, err
        assert err.strip() == (
            f"partida: error: another Partida server (pid {first.pid}) is using the database {db}: stop it first, "
            "or give this server a database of its own with --db."
        )
        assert first.poll() is None
        first.send_signal(signal.SIGKILL)  # no stop, no cleanup: the kernel ends the claim
        first.wait(20)
        third = serve()
        try:
            claimed_by(third)
            assert third.poll() is None
        finally:
            third.terminate()
            third.wait(20)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait(20)


async def test_a_server_on_a_file_in_a_missing_folder_is_told_the_folder_is_missing(tmp_path: Path) -> None:
    """As every command is, not "cannot claim ... .server.lock: No such file or directory"."""
    server = Server(config(f"sqlite:///{tmp_path}/missing/p.db"))
    with pytest.raises(StorageError, match=r"the folder .*missing does not exist"):
        await server.start()
