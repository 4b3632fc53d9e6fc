"""The group writer's batches on a SQLite file, in a thread of its own (see `batching`): the
writer with `PARTIDA_SQLITE_WRITER=thread`, and for the batches the writer's process cannot take
(`sqlite_process_writer`, which builds on this class's hand-over and write lock)."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import DBAPIError, IntegrityError

from partida.storage.database import SQLITE_BUSY_TIMEOUT_MS, on_sqlite_connect
from partida.storage.sqlite_process import INSERT_ROWS, MERGED_WRITES, multi_row
from partida.storage.writes import MissingRow, Op, Planner, Prepared, Step, plan_alone, run_group

Outcome = Callable[[Any, "BaseException | None"], None]  # a batch's results, or its error


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


class SqliteWriter:
    """A synchronous connection to the same SQLite file, used from one dedicated thread.

    A batch's statements go straight to the driver, with the SQL SQLAlchemy compiled once per
    statement: SQLAlchemy's per-execution work held the GIL longer than the rows themselves, and
    the event loop waits for the GIL. The thread plans each batch (`Planner.plan`: the rows
    converted by the columns' types) and runs it: rows of a plain INSERT as one multi-row
    statement, others with executemany. A statement that needs what only SQLAlchemy can supply
    (a Python-side column default) keeps going through SQLAlchemy; hooks get the SQLAlchemy
    connection of the same transaction.

    The group writer hands a batch over synchronously (`hand_over`), as soon as it has it: no
    task, future or lock is taken for it on the event loop unless SQLite's write lock is held
    by another writer of this process, and the outcome comes back as one callback per
    transaction. The thread, once it has committed a transaction, takes every batch that arrived
    meanwhile into the next one, so it goes from one commit to the next without waiting to be
    woken, and the writes that arrive during a commit still share the next one. If a constraint
    fails a transaction of several batches, each batch is run again on its own, so that only the
    offending batch gets the error (the group writer then retries that batch write by write).

    Planning moved from the event loop to this thread in the sixth round (docs/server.md): the
    thread holds the GIL for it, but the event loop, the bottleneck, no longer spends its time
    on it, and the thread holds the GIL for a few percent of the time at most."""

    def __init__(self, url: str, write_lock: asyncio.Lock) -> None:
        sync_url = make_url(url).set(drivername="sqlite+pysqlite")
        self.engine = create_engine(sync_url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})
        event.listen(self.engine, "connect", on_sqlite_connect)
        self.write_lock = write_lock
        self.planner = Planner(self.engine.dialect)
        self._conn: Connection | None = None  # kept open between batches, only in the thread
        self._inserts: dict[str, tuple[str | None, str | None]] = {}
        self._queue: queue.SimpleQueue[_Job | Callable[[], None] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._users = 0  # batches in flight, which hold the write lock together
        self._door = asyncio.Lock()

    def hand_over(self, writes: Sequence[Sequence[Step]], done: Outcome) -> bool:
        """Queue one transaction for `writes` (shared with the batches that reach the thread
        while it commits another) without waiting: `done(results, None)` or `done(None, error)`
        is called on this event loop once it is committed or has failed. False, and nothing
        queued, when another writer of this process holds SQLite's write lock or waits for it:
        then use `transaction`, which waits its turn."""
        if self._users == 0 and (self._door.locked() or not _take_now(self.write_lock)):
            return False
        self._users += 1
        self._queue_job(writes, done)
        return True

    async def transaction(self, writes: Sequence[Sequence[Step]]) -> list[Any]:
        """`hand_over`, waiting for the write lock if it must, and for the commit."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[Any]] = loop.create_future()
        await self._enter()
        self._queue_job(writes, lambda result, exc: _settle(future, result, exc))  # gives it back on failure
        return await future

    def _queue_job(self, writes: Sequence[Sequence[Step]], done: Outcome) -> None:
        """Hand `writes` to the thread; the write lock's share taken for them is given back
        just before `done` hears the outcome."""

        def finished(result: Any, exc: BaseException | None) -> None:
            self._leave()
            done(result, exc)

        try:
            self._start()
        except BaseException:
            self._leave()
            raise
        self._queue.put(_Job(writes, finished, asyncio.get_running_loop()))

    async def _enter(self) -> None:
        """Take the write lock for the batches in flight: the first takes it, the others share
        it, and the last one out gives it back (other writers of this process, such as an
        account being created, wait for a moment without batches in flight). One caller at a
        time goes through `_door`, so a caller cancelled while waiting leaves nothing behind."""
        async with self._door:
            if self._users == 0:
                await self.write_lock.acquire()
            self._users += 1

    def _leave(self) -> None:
        self._users -= 1
        if self._users == 0:
            self.write_lock.release()

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
            self._run_jobs(jobs)
            if stop:
                return
            if follow is not None:
                follow()

    def _run_jobs(self, jobs: list[_Job]) -> None:
        """Run `jobs` in one transaction and hand each its outcome; after a constraint's
        failure, each again on its own."""
        outcomes: list[tuple[_Job, Any, BaseException | None]] = []
        planned = []
        for job in jobs:
            try:
                job.ops = plan_alone(self.planner, job.writes)
            except Exception as exc:  # a value its column cannot take: this batch alone fails
                outcomes.append((job, None, exc))
            else:
                planned.append(job)
        jobs = planned
        try:
            results = self.run(jobs) if jobs else []
            outcomes += [(job, result, None) for job, result in zip(jobs, results, strict=True)]
        except (IntegrityError, MissingRow) as exc:
            if len(jobs) == 1:
                outcomes.append((jobs[0], None, exc))
            else:
                for job in jobs:
                    try:
                        outcomes.append((job, self.run([job])[0], None))
                    except Exception as alone:
                        outcomes.append((job, None, alone))
        except Exception as exc:
            outcomes += [(job, None, exc) for job in jobs]
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[_Job, Any, BaseException | None]]] = {}
        for outcome in outcomes:
            by_loop.setdefault(outcome[0].loop, []).append(outcome)
        for loop, theirs in by_loop.items():
            with contextlib.suppress(RuntimeError):  # the loop has closed: nobody is waiting
                loop.call_soon_threadsafe(_deliver, theirs)

    def run(self, jobs: list[_Job]) -> list[list[Any]]:
        """One transaction for the planned batches of `jobs`, in the writer's thread; for each,
        the value each write's returning step gave (None for the others). The transaction is
        the driver's own (begun by its first statement, committed here), unless a hook or a
        statement that SQLAlchemy must complete took part: SQLAlchemy's bookkeeping of a
        transaction cost more of the GIL than a batch's rows."""
        if self._conn is None:
            self._conn = self.engine.connect()
        conn = self._conn
        driver = conn.connection.dbapi_connection
        assert driver is not None
        every: list[list[Any]] = []
        try:
            alone = self._one_statement(jobs)
            if alone is not None and not conn.in_transaction() and not driver.in_transaction:
                self._autocommit(conn, *alone)
                return [[None] * job.count for job in jobs]
            for job in jobs:
                results: list[Any] = [None] * job.count
                assert job.ops is not None
                for op in job.ops:
                    if op.statement.hook is not None and op.when is not None and not self._found(conn, op):
                        continue  # nothing for the hook to do in this batch
                    if op.prepared is None or op.rows is None:
                        run_group(conn, op.statement, op.group, results)  # SQLAlchemy begins with it
                    else:
                        self._run_prepared(conn, op, results)
                every.append(results)
            if conn.in_transaction():
                conn.commit()
            else:
                self._call(conn, "COMMIT", driver.commit)
            return every
        except (IntegrityError, MissingRow):
            # Rolled back; the connection is fine.
            if conn.in_transaction():
                conn.rollback()
            else:
                self._call(conn, "ROLLBACK", driver.rollback)
            raise
        except BaseException:
            # A failure of the file or the driver: start the next batch on a new connection.
            self._conn = None
            with contextlib.suppress(Exception):
                conn.close()
            raise

    def _one_statement(self, jobs: list[_Job]) -> tuple[str, tuple[Any, ...]] | None:
        """The batches of `jobs` as one statement, when they are nothing but rows of one plain
        INSERT (say, actions from several rooms), few enough for one statement; else None."""
        rows: list[tuple[Any, ...]] = []
        prepared = None
        for job in jobs:
            if job.ops is None or len(job.ops) != 1:
                return None
            op = job.ops[0]
            if op.prepared is None or op.rows is None or not op.prepared.plain_insert:
                return None
            if op.statement.returning or op.statement.must_change or op.statement.hook is not None:
                return None
            if prepared is None:
                prepared = op.prepared
            elif op.prepared is not prepared:
                return None
            rows += op.rows
        if prepared is None or len(rows) > INSERT_ROWS:
            return None
        if len(rows) == 1:
            return prepared.sql, rows[0]
        statements = self._many(prepared, rows)
        return statements[0] if len(statements) == 1 else None  # an INSERT it could not widen

    def _autocommit(self, conn: Connection, sql: str, values: tuple[Any, ...]) -> None:
        """One statement committed by itself (SQLite makes a lone statement its own transaction):
        one step of the driver where BEGIN, the statement and COMMIT were three, each of which
        lets go of the GIL and must take it back from the event loop (`bench/sqlite_commit.py`
        times both; on this machine the difference stayed within its noise, docs/server.md)."""
        driver = conn.connection.dbapi_connection
        assert driver is not None
        saved = driver.isolation_level
        driver.isolation_level = None  # the driver's autocommit: no implicit BEGIN
        cursor = driver.cursor()
        try:
            self._call(conn, sql, cursor.execute, sql, values)
        finally:
            cursor.close()
            driver.isolation_level = saved

    def _found(self, conn: Connection, op: Op) -> bool:
        """Whether a hook's guard finds a row for any of its steps."""
        assert op.when is not None and op.when_rows is not None
        cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        try:
            for row in op.when_rows:
                if self._call(conn, op.when.sql, cursor.execute, op.when.sql, row).fetchone() is not None:
                    return True
            return False
        finally:
            cursor.close()

    @staticmethod
    def _call(conn: Connection, sql: str, function: Any, *args: Any) -> Any:
        """`function(*args)` on the driver, its error raised as SQLAlchemy raises it."""
        try:
            return function(*args)
        except conn.dialect.loaded_dbapi.Error as exc:
            raise _as_sqlalchemy(conn, sql, exc) from exc

    def _run_prepared(self, conn: Connection, op: Op, results: list[Any]) -> None:
        prepared, rows, statement = op.prepared, op.rows, op.statement
        assert prepared is not None and rows is not None
        dbapi = conn.dialect.loaded_dbapi
        cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        try:
            if statement.returning:
                for (position, _), row in zip(op.group, rows, strict=True):
                    cursor.execute(prepared.sql, row)
                    results[position] = cursor.fetchone()[0]
                return
            if prepared.plain_insert and len(rows) > 1:
                for sql, values in self._many(prepared, rows):
                    cursor.execute(sql, values)
            else:
                cursor.executemany(prepared.sql, rows)
            if statement.must_change and cursor.rowcount != len(rows):
                raise MissingRow(statement)
        except dbapi.Error as exc:
            raise _as_sqlalchemy(conn, prepared.sql, exc) from exc
        finally:
            cursor.close()

    def _many(self, prepared: Prepared, rows: list[tuple[Any, ...]]) -> list[tuple[str, tuple[Any, ...]]]:
        return multi_row(self._inserts, prepared.sql, rows)

    def reset(self) -> None:
        """Drop the connection (in the writer's thread): the next batch opens a new one."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self.engine.dispose()

    async def reconnect(self) -> None:
        """Open a new connection for the next batch (say, after the file's settings changed)."""
        await self._in_thread(self.reset)

    async def close(self) -> None:
        await self._in_thread(self.reset)
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


def _as_sqlalchemy(conn: Connection, sql: str, exc: Exception) -> Exception:
    """A driver's error as SQLAlchemy raises it (IntegrityError, OperationalError ...), so that
    callers see the same errors on every path."""
    dbapi = conn.dialect.loaded_dbapi
    return DBAPIError.instance(sql, None, exc, dbapi.Error, dialect=conn.dialect)
