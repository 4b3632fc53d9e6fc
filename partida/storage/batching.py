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
from sqlalchemy.sql import Executable, Insert

from partida.storage.database import SQLITE_BUSY_TIMEOUT_MS, Database, on_sqlite_connect

MAX_BATCH = 512
INSERT_ROWS = 128  # rows per multi-row INSERT on SQLite (6 columns: far below its 32,766 parameters)


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
            ops = self._thread.plan(writes)
            async with self.db.write_lock:
                return await asyncio.get_running_loop().run_in_executor(
                    self._thread.executor, self._thread.run, ops, len(writes)
                )
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


def _grouped(writes: list[Sequence[Step]]) -> list[tuple[Statement, list[tuple[int, dict[str, Any]]]]]:
    """The steps of `writes` by statement, in the statements' order, each row with the
    position of its write."""
    groups: dict[Statement, list[tuple[int, dict[str, Any]]]] = {}
    for position, steps in enumerate(writes):
        for step in steps:
            groups.setdefault(step.statement, []).append((position, step.params))
    return sorted(groups.items(), key=lambda item: item[0].rank)


def _execute(conn: Connection, writes: list[Sequence[Step]]) -> list[Any]:
    """Every step of `writes` in the open transaction of `conn`, one executemany per statement;
    the value each write's returning step gave (None for the others)."""
    results: list[Any] = [None] * len(writes)
    for statement, group in _grouped(writes):
        _run_group(conn, statement, group, results)
    return results


def _run_group(
    conn: Connection, statement: Statement, group: list[tuple[int, dict[str, Any]]], results: list[Any]
) -> None:
    """One statement's rows (or a hook's calls) through SQLAlchemy; a returning statement's
    values (a hook's) go into `results` at their write's position."""
    if statement.hook is not None:
        for position, one in group:
            value = statement.hook(conn, **one)
            if value is not None:
                results[position] = value
        return
    values = _run_core(conn, statement, [p for _, p in group])
    if statement.returning:
        for (position, _), value in zip(group, values, strict=True):
            results[position] = value


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
    # For a plain INSERT: the SQL before VALUES and one row's "(?, ...)", so that many rows go
    # in one statement (one step of the driver, which lets go of the GIL and takes it back once
    # per step, rather than once per row).
    insert_head: str | None = None
    insert_row: str | None = None

    def many(self, rows: list[tuple[Any, ...]]) -> list[tuple[str, tuple[Any, ...]]]:
        """`rows` as statements with their parameters: a multi-row INSERT per `INSERT_ROWS`
        rows when the statement is a plain INSERT."""
        if self.insert_head is None or len(rows) == 1:
            return [(self.sql, row) for row in rows]
        statements = []
        for start in range(0, len(rows), INSERT_ROWS):
            chunk = rows[start : start + INSERT_ROWS]
            sql = f"{self.insert_head} VALUES {', '.join([self.insert_row] * len(chunk))}"  # type: ignore[list-item]
            statements.append((sql, tuple(value for row in chunk for value in row)))
        return statements

    def row(self, params: dict[str, Any]) -> tuple[Any, ...]:
        fixed = self.fixed
        return tuple(
            (params[name] if name in params else fixed[name])
            if convert is None
            else convert(params[name] if name in params else fixed[name])
            for name, convert in zip(self.names, self.convert, strict=True)
        )


@dataclass(slots=True)
class _Op:
    """One statement's rows in a planned batch: `prepared` and `rows` when they go straight
    to the driver, else None (through SQLAlchemy: a hook, or a statement it must complete)."""

    statement: Statement
    group: list[tuple[int, dict[str, Any]]]
    prepared: _Prepared | None = None
    rows: list[tuple[Any, ...]] | None = None


