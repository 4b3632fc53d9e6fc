"""The settings every SQLite connection of the server gets, in a module of the standard library
only: the SQLite writer's process (`sqlite_process`) starts without SQLAlchemy."""

from __future__ import annotations

from typing import Any

# How long a SQLite writer waits for another process (say `partida db create-bot` next to a
# running server) to release the file before giving up.
SQLITE_BUSY_TIMEOUT_MS = 10_000


def apply_pragmas(cursor: Any) -> None:
    """WAL lets readers run beside the one writer and makes each commit one append to the log;
    foreign keys are off in SQLite unless asked for; the busy timeout makes a writer wait for a
    lock instead of failing at once. synchronous=FULL syncs the log on every commit, so an
    acknowledged action survives a power cut, not only a crash."""
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA synchronous=FULL")
