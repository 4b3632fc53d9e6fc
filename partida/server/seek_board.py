"""The open seeks of this server, listed a page at a time, and the pushes to those who watch them.

A seek lives while its poster's connection does, until it is paired, taken or cancelled. Each
owner (an account across its connections; a guest, its connection) has at most `MAX_SEEKS` open
at once, and each address at most the server's `seeks_per_address` (guests from one address
open as many connections as they like).

What a seek costs the server follows what is happening, never what exists: a new seek is matched
against the seeks of its own terms only (`SeekBook`); a seek's listing entry is built once, when
it is posted; a connection's seeks are found without reading the others (its poster leaving, its
owner's count). `list_seeks` answers a page, oldest first, found by bisection in one index per
filter (every game, or one); a page's array is encoded once and the same bytes answer every
request for it until a seek enters or leaves that filter. Watchers (`list_seeks` with `watch`)
are sent what changed, batched over `PUSH_INTERVAL`: a seek posted and gone within one interval
is never pushed at all, and more changes than a push carries, or pushes a watcher did not read,
become one `resync`.

The pairing rules are pure (`partida.competition.seeks`); `services/seeks.py` answers the
requests.
"""

from __future__ import annotations

import asyncio
import bisect
import itertools
from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from partida.competition.ratings import clock_class
from partida.competition.seeks import Seek, SeekBook
from partida.protocol import Encoding, ErrorCode, ProtocolError, encode, server_message
from partida.server.pages import page_reply, page_size

if TYPE_CHECKING:
    from partida.room.terms import RoomTerms
    from partida.server.session import Session

MAX_SEEKS = 3  # open seeks of one owner at a time
PUSH_INTERVAL = 0.25  # seconds between two pushes to the watchers
PUSH_MOST = 50  # changes in one push; more, and watchers are told to list again (`resync`)
PAGE_SIZE = 50  # seeks in a page when the request names no limit
MAX_PAGE_SIZE = 200
CACHE_BYTES = 16 * 1024 * 1024  # encoded pages kept at once, all filters and formats together


@dataclass(eq=False)
class OpenSeek:
    """A posted seek: the pure one (what pairing reads), its poster's connection, the checked
    terms its room will be opened with, and its listing entry (built once: it never changes).
    `left`: its poster's connection ended, possibly while the seek was being paired."""

    seek: Seek
    session: Session
    terms: RoomTerms
    data: dict[str, Any] = field(init=False)
    left: bool = False

    def __post_init__(self) -> None:
        seek = self.seek
        identity = self.session.identity
        assert identity is not None
        self.data = {
            "id": seek.id,
            "by": {"name": identity.name, "kind": identity.kind},
            "rating": seek.party.rating,
            "provisional": seek.party.provisional,
            "game": seek.game,
            "options": dict(seek.options),
            "seats": seek.seats,
            "clock": self.terms.clock.to_data() if self.terms.clock else None,
            "class": _class_name(seek),
            "rated": seek.rated,
            "range": list(seek.rating_range) if seek.rating_range is not None else None,
            "allow_bots": seek.allow_bots,
            "posted": seek.posted,
        }

    def to_data(self) -> dict[str, Any]:
        return self.data


@dataclass
class _Index:
    """The open seeks of one filter (None: every game), by id: posting order. `version` is
    stamped from one counter for every index, so an index dropped and made again never repeats
    a version a cached page holds."""

    version: int
    ids: list[int] = field(default_factory=list)

    def after(self, seek_id: int, limit: int) -> list[int]:
        start = bisect.bisect_right(self.ids, seek_id)
        return self.ids[start : start + limit]


@dataclass
class Page:
    version: int
    seeks: bytes | str  # the encoded seeks array
    next: str | None


