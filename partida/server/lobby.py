"""The lobby: public rooms, listed a page at a time and pushed to those who watch it.

A listing costs the server what one page costs, never what the whole lobby costs: the public
rooms of this node are kept in order of creation, one index per filter (game, status, both,
neither), so a page is a slice found by bisection. A page's rooms array is encoded once and the
same bytes answer every request for that page until a room enters or leaves its filter, or a
second has passed (a seat taken changes a summary without moving any room). Connections that
watch the lobby are sent what changed, batched, instead of polling whole lists.

Other nodes' public rooms (several nodes on one database) follow this node's, paged by the
database itself (`remote`). With a broker, a node also hands what changed in its lobby, at each
push, to `share` (published on `partida/lobby/rooms`), and pushes what the other nodes shared to
its own watchers (`push_elsewhere`): a watcher on any node sees a room opened on any other within
two push intervals and the broker's hop.
"""

from __future__ import annotations

import asyncio
import bisect
import itertools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from partida.protocol import Encoding, ErrorCode, ProtocolError, encode, server_message
from partida.server.pages import page_reply, page_size

if TYPE_CHECKING:
    from partida.server.rooms.driver import Room
    from partida.server.session import Session

PAGE_SIZE = 50  # rooms in a page when the request names no limit (protocol versions 1 and 2 alike)
MAX_PAGE_SIZE = 200
PAGE_TTL = 1.0  # seconds a page's bytes answer requests while no room entered or left its filter
PUSH_INTERVAL = 0.5  # seconds between two pushes to the lobby's watchers
PUSH_MOST = 50  # changes in one push; more, and watchers are told to list again (`resync`)
LISTED = ("waiting", "playing")
CACHE_MOST = 1024  # encoded pages kept at once

Filter = tuple[str | None, str | None]  # (game, status); None: any
Remote = Callable[[str | None, str | None, int, int], Awaitable[list[dict[str, Any]]]]


@dataclass
class _Index:
    """The rooms of one filter, by creation order."""

    seqs: list[int] = field(default_factory=list)
    rooms: dict[int, Room] = field(default_factory=dict)
    version: int = 0

    def add(self, seq: int, room: Room) -> None:
        if seq not in self.rooms:
            bisect.insort(self.seqs, seq)
            self.rooms[seq] = room
            self.version += 1

    def remove(self, seq: int) -> None:
        if self.rooms.pop(seq, None) is not None:
            del self.seqs[bisect.bisect_left(self.seqs, seq)]
            self.version += 1

    def after(self, seq: int, limit: int) -> list[tuple[int, Room]]:
        start = bisect.bisect_right(self.seqs, seq)
        return [(s, self.rooms[s]) for s in self.seqs[start : start + limit]]


@dataclass
class _Page:
    version: int
    built: float
    rooms: bytes | str  # the encoded rooms array
    next: str | None


