"""The directory of nodes and room leases, for several server nodes on one PostgreSQL database.

A node holds one lease, on its row in `nodes`, and every room row naming it is under that
lease: renewing is one UPDATE per node whatever the number of rooms. Every time here is the
database's (`now()`), never a node's own clock, so nodes whose clocks disagree still agree on
whose lease has run out. A room is taken away from a node only by `claim_expired`, which locks
the rows of nodes whose lease has run out (`FOR UPDATE SKIP LOCKED`) and names itself in them in
the same transaction: two nodes looking at once take disjoint sets, and a row once taken is
under a live lease again, so exactly one node takes each game.

PostgreSQL only: SQLite has one writer process, so one node.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import and_, delete, func, or_, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.exc import IntegrityError

from partida.storage.database import Database, StorageError
from partida.storage.models import GameRecord, LadderLive, Node, NodeAccount, RoomLease


class NodeTaken(StorageError):
    """Another live node has this name."""


class CodeTaken(StorageError):
    """Another node's live room has this code."""


@dataclass(frozen=True)
class Location:
    """Where a room lives: its node, that node's public URL, and whether the lease is live."""

    game_id: int
    node: str
    url: str
    live: bool
    public: bool
    summary: dict[str, Any]


@dataclass(frozen=True)
class Presence:
    """An account connected to a live node: where, and (a bot) what it plays."""

    node: str
    url: str
    account_id: int
    name: str
    kind: str
    agent: str | None
    games: list[str] | None


@dataclass(frozen=True)
class Claimed:
    """Games a node has just taken: those to resume (in play) and the rest (to tidy up)."""

    playing: list[int]
    other: list[tuple[int, str]]  # (game id, status) of games not in play: waiting or ended


