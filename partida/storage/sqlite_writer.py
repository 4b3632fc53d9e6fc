"""The group writer's batches on a SQLite file, in a thread of its own (see `batching`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import DBAPIError, IntegrityError

from partida.storage.database import SQLITE_BUSY_TIMEOUT_MS, on_sqlite_connect
from partida.storage.writes import MissingRow, Op, Planner, Prepared, Step, run_group

INSERT_ROWS = 128  # rows per multi-row INSERT on SQLite (6 columns: far below its 32,766 parameters)


class SqliteWriter:
    """A synchronous connection to the same SQLite file, used from one dedicated thread.

    A batch's statements go straight to the driver, with the SQL SQLAlchemy compiled once per
    statement: SQLAlchemy's per-execution work held the GIL longer than the rows themselves, and
    the event loop waits for the GIL. The rows are converted on the event loop (`Planner.plan`),
    and the thread only runs them (`run`): rows of a plain INSERT as one multi-row statement,
    others with executemany. A statement that needs what only SQLAlchemy can supply (a
    Python-side column default) keeps going through SQLAlchemy; hooks get the SQLAlchemy
    connection of the same transaction."""

    def __init__(self, url: str, write_lock: asyncio.Lock) -> None:
        sync_url = make_url(url).set(drivername="sqlite+pysqlite")
        self.engine = create_engine(sync_url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})
        event.listen(self.engine, "connect", on_sqlite_connect)
        self.write_lock = write_lock
        self.executor = ThreadPoolExecutor(1, thread_name_prefix="partida-sqlite-writer")
        self.planner = Planner(self.engine.dialect)
        self._conn: Connection | None = None  # kept open between batches, only in the thread
        self._inserts: dict[str, tuple[str | None, str | None]] = {}

    async def transaction(self, writes: Sequence[Sequence[Step]]) -> list[Any]:
        """One transaction for `writes`, planned here (on the event loop, so that the thread
        holds the GIL as little as it can: each of its calls into the driver lets go of the GIL
        and takes it back, and every time it takes it back the event loop may have to wait for
        it) and run whole in the writer's thread: one hand-over per batch."""
        ops = self.planner.plan(writes)
        async with self.write_lock:
            return await asyncio.get_running_loop().run_in_executor(self.executor, self.run, ops, len(writes))

    def run(self, ops: list[Op], count: int) -> list[Any]:
        """One transaction for the planned `ops` of `count` writes, in the writer's thread; the
        value each write's returning step gave (None for the others). The transaction is the
        driver's own (begun by its first statement, committed here), unless a hook or a
        statement that SQLAlchemy must complete took part: SQLAlchemy's bookkeeping of a
        transaction cost more of the GIL than a batch's rows."""
        if self._conn is None:
            self._conn = self.engine.connect()
        conn = self._conn
        driver = conn.connection.dbapi_connection
        assert driver is not None
        results: list[Any] = [None] * count
        try:
            for op in ops:
                if op.statement.hook is not None and op.when is not None and not self._found(conn, op):
                    continue  # nothing for the hook to do in this batch
                if op.prepared is None or op.rows is None:
                    run_group(conn, op.statement, op.group, results)  # SQLAlchemy begins with it
                else:
                    self._run_prepared(conn, op, results)
            if conn.in_transaction():
                conn.commit()
            else:
                self._call(conn, "COMMIT", driver.commit)
            return results
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
        """A plain INSERT's `rows` as multi-row INSERTs of `INSERT_ROWS` rows: one step of the
        driver (which lets go of the GIL and takes it back once per step) rather than one a row."""
        split = self._inserts.get(prepared.sql)
        if split is None:
            split = self._inserts[prepared.sql] = _split_insert(prepared.sql)
        head, one = split
        if head is None or one is None:
            return [(prepared.sql, row) for row in rows]
        statements = []
        for start in range(0, len(rows), INSERT_ROWS):
            chunk = rows[start : start + INSERT_ROWS]
            sql = f"{head} VALUES {', '.join([one] * len(chunk))}"
            statements.append((sql, tuple(value for row in chunk for value in row)))
        return statements

    def reset(self) -> None:
        """Drop the connection (in the writer's thread): the next batch opens a new one."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self.engine.dispose()

    async def close(self) -> None:
        await asyncio.to_thread(self._close)

    def _close(self) -> None:
        self.executor.submit(self.reset).result()
        self.executor.shutdown()


def _as_sqlalchemy(conn: Connection, sql: str, exc: Exception) -> Exception:
    """A driver's error as SQLAlchemy raises it (IntegrityError, OperationalError ...), so that
    callers see the same errors on every path."""
    dbapi = conn.dialect.loaded_dbapi
    return DBAPIError.instance(sql, None, exc, dbapi.Error, dialect=conn.dialect)


def _split_insert(sql: str) -> tuple[str | None, str | None]:
    """ "INSERT INTO t (a, b) VALUES (?, ?)" as its head and its one row, or (None, None)."""
    head, sep, row = sql.rpartition(" VALUES ")
    if not sep or not (row.startswith("(") and row.endswith(")")) or ")" in row[:-1]:
        return None, None
    return head, row
