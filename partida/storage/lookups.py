"""Reads asked at every connection, such as whether a guest's name is an account's, sent straight
to the driver on a SQLite file.

Through SQLAlchemy's async engine one such read cost about 0.7 ms of CPU: a pool checkout, the
statement's cache key, and four or five hand-overs to aiosqlite's thread and back (begin,
execute, fetch, rollback on return). Two hundred guests connecting at once cost the event loop a
seventh of a second. Here the statement is compiled once (`writes.Planner`, as the writers do)
and runs on a connection of its own, read-only, in one hand-over (`execute_fetchall`). Elsewhere
(PostgreSQL, an in-memory SQLite database that only the engine's connection can see) the read
goes through SQLAlchemy, in autocommit mode on PostgreSQL (`Database.read`).
"""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any

import aiosqlite
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql import Select

from partida.storage.database import SQLITE_BUSY_TIMEOUT_MS, Database
from partida.storage.writes import Planner, Statement


class Lookups:
    """Runs registered one-column queries for a database; see the module's docstring."""

    def __init__(self, db: Database) -> None:
        self.db = db
        url = make_url(db.url)
        on_file = db.dialect == "sqlite" and (url.database or ":memory:") != ":memory:"
        self._connect_args = db.engine.dialect.create_connect_args(url) if on_file else None
        self._planner = Planner(db.engine.sync_engine.dialect)
        self._conn: aiosqlite.Connection | None = None
        self._opening = asyncio.Lock()
        db.on_close(self.close)

    @staticmethod
    def query(name: str, select: Select[Any]) -> Statement:
        """A query to ask through `column`, built once (its parameters are bind parameters)."""
        return Statement(name, select, 0)

    async def column(self, query: Statement, params: dict[str, Any]) -> list[Any]:
        """The first column of `query`'s rows for `params`."""
        if self._connect_args is None:
            async with self.db.read() as conn:
                return list(await conn.scalars(query.sql, params))  # type: ignore[arg-type]
        planned = self._planner.prepared_row(query, params)
        assert planned is not None  # a query holds no value that only SQLAlchemy can supply
        sql, row = planned
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
