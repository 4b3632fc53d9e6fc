"""One node among several (`partida serve --node NAME`): leases on rooms, redirects, takeover.

Several nodes share one PostgreSQL database (and one MQTT broker). Each room is owned by exactly
one node, named in the `room_leases` table; a node holds its rooms under its own lease, which it
renews every third of the lease time (`partida.storage.nodes`). From there:

- A request naming a room another node owns is answered with the error `moved` and that node's
  public URL; the client SDK follows it (the shell asks the room directory, `room_elsewhere`).
- A node whose lease has run out is taken for dead: the other nodes take its rows (each row by
  exactly one of them, `claim_expired`) and rebuild the games in play from their logs, exactly as
  a restarted server does (`Rooms.resume`), clocks included.
- A node that could not renew its lease stops writing before the lease can run out (`fence`):
  its rooms refuse actions with `storage_unavailable` rather than write a move that the node
  taking over might not see. So no game is played on two nodes at once, and no acknowledged move
  is lost.
- Every node's lobby lists every node's public rooms, from the summaries each node writes to
  its rows once a tick when they changed.

A node is the room directory of its server (`server/room_directory.py`); the accounts connected
to it are its presence's (`server/presence.py`), which it starts once it has entered the directory
and stops before its leases end. A single server (no `--node`) has `SingleNodeRooms` for its room
directory and pays nothing for any of this.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from partida.protocol import ErrorCode, ProtocolError, error_message, server_message
from partida.server.events import MqttEventBus
from partida.server.relay import Relay
from partida.storage.database import StorageError, describe_error
from partida.storage.fencing import Fence
from partida.storage.nodes import CodeTaken, NodeDirectory
from partida.storage.store import Store

if TYPE_CHECKING:
    from partida.games.registry import Registry
    from partida.server.events import EventBus
    from partida.server.limits import Limiter
    from partida.server.live_nodes import LiveNodes
    from partida.server.presence import Presence
    from partida.server.room_directory import Dispatch, OtherRooms
    from partida.server.rooms.driver import Room
    from partida.server.rooms.table import Rooms
    from partida.server.session import Session
    from partida.storage.store import StoredGame

log = logging.getLogger(__name__)
SUMMON_RETRY_S = 1.0  # between summons of a bot seated in a room taken over

DEFAULT_LEASE = 10.0  # seconds; a dead node's games resume on another node after about this long


@dataclass
class NodeParts:
    """What a node uses of the server's parts: handed over at `Cluster.start`, once they exist."""

    directory: NodeDirectory  # the shared directory of nodes, room leases and accounts
    store: Store
    bus: EventBus
    registry: Registry
    limiter: Limiter
    rooms: Rooms  # this node's rooms
    bots: Callable[[], list[Session]]  # the bot accounts connected here
    resume: Callable[[list[StoredGame]], Awaitable[list[Room]]]  # rebuild games from their logs
    seat_bot_again: Callable[[Session], Awaitable[None]]  # a bot back to the seats it held


