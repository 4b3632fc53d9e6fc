"""The group writer's batches on a SQLite file, in a thread of its own (see `batching`): the
backend with `PARTIDA_SQLITE_WRITER=thread`, and the one the writer's process holds for the
batches it cannot take (`sqlite_process_writer`).

The thread runs its transactions with the writer process's own runner (`sqlite_process.Batches`:
batches merged into one transaction and run again alone after a constraint's failure, a lone
INSERT committed without BEGIN and COMMIT, multi-row INSERTs), so both writers run batches the
same way; a batch reaches it in the form it takes down the process's pipe (`wire_ops`), except
that a statement only SQLAlchemy can complete goes as a hook that runs it through SQLAlchemy."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import DBAPIError

from partida.storage.backend import Outcome
from partida.storage.database import SQLITE_BUSY_TIMEOUT_MS, on_sqlite_connect
from partida.storage.sqlite_process import MERGED_WRITES, Batches, Failed, Job, hook_name
from partida.storage.writes import MissingRow, Op, Planner, Statement, Step, plan_alone, run_group

Enqueue = Callable[[Sequence[Sequence[Step]], Outcome], None]  # starts a batch on its way


@dataclass(slots=True)
class _Job:
    """A batch handed to the thread, and where its outcome goes (`done`, called on `loop`)."""

    writes: Sequence[Sequence[Step]]
    done: Outcome
    loop: asyncio.AbstractEventLoop
    ops: list[Op] | None = None  # planned in the thread

    @property
    def count(self) -> int:
        return len(self.writes)


class WriteLockShare:
    """SQLite's in-process write lock (`Database.write_lock`), held by a backend's batches in
    flight together: the first takes it, the others share it, and the last one out gives it
    back (other writers of this process, such as an account being created, wait for a moment
    without batches in flight). A SQLite backend queues its batches through `hand_over` and
    `transaction`, with a function `enqueue(writes, done)` that starts one on its way; `done` gives
    the share back before the batch's own callback hears the outcome."""

    def __init__(self, lock: asyncio.Lock) -> None:
        self.lock = lock
        self.users = 0  # batches in flight
        self._door = asyncio.Lock()  # one waiting caller at a time: a cancelled one leaves nothing

    def hand_over(self, enqueue: Enqueue, writes: Sequence[Sequence[Step]], done: Outcome) -> bool:
        """Queue `writes` if that needs no wait for the lock; else False, and nothing queued."""
        if self.users == 0 and (self._door.locked() or not _take_now(self.lock)):
            return False
        self.users += 1
        self._enqueue(enqueue, writes, done)
        return True

    async def transaction(self, enqueue: Enqueue, writes: Sequence[Sequence[Step]]) -> list[Any]:
        """`hand_over`, waiting for the lock if it must, and for the commit."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[Any]] = loop.create_future()
        async with self._door:
            if self.users == 0:
                await self.lock.acquire()
            self.users += 1
        self._enqueue(enqueue, writes, lambda result, exc: _settle(future, result, exc))
        return await future

    def _enqueue(self, enqueue: Enqueue, writes: Sequence[Sequence[Step]], done: Outcome) -> None:
        def finished(result: Any, exc: BaseException | None) -> None:
            self._leave()
            done(result, exc)

        try:
            enqueue(writes, finished)
        except BaseException:
            self._leave()
            raise

    def _leave(self) -> None:
        self.users -= 1
        if self.users == 0:
            self.lock.release()


class SqliteWriter:
    """A synchronous connection to the same SQLite file, used from one dedicated thread, which
    runs its batches with the runner the writer's process uses (`Batches`).

    A batch's statements go straight to the driver, with the SQL SQLAlchemy compiled once per
    statement: SQLAlchemy's per-execution work held the GIL longer than the rows themselves, and
    the event loop waits for the GIL. The thread plans each batch (`Planner.plan`: the rows
    converted by the columns' types) and runs it: rows of a plain INSERT as one multi-row
    statement, others with executemany. A statement that needs what only SQLAlchemy can supply
    (a Python-side column default) goes through SQLAlchemy as a hook does (`wire_ops`): both get
    the SQLAlchemy connection under which the driver's runs, in the same transaction.

    The group writer hands a batch over synchronously (`hand_over`), as soon as it has it: no
    task, future or lock is taken for it on the event loop unless SQLite's write lock is held
    by another writer of this process, and the outcome comes back as one callback per
    transaction. The thread, once it has committed a transaction, takes every batch that arrived
    meanwhile into the next one, so it goes from one commit to the next without waiting to be
    woken, and the writes that arrive during a commit still share the next one. If a constraint
    fails a transaction of several batches, each batch is run again on its own, so that only the
    offending batch gets the error (the group writer then retries that batch write by write).

    Planning happens in this thread, not on the event loop: the event loop is the server's
    bottleneck, and the thread holds the GIL for a few percent of the time at most."""

    takes_batches_as_they_come = True

    def __init__(self, url: str, write_lock: asyncio.Lock) -> None:
        sync_url = make_url(url).set(drivername="sqlite+pysqlite")
        self.path = sync_url.database or ""
        self.runner = Batches(self.path, self._connect)
        self.engine = create_engine(sync_url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})
        event.listen(self.engine, "connect", on_sqlite_connect)
        self.share = WriteLockShare(write_lock)
        self.planner = Planner(self.engine.dialect)
        self._queue: queue.SimpleQueue[_Job | Callable[[], None] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def hand_over(self, writes: Sequence[Sequence[Step]], done: Outcome) -> bool:
        """Queue one transaction for `writes` (shared with the batches that reach the thread
        while it commits another) without waiting: `done(results, None)` or `done(None, error)`
        is called on this event loop once it is committed or has failed. False, and nothing
        queued, when another writer of this process holds SQLite's write lock or waits for it:
        then use `transaction`, which waits its turn."""
        return self.share.hand_over(self.enqueue, writes, done)

    async def transaction(self, writes: Sequence[Sequence[Step]]) -> list[Any]:
        """`hand_over`, waiting for the write lock if it must, and for the commit."""
        return await self.share.transaction(self.enqueue, writes)

    def enqueue(self, writes: Sequence[Sequence[Step]], done: Outcome) -> None:
        """Hand `writes` to the thread, under a share of the write lock taken by the caller."""
        self._start()
        self._queue.put(_Job(writes, done, asyncio.get_running_loop()))

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="partida-sqlite-writer", daemon=True)
            self._thread.start()

    def _serve(self) -> None:
        """The writer's thread: each transaction takes every batch waiting, up to
        `MERGED_WRITES` writes; a function (closing, reconnecting) runs alone."""
        while True:
            item = self._queue.get()
            if item is None:
                return
            if not isinstance(item, _Job):
                item()
                continue
            jobs = [item]
            writes = item.count
            follow: _Job | Callable[[], None] | None = None
            stop = False
            while writes < MERGED_WRITES:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if isinstance(more, _Job):
                    jobs.append(more)
                    writes += more.count
                else:
                    follow, stop = more, more is None
                    break
            self._run_handed(jobs)
            if stop:
                return
            if follow is not None:
                follow()

    def _run_handed(self, handed: list[_Job]) -> None:
        """Plan `handed`, run them in one transaction (`Batches.run_jobs`: after a constraint's
        failure, each again on its own) and hand each its outcome on its event loop."""
        outcomes: list[tuple[_Job, Any, BaseException | None]] = []
        jobs: list[Job] = []
        for index, job in enumerate(handed):
            try:
                job.ops = plan_alone(self.planner, job.writes)
            except Exception as exc:  # a value its column cannot take: this batch alone fails
                outcomes.append((job, None, exc))
                continue
            wire = wire_ops(job.ops, to_process=False)
            assert wire is not None
            jobs.append(Job.received((index, wire, job.count)))
        for index, results, error in self.runner.run_jobs(jobs) if jobs else []:
            job = handed[index]
            assert job.ops is not None
            outcomes.append((job, results, None if error is None else self.error(error, job.ops)))
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[_Job, Any, BaseException | None]]] = {}
        for outcome in outcomes:
            by_loop.setdefault(outcome[0].loop, []).append(outcome)
        for loop, theirs in by_loop.items():
            with contextlib.suppress(RuntimeError):  # the loop has closed: nobody is waiting
                loop.call_soon_threadsafe(_deliver, theirs)

    def _connect(self) -> tuple[sqlite3.Connection, Connection]:
        """The driver's connection under one of SQLAlchemy's, which gets the settings
        (`on_sqlite_connect`) and serves the hooks and the statements only SQLAlchemy completes,
        in the same transaction."""
        conn = self.engine.connect()
        driver = conn.connection.dbapi_connection
        assert driver is not None
        return driver, conn  # type: ignore[return-value]

    def error(self, error: tuple[Any, ...], ops: list[Op]) -> BaseException:
        """A runner's error (`sqlite_process.Failed`, in this thread or the writer's process) as
        SQLAlchemy raises it, or `MissingRow`: callers see the same errors from either writer."""
        if error[0] == "db":
            return DBAPIError.instance(error[1], None, error[2], sqlite3.Error, dialect=self.engine.dialect)
        if error[0] == "missing":
            return MissingRow(ops[error[1]].statement)
        return error[1]  # type: ignore[no-any-return]

    async def reconnect(self) -> None:
        """Open a new connection for the next batch (say, after the file's settings changed)."""
        await self._in_thread(self.runner.reset)

    async def close(self) -> None:
        await self._in_thread(self.runner.reset)
        thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            await asyncio.to_thread(thread.join)

    async def _in_thread(self, function: Callable[[], None]) -> None:
        """`function` in the writer's thread, after the batches handed over before it."""
        if self._thread is None:
            await asyncio.to_thread(function)
            return
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def call() -> None:
            failure: BaseException | None = None
            try:
                function()
            except Exception as exc:
                failure = exc
            with contextlib.suppress(RuntimeError):  # the loop has closed: nobody is waiting
                loop.call_soon_threadsafe(_settle, done, None, failure)

        self._queue.put(call)
        await done


def wire_ops(ops: list[Op], *, to_process: bool) -> list[tuple[Any, ...]] | None:
    """A planned batch's ops as `sqlite_process.WireOp`s, in plain tuples (what `marshal` takes
    down the process's pipe), for the writer's process (`to_process`) or the thread. For the
    process a hook goes by its name (`hook_name`), which it imports when the hook runs; a batch
    the process cannot run (a statement only SQLAlchemy can complete, a hook that is no module's
    function) makes the answer None, and goes to the thread. In the thread a hook is the function
    itself, and a statement only SQLAlchemy can complete becomes a hook that runs it through
    SQLAlchemy in the batch's transaction."""
    wire: list[tuple[Any, ...]] = []
    for index, op in enumerate(ops):
        statement = op.statement
        positions = [position for position, _ in op.group]
        if statement.hook is not None:
            hook = _named(statement.hook) if to_process else statement.hook
            if hook is None:
                return None  # no module's function: not the process's to import
            when = op.when.sql if op.when is not None else None
            params = [params for _, params in op.group]
            wire.append(("hook", "", [], positions, hook, params, when, op.when_rows))
            continue
        if op.prepared is None or op.rows is None:
            if to_process:
                return None
            params = [params for _, params in op.group]
            wire.append(("hook", "", [], positions, partial(_through_sqlalchemy, statement, index), params))
            continue
        if statement.returning:
            kind = "returning"
        elif statement.must_change:
            kind = "must_change"
        else:
            kind = "insert" if op.prepared.plain_insert else "many"
        wire.append((kind, op.prepared.sql, op.rows, positions))
    return wire


_hook_name = lru_cache(maxsize=64)(hook_name)  # the server's few hooks, each named once


def _named(hook: Callable[..., Any]) -> str | None:
    try:
        return _hook_name(hook)
    except TypeError:  # unhashable (a callable object): not a module's function anyway
        return None


def _through_sqlalchemy(statement: Statement, index: int, conn: Connection, params: list[dict[str, Any]]) -> list[Any]:
    """A statement that only SQLAlchemy can complete, called as a hook is (`wire_ops`): each
    row's value (a new id), and an UPDATE that changed no row failing as the driver's do."""
    values: list[Any] = [None] * len(params)
    try:
        run_group(conn, statement, list(enumerate(params)), values)
    except MissingRow as exc:
        raise Failed(("missing", index)) from exc
    return values


def _settle(future: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    if future.done():
        return  # its caller went (cancelled)
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(result)


def _deliver(outcomes: list[tuple[_Job, Any, BaseException | None]]) -> None:
    for job, result, exc in outcomes:
        job.done(result, exc)


def _take_now(lock: asyncio.Lock) -> bool:
    """Acquire `lock` if that needs no waiting (it is free and nobody waits for it), else leave
    it as it was. asyncio's lock has no such call; its `acquire` returns at once in that case,
    without suspending, which is what running it one step tells."""
    if lock.locked():
        return False
    attempt = lock.acquire()
    try:
        attempt.send(None)
    except StopIteration:
        return True
    attempt.close()  # it would have waited: out of the queue again
    return False
