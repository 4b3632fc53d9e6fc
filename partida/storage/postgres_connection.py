"""One connection of an engine's pool kept by one user on PostgreSQL (the group writer, the
lookups), talked to on asyncpg itself.

Keeping a connection, rather than checking one out of the pool per use, pays the pool's pre-ping
(three round trips with asyncpg) once, not per batch or per lookup; the URL, credentials, SSL and
timeouts are still the engine's. SQLAlchemy sees the connection in autocommit mode, so it never
begins or commits on it: its user does, on the driver. After a failure the connection is
dropped and the next use opens another; a call that asyncpg refused before sending anything (a
connection the server ended while it was idle, not noticed yet) is made once more. Driver errors
are raised as SQLAlchemy raises them (`IntegrityError` for a constraint), so callers see the same
errors on every path.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import asyncpg
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

T = TypeVar("T")

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


class KeptConnection:
    """One connection of `engine`'s pool, kept open between uses and opened again after it
    failed (see the module's docstring)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.dialect = engine.dialect
        self._conn: AsyncConnection | None = None
        self._driver: asyncpg.Connection | None = None

    async def run(
        self,
        work: Callable[[AsyncConnection, asyncpg.Connection], Awaitable[T]],
        keep_on: tuple[type[BaseException], ...] = (),
    ) -> T:
        """`work(connection, driver)`: after any error but those of `keep_on` (which leave the
        connection fine) the connection is dropped, and `work` is run once more on a new one if
        asyncpg refused it before sending anything."""
        for attempt in (1, 2):
            conn, driver = await self._connection()
            try:
                return await work(conn, driver)
            except keep_on:
                raise
            except BaseException as exc:
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
                # SQLAlchemy neither begins nor commits on this connection: its user does, on
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

    async def guard(self, sql: str, call: Any) -> Any:
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
        conn, driver, self._conn, self._driver = self._conn, self._driver, None, None
        if conn is not None:
            try:
                if driver is not None and not driver.is_closed() and driver.is_in_transaction():
                    await driver.execute("ROLLBACK")  # begun for a batch that never came
                await conn.close()
            except Exception:
                with contextlib.suppress(Exception):
                    await conn.invalidate()