class Cluster:
    """The room directory of a node among several (`server/room_directory.py`)."""

    parts: NodeParts

    def __init__(
        self, name: str, public_url: str, live: LiveNodes, presence: Presence, lease: float = DEFAULT_LEASE
    ) -> None:
        if not 0.5 <= lease <= 3600:
            raise ValueError(f"a node's lease is 0.5 to 3600 seconds, not {lease}")
        self.name = name
        self.public_url = public_url
        self.lease = lease
        self.fence = Fence(lease)
        self.directory: NodeDirectory | None = None
        self.owned: set[int] = set()  # games whose rows this node holds
        self._summaries: dict[int, dict[str, Any]] = {}  # as last written, per game
        self._gone: list[int] = []  # games whose rooms left memory: their rows go at the next tick
        self._taking = asyncio.Lock()
        self.relays: dict[str, Relay] = {}  # code -> this node's spectators of another node's room
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self.taken_over = 0  # games this node took from dead nodes
        self.live = live  # the live nodes' URLs, as of the last tick (`welcome`)
        self.presence = presence  # accounts connected here: findable once the node is in the directory
        self._summoning: set[asyncio.Task[None]] = set()  # bots of rooms taken over, on their way back

    # Life cycle.

    async def start(self, parts: NodeParts) -> None:
        """Enter the node, resume the games it held under this name before (a restart) and those
        left by dead nodes or a single-node server, then keep the leases renewed."""
        self.parts = parts
        self.directory = parts.directory
        loop = asyncio.get_running_loop()
        sent = loop.time()
        await self.directory.register(self.name, self.public_url, self.lease)
        self.owned = set(await self.directory.renew(self.name, self.lease))
        self.fence.renewed(sent)
        self.live.urls = await self.directory.live_urls()
        await self.presence.start(self.directory, parts.bus if self.relaying else None)
        await self._resume(sorted(self.owned), [])
        await self.take_over()
        self._task = loop.create_task(self._run(), name=f"node-{self.name}")

    async def stop(self) -> None:
        """Hand the rooms over at once: their leases end now, so another node takes the games in
        play without waiting (call after the rooms have stopped)."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        for task in list(self._summoning):
            task.cancel()
        await asyncio.gather(*self._summoning, return_exceptions=True)
        for relay in list(self.relays.values()):
            await relay.close()
        if self.directory is not None:
            await self.presence.stop()
            self.fence.valid_until = 0.0
            with contextlib.suppress(Exception):
                await self.directory.renew(self.name, -1.0)

    def wake(self) -> None:
        self._wake.set()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.lease / 3):
                    await self._wake.wait()
            self._wake.clear()
            try:
                await self.tick(loop.time())
            except Exception as exc:
                log.warning("node %s: lease round failed: %s", self.name, describe_error(exc))

    async def tick(self, sent: float) -> None:
        """One round: renew, let go of rooms that left memory, publish summaries, take over."""
        assert self.directory is not None
        before = set(self.owned)
        still = await self.directory.renew(self.name, self.lease)
        self.fence.renewed(sent)
        self._drop_lost(before - still)
        # Rooms entered or taken over meanwhile were added by whoever did it.
        self.owned = (self.owned - before) | (before & still)
        gone, self._gone = self._gone, []
        if gone:
            self.owned.difference_update(gone)
            for game_id in gone:
                self._summaries.pop(game_id, None)
            await self.directory.release(self.name, gone)
        local = {room.core.game_id: room for room in self.parts.rooms.values()}
        changed = {}
        for game_id in self.owned:
            room = local.get(game_id)  # not yet there while it is being resumed
            summary = room.summary() if room is not None else None
            if summary is not None and self._summaries.get(game_id) != summary:
                changed[game_id] = summary
        await self.directory.save_summaries(self.name, changed)
        self._summaries.update(changed)
        self.live.urls = await self.directory.live_urls()
        await self.take_over()

    def _drop_lost(self, lost: set[int]) -> None:
        """Rooms another node has taken (this node was cut off past its lease): they leave
        this node at once; their players find the new owner through `moved`."""
        for code, room in list(self.parts.rooms.items()):
            if room.core.game_id in lost:
                log.warning("node %s: lost the lease on room %s (game %s)", self.name, code, room.core.game_id)
                gone = error_message(ErrorCode.MOVED, f"room {code} has moved to another node", room=code)
                self.parts.rooms.lose(room, gone)
                self._summaries.pop(room.core.game_id, None)

    # Takeover.

    async def take_over(self, game_id: int | None = None) -> list[Room]:
        """Claim the rooms of dead nodes (and games in play no node holds) and resume them."""
        assert self.directory is not None
        async with self._taking:  # `find` waits on it for a room this node is resuming
            claimed = await self.directory.claim_expired(self.name, game_id=game_id)
            if not claimed.playing and not claimed.other:
                return []
            self.owned.update(claimed.playing)
            self.taken_over += len(claimed.playing)
            return await self._resume(claimed.playing, claimed.other)

    async def _resume(self, playing: list[int], other: list[tuple[int, str]]) -> list[Room]:
        """Rebuild the games in play as a restart does; a waiting room nobody can reach any more
        is closed (its game stored as aborted), and ended games' rows are let go."""
        assert self.directory is not None
        parts = self.parts
        stale = [game_id for game_id, _ in other]
        for game_id, status in other:
            if status == "waiting":
                with contextlib.suppress(Exception):
                    await parts.store.finish_game(game_id, None, status="aborted")
        stored = [g for g in await parts.store.unfinished_games(playing) if g.id in set(playing)] if playing else []
        found = {g.id for g in stored}
        stale += [game_id for game_id in playing if game_id not in found]  # ended meanwhile
        self.owned.difference_update(stale)
        await self.directory.release(self.name, stale)
        rooms = await parts.resume(stored)
        for room in rooms:
            log.info(
                "node %s: took over room %s (game %s) at move %d",
                self.name,
                room.code,
                room.core.game_id,
                room.core.seq,
            )
        for session in parts.bots():
            await parts.seat_bot_again(session)
        for room in rooms:
            self._summon_seated_bots(room)
        return rooms

    def _summon_seated_bots(self, room: Room) -> None:
        """The bot accounts seated in a room taken over but connected to other nodes only are
        summoned here and seated again, in the background (the ones connected here were just
        seated): without it their clocks ran out while they waited on a node that had no seat
        for them."""
        missing = [
            (seat, held.name)
            for seat, held in enumerate(room.core.seats)
            if held is not None and held.kind == "bot" and held.account_id is not None and held.session is None
        ]
        for seat, name in missing:
            task = asyncio.get_running_loop().create_task(self._summon_to_seat(room, seat, name))
            self._summoning.add(task)
            task.add_done_callback(self._summoning.discard)

    async def _summon_to_seat(self, room: Room, seat: int, name: str) -> None:
        """Asked again every `SUMMON_RETRY_S` until the seat is held again or the game is over: a
        bot that was connected to the dead node is on its way to another one, and in no node's
        presence until it gets there (if it comes here, its hello seats it: `bot_arrived`)."""
        while room.core.status == "playing":
            held = room.core.seats[seat]
            if held is None or held.session is not None:
                return
            try:
                bot = await self.presence.summon(name, room.core.game.name)
                held = room.core.seats[seat]
                if bot is not None and room.core.status == "playing" and held is not None and held.session is None:
                    await room.call(lambda bot=bot: room.seat_bot(bot, seat))
                    return
            except Exception as exc:
                log.info("node %s: bot %s not back in room %s yet: %s", self.name, name, room.code, exc)
            await asyncio.sleep(SUMMON_RETRY_S)

    # Rooms.

    async def add_room(self, room: Room) -> None:
        """Enter a new room in the directory under this node (a new code if another node's live
        room has this one)."""
        assert self.directory is not None
        for _ in range(10):
            try:
                await self.directory.add_room(room.core.game_id, room.code, self.name, room.summary())
            except CodeTaken:
                self.parts.rooms.recode(room)
                await self.directory.recode(room.core.game_id, room.code)
                continue
            self.owned.add(room.core.game_id)
            return
        raise StorageError("could not find a free room code")

    def forget(self, room: Room) -> None:
        """A room left this node's memory (finished a while ago, or never started): its row goes."""
        self._gone.append(room.core.game_id)

    async def find(self, code: str) -> bool:
        """For a request naming a room this node does not have: raise `moved` with the URL of
        the node that has it, or take the room over if its node is dead (True: it is here now).
        False: no node has it."""
        assert self.directory is not None
        code = code.strip().upper()
        where = await self.directory.locate(code)
        if where is None:
            return False
        if where.node != self.name and where.live:
            raise ProtocolError(
                ErrorCode.MOVED, f"room {code} is on node {where.node}", details={"url": where.url, "room": code}
            )
        if where.node != self.name:
            await self.take_over(where.game_id)
        else:  # this node's: perhaps being resumed right now
            async with self._taking:
                pass
        if code in self.parts.rooms:
            return True
        again = await self.directory.locate(code)
        if again is not None and again.node != self.name and again.live:
            raise ProtocolError(
                ErrorCode.MOVED, f"room {code} is on node {again.node}", details={"url": again.url, "room": code}
            )
        return False

    # Spectators of other nodes' rooms (server/relay.py).

    @property
    def relaying(self) -> bool:
        """Other nodes' events reach this node only through a broker."""
        return isinstance(self.parts.bus, MqttEventBus)

    async def serve_here(self, session: Session, request: Any) -> bool:
        """`watch` of a room on another live node, served on this node from the room's events;
        `leave` of such a room. True when done (the reply is sent)."""
        assert self.directory is not None
        code = request.room.strip().upper()
        relay = self.relays.get(code)
        if request.type == "leave":
            if relay is None or session not in relay.spectators:
                return False
            await relay.leave(session)
            session.send(server_message("left", request.id, room=code))
            return True
        if relay is None or session not in relay.spectators:
            self.parts.limiter.may_watch(sum(1 for r in session.rooms if session in r.spectators))
        where = await self.directory.locate(code)
        if relay is None:
            if where is None or where.node == self.name or not where.live:
                return False
            relay = Relay(
                self.parts.bus, self.parts.store, self.parts.registry, self.relays, code, where.game_id, where.public
            )
            await relay.open()
            if code in self.relays:  # opened meanwhile by another request: keep that one
                await relay.close()
            relay = self.relays.setdefault(code, relay)
        summary = where.summary if where is not None else {"code": code, "game_id": relay.game_id}
        session.send(server_message("watching", request.id, room=code, summary=summary))
        await relay.watch(session)
        return True

    async def node_url(self, node: str) -> str | None:
        """The public URL of a live node."""
        assert self.directory is not None
        return await self.directory.node_url(node)

    # The room directory's answers (server/room_directory.py).

    @property
    def other_rooms(self) -> OtherRooms:
        return self.lobby

    async def room_elsewhere(
        self, session: Session, request: Any, missing: ProtocolError, dispatch: Dispatch
    ) -> ProtocolError | None:
        """`moved` if another node has the room; if its node is dead, this node takes it over
        and runs the request; a spectator of another node's room is served from its events."""
        if request.type in ("watch", "leave") and self.relaying:
            if await self.serve_here(session, request):
                return None
        if not await self.find(request.room):
            return missing
        await dispatch(session, request)
        return None

    async def entered(self, room: Room) -> None:
        await self.add_room(room)

    def left_memory(self, room: Room) -> None:
        self.forget(room)

    async def lobby(self, game: str | None, status: str | None, after: int, limit: int) -> list[dict[str, Any]]:
        """A page of other nodes' public rooms for `list_rooms`: those of `game` and `status`
        (None: any) whose game id is above `after`, by game id."""
        assert self.directory is not None
        return await self.directory.lobby(self.name, game, status, after, limit)