class Lobby:
    """This node's public rooms for `list_rooms`, and the pushes to its watchers."""

    def __init__(self, remote: Remote | None = None) -> None:
        self._remote = remote
        # A node of several with a broker: what changed here, for the other nodes' watchers.
        self.share: Callable[[list[dict[str, Any]], list[str]], None] | None = None
        self._seqs = itertools.count(1)
        self._listed: dict[str, tuple[int, Room, Filter]] = {}  # code -> seq, room, (game, status)
        self._indexes: dict[Filter, _Index] = {}
        self._pages: dict[tuple[Filter, str | None, int, Encoding], _Page] = {}
        self._watchers: dict[Session, Filter] = {}
        self._stale: set[Session] = set()  # watchers that missed a push: told to list again
        self._changed: set[str] = set()  # codes changed since the last push
        self._pusher: asyncio.Task[None] | None = None

    # What the rooms tell it.

    def changed(self, room: Room) -> None:
        """A public room was opened, changed status or seats, or went: keep the indexes true."""
        if not room.public:
            return
        entry = self._listed.get(room.code)
        listed = room.core.status in LISTED
        if entry is not None and entry[1] is not room:
            return  # another room under a code this node no longer holds
        if entry is not None:
            seq, _, (game, status) = entry
            if listed and status == room.core.status:
                self._touch(room.code)
                return
            for key in _keys(game, status):
                self._index(key).remove(seq)
            del self._listed[room.code]
        if listed:
            seq = entry[0] if entry is not None else next(self._seqs)
            for key in _keys(room.core.game.name, room.core.status):
                self._index(key).add(seq, room)
            self._listed[room.code] = (seq, room, (room.core.game.name, room.core.status))
        self._touch(room.code)

    def _index(self, key: Filter) -> _Index:
        index = self._indexes.get(key)
        if index is None:
            index = self._indexes[key] = _Index()
        return index

    def removed(self, room: Room) -> None:
        """A room this node no longer holds (handed to another node, or closed)."""
        entry = self._listed.pop(room.code, None)
        if entry is None or entry[1] is not room:
            if entry is not None:
                self._listed[room.code] = entry
            return
        seq, _, (game, status) = entry
        for key in _keys(game, status):
            self._index(key).remove(seq)
        self._touch(room.code)

    def _touch(self, code: str) -> None:
        if self._watchers:
            self._changed.add(code)
        elif self.share is not None:
            self._changed.add(code)
            if self._pusher is None or self._pusher.done():
                self._pusher = asyncio.get_running_loop().create_task(self._push_changes())

    # Listing.

    def cached(self, game: str | None, status: str | None, cursor: str | None, limit: int, encoding: Encoding) -> bool:
        """Whether that page's bytes are ready (a request for it costs the server next to nothing)."""
        page = self._pages.get(((game, status), cursor, limit, encoding))
        return page is not None and self._fresh(page, (game, status))

    def _fresh(self, page: _Page, key: Filter) -> bool:
        return page.version == self._index(key).version and time.monotonic() - page.built < PAGE_TTL

    async def page(
        self, game: str | None, status: str | None, cursor: str | None, limit: int, encoding: Encoding
    ) -> _Page:
        """The page of rooms after `cursor` (None: the first), encoded for `encoding`."""
        key: Filter = (game, status)
        page = self._pages.get((key, cursor, limit, encoding))
        if page is not None and self._fresh(page, key):
            return page
        index = self._index(key)
        version = index.version
        where, after = _parse_cursor(cursor)
        summaries: list[dict[str, Any]] = []
        next_cursor = None
        if where == "l":
            rows = index.after(after, limit + 1)
            summaries = [room.summary() for _, room in rows[:limit]]
            if len(rows) > limit:
                next_cursor = f"l{rows[limit - 1][0]}"
            elif self._remote is not None and len(summaries) == limit:
                next_cursor = "r0"  # this node's rooms end with this page; the other nodes' follow
            else:
                where, after = "r", 0
        room_left = limit - len(summaries)
        if where == "r" and self._remote is not None and room_left > 0:
            remote = await self._remote(game, status, after, room_left + 1)
            summaries += remote[:room_left]
            if len(remote) > room_left:
                next_cursor = f"r{remote[room_left - 1]['game_id']}"
        page = _Page(version, time.monotonic(), encode(summaries, encoding), next_cursor)  # type: ignore[arg-type]
        if len(self._pages) >= CACHE_MOST:
            self._pages.clear()
        self._pages[(key, cursor, limit, encoding)] = page
        return page

    # Watching.

    def watch(self, session: Session, game: str | None, status: str | None) -> None:
        self._watchers[session] = (game, status)
        if self._pusher is None or self._pusher.done():
            self._pusher = asyncio.get_running_loop().create_task(self._push_changes())

    def unwatch(self, session: Session) -> None:
        self._watchers.pop(session, None)
        self._stale.discard(session)

    async def stop(self) -> None:
        if self._pusher is not None:
            self._pusher.cancel()
            self._pusher = None

    async def _push_changes(self) -> None:
        while self._watchers or (self.share is not None and self._changed):
            await asyncio.sleep(PUSH_INTERVAL)
            self.push()
        self._changed.clear()

    def push(self) -> None:
        """Send each watcher what changed in its filter since the last push: the summaries of
        rooms added or changed (`rooms`) and the codes of rooms gone from it (`removed`); a
        watcher whose outbox still holds data is not read to and lists again later."""
        changed, self._changed = self._changed, set()
        if changed and self.share is not None:
            self._share(changed)
        frames: dict[tuple[Filter, Encoding], bytes | str] = {}
        for session, key in list(self._watchers.items()):
            if session.closed:
                self.unwatch(session)
                continue
            if session.outbox:
                self._stale.add(session)
                continue
            if session in self._stale:
                self._stale.discard(session)
                session.send(server_message("lobby", resync=True))
                continue
            if not changed:
                continue
            frame_key = (key, session.encoding)
            if frame_key not in frames:
                frames[frame_key] = self._changes_frame(changed, key, session.encoding)
            if frames[frame_key]:
                session.send_frame(frames[frame_key])

    def _share(self, changed: set[str]) -> None:
        assert self.share is not None
        rooms, removed = [], []
        for code in sorted(changed):
            entry = self._listed.get(code)
            if entry is not None:
                rooms.append(entry[1].summary())
            else:
                removed.append(code)
        self.share(rooms[:PUSH_MOST], removed[:PUSH_MOST])

    def push_elsewhere(self, rooms: list[dict[str, Any]], removed: list[str]) -> None:
        """Push another node's lobby changes to this node's watchers, each its filter's: a room
        not (or no longer) in a watcher's filter is `removed` for it."""
        frames: dict[tuple[Filter, Encoding], bytes | str] = {}
        for session, key in list(self._watchers.items()):
            if session.closed or session.outbox:
                self._stale.add(session)  # behind on its reading: told to list again at the next push
                continue
            frame_key = (key, session.encoding)
            if frame_key not in frames:
                game, status = key
                mine = [r for r in rooms if _matches((r.get("game"), r.get("status")), game, status)]  # type: ignore[arg-type]
                gone = removed + [str(r.get("code")) for r in rooms if r not in mine]
                frames[frame_key] = encode(server_message("lobby", rooms=mine, removed=gone), session.encoding)  # type: ignore[assignment]
            session.send_frame(frames[frame_key])

    def _changes_frame(self, changed: set[str], key: Filter, encoding: Encoding) -> bytes | str:
        if len(changed) > PUSH_MOST:
            return encode(server_message("lobby", resync=True), encoding)
        game, status = key
        rooms, removed = [], []
        for code in sorted(changed):
            entry = self._listed.get(code)
            if entry is not None and _matches(entry[2], game, status):
                rooms.append(entry[1].summary())
            else:
                removed.append(code)
        return encode(server_message("lobby", rooms=rooms, removed=removed), encoding)


