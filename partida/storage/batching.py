"""Group commit: every write of the server (game created, seats and start, actions, result) goes
through one writer that packs the writes arriving together into one transaction.

The server stores each accepted action, and each game's creation, start and end, before it tells
anyone about them. One transaction per write makes the database sync its log once per write (a
few milliseconds on SQLite with synchronous=FULL), which caps the whole server at a few hundred
writes per second; and separate writers queue behind each other for SQLite's single write lock.
Here the writes that arrive while a transaction is being written wait and go together in the next
one: each caller still returns only after its rows are committed, so durability is unchanged, and
under load one sync is shared by the whole batch.

A write is a short list of `Step`s (a Core statement, built once, and its parameters). In a batch
the steps of every write are grouped by statement and each group runs as one executemany, in the
order the statements were registered (`GroupWriter.statement`): creating a game before seating
it, seating before starting, starting before actions, actions before results. Each room waits for
its write before it makes the next one, so one batch never holds two writes that depend on each
other; the fixed order only has to keep each write's own steps in order.

A batch goes to the database's own driver where there is a writer for it: on a SQLite file a
thread with its own connection (`sqlite_writer`; it takes new batches while it commits, and
commits all that arrived meanwhile together, so the writer hands each batch over as soon as it
has it), on PostgreSQL one asyncpg connection kept for
the writer (`postgres_writer`); both send the SQL that SQLAlchemy compiled once per statement
(`writes.Planner`), and raise the errors SQLAlchemy would. An in-memory SQLite database goes
through SQLAlchemy (`writes.execute`).

If a batch fails on a constraint (a repeated action index, a game that does not exist), it was
rolled back whole, and its writes are retried one per transaction so that only the offending
caller gets the error. Any other failure (the database is unreachable) goes to every caller of the
batch.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql import Executable

from partida.storage.database import Database
from partida.storage.postgres_writer import PostgresWriter
from partida.storage.sqlite_writer import SqliteWriter
from partida.storage.writes import MissingRow, Statement, Step, execute

__all__ = ["MAX_BATCH", "GroupWriter", "MissingRow", "Statement", "Step"]

MAX_BATCH = 512


class _Backend(Protocol):
    """Runs a batch's transaction on one driver (`sqlite_writer`, `postgres_writer`)."""

    async def transaction(self, writes: Sequence[Sequence[Step]]) -> list[Any]: ...

    async def close(self) -> None: ...


class _Write:
    __slots__ = ("future", "steps")

    def __init__(self, steps: Sequence[Step], future: asyncio.Future[Any]) -> None:
        self.steps = steps
        self.future = future


