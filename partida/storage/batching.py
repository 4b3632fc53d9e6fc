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

If a batch fails on a constraint (a repeated action index, a game that does not exist), it was
rolled back whole, and its writes are retried one per transaction so that only the offending
caller gets the error. Any other failure (the database is unreachable) goes to every caller of the
batch.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.sql import Executable

from partida.storage.database import SQLITE_BUSY_TIMEOUT_MS, Database, on_sqlite_connect

MAX_BATCH = 512


class MissingRow(LookupError):
    """An UPDATE that must change a row changed none (the row does not exist)."""

    def __init__(self, statement: Statement) -> None:
        super().__init__(f"no row for {statement.name}")
        self.statement = statement


@dataclass(eq=False, frozen=True)
class Statement:
    """A Core statement registered with a writer: `rank` orders it within a batch; `returning`
    says it yields one value per row (a new id); `must_change` says each UPDATE must change a
    row. A hook has no statement but a function, called once per write with the transaction's
    connection and the step's parameters; what it returns is the write's result."""

    name: str
    sql: Executable | None
    rank: int
    returning: bool = False
    must_change: bool = False
    hook: Callable[..., Any] | None = None


@dataclass(frozen=True, slots=True)
class Step:
    statement: Statement
    params: dict[str, Any]


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
        file = db.dialect == "sqlite" and (make_url(db.url).database or ":memory:") != ":memory:"
        self._thread = _SqliteThread(db.url) if file else None
        db.on_close(self.close)

    def statement(self, name: str, sql: Executable, *, returning: bool = False, must_change: bool = False) -> Statement:
        """Register a statement; statements registered earlier run earlier within a batch."""
        registered = Statement(name, sql, len(self._statements), returning, must_change)
        self._statements.append(registered)
        return registered

    def hook(self, name: str, function: Callable[..., Any]) -> Statement:
        """Register `function(connection, **params)`, run after the statements registered before
        it, in the same transaction (say, rating a game whose result was just stored)."""
        registered = Statement(name, None, len(self._statements), hook=function)
        self._statements.append(registered)
        return registered

    async def write(self, *steps: Step) -> Any:
        """Run `steps` in order in one transaction (shared with other writes) and return once it
        is committed: the value the returning step gave, else None. Raises the database's error,
        or `MissingRow`, for this write only."""
        loop = asyncio.get_running_loop()
        self._start(loop)
        assert self._wakeup is not None
        future: asyncio.Future[Any] = loop.create_future()
        self._pending.append(_Write(steps, future))
        self._wakeup.set()
        return await future

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
        """One transaction for `writes`. On a SQLite file it runs whole in the writer's own
        thread (one hand-over between threads per batch, rather than several per statement
        through aiosqlite); elsewhere (PostgreSQL, whose driver is asyncio-native) on the engine."""
        if self._thread is not None:
            assert self.db.write_lock is not None
            async with self.db.write_lock:
                return await asyncio.get_running_loop().run_in_executor(self._thread.executor, self._thread.run, writes)
        async with self.db.write() as conn:
            return await conn.run_sync(_execute, writes)

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
        if self._thread is not None:
            thread, self._thread = self._thread, None
            await asyncio.to_thread(thread.close)


def _execute(conn: Connection, writes: list[Sequence[Step]], run: _Runner | None = None) -> list[Any]:
    """Every step of `writes` in the open transaction of `conn`, one executemany per statement;
    the value each write's returning step gave (None for the others). `run` executes one
    statement's rows (default: through SQLAlchemy)."""
    groups: dict[Statement, list[tuple[int, dict[str, Any]]]] = {}
    for position, steps in enumerate(writes):
        for step in steps:
            groups.setdefault(step.statement, []).append((position, step.params))
    results: list[Any] = [None] * len(writes)
    for statement in sorted(groups, key=lambda s: s.rank):
        group = groups[statement]
        if statement.hook is not None:
            for position, one in group:
                value = statement.hook(conn, **one)
                if value is not None:
                    results[position] = value
            continue
        params = [p for _, p in group]
        values = (run or _run_core)(conn, statement, params)
        if statement.returning:
            for (position, _), value in zip(group, values, strict=True):
                results[position] = value
    return results


_Runner = Callable[[Connection, Statement, list[dict[str, Any]]], list[Any]]