class NodeDirectory:
    """Storage of nodes and room leases; one short transaction per call."""

    def __init__(self, db: Database) -> None:
        if db.dialect != "postgresql":
            raise StorageError(
                "several server nodes share one PostgreSQL database; "
                f"{db.url_for_people} is {db.dialect} (run a single node without --node)."
            )
        self.db = db

    async def register(self, name: str, public_url: str, lease: float) -> None:
        """Enter this node with a fresh lease. Refused while another process holds the name."""
        until = func.now() + timedelta(seconds=lease)
        async with self.db.write() as conn:
            live = await conn.scalar(
                select(Node.lease_until).where(Node.name == name, Node.lease_until >= func.now()).with_for_update()
            )
            if live is not None:
                raise NodeTaken(
                    f"a node named {name!r} is running (its lease runs until {live:%H:%M:%S} UTC); "
                    "give this one another name, or wait for that lease to run out."
                )
            statement = insert(Node).values(name=name, public_url=public_url, lease_until=until, started_at=func.now())
            await conn.execute(
                statement.on_conflict_do_update(
                    index_elements=[Node.name],
                    set_={"public_url": public_url, "lease_until": until, "started_at": func.now()},
                )
            )

    async def add_room(self, game_id: int, code: str, node: str, summary: dict[str, Any]) -> None:
        """Enter a new room under `node`; `CodeTaken` if another live room has the code."""
        values = {
            "game_id": game_id,
            "code": code,
            "node": node,
            "public": bool(summary.get("public")),
            "status": str(summary.get("status")),
            "summary": summary,
        }
        try:
            async with self.db.write() as conn:
                await conn.execute(insert(RoomLease).values(**values))
        except IntegrityError:
            raise CodeTaken(f"room code {code} is in use on another node.") from None

    async def recode(self, game_id: int, code: str) -> None:
        """Give a stored game a new room code (after `CodeTaken`)."""
        async with self.db.write() as conn:
            await conn.execute(update(GameRecord).where(GameRecord.id == game_id).values(room_code=code))

    async def renew(self, node: str, lease: float) -> set[int]:
        """Extend the node's lease (a negative `lease` ends it); returns the games it owns."""
        until = func.now() + timedelta(seconds=lease)
        async with self.db.write() as conn:
            await conn.execute(update(Node).where(Node.name == node).values(lease_until=until))
            return set(await conn.scalars(select(RoomLease.game_id).where(RoomLease.node == node)))

    async def save_summaries(self, node: str, summaries: dict[int, dict[str, Any]]) -> None:
        """The rooms' public summaries as the lobby shows them (only rows this node owns)."""
        if not summaries:
            return
        async with self.db.write() as conn:
            for game_id, summary in summaries.items():
                await conn.execute(
                    update(RoomLease)
                    .where(RoomLease.game_id == game_id, RoomLease.node == node)
                    .values(summary=summary, status=str(summary.get("status")), public=bool(summary.get("public")))
                )

    async def release(self, node: str, game_ids: list[int]) -> None:
        """Drop rooms this node has let go of (finished and out of memory)."""
        if not game_ids:
            return
        async with self.db.write() as conn:
            await conn.execute(delete(RoomLease).where(RoomLease.node == node, RoomLease.game_id.in_(game_ids)))

    async def claim_expired(self, node: str, limit: int = 100, game_id: int | None = None) -> Claimed:
        """Take the rooms of nodes whose lease has run out (dead nodes), and games in play that
        no node holds (left by a single-node server); `game_id` limits it to that game. The
        claiming node's own lease must be live (it is renewed every third of a lease)."""
        async with self.db.write() as conn:
            expired = (
                select(RoomLease.game_id)
                .join(Node, Node.name == RoomLease.node)
                .where(Node.lease_until < func.now(), RoomLease.node != node)
                .order_by(RoomLease.game_id)
                .limit(limit)
                .with_for_update(of=RoomLease, skip_locked=True)
            )
            if game_id is not None:
                expired = expired.where(RoomLease.game_id == game_id)
            ids = list(await conn.scalars(expired))
            if ids:
                await conn.execute(update(RoomLease).where(RoomLease.game_id.in_(ids)).values(node=node))
            orphans = (
                select(GameRecord.id, GameRecord.room_code)
                .outerjoin(RoomLease, RoomLease.game_id == GameRecord.id)
                .where(GameRecord.status == "playing", RoomLease.game_id.is_(None))
                .order_by(GameRecord.id)
                .limit(limit)
            )
            if game_id is not None:
                orphans = orphans.where(GameRecord.id == game_id)
            for orphan, code in (await conn.execute(orphans)).all():
                empty = {"code": code, "public": False, "status": "playing"}
                taken = await conn.execute(
                    insert(RoomLease)
                    .values(
                        game_id=orphan,
                        code=code,
                        node=node,
                        public=False,
                        status="playing",
                        summary=empty,
                    )
                    .on_conflict_do_nothing()
                    .returning(RoomLease.game_id)
                )
                ids += list(taken.scalars())
            if not ids:
                return Claimed([], [])
            statuses = dict(
                (await conn.execute(select(GameRecord.id, GameRecord.status).where(GameRecord.id.in_(ids)))).all()
            )
        playing = [i for i in ids if statuses.get(i) == "playing"]
        return Claimed(playing, [(i, statuses.get(i, "missing")) for i in ids if statuses.get(i) != "playing"])

    async def owned(self, node: str) -> list[int]:
        """The games whose rooms this node holds (on a restart under the same name)."""
        async with self.db.session() as session:
            return list(await session.scalars(select(RoomLease.game_id).where(RoomLease.node == node)))

    async def locate(self, code: str) -> Location | None:
        """Which node holds the room with this code, if any."""
        query = (
            select(
                RoomLease.game_id,
                RoomLease.node,
                Node.public_url,
                Node.lease_until >= func.now(),
                RoomLease.public,
                RoomLease.summary,
            )
            .join(Node, Node.name == RoomLease.node)
            .where(RoomLease.code == code)
        )
        async with self.db.session() as session:
            row = (await session.execute(query)).first()
        if row is None:
            return None
        return Location(int(row[0]), str(row[1]), str(row[2]), bool(row[3]), bool(row[4]), dict(row[5] or {}))

    async def node_url(self, node: str) -> str | None:
        """The public URL of `node` if its lease is live."""
        query = select(Node.public_url).where(Node.name == node, Node.lease_until >= func.now())
        async with self.db.session() as session:
            return await session.scalar(query)

    async def live_urls(self) -> list[str]:
        """The public URLs of the live nodes: where the deployment's clients may be sent."""
        query = select(Node.public_url).where(Node.lease_until >= func.now()).order_by(Node.name)
        async with self.db.session() as session:
            return list(await session.scalars(query))

    async def lobby(
        self, exclude_node: str, game: str | None = None, status: str | None = None, after: int = 0, limit: int = 50
    ) -> list[dict[str, Any]]:
        """A page of the public rooms of the other live nodes, waiting or in play, as their
        nodes summed them up last: those of `game` and `status` (None: any) whose game id is
        above `after`, by game id."""
        conditions = [
            RoomLease.node != exclude_node,
            RoomLease.public.is_(True),
            RoomLease.status.in_(("waiting", "playing")) if status is None else RoomLease.status == status,
            Node.lease_until >= func.now(),
            RoomLease.game_id > after,
        ]
        query = select(RoomLease.summary).join(Node, Node.name == RoomLease.node)
        if game is not None:
            query = query.join(GameRecord, GameRecord.id == RoomLease.game_id)
            conditions.append(GameRecord.game == game)
        query = query.where(and_(*conditions)).order_by(RoomLease.game_id).limit(limit)
        async with self.db.session() as session:
            return [dict(s) for s in await session.scalars(query)]

    # Accounts connected to each node (challenges and add_bot across nodes).

    async def arrived(self, node: str, account_id: int, name: str, kind: str, agent: str | None, games: Any) -> None:
        """An account has a connection on `node` (a bot's agent and games as its last hello said)."""
        values = {"name": name, "kind": kind, "agent": agent, "games": games}
        async with self.db.write() as conn:
            await conn.execute(
                insert(NodeAccount)
                .values(node=node, account_id=account_id, **values)
                .on_conflict_do_update(index_elements=[NodeAccount.node, NodeAccount.account_id], set_=values)
            )

    async def left(self, node: str, account_ids: list[int] | None = None) -> None:
        """Accounts no longer connected to `node`. None: every account, as a node starts; the
        rows of nodes whose lease has run out go too (a node that never came back, or came back
        under another name, leaves none behind for good)."""
        if account_ids is not None:
            which = and_(NodeAccount.node == node, NodeAccount.account_id.in_(account_ids))
        else:
            dead = select(Node.name).where(Node.lease_until < func.now())
            which = or_(NodeAccount.node == node, NodeAccount.node.in_(dead))
        query = delete(NodeAccount).where(which)
        async with self.db.write() as conn:
            await conn.execute(query)

    async def connected(self, name: str, exclude_node: str) -> list[Presence]:
        """The live nodes other than `exclude_node` where the account `name` (any case) is connected."""
        query = (
            select(NodeAccount, Node.public_url)
            .join(Node, Node.name == NodeAccount.node)
            .where(
                func.lower(NodeAccount.name) == name.strip().lower(),
                NodeAccount.node != exclude_node,
                Node.lease_until >= func.now(),
            )
            .order_by(NodeAccount.node)
        )
        async with self.db.session() as session:
            rows = (await session.execute(query)).all()
        return [
            Presence(a.node, str(url), a.account_id, a.name, a.kind, a.agent, list(a.games) if a.games else a.games)
            for a, url in rows
        ]

    async def connected_among(self, account_ids: list[int], exclude_node: str) -> set[int]:
        """Which of `account_ids` are connected to a live node other than `exclude_node`."""
        return {account for _, account in await self.nodes_of(account_ids, exclude_node)}

    async def nodes_of(self, account_ids: list[int], exclude_node: str) -> list[tuple[str, int]]:
        """(node, account) for each of `account_ids` connected to a live node but `exclude_node`."""
        if not account_ids:
            return []
        query = (
            select(NodeAccount.node, NodeAccount.account_id)
            .join(Node, Node.name == NodeAccount.node)
            .where(
                NodeAccount.account_id.in_(account_ids),
                NodeAccount.node != exclude_node,
                Node.lease_until >= func.now(),
            )
        )
        async with self.db.session() as session:
            return [(str(node), int(account)) for node, account in (await session.execute(query)).all()]

    # Ladders as their scheduler's node sees them.

    async def save_ladder(self, ladder_id: int, node: str, members: list[int], playing: int) -> None:
        values = {"node": node, "members": members, "playing": playing}
        async with self.db.write() as conn:
            await conn.execute(
                insert(LadderLive)
                .values(ladder_id=ladder_id, **values)
                .on_conflict_do_update(index_elements=[LadderLive.ladder_id], set_=values)
            )

    async def ladder(self, ladder_id: int) -> tuple[list[int], int] | None:
        """A ladder's connected members and games in play, as its scheduler's node last wrote
        them; None if no live node wrote them."""
        query = (
            select(LadderLive.members, LadderLive.playing)
            .join(Node, Node.name == LadderLive.node)
            .where(LadderLive.ladder_id == ladder_id, Node.lease_until >= func.now())
        )
        async with self.db.session() as session:
            row = (await session.execute(query)).first()
        return None if row is None else ([int(i) for i in row[0]], int(row[1]))