class GroupWriter:
    """Runs writes (lists of steps) in shared transactions; see the module's docstring."""

    def __init__(self, db: Database, max_batch: int = MAX_BATCH) -> None:
        self.db = db
        self.max_batch = max_batch
        self._statements: list[Statement] = []
        self._pending: list[_Write] = []
        self._wakeup: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing = False
        self._backend = _backend(db)
        # A backend that pipelines takes a batch while earlier ones are being committed.
        self._pipelined = bool(getattr(self._backend, "pipelined", False))
        self._committing: set[asyncio.Future[None]] = set()
        db.on_close(self.close)

    def statement(self, name: str, sql: Executable, *, returning: bool = False, must_change: bool = False) -> Statement:
        """Register a statement; statements registered earlier run earlier within a batch."""
        registered = Statement(name, sql, len(self._statements), returning, must_change)
        self._statements.append(registered)
        return registered

    def hook(self, name: str, function: Callable[..., Any], *, when: Executable | None = None) -> Statement:
        """Register `function(connection, [params, ...]) -> [result, ...]`, run once per batch
        after the statements registered before it, in the same transaction (say, rating the
        games whose results were just stored): once per batch, so that it can look up what it
        needs for every write in one query. `when`: a query over one step's parameters that
        finds a row when the hook has something to do for that step; the writers that send
        statements straight to the driver ask it there first, without SQLAlchemy, and skip
        the hook for a batch where it finds none (its results are then None). Skipping must
        change nothing: the hook is the judge, the query only saves calling it for nothing."""
        rank = len(self._statements)
        guard = Statement(f"{name}: when", when, rank) if when is not None else None
        registered = Statement(name, None, rank, hook=function, when=guard)
        self._statements.append(registered)
        return registered

    async def write(self, *steps: Step) -> Any:
        """Run `steps` in order in one transaction (shared with other writes) and return once it
        is committed: the value the returning step gave, else None. Raises the database's error,
        or `MissingRow`, for this write only."""
        return await self.submit(*steps)

    def submit(self, *steps: Step) -> asyncio.Future[Any]:
        """`write` without waiting: queue `steps` and return the future that `write` awaits
        (its caller must read its outcome). Writes run in the order they were queued."""
        loop = asyncio.get_running_loop()
        self._start(loop)
        assert self._wakeup is not None
        future: asyncio.Future[Any] = loop.create_future()
        self._pending.append(_Write(steps, future))
        self._wakeup.set()
        return future

    def _start(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._closing:
            raise RuntimeError("the database is closed")
        if self._task is not None and not self._task.done() and self._loop is loop:
            return
        self._loop = loop
        self._wakeup = asyncio.Event()
        self._task = loop.create_task(self._run(), name="partida-storage-group-writer")

    async def _run(self) -> None:
        assert self._wakeup is not None
        try:
            while True:
                await self._wakeup.wait()
                self._wakeup.clear()
                while self._pending:
                    batch = self._pending[: self.max_batch]
                    del self._pending[: self.max_batch]
                    if self._pipelined:
                        # handed over now; the backend commits it with whatever it has queued
                        committing = asyncio.ensure_future(self._commit(batch))
                        self._committing.add(committing)
                        committing.add_done_callback(self._committing.discard)
                    else:
                        await self._commit(batch)
                if self._closing:
                    return
        finally:
            if self._committing:
                await asyncio.gather(*self._committing, return_exceptions=True)
            for write in self._pending:
                if not write.future.done():
                    write.future.set_exception(RuntimeError("the database closed before this write was committed"))
            self._pending.clear()

    async def _commit(self, batch: list[_Write]) -> None:
        live = [write for write in batch if not write.future.done()]
        if not live:
            return
        try:
            results = await self._transaction([write.steps for write in live])
        except (IntegrityError, MissingRow) as exc:
            if len(live) == 1:
                _fail(live, exc)
                return
            for write in live:
                await self._commit([write])
            return
        except Exception as exc:
            # The database itself failed (unreachable, locked too long): retrying write by write
            # would only multiply the wait, so every caller of the batch gets the error.
            _fail(live, exc)
            return
        for write, result in zip(live, results, strict=True):
            if not write.future.done():
                write.future.set_result(result)

    async def _transaction(self, writes: list[Sequence[Step]]) -> list[Any]:
        """One transaction for `writes`: on the driver itself where there is a backend for it
        (a SQLite file, PostgreSQL), else (an in-memory SQLite database) through SQLAlchemy."""
        if self._backend is not None:
            return await self._backend.transaction(writes)
        async with self.db.write() as conn:
            return await conn.run_sync(execute, writes)

    async def close(self) -> None:
        """Commit what is queued, then stop the writer task."""
        self._closing = True
        task = self._task
        if task is not None and not task.done():
            if self._loop is not asyncio.get_running_loop():
                task.cancel()
            else:
                assert self._wakeup is not None
                self._wakeup.set()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if self._backend is not None:
            backend, self._backend = self._backend, None
            await backend.close()


def _backend(db: Database) -> _Backend | None:
    if db.dialect == "postgresql":
        return PostgresWriter(db.engine)
    if db.dialect == "sqlite" and (make_url(db.url).database or ":memory:") != ":memory:":
        assert db.write_lock is not None
        return SqliteWriter(db.url, db.write_lock)
    return None


def _fail(writes: list[_Write], exc: BaseException) -> None:
    for write in writes:
        if not write.future.done():
            write.future.set_exception(exc)
