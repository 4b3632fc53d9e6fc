"""One server per SQLite file.

Nothing in a SQLite file says which server a game belongs to: a server resumes every game in
play it finds there, and a room's state lives in its server's memory. Two servers on one file
(say two `partida serve` in two terminals, both on the default ./partida.db) would each resume,
play and write the same games. So a server claims the file for as long as it runs, and a
second one stops at its start with a sentence saying who holds it. Other programs (`partida
games`, `partida db create-bot`, the lab) read and write next to a running server as before:
they never claim.

The claim is an exclusive `flock` on a file beside the database (`<file>.server.lock`, which
keeps the holder's pid for the message), not on the database itself: closing any descriptor of
a file drops every POSIX lock the process holds on it, SQLite's own included. The kernel lets go
of the claim when the server's process ends, however it ends. The lock file stays behind:
removing it on release would let a server that opened it just before lock a file nobody else
can see.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from pathlib import Path

from partida.storage.database import StorageError, check_sqlite_folder, sqlite_file


class SqliteClaim:
    """A held claim on one SQLite file; `release` (or the process's end) lets it go."""

    def __init__(self, database: Path, fd: int) -> None:
        self.database = database
        self._fd: int | None = fd

    @classmethod
    def take(cls, url: str) -> SqliteClaim | None:
        """Claim the file `url` names; None when it names no file (PostgreSQL, SQLite in memory).
        Raises `StorageError` when another server holds it."""
        database = sqlite_file(url)
        if database is None:
            return None
        check_sqlite_folder(url)  # the lock file would fail to open there, in words less plain
        path = lock_path(database)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise StorageError(f"cannot claim the database {database} ({path}: {exc.strerror}).") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise StorageError(
                f"another Partida server{holder} is using the database {database}: stop it first, "
                "or give this server a database of its own with --db."
            ) from None
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.ENOLCK, errno.EOPNOTSUPP):
                return None  # a file system without flock: the server runs unclaimed, as it used to
            raise StorageError(f"cannot claim the database {database} ({path}: {exc.strerror}).") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return cls(database, fd)

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)  # closing the only descriptor of the lock drops the flock
            self._fd = None


def lock_path(database: Path) -> Path:
    return database.with_name(database.name + ".server.lock")


def _holder(fd: int) -> str:
    """ " (pid N)" from the lock file, or nothing when it holds no pid yet."""
    try:
        pid = os.pread(fd, 32, 0).decode().strip()
    except (OSError, UnicodeDecodeError):
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""
