"""The open seeks of a deployment of several nodes, in PostgreSQL: what lets any node list and
pair a seek posted on another.

Exactly-once pairing is decided here, not by any node's memory: a seek is taken by one
conditional UPDATE (`claimed_by IS NULL` -> this node), so two nodes trying at the same moment
cannot both take it; a pairing of two seeks takes both rows in one statement, all or nothing. A
new seek is written before its node looks for a partner, so of two compatible seeks posted at
the same moment on two nodes, the later look always sees the earlier row: they never both wait.
Only rows of live nodes (their lease not run out, `nodes.lease_until`, the database's clock)
count: a dead node's seeks are neither listed nor paired, and the next node to tidy up deletes
them.

PostgreSQL only (`NodeDirectory`'s rule): a single server keeps its seeks in memory.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, delete, func, select, text, update

from partida.storage.database import Database
from partida.storage.models import Node, SharedSeek


def terms_digest(game: str, options: dict[str, Any], seats: int, clock: dict[str, Any] | None, rated: bool) -> str:
    """The bucket of a seek as one indexed string: equal exactly when the terms are."""
    blob = json.dumps([game, options, seats, clock, rated], sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(blob.encode()).hexdigest()


@dataclass(frozen=True)
class SeekRow:
    id: int
    node: str
    owner: str
    party: dict[str, Any]
    terms: dict[str, Any]
    data: dict[str, Any]


@dataclass(frozen=True)
class Posted:
    """A seek written, with the open seeks its owner and its address hold (itself included)."""

    id: int
    owner_count: int
    address_count: int


_COLUMNS = (SharedSeek.id, SharedSeek.node, SharedSeek.owner, SharedSeek.party, SharedSeek.terms, SharedSeek.data)


def _row(r: Any) -> SeekRow:
    """A row read; its listing entry gets its id (written without it: the id is the row's)."""
    return SeekRow(int(r[0]), r[1], r[2], dict(r[3]), dict(r[4]), {**dict(r[5]), "id": int(r[0])})


def _live() -> Any:
    return select(Node.name).where(Node.lease_until >= func.now()).scalar_subquery()


class SharedSeekTable:
    """One short transaction per call."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def post(
        self,
        node: str,
        owner: str,
        address: str,
        terms_key: str,
        party: dict[str, Any],
        terms: dict[str, Any],
        data: dict[str, Any],
        owner_most: int,
        address_most: int | None,
    ) -> Posted | None:
        """Write an open seek unless its owner already holds `owner_most` open seeks on live
        nodes, or its address `address_most` (None: no bound): then None and nothing written.
        The count and the write are under a transaction-scoped advisory lock on the owner, so two
        nodes posting for one account at once cannot both pass the cap."""
        live_open = and_(SharedSeek.claimed_by.is_(None), SharedSeek.node.in_(_live()))
        async with self.db.write() as conn:
            await conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": "seek:" + owner})
            mine = await conn.scalar(select(func.count()).where(SharedSeek.owner == owner, live_open))
            theirs = 0
            if address_most is not None:
                theirs = await conn.scalar(select(func.count()).where(SharedSeek.address == address, live_open))
            if (mine or 0) >= owner_most or (address_most is not None and (theirs or 0) >= address_most):
                return Posted(0, int(mine or 0), int(theirs or 0))
            row = await conn.execute(
                SharedSeek.__table__.insert()
                .values(
                    node=node,
                    owner=owner,
                    address=address[:64],
                    terms_key=terms_key,
                    party=party,
                    terms=terms,
                    data=data,
                    posted_at=func.now(),
                )
                .returning(SharedSeek.id)
            )
            seek_id = int(row.scalar_one())
        return Posted(seek_id, int(mine or 0) + 1, int(theirs or 0) + 1)

    async def candidates(self, terms_key: str, exclude: int, limit: int = 200) -> list[SeekRow]:
        """The open seeks of live nodes with these terms, oldest first, but `exclude`."""
        query = (
            select(*_COLUMNS)
            .where(
                SharedSeek.terms_key == terms_key,
                SharedSeek.id != exclude,
                SharedSeek.claimed_by.is_(None),
                SharedSeek.node.in_(_live()),
            )
            .order_by(SharedSeek.id)
            .limit(limit)
        )
        async with self.db.session() as session:
            rows = (await session.execute(query)).all()
        return [_row(r) for r in rows]

    async def get(self, seek_id: int) -> SeekRow | None:
        """An open seek of a live node."""
        query = select(*_COLUMNS).where(
            SharedSeek.id == seek_id, SharedSeek.claimed_by.is_(None), SharedSeek.node.in_(_live())
        )
        async with self.db.session() as session:
            r = (await session.execute(query)).first()
        return None if r is None else _row(r)

    async def claim(self, node: str, ids: list[int]) -> set[int]:
        """Take every seek of `ids` for a pairing on `node`, or none of them. Returns the ids that
        were still open (all of `ids`: taken). The rows are locked in id order (`FOR UPDATE`,
        waiting for a claimer that holds one: two claimers of overlapping pairs can neither
        deadlock nor both fail), and a row found claimed once its lock is had does not count
        (READ COMMITTED reads the condition again on the row's newest version)."""
        async with self.db.write() as conn:
            found = set(
                await conn.scalars(
                    select(SharedSeek.id)
                    .where(SharedSeek.id.in_(ids), SharedSeek.claimed_by.is_(None), SharedSeek.node.in_(_live()))
                    .order_by(SharedSeek.id)
                    .with_for_update(of=SharedSeek)
                )
            )
            if found == set(ids):
                await conn.execute(update(SharedSeek).where(SharedSeek.id.in_(ids)).values(claimed_by=node))
        return found

    async def unclaim(self, node: str, ids: list[int]) -> None:
        """A pairing that failed: its seeks wait again."""
        if not ids:
            return
        async with self.db.write() as conn:
            await conn.execute(
                update(SharedSeek).where(SharedSeek.id.in_(ids), SharedSeek.claimed_by == node).values(claimed_by=None)
            )

    async def paired(self, seek_id: int, node: str, room: dict[str, Any]) -> None:
        """Where a claimed seek's poster (on another node) is to sit: read back by its node."""
        async with self.db.write() as conn:
            await conn.execute(
                update(SharedSeek).where(SharedSeek.id == seek_id, SharedSeek.claimed_by == node).values(paired=room)
            )

    async def take_paired(self, seek_id: int, node: str) -> dict[str, Any] | None:
        """The room a seek of `node` was paired into by another node, and the row gone."""
        async with self.db.write() as conn:
            row = await conn.execute(
                delete(SharedSeek)
                .where(SharedSeek.id == seek_id, SharedSeek.node == node, SharedSeek.paired.is_not(None))
                .returning(SharedSeek.paired)
            )
            found = row.first()
        return None if found is None else dict(found[0])

    async def drop(self, node: str, ids: list[int], claimed_too: bool = False) -> list[int]:
        """Delete seeks of `node` (cancelled, or their poster gone): only those still open unless
        `claimed_too`. Returns the ids deleted."""
        if not ids:
            return []
        which = and_(SharedSeek.id.in_(ids), SharedSeek.node == node)
        if not claimed_too:
            which = and_(which, SharedSeek.claimed_by.is_(None))
        async with self.db.write() as conn:
            gone = await conn.execute(delete(SharedSeek).where(which).returning(SharedSeek.id))
            return [int(i) for i in gone.scalars()]

    async def drop_dead(self, node: str | None = None) -> list[int]:
        """Delete the seeks of nodes whose lease has run out (and, `node`, this node's own, as it
        starts: none of its last life's connections is left). Returns the ids deleted."""
        which: Any = SharedSeek.node.not_in(_live())
        if node is not None:
            which = which | (SharedSeek.node == node)
        async with self.db.write() as conn:
            gone = await conn.execute(delete(SharedSeek).where(which).returning(SharedSeek.id))
            return [int(i) for i in gone.scalars()]

    async def release_dead_claims(self) -> int:
        """Seeks claimed by a node that died before it said where their posters sit (no
        `paired`): open again, for their live nodes to pair. Returns how many."""
        async with self.db.write() as conn:
            freed = await conn.execute(
                update(SharedSeek)
                .where(
                    SharedSeek.claimed_by.is_not(None),
                    SharedSeek.claimed_by.not_in(_live()),
                    SharedSeek.paired.is_(None),
                    SharedSeek.node.in_(_live()),
                )
                .values(claimed_by=None)
                .returning(SharedSeek.id)
            )
            return len(freed.all())

    async def open_seeks(self, exclude_node: str) -> list[SeekRow]:
        """Every open seek of the other live nodes: a node starting fills its lobby's list."""
        query = (
            select(*_COLUMNS)
            .where(SharedSeek.node != exclude_node, SharedSeek.claimed_by.is_(None), SharedSeek.node.in_(_live()))
            .order_by(SharedSeek.id)
        )
        async with self.db.session() as session:
            rows = (await session.execute(query)).all()
        return [_row(r) for r in rows]
