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

Every write first passes the node's fence, when the store has one (`fencing`): past it,
nothing is queued. A batch then goes to the database's backend (`backend.WriteBackend`, chosen
once by `backend.open_backend`), which runs it on the driver itself with the SQL SQLAlchemy
compiled once per statement (`writes.Planner`) and raises the errors SQLAlchemy would. A
backend that `takes_batches_as_they_come` (SQLite's: a process, or a thread) commits the batches
that arrived during its last commit together, so the writes of each turn of the event loop are
handed over at the end of that turn, synchronously, and each batch comes back through one
callback; PostgreSQL's runs one batch at a time from this writer's task.

If a batch fails on a constraint (a repeated action index, a game that does not exist), it was
rolled back whole, and its writes are retried one per transaction so that only the offending
caller gets the error. Any other failure (the database is unreachable) goes to every caller of the
batch.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql import ColumnElement, Executable

from partida.storage.backend import WriteBackend, open_backend
from partida.storage.database import Database
from partida.storage.fencing import Fence
from partida.storage.writes import MissingRow, Statement, Step, Unplannable

__all__ = ["MAX_BATCH", "GroupWriter", "MissingRow", "Statement", "Step"]

MAX_BATCH = 512


class _Write:
    __slots__ = ("future", "steps")

    def __init__(self, steps: Sequence[Step], future: asyncio.Future[Any]) -> None:
        self.steps = steps
        self.future = future


class GroupWriter:
    """Runs writes (lists of steps) in shared transactions; see the module's docstring."""

    def __init__(self, db: Database, fence: Fence | None = None, max_batch: int = MAX_BATCH) -> None:
        self.db = db
        self.fence = fence  # every write passes it before it is queued (`fencing`)
        self.max_batch = max_batch
        self._statements: list[Statement] = []
        self._pending: list[_Write] = []
        self._wakeup: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing = False
        self._backend: WriteBackend | None = open_backend(db, self._next_needs_transaction)  # None once closed
        # A backend that takes batches as they come, at the end of each turn of the event loop.
        self._hand_over_to = self._backend if self._backend.takes_batches_as_they_come else None
        self._handover_due = False
        self._committing: set[asyncio.Future[None]] = set()  # batches waiting for the write lock
        db.on_close(self.close)

    def statement(
        self,
        name: str,
        sql: Executable,
        *,
        returning: bool = False,
        must_change: bool = False,
        answer: ColumnElement[Any] | None = None,
    ) -> Statement:
        """Register a statement; statements registered earlier run earlier within a batch.
        `answer`: for a must-change UPDATE, an expression over the changed row that is true where
        the guard of a hook registered later (`hook`'s `answered_by`) finds a row for the same
        write; the PostgreSQL writer has the UPDATE return it, and sends no guard query."""
        registered = Statement(name, sql, len(self._statements), returning, must_change, answer=answer)
        self._statements.append(registered)
        return registered

    def hook(
        self,
        name: str,
        function: Callable[..., Any],
        *,
        when: Executable | None = None,
        answered_by: Sequence[Statement] = (),
    ) -> Statement:
        """Register `function(connection, [params, ...]) -> [result, ...]`, run once per batch
        after the statements registered before it, in the same transaction (say, rating the
        games whose results were just stored): once per batch, so that it can look up what it
        needs for every write in one query. `when`: a query over one step's parameters that
        finds a row when the hook has something to do for that step; the writers that send
        statements straight to the driver ask it there first, without SQLAlchemy, and skip
        the hook for a batch where it finds none (its results are then None). Skipping must
        change nothing: the hook is the judge, the query only saves calling it for nothing.
        `answered_by`: the statements registered with an `answer` to `when` (a write holds at
        most one of them), which spare the query for the writes that hold a step of one."""
        rank = len(self._statements)
        guard = Statement(f"{name}: when", when, rank) if when is not None else None
        registered = Statement(name, None, rank, hook=function, when=guard, answered_by=tuple(answered_by))
        self._statements.append(registered)
        return registered

    async def write(self, *steps: Step) -> Any:
        """Run `steps` in order in one transaction (shared with other writes) and return once it
        is committed: the value the returning step gave, else None. Raises the database's error,
        or `MissingRow`, for this write only."""
        return await self.submit(*steps)

    def submit(self, *steps: Step) -> asyncio.Future[Any]:
        """`write` without waiting: queue `steps` and return the future that `write` awaits
        (its caller must read its outcome). Writes run in the order they were queued. Past the
        fence (`fencing`) nothing is queued: `NotWritten` is raised."""
        if self.fence is not None:
            self.fence.check()
        if self._closing:
            raise RuntimeError("the database is closed")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._pending.append(_Write(steps, future))
        if self._hand_over_to is not None:
            if not self._handover_due:
                self._handover_due = True
                loop.call_soon(self._hand_over)
            return future
        self._start(loop)
        assert self._wakeup is not None
        self._wakeup.set()
        return future

    def _hand_over(self) -> None:
        """The writes of this turn of the event loop to the backend that takes them as they
        come: one callback, and no task, future or lock per batch on the event loop, the
        server's bottleneck."""
        self._handover_due = False
        while self._pending:
            batch = self._pending[: self.max_batch]
            del self._pending[: self.max_batch]
            self._hand_over_batch(batch)

    def _hand_over_batch(self, batch: list[_Write]) -> None:
        live = [write for write in batch if not write.future.done()]
        if not live:
            return
        backend = self._hand_over_to
        try:
            if backend is None:
                raise RuntimeError("the database closed before this write was committed")
            if backend.hand_over([write.steps for write in live], lambda res, exc: self._settle(live, res, exc)):
                return
        except Exception as exc:
            _fail(live, exc)
            return
        # Another writer of this process holds SQLite's write lock: this batch waits its turn.
        committing = asyncio.ensure_future(self._commit(live))
        self._committing.add(committing)
        committing.add_done_callback(self._committing.discard)

    def _settle(self, live: list[_Write], results: list[Any] | None, exc: BaseException | None) -> None:
        """A handed-over batch's outcome, as `_commit` gives it."""
        if exc is None:
            assert results is not None
            _succeed(live, results)
        elif isinstance(exc, (IntegrityError, MissingRow, Unplannable)) and len(live) > 1:
            for write in live:  # rolled back whole: again one by one, so only its writer fails
                self._hand_over_batch([write])
        else:
            _fail(live, exc)

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
                    await self._commit(batch)
                if self._closing:
                    return
        finally:
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
        except (IntegrityError, MissingRow, Unplannable) as exc:
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
        _succeed(live, results)

    def _next_needs_transaction(self) -> bool:
        """Whether the next batch, as far as it has arrived, needs a transaction of its own
        (PostgreSQL: a BEGIN, sent with the COMMIT before it): more than one statement, or
        one that returns, must change a row, or is a hook. A guess: writes may still arrive."""
        first = None
        for write in self._pending[: self.max_batch]:
            for step in write.steps:
                statement = step.statement
                if statement.must_change or statement.returning or statement.hook is not None:
                    return True
                if first is None:
                    first = statement
                elif statement is not first:
                    return True
        return False

    async def _transaction(self, writes: list[Sequence[Step]]) -> list[Any]:
        """One transaction for `writes`, on the backend."""
        if self._backend is None:
            raise RuntimeError("the database closed before this write was committed")
        return await self._backend.transaction(writes)

    async def close(self) -> None:
        """Commit what is queued, then stop the writer task."""
        self._closing = True
        if self._handover_due:
            self._hand_over()
        if self._committing:
            await asyncio.gather(*self._committing, return_exceptions=True)
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
            # The batches handed over are committed (and their writers told) before it closes.
            backend, self._backend = self._backend, None
            await backend.close()
            self._hand_over_to = None


def _succeed(writes: list[_Write], results: list[Any]) -> None:
    for write, result in zip(writes, results, strict=True):
        if not write.future.done():
            write.future.set_result(result)


def _fail(writes: list[_Write], exc: BaseException) -> None:
    for write in writes:
        if not write.future.done():
            write.future.set_exception(exc)
