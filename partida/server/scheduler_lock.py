"""Which node runs the ladder scheduler (or the tournaments): the one holding a PostgreSQL
advisory lock.

With several nodes, exactly one schedules ladder games, and exactly one runs the tournaments.
Each lock is held on a connection of its own, opened for it and named after the node
(`application_name`), so any node can find out who holds it (`pg_locks` joined with
`pg_stat_activity`) and send ladder bots there (`moved`). When the holder dies, its connection
closes and PostgreSQL releases the lock at once; the next node to try takes it. A node that
loses the connection loses the lock with it, and stops scheduling.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

if TYPE_CHECKING:
    from partida.storage.database import Database

log = logging.getLogger(__name__)

LOCK_KEY = 0x6C6164646572  # "ladder" in ASCII: any constant shared by the nodes of a deployment
APPLICATION = "partida-node:"


class SchedulerLock:
    """One lock per `key`: the ladders' (`LOCK_KEY`) and the tournaments' are separate locks, each
    on a connection of its own (a node may hold one and not the other)."""

    def __init__(
        self,
        db: Database,
        node: str,
        key: int = LOCK_KEY,
        what: str = "the ladder scheduler",
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.db = db
        self._clock = clock  # when the lock was last seen held (None: the running loop's time)
        self.node = node
        self.key = key
        self.what = what
        self._conn: AsyncConnection | None = None  # kept open: the lock lives and dies with it
        self.held = False
        self._turn = asyncio.Lock()  # one statement at a time on that connection
        self._checked = 0.0

    def _now(self) -> float:
        return self._clock() if self._clock is not None else asyncio.get_running_loop().time()

    async def try_acquire(self) -> bool:
        """Take the lock if nobody holds it; True if this node holds it now. A lock held and
        checked less than a second ago is taken as still held."""
        async with self._turn:
            if self.held and self._now() - self._checked < 1.0:
                return True
            if self.held:
                return await self._still_held()
            return await self._try()

    async def _try(self) -> bool:
        try:
            if self._conn is None:
                self._conn = await self.db.engine.connect()
                name = {"name": APPLICATION + self.node}
                await self._conn.execute(text("SELECT set_config('application_name', :name, false)"), name)
            self.held = bool(await self._conn.scalar(text("SELECT pg_try_advisory_lock(:key)"), {"key": self.key}))
            await self._conn.commit()
        except Exception:
            await self.release()
            raise
        if self.held:
            self._checked = self._now()
            log.info("node %s runs %s", self.node, self.what)
        return self.held

    async def _still_held(self) -> bool:
        """Check the lock's connection; False (and let go) if it broke."""
        if not self.held or self._conn is None:
            return False
        try:
            await self._conn.scalar(text("SELECT 1"))
            await self._conn.commit()
            self._checked = self._now()
            return True
        except Exception:
            log.warning("node %s lost its connection, and with it %s", self.node, self.what)
            await self.release()
            return False

    async def holder(self) -> str | None:
        """The node that holds the lock, or None."""
        query = text(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = :high AND l.objid = :low"
        )
        async with self.db.engine.connect() as conn:
            name = await conn.scalar(query, {"high": self.key >> 32, "low": self.key & 0xFFFFFFFF})
        if isinstance(name, str) and name.startswith(APPLICATION):
            return name[len(APPLICATION) :]
        return None

    async def release(self) -> None:
        """Let go: the connection is closed for good, not returned to the pool with the lock."""
        conn, self._conn = self._conn, None
        self.held = False
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.invalidate()
            with contextlib.suppress(Exception):
                await conn.close()