class _SqliteThread:
    """A synchronous connection to the same SQLite file, used from one dedicated thread.

    A batch's statements go straight to the driver, with the SQL SQLAlchemy compiled once per
    statement: SQLAlchemy's per-execution work (cache keys, parameter processing, result set-up)
    held the GIL longer than the rows themselves, and the event loop waits for the GIL. The rows
    are converted on the event loop (`plan`), and the thread only runs them (`run`): rows of a
    plain INSERT as one multi-row statement, others with executemany. A statement that needs what
    only SQLAlchemy can supply (a Python-side column default) keeps going through SQLAlchemy;
    hooks get the SQLAlchemy connection of the same transaction."""

    def __init__(self, url: str) -> None:
        sync_url = make_url(url).set(drivername="sqlite+pysqlite")
        self.engine = create_engine(sync_url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})
        event.listen(self.engine, "connect", on_sqlite_connect)
        self.executor = ThreadPoolExecutor(1, thread_name_prefix="partida-sqlite-writer")
        self._conn: Connection | None = None  # kept open between batches, only in the thread
        self._prepared: dict[tuple[Statement, tuple[str, ...]], _Prepared | None] = {}

    def plan(self, writes: list[Sequence[Step]]) -> list[_Op]:
        """What the writer's thread will run for `writes`, made on the event loop: the rows are
        converted here (JSON, timestamps), so that the thread holds the GIL as little as it can.
        Each of its calls into the driver lets go of the GIL and takes it back, and every time
        it takes it back the event loop may have to wait for it."""
        ops = []
        for statement, group in _grouped(writes):
            if statement.hook is not None:
                ops.append(_Op(statement, group))
                continue
            keys = tuple(group[0][1])
            key = (statement, keys)
            prepared = self._prepared[key] if key in self._prepared else self._prepare(statement, keys)
            first = group[0][1].keys()
            if prepared is None or any(p.keys() != first for _, p in group):
                ops.append(_Op(statement, group))  # through SQLAlchemy, in the thread
                continue
            ops.append(_Op(statement, group, prepared, [prepared.row(p) for _, p in group]))
        return ops

    def run(self, ops: list[_Op], count: int) -> list[Any]:
        """One transaction for the planned `ops` of `count` writes, in the writer's thread; the
        value each write's returning step gave (None for the others)."""
        if self._conn is None:
            self._conn = self.engine.connect()
        conn = self._conn
        results: list[Any] = [None] * count
        try:
            with conn.begin():
                for op in ops:
                    if op.prepared is None or op.rows is None:
                        _run_group(conn, op.statement, op.group, results)
                    else:
                        self._run_prepared(conn, op, results)
            return results
        except (IntegrityError, MissingRow):
            raise  # rolled back; the connection is fine
        except BaseException:
            # A failure of the file or the driver: start the next batch on a new connection.
            self._conn = None
            with contextlib.suppress(Exception):
                conn.close()
            raise

    def _run_prepared(self, conn: Connection, op: _Op, results: list[Any]) -> None:
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
            if prepared.insert_head is not None:
                for sql, values in prepared.many(rows):
                    cursor.execute(sql, values)
            else:
                cursor.executemany(prepared.sql, rows)
            if statement.must_change and cursor.rowcount != len(rows):
                raise MissingRow(statement)
        except dbapi.Error as exc:
            # As SQLAlchemy would raise it (IntegrityError, OperationalError ...), so callers
            # see the same errors on every path.
            raise DBAPIError.instance(prepared.sql, None, exc, dbapi.Error, dialect=conn.dialect) from exc
        finally:
            cursor.close()

    def _prepare(self, statement: Statement, keys: tuple[str, ...]) -> _Prepared | None:
        assert statement.sql is not None
        dialect = self.engine.dialect
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
        sql = str(compiled)
        plain_insert = isinstance(statement.sql, Insert) and not statement.returning
        head, row = _split_insert(sql) if plain_insert else (None, None)
        prepared = _Prepared(sql, names, fixed, convert, head, row)
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


def _split_insert(sql: str) -> tuple[str | None, str | None]:
    """ "INSERT INTO t (a, b) VALUES (?, ?)" as its head and its one row, or (None, None)."""
    head, sep, row = sql.rpartition(" VALUES ")
    if not sep or not (row.startswith("(") and row.endswith(")")) or ")" in row[:-1]:
        return None, None
    return head, row


def _fail(writes: list[_Write], exc: BaseException) -> None:
    for write in writes:
        if not write.future.done():
            write.future.set_exception(exc)