def _run_core(conn: Connection, statement: Statement, params: list[dict[str, Any]]) -> list[Any]:
    """One statement's rows through SQLAlchemy: the new ids of a returning statement, else []."""
    assert statement.sql is not None
    if statement.returning:
        return list(conn.execute(statement.sql, params).scalars().all())
    if statement.must_change and (len(params) == 1 or not conn.dialect.supports_sane_multi_rowcount):
        # Without a total row count for executemany (asyncpg), each row is checked on its own;
        # still one transaction.
        for one in params:
            if conn.execute(statement.sql, one).rowcount == 0:
                raise MissingRow(statement)
        return []
    changed = conn.execute(statement.sql, params)
    if statement.must_change and changed.rowcount != len(params):
        raise MissingRow(statement)
    return []


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A statement compiled once for the SQLite driver: its SQL, and for each `?` in order the
    parameter's name, its fixed value when the statement holds one, and the type's converter."""

    sql: str
    names: tuple[str, ...]
    fixed: dict[str, Any]
    convert: tuple[Callable[[Any], Any] | None, ...]

    def row(self, params: dict[str, Any]) -> tuple[Any, ...]:
        fixed = self.fixed
        return tuple(
            (params[name] if name in params else fixed[name])
            if convert is None
            else convert(params[name] if name in params else fixed[name])
            for name, convert in zip(self.names, self.convert, strict=True)
        )


class _SqliteThread:
    """A synchronous connection to the same SQLite file, used from one dedicated thread.

    A batch's statements go straight to the driver (`executemany` with the SQL SQLAlchemy
    compiled once per statement): SQLAlchemy's per-execution work (cache keys, parameter
    processing, result set-up) held the GIL longer than the rows themselves, and the event loop
    waits for the GIL. A statement that needs what only SQLAlchemy can supply (a Python-side
    column default) keeps going through SQLAlchemy; hooks get the SQLAlchemy connection of the
    same transaction."""

    def __init__(self, url: str) -> None:
        sync_url = make_url(url).set(drivername="sqlite+pysqlite")
        self.engine = create_engine(sync_url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})
        event.listen(self.engine, "connect", on_sqlite_connect)
        self.executor = ThreadPoolExecutor(1, thread_name_prefix="partida-sqlite-writer")
        self._conn: Connection | None = None  # kept open between batches, only in the thread
        self._prepared: dict[tuple[Statement, tuple[str, ...]], _Prepared | None] = {}

    def run(self, writes: list[Sequence[Step]]) -> list[Any]:
        if self._conn is None:
            self._conn = self.engine.connect()
        conn = self._conn
        try:
            with conn.begin():
                return _execute(conn, writes, self._run)
        except (IntegrityError, MissingRow):
            raise  # rolled back; the connection is fine
        except BaseException:
            # A failure of the file or the driver: start the next batch on a new connection.
            self._conn = None
            with contextlib.suppress(Exception):
                conn.close()
            raise

    def _run(self, conn: Connection, statement: Statement, params: list[dict[str, Any]]) -> list[Any]:
        key = (statement, tuple(params[0]))
        prepared = self._prepared[key] if key in self._prepared else self._prepare(conn, *key)
        first = params[0].keys()
        if prepared is None or any(p.keys() != first for p in params):
            return _run_core(conn, statement, params)
        dbapi = conn.dialect.loaded_dbapi
        cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        try:
            if statement.returning:
                values = []
                for one in params:
                    cursor.execute(prepared.sql, prepared.row(one))
                    values.append(cursor.fetchone()[0])
                return values
            cursor.executemany(prepared.sql, [prepared.row(one) for one in params])
        except dbapi.Error as exc:
            # As SQLAlchemy would raise it (IntegrityError, OperationalError ...), so callers
            # see the same errors on every path.
            raise DBAPIError.instance(prepared.sql, None, exc, dbapi.Error, dialect=conn.dialect) from exc
        finally:
            cursor.close()
        if statement.must_change and cursor.rowcount != len(params):
            raise MissingRow(statement)
        return []

    def _prepare(self, conn: Connection, statement: Statement, keys: tuple[str, ...]) -> _Prepared | None:
        assert statement.sql is not None
        dialect = conn.dialect
        compiled = statement.sql.compile(dialect=dialect, column_keys=list(keys))
        names = tuple(compiled.positiontup or ())
        prefetch = [*compiled.insert_prefetch, *compiled.update_prefetch]
        fixed: dict[str, Any] = {}
        for name in names:
            bind = compiled.binds[name]
            if name not in keys:
                fixed[name] = bind.value
                if bind.required or bind.callable is not None:
                    prefetch.append(bind)
        if any(column.key not in keys for column in prefetch):
            self._prepared[(statement, keys)] = None  # a value only SQLAlchemy can supply
            return None
        convert = tuple(compiled.binds[name].type.bind_processor(dialect) for name in names)
        prepared = _Prepared(str(compiled), names, fixed, convert)
        self._prepared[(statement, keys)] = prepared
        return prepared

    def reset(self) -> None:
        """Drop the connection (in the writer's thread): the next batch opens a new one."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self.engine.dispose()

    def close(self) -> None:
        self.executor.submit(self.reset).result()
        self.executor.shutdown()


def _fail(writes: list[_Write], exc: BaseException) -> None:
    for write in writes:
        if not write.future.done():
            write.future.set_exception(exc)
