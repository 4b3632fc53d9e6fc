"""`tournament_list`, a page at a time: what a listing costs is one page, never every tournament
ever played, and a page is built once and its encoded bytes shared by every request for it until
a tournament is created or changes (or `PAGE_TTL` passes: another node's changes). Pages carry
no options (a tournament's page, `tournament_standings`, has them).

Watchers (`tournament_list` with `watch`) are pushed `lobby_tournaments` when tournaments change,
at most once every `PUSH_INTERVAL`, and list again (the page is built once for all of them). On a
node of several with a broker, a change is also handed to `share`, and the other nodes' changes
come in through `changed_elsewhere` (`server/lobby_relay.py`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from partida.protocol import Encoding, ErrorCode, ProtocolError, encode, server_message
from partida.server.pages import page_reply, page_size
from partida.storage.tournaments import TournamentInfo

PAGE_SIZE = 50  # tournaments in a page when the request names no limit
MAX_PAGE_SIZE = 200
PAGE_TTL = 2.0  # seconds a page's bytes answer requests while nothing changed on this node
CACHE_MOST = 256  # encoded pages kept at once
STATUSES = ("registering", "running", "finished")
PUSH_INTERVAL = 1.0  # seconds at least between two pushes to the watchers (an arena pairs often)

if TYPE_CHECKING:
    from partida.server.session import Session
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)

Source = Callable[[str | None, tuple[datetime, int] | None, int], Awaitable[list[TournamentInfo]]]


@dataclass
class Page:
    version: int
    built: float
    tournaments: bytes | str  # the encoded array of summaries
    next: str | None


class TournamentPages:
    """The pages of `tournament_list`, read from `source` (`TournamentStore.page`)."""

    def __init__(self, source: Source) -> None:
        self._source = source
        self._version = 0
        self._pages: dict[tuple[str | None, str | None, int, Encoding], Page] = {}
        self._watchers: set[Session] = set()
        self._push: asyncio.TimerHandle | None = None
        self.share: Callable[[], None] | None = None  # a node with a broker: tell the other nodes

    def changed(self) -> None:
        """A tournament was created, entered, left, started, paired or finished here."""
        self.changed_elsewhere()
        if self.share is not None:
            self.share()

    def changed_elsewhere(self) -> None:
        """A tournament changed (on another node, or here): pages are built again, watchers told."""
        self._version += 1
        self._pages.clear()
        if self._watchers and self._push is None:
            self._push = asyncio.get_running_loop().call_later(PUSH_INTERVAL, self.push)

    def watch(self, session: Session) -> None:
        self._watchers.add(session)

    def unwatch(self, session: Session) -> None:
        self._watchers.discard(session)

    def stop(self) -> None:
        if self._push is not None:
            self._push.cancel()
            self._push = None

    def push(self) -> None:
        """Tell each watcher to list again; one behind on its reading is skipped (it lists
        again at a later push)."""
        self._push = None
        frames: dict[Encoding, bytes | str] = {}
        for session in list(self._watchers):
            if session.closed:
                self._watchers.discard(session)
                continue
            if session.outbox:
                continue
            if session.encoding not in frames:
                frames[session.encoding] = encode(server_message("lobby_tournaments", changed=True), session.encoding)  # type: ignore[assignment]
            session.send_frame(frames[session.encoding])

    def cached(self, status: str | None, cursor: str | None, limit: int, encoding: Encoding) -> bool:
        page = self._pages.get((status, cursor, limit, encoding))
        return page is not None and self._fresh(page)

    def _fresh(self, page: Page) -> bool:
        return page.version == self._version and time.monotonic() - page.built < PAGE_TTL

    async def page(self, status: str | None, cursor: str | None, limit: int, encoding: Encoding) -> Page:
        key = (status, cursor, limit, encoding)
        page = self._pages.get(key)
        if page is not None and self._fresh(page):
            return page
        version = self._version
        found = await self._source(status, parse_cursor(cursor), limit + 1)
        shown = found[:limit]
        after = _cursor(shown[-1]) if len(found) > limit else None
        page = Page(version, time.monotonic(), encode([t.to_data(options=False) for t in shown], encoding), after)  # type: ignore[arg-type]
        if len(self._pages) >= CACHE_MOST:
            self._pages.clear()
        if version == self._version:  # built from what is still true: shared
            self._pages[key] = page
        return page


def reply(request_id: int | str | None, page: Page, encoding: Encoding) -> bytes | str:
    """The `tournaments` reply to one request: its id and cursor around the page's shared bytes."""
    return page_reply("tournaments", request_id, page.next, page.tournaments, encoding)


def check_list_request(status: str | None, cursor: str | None, limit: int | None) -> int:
    """The page size a `tournament_list` asks for, or `bad_field` naming what is wrong."""
    if status is not None and status not in STATUSES:
        raise ProtocolError(ErrorCode.BAD_FIELD, f"tournament_list: status must be one of {', '.join(STATUSES)}")
    parse_cursor(cursor)
    return page_size("tournament_list", limit, PAGE_SIZE, MAX_PAGE_SIZE)


def _cursor(info: TournamentInfo) -> str:
    """Where the page after `info` starts: its start time (microseconds, exact) and id."""
    starts = info.starts_at if info.starts_at.tzinfo is not None else info.starts_at.replace(tzinfo=UTC)
    return f"{(starts - _EPOCH) // _MICRO}.{info.id}"


def parse_cursor(cursor: str | None) -> tuple[datetime, int] | None:
    if cursor is None:
        return None
    micros, dot, last = cursor.partition(".")
    if not dot or len(cursor) > 40 or not cursor.isascii() or not micros.isdigit() or not last.isdigit():
        raise ProtocolError(ErrorCode.BAD_FIELD, "tournament_list: cursor must be a `next` from an earlier reply")
    try:
        return _EPOCH + int(micros) * _MICRO, int(last)
    except OverflowError:
        raise ProtocolError(
            ErrorCode.BAD_FIELD, "tournament_list: cursor must be a `next` from an earlier reply"
        ) from None
