"""Ids for new games, known before their rows are written.

A room's summary carries its game's id from the moment the room exists (`room_created`), and a
private room is published on the events bus under it. Taking the id from the INSERT made every
new room wait for a durable commit before its creator heard of it. Handing the id out here lets
the row go to the group writer without waiting for it (`Store.create_game(durable=False)`): the
writer commits it before any later write of the game (one queue, in order), so the start's
seats and status never find it missing.

On PostgreSQL the ids come from the table's own sequence, a block at a time (one round trip per
`BLOCK` games; several servers of one deployment share it safely, and a block left unused when a
server stops is a gap, as a rolled-back INSERT leaves one). On SQLite they count up from the
largest id stored when the first is asked for, which is right only while one server writes the
file: a server claims it for as long as it runs (`sqlite_claim`).
"""

from __future__ import annotations

import asyncio
from collections import deque

from sqlalchemy import func, select, text

from partida.storage.database import Database
from partida.storage.models import GameRecord

BLOCK = 32  # ids reserved at a time

_NEXT_IDS = text(
    f"SELECT nextval(pg_get_serial_sequence('{GameRecord.__tablename__}', 'id')) FROM generate_series(1, :n)"
)


class GameIds:
    """Hands out new games' ids; see the module's docstring."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._free: deque[int] = deque()
        self._last: int | None = None  # SQLite: the last id handed out
        self._reserving = asyncio.Lock()

    async def take(self) -> int:
        if not self._free:
            async with self._reserving:
                if not self._free:
                    self._free.extend(await self._reserve())
        return self._free.popleft()

    async def _reserve(self) -> list[int]:
        if self.db.dialect == "postgresql":
            async with self.db.read() as conn:
                return [int(value) for value in await conn.scalars(_NEXT_IDS, {"n": BLOCK})]
        if self._last is None:  # asked once; then counted here, with no connection
            async with self.db.read() as conn:
                self._last = int(await conn.scalar(select(func.coalesce(func.max(GameRecord.id), 0))) or 0)
        first = self._last + 1
        self._last += BLOCK
        return list(range(first, first + BLOCK))