class SeekBoard:
    def __init__(self) -> None:
        self.open: dict[int, OpenSeek] = {}
        self.book = SeekBook()
        self._ids = itertools.count(1)
        self._versions = itertools.count(1)
        self._indexes: dict[str | None, _Index] = {None: _Index(0)}  # and one per game with open seeks
        self._posted: dict[Session, dict[int, OpenSeek]] = {}  # a poster's seeks, open or being paired
        self._owners: Counter[Hashable] = Counter()  # open seeks per owner
        self._addresses: Counter[str] = Counter()  # open seeks per poster's address
        self._pages: dict[tuple[str | None, str | None, int, Encoding], Page] = {}
        self._page_bytes = 0
        self._watchers: dict[Session, str | None] = {}  # session -> the game it watches (None: any)
        self._stale: set[Session] = set()  # watchers that missed a push: told to list again
        self._added: dict[int, dict[str, Any]] = {}  # listing entries, since the last push
        # Other nodes' open seeks (a deployment of several, `server/shared_seeks.py`): listed and
        # pushed as this node's are, never paired from here without the database's say.
        self.elsewhere: dict[int, dict[str, Any]] = {}
        self._removed: dict[int, str] = {}  # id -> game, since the last push
        self._push: asyncio.TimerHandle | None = None

    def next_id(self) -> int:
        return next(self._ids)

    def check_room_for(self, owner: Hashable, address: str, address_most: int | None) -> None:
        """Refuse a new seek to an owner with `MAX_SEEKS` open, or to an address with
        `address_most` (None: no bound, for a bot account)."""
        mine = self._owners[owner]
        if mine >= MAX_SEEKS:
            raise ProtocolError(
                ErrorCode.TOO_MANY_SEEKS, f"you have {mine} open seeks, the most at once: cancel one first"
            )
        theirs = self._addresses[address]
        if address_most is not None and theirs >= address_most:
            raise ProtocolError(
                ErrorCode.TOO_MANY_SEEKS,
                f"{theirs} seeks posted from your address are open, the most at once: wait for some to be paired",
            )

    # Coming and going.

    def add(self, seek: OpenSeek) -> None:
        """List a new seek (or put back one taken for a pairing that failed, in its old place)."""
        seek_id = seek.seek.id
        if seek_id in self.open or seek.left:
            return
        self.open[seek_id] = seek
        self.book.add(seek.seek)
        self._posted.setdefault(seek.session, {})[seek_id] = seek
        self._owners[seek.seek.party.owner] += 1
        self._addresses[seek.session.address] += 1
        self._index(seek_id, seek.seek.game)
        if self._removed.pop(seek_id, None) is None:
            self._added[seek_id] = seek.data
        self._changed()

    def add_elsewhere(self, data: dict[str, Any]) -> None:
        """List another node's seek (its listing entry, as that node built it)."""
        seek_id = data["id"]
        if seek_id in self.open or seek_id in self.elsewhere:
            return
        self.elsewhere[seek_id] = data
        self._index(seek_id, data["game"])
        if self._removed.pop(seek_id, None) is None:
            self._added[seek_id] = data
        self._changed()

    def remove_elsewhere(self, seek_id: int) -> None:
        data = self.elsewhere.pop(seek_id, None)
        if data is None:
            return
        self._unindex(seek_id, data["game"])
        if self._added.pop(seek_id, None) is None:
            self._removed[seek_id] = data["game"]
        self._changed()

    def _index(self, seek_id: int, game: str) -> None:
        for key in (None, game):
            index = self._indexes.get(key)
            if index is None:
                index = self._indexes[key] = _Index(0)
            bisect.insort(index.ids, seek_id)
            index.version = next(self._versions)

    def _unindex(self, seek_id: int, game: str) -> None:
        for key in (None, game):
            index = self._indexes[key]
            del index.ids[bisect.bisect_left(index.ids, seek_id)]
            index.version = next(self._versions)
            if not index.ids and key is not None:
                del self._indexes[key]  # an index per game with open seeks, not per game ever seen

    def take(self, seek_id: int) -> OpenSeek | None:
        """Unlist a seek for a pairing: its poster leaving meanwhile marks it `left`. Then
        `settle` it (paired) or `add` it back (the pairing failed)."""
        seek = self.open.pop(seek_id, None)
        if seek is None:
            return None
        self.book.remove(seek_id)
        owner = seek.seek.party.owner
        self._owners[owner] -= 1
        if not self._owners[owner]:
            del self._owners[owner]
        address = seek.session.address
        self._addresses[address] -= 1
        if not self._addresses[address]:
            del self._addresses[address]
        self._unindex(seek_id, seek.seek.game)
        if self._added.pop(seek_id, None) is None:
            self._removed[seek_id] = seek.seek.game
        self._changed()
        return seek

    def settle(self, seek: OpenSeek) -> None:
        """A seek is gone for good (paired, cancelled): its poster no longer holds it."""
        mine = self._posted.get(seek.session)
        if mine is not None:
            mine.pop(seek.seek.id, None)
            if not mine:
                del self._posted[seek.session]

    def remove(self, seek_id: int) -> OpenSeek | None:
        seek = self.take(seek_id)
        if seek is not None:
            self.settle(seek)
        return seek

    def drop_from(self, session: Session) -> None:
        """Its poster left: its seeks go, and one being paired is marked so."""
        for seek_id, seek in list(self._posted.pop(session, {}).items()):
            seek.left = True
            self.take(seek_id)

    # Listing.

    def cached(self, game: str | None, cursor: str | None, limit: int, encoding: Encoding) -> bool:
        """Whether that page's bytes are ready (a request for it costs next to nothing to build)."""
        index = self._indexes.get(game)
        if index is None:
            return True  # a game with no open seek: its empty page costs nothing
        page = self._pages.get((game, cursor, limit, encoding))
        return page is not None and page.version == index.version

    def page(self, game: str | None, cursor: str | None, limit: int, encoding: Encoding) -> Page:
        """The page of open seeks (of `game`) after `cursor` (None: the first), oldest first."""
        after = _parse_cursor(cursor)
        index = self._indexes.get(game)
        if index is None:  # a game with no open seek (or none at all): not cached, not kept
            return Page(0, encode([], encoding), None)  # type: ignore[arg-type]
        key = (game, cursor, limit, encoding)
        page = self._pages.get(key)
        if page is not None and page.version == index.version:
            return page
        ids = index.after(after, limit + 1)
        seeks = [self.open[i].data if i in self.open else self.elsewhere[i] for i in ids[:limit]]
        page = Page(index.version, encode(seeks, encoding), str(ids[limit - 1]) if len(ids) > limit else None)  # type: ignore[arg-type]
        if self._page_bytes > CACHE_BYTES:
            self._pages.clear()
            self._page_bytes = 0
        old = self._pages.get(key)
        if old is not None:
            self._page_bytes -= len(old.seeks)
        self._pages[key] = page
        self._page_bytes += len(page.seeks)
        return page

    # Watching.

    def watch(self, session: Session, game: str | None) -> None:
        self._watchers[session] = game

    def unwatch(self, session: Session) -> None:
        self._watchers.pop(session, None)
        self._stale.discard(session)

    def stop(self) -> None:
        if self._push is not None:
            self._push.cancel()
            self._push = None

    def _changed(self) -> None:
        if not self._watchers:
            self._added.clear()
            self._removed.clear()
            return
        if self._push is None:
            self._push = asyncio.get_running_loop().call_later(PUSH_INTERVAL, self.push)

    def push(self) -> None:
        """Send each watcher the seeks of its game posted (`added`) and gone (`removed`: ids)
        since the last push; one frame per game and format, shared by its watchers. A watcher
        whose outbox still holds data is skipped, and told to list again once it has read."""
        self._push = None
        added, self._added = self._added, {}
        removed, self._removed = self._removed, {}
        frames: dict[tuple[str | None, Encoding], bytes | str | None] = {}
        if added or removed:
            told = list(self._watchers.items())
        else:  # nothing new: only the watchers owed a resync are looked at
            told = [(s, self._watchers[s]) for s in list(self._stale) if s in self._watchers]
        for session, game in told:
            if session.closed:
                self.unwatch(session)
                continue
            if session.outbox:
                self._stale.add(session)
                continue
            if session in self._stale:
                self._stale.discard(session)
                session.send(server_message("lobby_seeks", resync=True))
                continue
            key = (game, session.encoding)
            if key not in frames:
                frames[key] = _changes_frame(added, removed, game, session.encoding)
            frame = frames[key]
            if frame is not None:
                session.send_frame(frame)
        if self._stale and self._push is None:
            self._push = asyncio.get_running_loop().call_later(PUSH_INTERVAL, self.push)


