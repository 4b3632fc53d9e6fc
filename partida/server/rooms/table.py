"""This node's rooms, and the one holder of them: every room is opened, resumed, found and let go
here, so the services, the ladders, the tournaments and the cluster each hold the table, never
a dict of their own to insert into or delete from.

A room enters the table once its game is stored and the directory has it (`open`), or once its
game has been rebuilt from its log (`resume`), and leaves it by `drop` (finished a while ago, or
never started: the reaper's), or by `lose` (another node has taken its game). The table reads as a
`Mapping` of code to room, so `rooms[code]`, `code in rooms` and `rooms.values()` work for readers;
only its own methods change it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from partida.protocol import ErrorCode, ProtocolError
from partida.room.core import RoomCore
from partida.room.terms import RoomTerms
from partida.server.rooms.codes import code_length, new_room_code, new_seed
from partida.server.rooms.counts import RoomsByAddress
from partida.server.rooms.driver import LobbyListener, Room, RoomPorts
from partida.server.rooms.rematch import open_rematch

if TYPE_CHECKING:
    from partida.games.registry import Registry
    from partida.server.limits import Limits
    from partida.server.publisher import Publisher
    from partida.server.room_directory import RoomDirectory
    from partida.server.session import Session
    from partida.storage.store import Store, StoredGame

log = logging.getLogger(__name__)

FINISHED_ROOM_TTL = 600.0  # seconds a finished room stays reachable for late viewers


class Rooms(Mapping[str, Room]):
    """This node's rooms by code. `abandon_after`: the grace period of an absent seat in a room
    whose opener names none (a ladder's, a tournament's, a challenge's), and of a game stored
    without one. `limits`: read for the waiting rooms' time to live, as the reaper goes."""

    def __init__(
        self,
        registry: Registry,
        lobby: LobbyListener,
        directory: RoomDirectory,  # told of each room entering and leaving (several nodes: may recode it)
        publisher: Publisher,
        limits: Limits,
        abandon_after: float,
    ) -> None:
        self._rooms: dict[str, Room] = {}
        self.registry = registry
        self.lobby = lobby
        self.directory = directory
        self.publisher = publisher
        self.limits = limits
        self.abandon_after = abandon_after
        self.ports: RoomPorts = None  # type: ignore[assignment]  # set by `attach`, once the store is open
        self._opened: list[Callable[[Room], None]] = []
        self._started: list[Callable[[Room], None]] = []
        self._finished: list[Callable[[Room], None]] = []
        # Rooms counted per creator's address, for the limits on waiting and public rooms.
        self.waiting_by_address = self.by_address(lambda room: room.core.status == "waiting")
        self.public_by_address = self.by_address(lambda room: room.core.status in ("waiting", "playing"))
        self._reaper: asyncio.Task[None] | None = None
        self._closing: set[asyncio.Task[None]] = set()  # rooms lost to another node, closing

    def attach(self, store: Store) -> None:
        """The store the rooms' games are written to (open once the server starts)."""
        self.ports = RoomPorts(store, self.publisher, self.lobby, self._finished, self._started)

    # Reading, as a mapping. `get` stays the dict's: the hot path and the sweeps call it.

    def __getitem__(self, code: str) -> Room:
        return self._rooms[code]

    def __contains__(self, code: object) -> bool:
        return code in self._rooms

    def __iter__(self) -> Iterator[str]:
        return iter(self._rooms)

    def __len__(self) -> int:
        return len(self._rooms)

    def get(self, code: str, default: Any = None) -> Any:
        return self._rooms.get(code, default)

    def room(self, code: str) -> Room:
        """The room a request names (as typed: any case, spaces around), or `no_such_room`."""
        room = self._rooms.get(code.strip().upper())
        if room is None:
            raise ProtocolError(ErrorCode.NO_SUCH_ROOM, f"there is no room {code!r}")
        return room

    def by_game_id(self, game_id: int) -> Room | None:
        """The room playing the stored game `game_id` here, if any."""
        return next((r for r in self._rooms.values() if r.core.game_id == game_id), None)

    def by_address(self, counts: Callable[[Room], bool]) -> RoomsByAddress:
        """A count per address of the rooms added to it that are still here and `counts` holds."""
        return RoomsByAddress(self, counts)

    # Subscriptions: told of every room opened afresh here (not resumed: a new game, with
    # nothing stored of it yet), and of every game that starts or ends in a room of this table.

    def on_opened(self, subscriber: Callable[[Room], None]) -> None:
        self._opened.append(subscriber)

    def on_started(self, subscriber: Callable[[Room], None]) -> None:
        self._started.append(subscriber)

    def on_finished(self, subscriber: Callable[[Room], None]) -> None:
        self._finished.append(subscriber)

    # Entering.

    async def open(self, terms: RoomTerms, owner: Session | None) -> Room:
        """A new room, stored, in the directory and running (for `create_room`, challenges,
        seeks, ladders, tournaments and rematches); `owner` (its creator, if a person) has it
        counted for its address."""
        code = self._free_code(terms.public)
        room = Room(self.ports, RoomCore(terms, *new_seed()), owner, code, public=terms.public, rated=terms.rated)
        core = room.core
        game_id = await self.ports.store.create_game(
            terms.game.name,
            terms.options,
            core.seed,
            core.seed_hash,
            terms.seats,
            room.code,
            terms.public,
            clock=terms.clock.to_data() if terms.clock else None,
            endings=core.endings.to_data(),
            rated=terms.rated,
        )
        core.stored_as(game_id)
        await self.directory.entered(room)  # with several nodes: may give the room another code (`recode`)
        self._rooms[room.code] = room
        if owner is not None:
            self.waiting_by_address.add(owner.address, room)
            if terms.public:
                self.public_by_address.add(owner.address, room)
        room.open()
        for subscriber in self._opened:
            subscriber(room)
        self.lobby.changed(room)
        return room

    def recode(self, room: Room) -> None:
        """Give `room`, not yet in the table, a new code (another node's live room has its own),
        free here too."""
        assert self._rooms.get(room.code) is not room, "a room in the table keeps its code"
        room.code = self._free_code(room.public)

    def _free_code(self, public: bool) -> str:
        code = new_room_code(code_length(public))
        while code in self._rooms:
            code = new_room_code(code_length(public))
        return code

    async def resume(self, games: list[StoredGame]) -> list[Room]:
        """Rebuild `games` (in play when this server stopped, or a dead node's) from their logs;
        players return to their seats."""
        rooms = []
        for stored in games:
            room = None
            try:
                core: RoomCore[Session] = RoomCore.from_stored(
                    self.registry.get(stored.game), stored, self.abandon_after
                )
                room = Room(self.ports, core, None, stored.room_code, public=stored.public, rated=stored.rated)
                self._rooms[room.code] = room
                room.open()
                await room.read_ratings()
                self.lobby.changed(room)
                await room.call(room.finish_resumed)
            except Exception:
                # An unknown game, a log its rules refuse, or its due result or its bot's move
                # refused by the database: the game stays in the database as it is, for the next
                # start; one such game must not keep the others (and the server) from playing.
                log.exception("could not resume game %s (%s); leaving it as it is", stored.id, stored.game)
                if room is not None:
                    if self._rooms.get(room.code) is room:
                        del self._rooms[room.code]
                    await room.close()
                continue
            log.info("resumed game %s in room %s at move %d", stored.id, room.code, room.core.seq)
            rooms.append(room)
        return rooms

    async def rematch(self, old: Room) -> dict[str, Any]:
        """Open the rematch of `old` (a command of `old`'s, so it opens once); its summary."""
        return await open_rematch(self.open, old)

    # Leaving.

    async def drop(self, room: Room) -> None:
        """`room` leaves memory: closed (its audience forgets it, the lobby drops it) and out of
        the directory."""
        if self._rooms.get(room.code) is room:
            del self._rooms[room.code]
        await room.close()
        self.directory.left_memory(room)

    def lose(self, room: Room, notice: dict[str, Any]) -> None:
        """Another node has taken `room`'s game: it leaves this node at once, and everyone in it
        is told `notice` (where to find it)."""
        if self._rooms.get(room.code) is room:
            del self._rooms[room.code]
        for session in room.audience():
            session.rooms.discard(room)
            session.send(notice)
        task = asyncio.get_running_loop().create_task(room.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    # The reaper.

    def start(self) -> None:
        self._reaper = asyncio.get_running_loop().create_task(self._reap())

    async def stop(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
        for room in list(self._rooms.values()):
            await room.close()

    async def _reap(self) -> None:
        """Finished rooms leave memory after a while; rooms that never start are closed (their
        games stored as aborted), so abandoned rooms do not pile up."""
        loop = asyncio.get_running_loop()
        waiting_ttl = self.limits.waiting_room_ttl
        while True:
            await asyncio.sleep(min(30.0, max(waiting_ttl / 2, 0.05)) if waiting_ttl else 30.0)
            now = loop.time()
            for room in list(self._rooms.values()):
                if room.finished_at is not None and now - room.finished_at > FINISHED_ROOM_TTL:
                    await self.drop(room)
                elif waiting_ttl and room.core.status == "waiting" and time.time() - room.created > waiting_ttl:
                    with contextlib.suppress(Exception):
                        await room.call(room.close_unstarted)
                    await self.drop(room)
