"""The ladder director: it keeps connected ladder bots playing each other.

It wakes (`server/competition/scheduler.py`) when a member joins or leaves, when one of its games
ends, and once a second; for every ladder with room for another game (`concurrency`) it asks the
pairing rule (`partida.competition.ladder_pairing`) for the next group among idle members
(connected, and playing fewer ladder games than their own limit, `max_games`, default 1), opens a
room with the ladder's game, options and clock, and seats them. Rooms then run like any other; the
result is rated by storage in the transaction that stores it, and the director pushes the rating
changes to the members (`rating`) and publishes them under `partida/ladders/NAME/...`.

The requests (`ladder_join`, ...) are answered by `partida.server.services.ladders`, which adds
and removes members here. Nothing here touches a room's state: rooms are opened, and bots seated,
through the room's own commands. The pairing rule's wait for busy members is measured on the
injected clock (`now`, monotonic seconds), so it can be tested without waiting.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from partida.competition.ladder_pairing import WAIT_FOR_OTHERS, Candidate, pick_group, pick_random
from partida.competition.ratings import Rating
from partida.games.registry import Registry
from partida.protocol import ErrorCode, ProtocolError, server_message
from partida.room.clocks import ClockSpec
from partida.room.terms import RoomTerms
from partida.server.competition.scheduler import TICK, Scheduler
from partida.server.publisher import Publisher
from partida.server.scheduler_lock import SchedulerLock
from partida.storage.ladders import LadderInfo, RatingChange
from partida.storage.store import Store

if TYPE_CHECKING:
    from partida.server.cluster import Cluster
    from partida.server.rooms.driver import Room
    from partida.server.rooms.table import Rooms
    from partida.server.session import Session


log = logging.getLogger(__name__)

STOP_GRACE = 2.0  # seconds a game being opened has to get all its bots seated when the server stops


@dataclass(eq=False)
class Member:
    account_id: int
    name: str
    session: Session
    max_games: int = 1


@dataclass
class Recent:
    """What the pairing rule remembers of a member beyond its rating."""

    last_opponents: frozenset[int] = frozenset()
    seat_counts: dict[int, int] = field(default_factory=dict)
    met: dict[int, int] = field(default_factory=dict)  # account id -> games played together


@dataclass(eq=False)
class LiveLadder:
    info: LadderInfo
    members: dict[int, Member] = field(default_factory=dict)  # account id -> connected member
    rooms: dict[str, Room] = field(default_factory=dict)  # code -> room of a game in progress
    # With several nodes: games in progress on other nodes (opened by a scheduler that died),
    # game id -> their accounts, released when the database says they ended.
    remote: dict[int, list[int]] = field(default_factory=dict)
    recent: dict[int, Recent] = field(default_factory=dict)  # account id -> pairing memory
    rng: random.Random = field(default_factory=random.Random)
    waiting_since: float | None = None  # when the pairing rule began waiting for busy members

    @property
    def in_play(self) -> int:
        """Its games in progress, here and (adopted from a dead scheduler) on other nodes."""
        return len(self.rooms) + len(self.remote)


class LadderDirector:
    def __init__(
        self,
        store: Store,
        rooms: Rooms,
        registry: Registry,
        publisher: Publisher,
        nodes: Cluster | None = None,
        lock: SchedulerLock | None = None,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.rooms = rooms  # this node's rooms: its games' are opened there
        self.registry = registry
        self.publisher = publisher
        # With several nodes: the shared directory the scheduler's node writes counts to, and
        # the lock that makes one node the scheduler (server/scheduler_lock.py).
        self.nodes = nodes
        self.lock = lock
        self.now = now
        self.ladders: dict[str, LiveLadder] = {}
        self.playing: dict[int, int] = {}  # account id -> ladder games in progress, every ladder
        self.scheduler = Scheduler("ladders", self.tick, lambda: TICK, lock=lock, adopt=self._adopt_all, logger=log)
        # What the scheduler's node last wrote of each ladder for the other nodes: ladder id ->
        # (connected members, games in play).
        self._written: dict[int, tuple[list[int], int]] = {}

    # Life cycle.

    async def start(self) -> None:
        """Load the ladders and adopt their games that were resumed after a restart."""
        for info in await self.store.ladders.all():
            live = await self.load(info)
            for game in await self.store.ladders.games(info.id, live=True):
                room = self.rooms.get(game.room_code)
                if room is not None and room.core.game_id == game.game_id:
                    live.rooms[room.code] = room
                    for _, account_id, _ in game.seats:
                        if account_id is not None:
                            self.playing[account_id] = self.playing.get(account_id, 0) + 1
        if self.lock is not None:
            await self.scheduler.lead()
        self.scheduler.start()

    async def stop(self) -> None:
        """Schedule no more games. A game being opened is opened whole first (its bots all
        seated), so no ladder game is left half-seated; bounded: stopping the server never waits
        on us for more than a few seconds."""
        await self.scheduler.stop(grace=STOP_GRACE)

    def wake(self) -> None:
        self.scheduler.wake()

    async def load(self, info: LadderInfo) -> LiveLadder:
        live = LiveLadder(info)
        by_game: dict[int, set[int]] = {}
        for change in await self.store.ladders.history(info.id):
            recent = live.recent.setdefault(change.account_id, Recent())
            recent.seat_counts[change.seat] = recent.seat_counts.get(change.seat, 0) + 1
            by_game.setdefault(change.game_id, set()).add(change.account_id)
        for accounts in by_game.values():  # in rating order: the last game of each member wins
            for account in accounts:
                recent = live.recent[account]
                recent.last_opponents = frozenset(accounts - {account})
                for other in accounts - {account}:
                    recent.met[other] = recent.met.get(other, 0) + 1
        return self.ladders.setdefault(info.name, live)  # a concurrent request may have loaded it meanwhile

    async def ladder(self, name: str) -> LiveLadder:
        """The ladder by name; one created meanwhile (`partida ladder create`) is loaded."""
        live = self.ladders.get(name)
        if live is None:
            info = await self.store.ladders.get(name)
            if info is None:
                raise ProtocolError(ErrorCode.NO_SUCH_LADDER, f"there is no ladder named {name!r}")
            live = self.ladders.get(name) or await self.load(info)
        return live

    # Members.

    def disconnected(self, session: Session) -> None:
        """A connection closed: it leaves every ladder (its games go on under their clocks)."""
        for live in self.ladders.values():
            for account_id, member in list(live.members.items()):
                if member.session is session:
                    del live.members[account_id]
        self.wake()

    def game_over(self, room: Room) -> None:
        """Wake the scheduler as soon as one of its games ends: a subscriber to this node's
        finished games (`Rooms.on_finished`). Only this node's rooms are in `live.rooms`; the
        games of other nodes are looked up at each tick. A plain call in the room's task, not a
        subscription to every room's `game_over` event on the bus: that made every game of the
        server build and deliver the event, and wake a task, for the few that are ladder games."""
        if self.ladders and any(live.rooms.get(room.code) is room for live in self.ladders.values()):
            self.wake()

    # Several nodes: the scheduler runs where the lock is.

    async def where(self, ladder: str) -> None:
        """Nothing when this node schedules; otherwise `moved`, with the scheduler's URL: ladder
        bots play where the scheduler is."""
        if self.lock is None or await self.scheduler.lead():
            return
        assert self.nodes is not None
        holder = await self.lock.holder()
        where = await self.nodes.node_url(holder) if holder else None
        if where is None:
            raise ProtocolError(ErrorCode.STORAGE, "no node schedules ladder games just now; try again")
        raise ProtocolError(
            ErrorCode.MOVED, f"ladder games are scheduled on node {holder}", details={"url": where, "ladder": ladder}
        )

    async def counts(self, live: LiveLadder) -> tuple[set[int], int]:
        """The ladder's connected members and games in play. Only the scheduler's node knows
        them (members connect to it); another node reads what it last wrote (`_write_counts`)."""
        if self.lock is None or self.lock.held:
            return set(live.members), live.in_play
        assert self.nodes is not None and self.nodes.directory is not None
        written = await self.nodes.directory.ladder(live.info.id)
        return (set(written[0]), written[1]) if written is not None else (set(), 0)

    async def _write_counts(self) -> None:
        """On the scheduler's node: write each ladder's connected members and games in play for
        the other nodes' `ladder_list` and `ladder_standings`, when they changed."""
        assert self.nodes is not None and self.nodes.directory is not None
        for live in list(self.ladders.values()):
            counts = (sorted(live.members), live.in_play)
            if self._written.get(live.info.id) != counts:
                await self.nodes.directory.save_ladder(live.info.id, self.nodes.name, *counts)
                self._written[live.info.id] = counts

    async def _adopt_all(self) -> None:
        """This node has just become the scheduler: it counts the ladder games in progress
        anywhere (the last scheduler may have died with them; other nodes took them over)."""
        self._written = {}  # another node wrote them meanwhile
        for info in await self.store.ladders.all():
            await self._adopt(self.ladders.get(info.name) or await self.load(info))

    async def _adopt(self, live: LiveLadder) -> None:
        in_progress = await self.store.ladders.games(live.info.id, live=True)
        known = {room.core.game_id for room in live.rooms.values()} | set(live.remote)
        for game in in_progress:
            if game.game_id in known:
                continue
            accounts = [account_id for _, account_id, _ in game.seats if account_id is not None]
            room = self.rooms.get(game.room_code)
            if room is not None and room.core.game_id == game.game_id:
                live.rooms[room.code] = room
            else:
                live.remote[game.game_id] = accounts
            for account_id in accounts:
                self.playing[account_id] = self.playing.get(account_id, 0) + 1

    # A pass.

    async def tick(self) -> None:
        """Settle and schedule every ladder. A ladder that fails does not keep the others from
        their games; the first failure is raised after all were tried (the scheduler logs it)."""
        failed: Exception | None = None
        for live in list(self.ladders.values()):
            try:
                await self._settle(live)
                await self._schedule(live)
            except Exception as exc:
                failed = failed or exc
        if self.lock is not None:
            try:
                await self._write_counts()
            except Exception as exc:
                log.warning("ladders: could not write the counts for other nodes: %s", exc)
        if failed is not None:
            raise failed

    async def _settle_remote(self, live: LiveLadder) -> None:
        ended = await self.store.ended_games(list(live.remote))
        for game_id in ended:
            for account_id in live.remote.pop(game_id, []):
                self.playing[account_id] = max(0, self.playing.get(account_id, 0) - 1)

    async def _settle(self, live: LiveLadder) -> None:
        """Release the members of ended games and tell everyone how their ratings moved."""
        if live.remote:
            await self._settle_remote(live)
        for code, room in list(live.rooms.items()):
            if room.core.status in ("waiting", "playing"):
                continue
            del live.rooms[code]
            for seat in room.core.seats:
                if seat is not None and seat.account_id is not None:
                    self.playing[seat.account_id] = max(0, self.playing.get(seat.account_id, 0) - 1)
            changes = await self.store.ladders.game_ratings(room.core.game_id)
            if changes:
                await self._announce_ratings(live, room, changes)

    async def _announce_ratings(self, live: LiveLadder, room: Room, changes: list[RatingChange]) -> None:
        payload = {
            "ladder": live.info.name,
            "room": room.code,
            "game_id": room.core.game_id,
            "ratings": [c.to_data() for c in changes],
        }
        message = server_message("rating", **payload)
        for change in changes:
            member = live.members.get(change.account_id)
            if member is not None:
                member.session.send(message)
        await self.publisher.publish(f"ladders/{live.info.name}/rating", {"type": "rating", **payload})

    def _idle(self, live: LiveLadder) -> list[Member]:
        return [
            member
            for member in live.members.values()
            if not member.session.closed and self.playing.get(member.account_id, 0) < member.max_games
        ]

    async def _schedule(self, live: LiveLadder) -> None:
        while live.in_play < live.info.concurrency and not self.scheduler.stopping:
            idle = self._idle(live)
            if len(idle) < live.info.seats:
                return
            ratings = {s.account_id: s for s in await self.store.ladders.standings(live.info.id)}
            candidates = []
            for member in idle:
                standing = ratings.get(member.account_id)
                recent = live.recent.get(member.account_id, Recent())
                candidates.append(
                    Candidate(
                        member.account_id,
                        standing.rating if standing else Rating(),
                        standing.games if standing else 0,
                        recent.last_opponents,
                        recent.seat_counts,
                        recent.met,
                    )
                )
            if live.info.pairing == "random":
                group = pick_random(candidates, live.info.seats, live.rng)
            else:
                busy = sum(1 for m in live.members.values() if not m.session.closed) - len(idle)
                now = self.now()
                waited = now - live.waiting_since if live.waiting_since is not None else 0.0
                group = pick_group(candidates, live.info.seats, busy, may_repeat=waited >= WAIT_FOR_OTHERS)
                if group is None:  # only a rematch while others play: wait for them (next tick)
                    live.waiting_since = now if live.waiting_since is None else live.waiting_since
                    return
            live.waiting_since = None
            members = [live.members.get(c.id) for c in group or []]
            if group is None or None in members:  # someone left while the standings were read
                return
            await self._open_game(live, members)  # type: ignore[arg-type]

    async def _open_game(self, live: LiveLadder, members: list[Member]) -> None:
        info = live.info
        game = self.registry.get(info.game)
        clock = ClockSpec.parse(info.clock)
        grace = self.rooms.abandon_after
        terms = RoomTerms(game, info.options, info.seats, public=True, clock=clock, abandon_after=grace)
        room = await self.rooms.open(terms, None)
        await self.store.ladders.add_game(info.id, room.core.game_id)
        live.rooms[room.code] = room
        accounts = {member.account_id for member in members}
        for seat, member in enumerate(members):
            self.playing[member.account_id] = self.playing.get(member.account_id, 0) + 1
            recent = live.recent.setdefault(member.account_id, Recent())
            recent.seat_counts[seat] = recent.seat_counts.get(seat, 0) + 1
            recent.last_opponents = frozenset(accounts - {member.account_id})
            for other in accounts - {member.account_id}:
                recent.met[other] = recent.met.get(other, 0) + 1
        payload: dict[str, Any] = {
            "ladder": info.name,
            "room": room.code,
            "game_id": room.core.game_id,
            "game": info.game,
            "clock": info.clock,
            "seats": [{"seat": seat, "name": member.name} for seat, member in enumerate(members)],
        }
        for member in members:
            member.session.send(server_message("ladder_game", **payload))
        for seat, member in enumerate(members):
            await room.call(lambda member=member, seat=seat: room.seat_bot(member.session, seat))
        await self.publisher.publish(f"ladders/{info.name}/game", {"type": "ladder_game", **payload})
