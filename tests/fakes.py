"""Fake ports for unit tests: small stand-ins for what a module of the server is handed (a
connection's transport, a clock, an event loop's timers), so that its rules can be checked with
plain values and no running server. Each fake keeps what it was given for the test to read; none
imitates the module under test."""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Awaitable, Callable
from typing import Any

from partida.protocol import Encoding, decode
from partida.server.limits import ConnectionLimits, Limits, TokenBucket
from partida.server.session import Identity, Session


class FakeLink:
    """A connection's transport (`server/transport.py`'s `Link`) that takes every frame at once
    and keeps it, or, while `stuck`, takes none (its client reads nothing: frames wait in the
    session's outbox)."""

    def __init__(self) -> None:
        self.frames: list[bytes | str] = []
        self.stuck = False
        self.paused = False
        self.open = True
        self.closed_with: tuple[int, str] | None = None
        self.paused_reading = False  # the client's frames are left unread (in TCP)

    def send_within(self, frame: bytes | str, ahead: int) -> bool:
        if self.stuck:
            return False
        self.frames.append(frame)
        return True

    def send_now(self, frame: bytes | str) -> None:
        self.frames.append(frame)

    def want_writable(self) -> None:
        pass

    def close(self, code: int = 1000, reason: str = "") -> None:
        self.closed_with = (code, reason)
        self.open = False

    def abort_after(self, seconds: float) -> None:
        pass

    def pause_reading(self) -> None:
        self.paused_reading = True

    def resume_reading(self) -> None:
        self.paused_reading = False


def session(
    name: str | None = "ann",
    kind: str = "guest",
    account_id: int | None = None,
    *,
    address: str = "192.0.2.1",
    encoding: Encoding = Encoding.JSON,
    limited: bool = False,
    agent: str | None = None,
) -> Session:
    """A real `Session` on a `FakeLink` (read what it was sent with `sent`); `name` None: not
    greeted yet. `limited`: it carries a connection's buckets, as every client connection does."""
    identity = None if name is None else Identity(name, kind, account_id, agent)
    limits = None
    if limited:
        lim = Limits()
        limits = ConnectionLimits(
            address,
            TokenBucket(lim.requests_per_second, lim.request_burst),
            TokenBucket(lim.guesses_per_second, lim.guess_burst),
        )
    return Session(FakeLink(), encoding=encoding, identity=identity, address=address, limits=limits)  # type: ignore[arg-type]


def sent(session: Session) -> list[dict[str, Any]]:
    """Every message `session`'s client was sent so far, decoded, oldest first."""
    link = session.websocket
    assert isinstance(link, FakeLink)
    return [decode(frame) for frame in link.frames]


def sent_types(session: Session) -> list[str]:
    return [message["type"] for message in sent(session)]


class FakeClock:
    """A monotonic clock that moves only when the test says so."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class _Handle:
    def __init__(self, when: float, callback: Callable[..., object], args: tuple[Any, ...]) -> None:
        self.when = when
        self.callback = callback
        self.args = args
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class ManualLoop:
    """An event loop's timers (`time`, `call_later`) on a clock the test advances: `advance`
    runs, in order, every callback that falls due, as the loop would after that much time."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now
        self._due: list[tuple[float, int, _Handle]] = []
        self._order = itertools.count()

    def time(self) -> float:
        return self.now

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any) -> _Handle:
        handle = _Handle(self.now + delay, callback, args)
        heapq.heappush(self._due, (handle.when, next(self._order), handle))
        return handle

    def pending(self) -> int:
        """Callbacks scheduled and not cancelled."""
        return sum(1 for _, _, handle in self._due if not handle.cancelled)

    def advance(self, seconds: float) -> None:
        until = self.now + seconds
        while self._due and self._due[0][0] <= until:
            when, _, handle = heapq.heappop(self._due)
            self.now = max(self.now, when)
            if not handle.cancelled:
                handle.callback(*handle.args)
        self.now = until


class RoomsTable(dict[str, Any]):
    """This node's rooms as a director uses them (`partida.server.rooms.table.Rooms`): its tables
    opened there by the test's own opener, found by code, and the grace of an absent seat a room
    gets when its opener names none."""

    abandon_after = 60.0

    def __init__(self, open_room: Callable[[Any, Any], Awaitable[Any]]) -> None:
        super().__init__()
        self._open = open_room

    async def open(self, terms: Any, owner: Any) -> Any:
        return await self._open(terms, owner)


class Connection(Session):
    """A connection whose messages are kept to be read in order, as its client would read them
    (`next`); `name` given: logged in as that account."""

    def __init__(self, name: str | None = None, kind: str = "user", account_id: int | None = None) -> None:
        super().__init__(None, identity=Identity(name, kind, account_id) if name is not None else None)
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def send(self, message: dict[str, Any]) -> None:
        self.inbox.put_nowait(message)

    async def next(self) -> dict[str, Any]:
        async with asyncio.timeout(10):
            return await self.inbox.get()
