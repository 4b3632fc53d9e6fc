"""A database on a filesystem that fills up (a small tmpfs, mounted for the test; skipped where
mounting is not allowed): requests that would write are refused with `storage_unavailable`, a
room whose row could not be stored is never announced, nothing logs a traceback, and play resumes
once there is room again."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from partida.client import Client, ServerError
from partida.server.app import Server, ServerConfig
from partida.server.limits import Limits


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small filesystem needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(directory: Path) -> Path:
    """Fill the filesystem of `directory` to the last byte; the filler's path."""
    filler = directory / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        for size in (65536, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * size)
    finally:
        os.close(fd)
    return filler


@pytest.mark.processes
@pytest.mark.parametrize("writer", ["process", "thread"])
async def test_a_full_disk_refuses_writes_in_one_line_each(small_disk: Path, writer: str, caplog, monkeypatch) -> None:
    monkeypatch.setenv("PARTIDA_SQLITE_WRITER", writer)
    limits = Limits(waiting_rooms_per_address=10**6, rooms_created_burst=10**6, request_burst=10**6)
    server = Server(ServerConfig(port=0, db_url=f"sqlite+aiosqlite:///{small_disk / 'partida.db'}", limits=limits))
    await server.start()
    alice = await Client.connect(server.url, name="alice")
    bob = await Client.connect(server.url, name="bob")
    try:
        code = (await alice.create_room("tictactoe", seat=0, public=False))["room"]
        await bob.join(code)
        await alice.act(code, 0)
        filler = await asyncio.to_thread(fill, small_disk)
        caplog.clear()
        with caplog.at_level(logging.INFO):
            created = refused = 0
            for _ in range(20):
                try:
                    await alice.create_room("tictactoe", public=False)
                    created += 1
                except ServerError as exc:
                    assert exc.code == "storage_unavailable", exc
                    refused += 1
            with pytest.raises(ServerError) as act:
                await bob.act(code, 4)
            assert act.value.code == "storage_unavailable"
            with pytest.raises(ServerError) as again:
                await bob.act(code, 4)
            assert again.value.code == "storage_unavailable"
        assert created == 0, "a room was announced whose row could not be stored"
        assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records if r.exc_info]
        errors = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(errors) <= refused + 2, [r.getMessage() for r in errors]  # one line per refused request
        filler.unlink()
        await bob.act(code, 4)  # there is room again: the same move goes through
        assert (await alice.create_room("tictactoe", public=False))["room"]
    finally:
        await alice.close()
        await bob.close()
        await server.stop()