def _changes_frame(
    added: dict[int, dict[str, Any]], removed: dict[int, str], game: str | None, encoding: Encoding
) -> bytes | str | None:
    news = [s for s in added.values() if game is None or s["game"] == game]
    gone = [i for i, g in removed.items() if game is None or g == game]
    if not news and not gone:
        return None
    if len(news) + len(gone) > PUSH_MOST:
        return encode(server_message("lobby_seeks", resync=True), encoding)
    return encode(server_message("lobby_seeks", added=news, removed=gone), encoding)


def reply(request_id: int | str | None, page: Page, encoding: Encoding) -> bytes | str:
    """The `seeks` reply to one request: its id and cursor around the page's shared bytes."""
    return page_reply("seeks", request_id, page.next, page.seeks, encoding)


def check_page_request(cursor: str | None, limit: int | None) -> int:
    """The page size a `list_seeks` asks for, or `bad_field` naming what is wrong."""
    _parse_cursor(cursor)
    return page_size("list_seeks", limit, PAGE_SIZE, MAX_PAGE_SIZE)


def _parse_cursor(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not 1 <= len(cursor) <= 19 or not cursor.isascii() or not cursor.isdigit():
        raise ProtocolError(ErrorCode.BAD_FIELD, "list_seeks: cursor must be a `next` from an earlier reply")
    return int(cursor)


def _class_name(seek: Seek) -> str | None:
    kind = clock_class(seek.clock)
    return None if kind is None else str(kind)
