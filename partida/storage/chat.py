"""Chat's rows: the lines said in rooms and tournaments, the operator's removals and silences.

A line is written through the store's group writer (`batching`), as a move is: it shares the
transaction of whatever else the server writes at that moment, committed off the event loop,
and the sender learns its id once it is stored. Removals and silences are the operator's, from
the command line (`partida db chat-remove`, `partida db silence`); a running server reads them
back every few seconds (`removed_since`, `silenced`), so no process has to tell another.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, delete, insert, select, update

from partida.storage.batching import GroupWriter, Step
from partida.storage.database import Database
from partida.storage.models import Account, ChatMessage, ChatSilence, Tournament, utcnow

HISTORY = 50  # lines of each channel a joining connection is sent (the newest)


@dataclass(frozen=True)
class ChatLine:
    """One stored line, as plain data; `where` is ("game", id) or ("tournament", id)."""

    id: int
    where: tuple[str, int]
    channel: str
    name: str
    kind: str
    seat: int | None
    text: str
    at: datetime
    account_id: int | None = None
    removed: bool = False

    def to_data(self) -> dict[str, Any]:
        """The line on the wire (the `chat` push, histories, a game's record)."""
        return {
            "id": self.id,
            "channel": self.channel,
            "name": self.name,
            "kind": self.kind,
            "seat": self.seat,
            "text": self.text,
            "at": self.at.isoformat(),
        }


class ChatStore:
    """Chat's reads and writes; `writer` is the store's group writer (its lines join the batches
    of moves rather than committing one by one). The operator's command line, which says no
    lines, opens it without one."""

    def __init__(self, db: Database, writer: GroupWriter | None = None) -> None:
        self.db = db
        self._writer = writer
        self._insert = (
            None
            if writer is None
            else writer.statement("chat line", insert(ChatMessage).returning(ChatMessage.id), returning=True)
        )

    async def add(
        self,
        where: tuple[str, int],
        channel: str,
        account_id: int | None,
        name: str,
        kind: str,
        seat: int | None,
        text: str,
    ) -> ChatLine:
        """Store one line and return it with its id, once committed."""
        kind_of, ident = where
        at = utcnow()
        row = {
            "game_id": ident if kind_of == "game" else None,
            "tournament_id": ident if kind_of == "tournament" else None,
            "channel": channel,
            "account_id": account_id,
            "name": name,
            "kind": kind,
            "seat": seat,
            "text": text,
            "created_at": at,
            "removed_at": None,
        }
        assert self._writer is not None and self._insert is not None, "a chat store without a writer only reads"
        line_id = int(await self._writer.write(Step(self._insert, row)))
        return ChatLine(line_id, where, channel, name, kind, seat, text, at, account_id)

    async def history(
        self, where: tuple[str, int], channels: tuple[str, ...], limit: int = HISTORY, *, removed: bool = False
    ) -> list[ChatLine]:
        """The newest `limit` lines of each of `channels`, oldest first (`removed`: with the
        operator's removed lines, for the operator's listing)."""
        lines: list[ChatLine] = []
        async with self.db.session() as session:
            for channel in channels:
                query = _where(where).where(ChatMessage.channel == channel)
                if not removed:
                    query = query.where(ChatMessage.removed_at.is_(None))
                rows = await session.scalars(query.order_by(ChatMessage.id.desc()).limit(limit))
                lines.extend(_line(row) for row in rows)
        return sorted(lines, key=lambda line: line.id)

    async def by_account(self, account_id: int, limit: int = HISTORY) -> list[ChatLine]:
        """An account's newest lines, removed ones too (the operator's listing)."""
        query = select(ChatMessage).where(ChatMessage.account_id == account_id)
        async with self.db.session() as session:
            rows = await session.scalars(query.order_by(ChatMessage.id.desc()).limit(limit))
            return sorted((_line(row) for row in rows), key=lambda line: line.id)

    async def remove(self, line_id: int) -> ChatLine | None:
        """Mark a line removed (the operator's): gone from live views within a sweep and from
        every replay. None if there is no such line."""
        async with self.db.write() as conn:
            changed = await conn.execute(
                update(ChatMessage)
                .where(ChatMessage.id == line_id, ChatMessage.removed_at.is_(None))
                .values(removed_at=utcnow())
            )
        async with self.db.session() as session:
            row = await session.get(ChatMessage, line_id)
            return None if row is None or (changed.rowcount == 0 and row.removed_at is None) else _line(row)

    async def removed_since(self, after: datetime) -> list[ChatLine]:
        """Lines removed at or after `after` (a sweep's; the same line may come twice)."""
        query = select(ChatMessage).where(ChatMessage.removed_at >= after).order_by(ChatMessage.id)
        async with self.db.session() as session:
            return [_line(row) for row in await session.scalars(query)]

    async def silence(self, account_id: int, until: datetime | None) -> None:
        """The account may not chat until `until` (None: for good), whatever it was before."""
        async with self.db.write() as conn:
            await conn.execute(delete(ChatSilence).where(ChatSilence.account_id == bindparam("a")), {"a": account_id})
            await conn.execute(insert(ChatSilence).values(account_id=account_id, until=until, created_at=utcnow()))

    async def unsilence(self, account_id: int) -> bool:
        async with self.db.write() as conn:
            gone = await conn.execute(delete(ChatSilence).where(ChatSilence.account_id == account_id))
        return bool(gone.rowcount)

    async def silenced(self) -> dict[int, datetime | None]:
        """Every silence still running: account id -> until (None: for good)."""
        now = utcnow()
        query = select(ChatSilence.account_id, ChatSilence.until).where(
            (ChatSilence.until.is_(None)) | (ChatSilence.until > now)
        )
        async with self.db.session() as session:
            return {account_id: until for account_id, until in await session.execute(query)}

    async def silences(self) -> list[tuple[str, datetime | None]]:
        """The operator's listing: each silenced account's name and until."""
        query = select(Account.name, ChatSilence.until).join(Account, Account.id == ChatSilence.account_id)
        async with self.db.session() as session:
            return [(name, until) for name, until in await session.execute(query.order_by(Account.name))]

    async def tournament_id(self, name: str) -> int | None:
        async with self.db.session() as session:
            return await session.scalar(select(Tournament.id).where(Tournament.name == name))


def _where(where: tuple[str, int]) -> Any:
    kind, ident = where
    column = ChatMessage.game_id if kind == "game" else ChatMessage.tournament_id
    return select(ChatMessage).where(column == ident)


def _line(row: ChatMessage) -> ChatLine:
    where = ("game", row.game_id) if row.game_id is not None else ("tournament", row.tournament_id or 0)
    return ChatLine(
        row.id,
        where,
        row.channel,
        row.name,
        row.kind,
        row.seat,
        row.text,
        row.created_at,
        row.account_id,
        row.removed_at is not None,
    )
