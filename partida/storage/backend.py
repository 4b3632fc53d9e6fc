"""The interface every game-write backend implements, and the choice of one for a database.

The group writer (`batching.GroupWriter`) hands each batch of game writes to one backend, which
runs it as one transaction on its database's own driver:

- `postgres_writer.PostgresWriter`: PostgreSQL, on one asyncpg connection kept for it;
- `sqlite_writer.SqliteWriter`: a SQLite file, in a thread of the server;
- `sqlite_process_writer.SqliteProcessWriter`: a SQLite file, in a process of its own; it holds
  a `SqliteWriter` for the batches a process cannot run, and for good if the process keeps dying.

Which one a database gets is decided here, once, from its URL; the group writer never asks which
kind it holds, only whether it `takes_batches_as_they_come`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from partida.storage.database import Database
from partida.storage.writes import Step

Outcome = Callable[[Any, "BaseException | None"], None]  # a batch's results, or its error


class WriteBackend(Protocol):
    """Runs the group writer's batches, each in one transaction. A write is a sequence of steps;
    a batch's result holds, for each write in order, the value its returning step gave (None for
    the others). Errors are SQLAlchemy's (`IntegrityError` for a constraint) or
    `writes.MissingRow`, whichever backend raised them."""

    # True: `hand_over` takes a batch at once, without a task or a wait on the event loop (the
    # group writer hands each turn's writes over at its end). False: batches go one at a time
    # through `transaction`, from the group writer's task.
    takes_batches_as_they_come: bool

    def hand_over(self, writes: Sequence[Sequence[Step]], done: Outcome) -> bool:
        """Queue one transaction for `writes` without waiting: `done(results, None)` or
        `done(None, error)` is called on this event loop once it is committed or has failed.
        False, and nothing queued, when the batch must wait its turn (`transaction`)."""
        ...

    async def transaction(self, writes: Sequence[Sequence[Step]]) -> list[Any]:
        """One transaction for `writes`, committed when this returns."""
        ...

    async def close(self) -> None:
        """Commit what was handed over (its writers are told), then let go of the database."""
        ...


def open_backend(db: Database, next_needs_transaction: Callable[[], bool]) -> WriteBackend:
    """The backend for `db`: PostgreSQL's, or on SQLite the process's (the thread's with
    `PARTIDA_SQLITE_WRITER=thread`). `next_needs_transaction`: PostgreSQL's writer asks it at each
    commit (`PostgresWriter`)."""
    if db.dialect == "postgresql":
        from partida.storage.postgres_writer import PostgresWriter  # the driver only where it is used

        return PostgresWriter(db.engine, next_needs_transaction)
    from partida.storage import sqlite_process_writer
    from partida.storage.sqlite_writer import SqliteWriter

    assert db.write_lock is not None
    if sqlite_process_writer.wanted():
        return sqlite_process_writer.SqliteProcessWriter(db.url, db.write_lock, db.writer_cpus)
    return SqliteWriter(db.url, db.write_lock)
