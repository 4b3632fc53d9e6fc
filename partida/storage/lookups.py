"""Reads asked at every connection, such as whether a guest's name is an account's, sent straight
to the driver.

Through SQLAlchemy's async engine one such read cost 0.5-0.8 ms of CPU: a pool checkout (with
its pre-ping, three round trips on asyncpg), the statement's cache key, and on SQLite four or five
hand-overs to aiosqlite's thread and back (begin, execute, fetch, rollback on return). A thousand
guests connecting at once cost the event loop most of a second. Here the statement is compiled
once (`writes.Planner`, as the writers do) and runs on a connection kept for lookups: on a SQLite
file a read-only aiosqlite connection, in one hand-over (`execute_fetchall`); on PostgreSQL one
connection of the engine's pool kept open (`postgres_connection.KeptConnection`), one lookup at a
time, in one round trip.
"""

from __future__ import annotations

import asyncio
import sqlite3
from typing import TYPE_CHECKING, Any

import aiosqlite
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql import Select

from partida.storage.database import SQLITE_BUSY_TIMEOUT_MS, Database
from partida.storage.writes import Planner, Statement

if TYPE_CHECKING:
    from partida.storage.postgres_connection import KeptConnection


class Lookups:
    """Runs registered one-column queries for a database; see the module's docstring."""

    def __init__(self, db: Database) -> None:
        self.db = db
        url = make_url(db.url)
        self._connect_args = db.engine.dialect.create_connect_args(url) if db.dialect == "sqlite" else None
        self._planner = Planner(db.engine.sync_engine.dialect)
        self._conn: aiosqlite.Connection | None = None
        self._opening = asyncio.Lock()
        self._kept: KeptConnection | None = None
        if db.dialect == "postgresql":
            from partida.storage.postgres_connection import KeptConnection  # the driver only where it is used

            self._kept = KeptConnection(db.engine)
        self._turn = asyncio.Lock()  # an asyncpg connection answers one query at a time
        db.on_close(self.close)

    @staticmethod
    def query(name: str, select: Select[Any]) -> Statement:
        """A query to ask through `column`, built once (its parameters are bind parameters)."""
        return Statement(name, select, 0)

    async def column(self, query: Statement, params: dict[str, Any]) -> list[Any]:
        """The first column of `query`'s rows for `params`."""
        planned = self._planner.prepared_row(query, params)
        assert planned is not None  # a query holds no value that only SQLAlchemy can supply
        sql, row = planned
        kept = self._kept
        if kept is not None:
            async with self._turn:
                records = await kept.run(lambda _, driver: kept.guard(sql, driver.fetch(sql, *row)))
            return [record[0] for record in records]
        conn = self._conn or await self._open()
        try:
            rows = await conn.execute_fetchall(sql, row)
        except sqlite3.Error as exc:
            raise DBAPIError.instance(sql, row, exc, sqlite3.Error, dialect=self._planner.dialect) from exc
        return [found[0] for found in rows]

    async def _open(self) -> aiosqlite.Connection:
        async with self._opening:
            if self._conn is None:
                assert self._connect_args is not None
                args, options = self._connect_args
                conn = await aiosqlite.connect(*args, **options)
                try:
                    await conn.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
                    await conn.execute("PRAGMA query_only=1")
                except BaseException:
                    await conn.close()
                    raise
                self._conn = conn
            return self._conn

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()
        if self._kept is not None:
            await self._kept.close()
