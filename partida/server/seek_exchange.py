"""The seeks of a deployment of several nodes: one list and one pairing across every node.

Each node still answers its own connections' `seek`, `seek_take` and `seek_cancel`
(`services/seeks.py`), but every open seek has a row in PostgreSQL (`storage/shared_seeks.py`),
and the database decides each pairing: a node takes the two seeks of a pairing (or the one a
taker answers) with one conditional UPDATE, so whichever nodes try at the same moment, a seek is
paired exactly once. The node that wins opens the room on itself and seats its own connection; the
other party, connected to another node, is brought there:

- a bot is summoned (`AccountPresence.summon`), as a challenge to it does, and seated as a bot;
- a person (or a guest) gets a seat reserved in the room (`Room.reserve`), and its seat token is
  written to its seek's row; the node the person is on is told over the broker (the seek's id,
  nothing secret) on `partida/nodes/{node}/seek_paired`, reads the row back and pushes the
  person `seek_paired` with the room's node's `url`. The SDK joins there with that token, the
  browser opens the room's page there.

Every node's lobby lists every node's seeks: a node publishes the seeks it lists and unlists on
`partida/lobby/seeks`, and every node keeps the others' in its `SeekBoard` (listed, paged and
pushed to its watchers as its own). Every `RESYNC` seconds a node reads the open seeks of the
other live nodes back from the database, so a message lost with the broker, or a node's death
(its seeks go once its lease has run out), is mended within that time.

A single server has no exchange (`SeekService.shared` is None) and keeps today's memory-only path.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

from partida.competition.seeks import Party, Seek
from partida.protocol import server_message
from partida.room.clocks import ClockSpec
from partida.storage.shared_seeks import SeekRow, SharedSeekTable, terms_digest

if TYPE_CHECKING:
    from partida.server.events import EventBus
    from partida.server.publisher import Publisher
    from partida.server.seek_board import OpenSeek, SeekBoard
    from partida.server.session import Session
    from partida.storage.database import Database

log = logging.getLogger(__name__)

RESYNC = 5.0  # seconds between two reads of the other nodes' open seeks
GONE_KEPT = 10_000  # ids of other nodes' seeks remembered as gone
LISTING_TOPIC = "lobby/seeks"


def owner_key(owner: Any, node: str) -> str:
    """An owner as every node writes it: an account by its id, a guest by its node and connection."""
    if isinstance(owner, int):
        return f"a:{owner}"
    return f"g:{node}:{owner[-1] if isinstance(owner, tuple) else owner}"


def owner_from_key(key: str) -> Any:
    """The owner `Party.owner` holds for a key: an account's id, or the guest's key itself."""
    return int(key[2:]) if key.startswith("a:") else key


def seek_of(row: SeekRow) -> Seek:
    """The pure seek of another node's row (what pairing reads)."""
    party, terms = row.party, row.terms
    low_high = terms.get("range")
    return Seek(
        id=row.id,
        posted=float(terms.get("posted") or 0.0),
        party=Party(
            owner_from_key(row.owner),
            rating=party.get("rating"),
            is_bot=bool(party.get("is_bot")),
            is_guest=bool(party.get("is_guest")),
        ),
        game=str(terms["game"]),
        options=dict(terms.get("options") or {}),
        seats=int(terms.get("seats") or 2),
        clock=ClockSpec.parse(terms.get("clock")),
        rated=bool(terms.get("rated")),
        rating_range=(float(low_high[0]), float(low_high[1])) if low_high else None,
        allow_bots=bool(terms.get("allow_bots")),
    )


def row_parts(seek: Seek, session: Session) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """What a node writes of its seek: the terms' key, the party and the terms."""
    clock = seek.clock.to_data() if isinstance(seek.clock, ClockSpec) else None
    identity = session.identity
    assert identity is not None
    party = {
        "rating": seek.party.rating,
        "is_bot": seek.party.is_bot,
        "is_guest": seek.party.is_guest,
        "name": identity.name,
        "kind": identity.kind,
        "account_id": identity.account_id,
    }
    terms = {
        "game": seek.game,
        "options": dict(seek.options),
        "seats": seek.seats,
        "clock": clock,
        "rated": seek.rated,
        "range": list(seek.rating_range) if seek.rating_range is not None else None,
        "allow_bots": seek.allow_bots,
        "posted": seek.posted,
    }
    return terms_digest(seek.game, dict(seek.options), seek.seats, clock, seek.rated), party, terms


