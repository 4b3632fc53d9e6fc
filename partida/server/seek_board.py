"""The open seeks of this server, and the pushes to those who watch them.

A seek lives while its poster's connection does, until it is paired, taken or cancelled. Each
owner (an account across its connections; a guest, its connection) has at most `MAX_SEEKS` open
at once. Watchers (`list_seeks` with `watch`) are sent what changed, batched over
`PUSH_INTERVAL`: a seek posted and gone within one interval is never pushed at all.

The pairing rules are pure (`partida.competition.seeks`); `services/seeks.py` answers the
requests. The bookkeeping here is plain data and one timer.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from partida.competition.ratings import clock_class
from partida.competition.seeks import Seek
from partida.protocol import Encoding, ErrorCode, ProtocolError, encode, server_message

if TYPE_CHECKING:
    from partida.room.terms import RoomTerms
    from partida.server.session import Session

MAX_SEEKS = 3  # open seeks of one owner at a time
PUSH_INTERVAL = 0.25  # seconds between two pushes to the watchers


@dataclass(eq=False)
class OpenSeek:
    """A posted seek: the pure one (what pairing reads), its poster's connection, and the
    checked terms its room will be opened with."""

    seek: Seek
    session: Session
    terms: RoomTerms

    def to_data(self) -> dict[str, Any]:
        seek = self.seek
        identity = self.session.identity
        assert identity is not None
        return {
            "id": seek.id,
            "by": {"name": identity.name, "kind": identity.kind},
            "rating": seek.party.rating,
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


class SeekBoard:
    def __init__(self) -> None:
        self.open: dict[int, OpenSeek] = {}
        self._ids = itertools.count(1)
        self._watchers: dict[Session, str | None] = {}  # session -> the game it watches (None: any)
        self._added: dict[int, OpenSeek] = {}  # since the last push
        self._removed: dict[int, str] = {}  # id -> game, since the last push
        self._push: asyncio.TimerHandle | None = None

    def next_id(self) -> int:
        return next(self._ids)

    def waiting(self) -> list[Seek]:
        return [s.seek for s in self.open.values()]

    def check_room_for(self, owner: Hashable) -> None:
        mine = sum(1 for s in self.open.values() if s.seek.party.owner == owner)
        if mine >= MAX_SEEKS:
            raise ProtocolError(
                ErrorCode.TOO_MANY_SEEKS, f"you have {mine} open seeks, the most at once: cancel one first"
            )

    def add(self, seek: OpenSeek) -> None:
        self.open[seek.seek.id] = seek
        self._added[seek.seek.id] = seek
        self._changed()

    def remove(self, seek_id: int) -> OpenSeek | None:
        seek = self.open.pop(seek_id, None)
        if seek is not None:
            if self._added.pop(seek_id, None) is None:
                self._removed[seek_id] = seek.seek.game
            self._changed()
        return seek

    def drop_from(self, session: Session) -> None:
        """Its poster left: its seeks go."""
        for seek_id in [i for i, s in self.open.items() if s.session is session]:
            self.remove(seek_id)

    def listing(self, game: str | None) -> list[dict[str, Any]]:
        """The open seeks (of `game`), oldest first."""
        seeks = sorted(self.open.values(), key=lambda s: (s.seek.posted, s.seek.id))
        return [s.to_data() for s in seeks if game is None or s.seek.game == game]

    # Watching.

    def watch(self, session: Session, game: str | None) -> None:
        self._watchers[session] = game

    def unwatch(self, session: Session) -> None:
        self._watchers.pop(session, None)

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
        since the last push; one frame per game and format, shared by its watchers."""
        self._push = None
        added, self._added = self._added, {}
        removed, self._removed = self._removed, {}
        if not added and not removed:
            return
        frames: dict[tuple[str | None, Encoding], bytes | str | None] = {}
        for session, game in list(self._watchers.items()):
            if session.closed:
                self.unwatch(session)
                continue
            key = (game, session.encoding)
            if key not in frames:
                news = [s.to_data() for s in added.values() if game is None or s.seek.game == game]
                gone = [i for i, g in removed.items() if game is None or g == game]
                message = server_message("lobby_seeks", added=news, removed=gone)
                frames[key] = encode(message, session.encoding) if news or gone else None
            frame = frames[key]
            if frame is not None:
                session.send_frame(frame)


def _class_name(seek: Seek) -> str | None:
    kind = clock_class(seek.clock)
    return None if kind is None else str(kind)