def reply(request_id: int | str | None, page: _Page, encoding: Encoding) -> bytes | str:
    """The `rooms` reply to one request: its id and cursor around the page's shared bytes."""
    return page_reply("rooms", request_id, page.next, page.rooms, encoding)


def check_page_request(game: str | None, status: str | None, cursor: str | None, limit: int | None) -> int:
    """The page size a `list_rooms` asks for, or `bad_field` naming what is wrong."""
    if status is not None and status not in LISTED:
        raise ProtocolError(ErrorCode.BAD_FIELD, f"list_rooms: status must be one of {', '.join(LISTED)}")
    if cursor is not None:
        _parse_cursor(cursor)
    return page_size("list_rooms", limit, PAGE_SIZE, MAX_PAGE_SIZE)


def _parse_cursor(cursor: str | None) -> tuple[str, int]:
    if cursor is None:
        return "l", 0
    if len(cursor) < 2 or cursor[0] not in "lr" or not cursor[1:].isdigit() or len(cursor) > 20:
        raise ProtocolError(ErrorCode.BAD_FIELD, "list_rooms: cursor must be a `next` from an earlier reply")
    return cursor[0], int(cursor[1:])


def _keys(game: str, status: str) -> tuple[Filter, ...]:
    return ((None, None), (game, None), (None, status), (game, status))


def _matches(listed: Filter, game: str | None, status: str | None) -> bool:
    return (game is None or listed[0] == game) and (status is None or listed[1] == status)