class SeekExchange:
    """This node's half of the deployment's seeks: its rows, the others' listing, the notices."""

    def __init__(self, node: str, public_url: str, board: SeekBoard, publisher: Publisher) -> None:
        self.node = node
        self.public_url = public_url
        self.board = board
        self.publisher = publisher
        self.table: SharedSeekTable = None  # type: ignore[assignment]  # set by `start`
        self.local: dict[int, OpenSeek] = {}  # this node's seeks with a row, listed or being paired
        self._tasks: list[asyncio.Task[None]] = []
        self._spawned: set[asyncio.Task[Any]] = set()
        # Other nodes' seeks known to be gone, the newest `GONE_KEPT`: a late `added` for one of them
        # (the broker's message overtaken by a pairing that read the database) is not listed.
        self._gone: dict[int, None] = {}

    async def start(self, db: Database, bus: EventBus) -> None:
        """Forget this node's rows of its last life and dead nodes', list the others' open seeks,
        and follow the broker."""
        self.table = SharedSeekTable(db)
        await self.table.drop_dead(self.node)
        listing = bus.subscribe(f"partida/{LISTING_TOPIC}")
        notices = bus.subscribe(f"partida/nodes/{self.node}/seek_paired")
        await self.resync()
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._follow(listing, self._on_listing)),
            loop.create_task(self._follow(notices, self._on_notice)),
            loop.create_task(self._keep_in_step()),
        ]

    async def stop(self) -> None:
        for task in [*self._tasks, *self._spawned]:
            task.cancel()
        await asyncio.gather(*self._tasks, *self._spawned, return_exceptions=True)
        if self.table is not None and self.local:
            with contextlib.suppress(Exception):
                await self.table.drop(self.node, list(self.local), claimed_too=False)

    # This node's seeks.

    def listed(self, seek: OpenSeek) -> None:
        """A seek of this node waits: listed here and, through the broker, everywhere."""
        if seek.left or seek.seek.id not in self.local:
            return
        self.board.add(seek)
        self._spawn(self.publisher.publish(LISTING_TOPIC, {"node": self.node, "added": [seek.data]}))

    def unlisted(self, seek_ids: list[int]) -> None:
        if seek_ids:
            self._spawn(self.publisher.publish(LISTING_TOPIC, {"node": self.node, "removed": seek_ids}))

    def settled(self, seek: OpenSeek) -> None:
        """A seek of this node is gone for good (paired, cancelled, its poster gone)."""
        seek_id = seek.seek.id
        self.local.pop(seek_id, None)
        if self.board.open.get(seek_id) is seek:
            self.board.remove(seek_id)
        else:
            self.board.settle(seek)
        self.unlisted([seek_id])

    def claimed(self, seek_id: int) -> None:
        """Another node's seek was paired here: unlisted at once, here and (without waiting for
        its node to hear of it) everywhere."""
        self._forget(seek_id)
        self.unlisted([seek_id])

    def poster_left(self, session: Session) -> None:
        """A seek dies with its poster's connection: its rows go (those not being paired)."""
        mine = [seek for seek in self.local.values() if seek.session is session]
        if not mine:
            return
        for seek in mine:
            self.local.pop(seek.seek.id, None)
        self.unlisted([seek.seek.id for seek in mine])
        self._spawn(self.table.drop(self.node, [seek.seek.id for seek in mine]))

    # Messages from the other nodes.

    async def _follow(self, subscription: Any, handle: Any) -> None:
        async with subscription:
            async for event in subscription:
                try:
                    await handle(event.payload)
                except Exception:
                    log.exception("node %s: a seeks message failed", self.node)

    async def _on_listing(self, payload: dict[str, Any]) -> None:
        if payload.get("node") == self.node:
            return
        for data in payload.get("added") or []:
            if isinstance(data, dict) and isinstance(data.get("id"), int) and isinstance(data.get("game"), str):
                if data["id"] not in self._gone:
                    self.board.add_elsewhere(data)
        for seek_id in payload.get("removed") or []:
            if isinstance(seek_id, int):
                self._forget(seek_id)

    def _forget(self, seek_id: int) -> None:
        self.board.remove_elsewhere(seek_id)
        self._gone[seek_id] = None
        if len(self._gone) > GONE_KEPT:
            del self._gone[next(iter(self._gone))]

    async def _on_notice(self, payload: dict[str, Any]) -> None:
        """A seek of this node was paired by another node: its row says where its poster sits."""
        seek_id = payload.get("seek")
        if not isinstance(seek_id, int):
            return
        room = await self.table.take_paired(seek_id, self.node)
        if room is None:
            return  # not a paired seek of this node's: a forgery, or told twice
        seek = self.local.get(seek_id)
        if seek is None:
            return  # its poster left meanwhile: its reserved seat waits for nobody
        self.settled(seek)
        if room.get("summoned") or seek.session.closed:
            return  # a bot was summoned to its seat: nothing to push
        fields = {k: room[k] for k in ("room", "summary", "seat", "token", "opponent", "url") if k in room}
        seek.session.send(server_message("seek_paired", seek=seek_id, **fields))

    async def resync(self) -> None:
        """The other live nodes' open seeks, read back: the listing mended."""
        rows = [row for row in await self.table.open_seeks(self.node) if row.id not in self._gone]
        found = {row.id: row for row in rows}
        for seek_id in [i for i in self.board.elsewhere if i not in found]:
            self.board.remove_elsewhere(seek_id)
        for row in rows:
            if row.id not in self.board.elsewhere:
                self.board.add_elsewhere(row.data)

    async def _keep_in_step(self) -> None:
        while True:
            await asyncio.sleep(RESYNC)
            try:
                dead = await self.table.drop_dead()
                if dead:
                    self.unlisted(dead)
                await self.table.release_dead_claims()
                await self.resync()
            except Exception as exc:
                log.warning("node %s: could not read the seeks back: %s", self.node, exc)

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._spawned.add(task)
        task.add_done_callback(self._spawned.discard)
