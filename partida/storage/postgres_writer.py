"""The group writer's batches on PostgreSQL, straight on one asyncpg connection (see `batching`).

Through SQLAlchemy each statement of a batch was one network round trip plus SQLAlchemy's work
per execution, and an UPDATE that must change a row was checked one row per round trip (asyncpg's
executemany gives no row count). Here the writer keeps one connection of the engine's pool for
itself (so the URL, credentials, SSL and timeouts are the engine's, and the pool's pre-ping is
paid once, not per batch) and sends the batch on the driver itself:

- each statement's rows as one asyncpg executemany, which pipelines them (one round trip for
  the group), with the SQL SQLAlchemy's asyncpg dialect compiled once (`writes.Planner`);
- a returning INSERT (a new game) and a must-change UPDATE (compiled to return a row per changed
  row) with asyncpg's fetchmany, pipelined the same way: the new ids come back in the order of
  the rows, and the rows returned are the rows changed;
- a batch of one statement with no UPDATE to count needs no BEGIN and COMMIT: one pipeline is
  atomic by itself (PostgreSQL runs it as one implicit transaction, committed before it
  answers), so the batch is one round trip.

A hook (rating a ladder game, which takes a SQLAlchemy connection) is called only if its guard
query, sent on the driver for each of its steps in one pipeline, finds a row (most finished games
are no ladder's). A hook that is called, or a statement that needs what only SQLAlchemy supplies,
runs through SQLAlchemy on the same connection, inside the writer's
transaction: SQLAlchemy sees that connection in autocommit mode, so it never begins or commits on
it, and the writer begins and commits on the driver. Driver errors are raised as SQLAlchemy raises
them (`IntegrityError` for a constraint), so callers see the same errors on every path.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

import asyncpg
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from partida.storage.writes import MissingRow, Op, Planner, Step, run_group

# asyncpg's errors as the PEP 249 classes SQLAlchemy's asyncpg dialect raises for them, first
# match wins.
_DBAPI_CLASSES: tuple[tuple[type[BaseException], str], ...] = (
    (asyncpg.IntegrityConstraintViolationError, "IntegrityError"),
    (asyncpg.SyntaxOrAccessError, "ProgrammingError"),
    (asyncpg.DataError, "DataError"),
    (asyncpg.InterfaceError, "InterfaceError"),
    (asyncpg.InternalClientError, "InternalError"),  # say, a connection that died unnoticed
    (asyncpg.PostgresError, "Error"),
    (OSError, "OperationalError"),  # the server went away (ConnectionError, TimeoutError)
)


class PostgresWriter:
    """Runs the group writer's transactions on one connection of `engine`'s pool, kept open
    between batches and opened again after it failed."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.dialect = engine.dialect
        self.planner = Planner(engine.dialect, count_by_returning=True)
        self._conn: AsyncConnection | None = None
        self._driver: asyncpg.Connection | None = None

    async def transaction(self, writes: Sequence[Sequence[Step]]) -> list[Any]:
        """One transaction for `writes`, committed when this returns; the value each write's
        returning step gave (None for the others)."""
        ops = self.planner.plan(writes)
        for attempt in (1, 2):
            conn, driver = await self._connection()
            try:
                return await self._run(conn, driver, ops, len(writes))
            except (IntegrityError, MissingRow):
                raise  # rolled back; the connection is fine
            except BaseException as exc:
                # The server or the connection failed (or the writer was cancelled mid-batch):
                # the next batch starts on a new connection. If asyncpg refused the call before
                # sending it (a connection ended by the server while idle, which it had not yet
                # noticed), nothing of this batch was committed, and it is sent once more.
                await self._drop()
                if attempt == 1 and isinstance(exc.__cause__, asyncpg.InterfaceError | asyncpg.InternalClientError):
                    continue
                raise
        raise AssertionError("unreachable")

    async def _connection(self) -> tuple[AsyncConnection, asyncpg.Connection]:
        if self._driver is not None and self._driver.is_closed():
            await self._drop()  # closed while idle (the server restarted, an admin ended it)
        if self._conn is None or self._driver is None:
            conn = await self.engine.connect()
            try:
                # SQLAlchemy neither begins nor commits on this connection: the writer does, on
                # the driver, and what runs through SQLAlchemy runs inside that transaction.
                await conn.execution_options(isolation_level="AUTOCOMMIT")
                raw = await conn.get_raw_connection()
                self._driver = raw.driver_connection
            except BaseException:
                await conn.close()
                raise
            self._conn = conn
        assert self._driver is not None
        return self._conn, self._driver

    async def _run(self, conn: AsyncConnection, driver: asyncpg.Connection, ops: list[Op], count: int) -> list[Any]:
        results: list[Any] = [None] * count
        if len(ops) == 1 and ops[0].rows is not None and not ops[0].statement.must_change:
            await self._send(driver, ops[0], results)  # one pipeline: its own transaction
            return results
        transaction = driver.transaction()
        await self._guard("BEGIN", transaction.start())
        try:
            for op in ops:
                if op.when is not None and op.when_rows is not None:
                    found = await self._guard(op.when.sql, driver.fetchmany(op.when.sql, op.when_rows))
                    if not found:
                        continue  # nothing for the hook to do in this batch
                if op.rows is None:
                    await conn.run_sync(run_group, op.statement, op.group, results)
                else:
                    await self._send(driver, op, results)
        except BaseException:
            if not driver.is_closed():
                with contextlib.suppress(Exception):
                    await transaction.rollback()
            raise
        finally:
            if conn.in_transaction():
                # SQLAlchemy's bookkeeping only, nothing reaches the server; after a failure it
                # must not hide the error being raised.
                with contextlib.suppress(Exception):
                    await conn.rollback()
        await self._guard("COMMIT", transaction.commit())
        return results

    async def _send(self, driver: asyncpg.Connection, op: Op, results: list[Any]) -> None:
        prepared, rows, statement = op.prepared, op.rows, op.statement
        assert prepared is not None and rows is not None
        if statement.returning:
            records = await self._guard(prepared.sql, driver.fetchmany(prepared.sql, rows))
            if len(records) != len(rows):
                raise RuntimeError(f"{statement.name} returned {len(records)} rows for {len(rows)}")
            for (position, _), record in zip(op.group, records, strict=True):
                results[position] = record[0]
        elif prepared.counted:
            records = await self._guard(prepared.sql, driver.fetchmany(prepared.sql, rows))
            if len(records) != len(rows):
                raise MissingRow(statement)
        else:
            assert not statement.must_change  # the Planner compiles those counted
            await self._guard(prepared.sql, driver.executemany(prepared.sql, rows))

    async def _guard(self, sql: str, call: Any) -> Any:
        """Await the driver's `call`, its error raised as SQLAlchemy raises it."""
        try:
            return await call
        except (asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.InternalClientError, OSError) as exc:
            raise self._translate(sql, exc) from exc

    def _translate(self, sql: str, exc: BaseException) -> BaseException:
        dbapi = self.dialect.loaded_dbapi
        name = next(name for kind, name in _DBAPI_CLASSES if isinstance(exc, kind))
        orig = getattr(dbapi, name)(f"{type(exc)}: {exc}")
        orig.pgcode = orig.sqlstate = getattr(exc, "sqlstate", None)
        orig.__cause__ = exc
        lost = self._driver is None or self._driver.is_closed()
        return DBAPIError.instance(sql, None, orig, dbapi.Error, dialect=self.dialect, connection_invalidated=lost)

    async def _drop(self) -> None:
        conn, self._conn, self._driver = self._conn, None, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.invalidate()
            with contextlib.suppress(Exception):
                await conn.close()

    async def close(self) -> None:
        """Give the connection back to the pool (the engine closes it), or drop it if it is
        broken: closing the database must not fail on it."""
        conn, self._conn, self._driver = self._conn, None, None
        if conn is not None:
            try:
                await conn.close()
            except Exception:
                with contextlib.suppress(Exception):
                    await conn.invalidate()
