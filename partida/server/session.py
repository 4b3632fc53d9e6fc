"""One connection: who it is, which format it speaks, and its outbound queue.

Rooms never await a client: a message goes to the connection (server/transport.py) at once when
the connection keeps up (less than `WRITE_AHEAD` bytes waiting for the kernel), else into the
session's outbox, drained whenever the transport takes writes again. The outbox is bounded in
bytes, not messages (one `rooms` listing can weigh a megabyte): a client too slow to drain it is
disconnected instead of growing the server or slowing a room.
Messages are encoded when they are queued, so the byte count is exact and a message that cannot
be encoded closes its connection with a logged reason instead of killing the writer silently.
"""

from __future__ import annotations

import collections
import itertools
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from partida.protocol import PROTOCOL_VERSION, Encoding, encode
from partida.protocol.accepts import Accepts
from partida.server.limits import ConnectionLimits

if TYPE_CHECKING:
    from partida.server.transport import Link

log = logging.getLogger(__name__)
T = TypeVar("T")

OUTBOX_BYTES = 4 * 1024 * 1024  # default bound of one connection's queued output
WRITE_AHEAD = 64 * 1024  # bytes the connection may hold unwritten before messages wait in the outbox
CLOSE_GRACE = 5.0  # seconds a closing connection has to take its last messages and the close
SLOW_CLOSE_GRACE = 1.0  # the same, after a close for a policy breach (1008)
_ids = itertools.count(1)


def as_version_1(message: dict[str, Any]) -> dict[str, Any]:
    """Protocol version 1 put a room's summary under `room` (a ladder's under `ladder`) where
    version 2 sends the code (the name) there and the summary as `summary`."""
    key = "ladder" if message["type"] == "ladder_joined" else "room"
    return {k: v for k, v in message.items() if k != "summary"} | {key: message["summary"]}


def send_all(sessions: Iterable[Session], message: dict[str, Any]) -> None:
    """`message` to each of `sessions`, encoded once per format and protocol version rather
    than once per connection (a room's news to its players and spectators)."""
    frames: dict[tuple[Encoding, int], bytes | str | None] = {}
    for session in sessions:
        if session.closed:
            continue
        key = (session.encoding, 1 if session.version == 1 and "summary" in message else 2)
        if key not in frames:
            frames[key] = session._encode(message)
        frame = frames[key]
        if frame is not None:
            session.send_frame(frame)
        else:
            session.close_soon(1011, "the server could not encode a message")


class InRoom(Protocol):
    """What a room offers the connections in it (a room of this node, `server/rooms/driver.py`,
    or another node's watched through its events, `server/relay.py`): a connection that goes
    leaves each, one command at a time. Declared here so a connection knows its rooms without
    depending on them."""

    code: str
    spectators: set[Session]

    async def call_here(self, command: Callable[[], Awaitable[T]]) -> T: ...

    async def disconnect(self, session: Session) -> None: ...


@dataclass
class Identity:
    """Who a session is: a guest, a user account or a bot account (kind), and for bots the agent
    it runs."""

    name: str
    kind: str = "guest"  # guest | user | bot
    account_id: int | None = None
    agent: str | None = None
    games: list[str] | None = None
    accepts: Accepts | None = None  # a bot's declaration (protocol/accepts.py); None: any game

    def to_data(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "agent": self.agent}


@dataclass(eq=False)
class Session:
    websocket: Link | None  # None for sessions the server makes itself
    id: int = field(default_factory=lambda: next(_ids))
    encoding: Encoding = Encoding.MSGPACK
    identity: Identity | None = None
    rooms: set[InRoom] = field(default_factory=set)  # the rooms it sits or watches in
    address: str = ""
    outbox_limit: int = OUTBOX_BYTES
    limits: ConnectionLimits | None = None  # None for sessions the server makes itself
    outbox: collections.deque[bytes | str] | None = None  # made when a message first waits
    outbox_bytes: int = 0
    closed: bool = False
    close_reason: tuple[int, str] = (1000, "")
    version: int = PROTOCOL_VERSION  # the protocol version its hello asked for

    @property
    def greeted(self) -> bool:
        return self.identity is not None

    @property
    def name(self) -> str:
        return self.identity.name if self.identity else f"connection-{self.id}"

    def send(self, message: dict[str, Any]) -> None:
        """Queue a message; never blocks. A full outbox means a stuck client: drop it."""
        if self.closed:
            return
        frame = self._encode(message)
        if frame is not None:
            self.send_frame(frame)

    def _encode(self, message: dict[str, Any]) -> bytes | str | None:
        """The message in this connection's format and protocol version; None (and the
        connection closing) if it cannot be encoded."""
        if self.version == 1 and "summary" in message:
            message = as_version_1(message)
        try:
            return encode(message, self.encoding)
        except (TypeError, ValueError, OverflowError) as exc:  # UnicodeEncodeError is a ValueError
            log.error(
                "%s: a %r message cannot be encoded (%s); closing the connection", self.name, message.get("type"), exc
            )
            self.close_soon(1011, "the server could not encode a message")
            return None

    def send_frame(self, frame: bytes | str) -> None:
        """Queue an encoded message (see `send`).

        It goes to the connection at once when nothing waits before it and the connection keeps
        up: the frames sent in one turn of the event loop (an update and the reply to the move
        that caused it) are written together at the end of that turn. Else it waits in the
        outbox, in order, under the outbox's bound."""
        if self.closed:
            return
        size = len(frame)
        if self.outbox and self.outbox_bytes + size > self.outbox_limit:
            log.warning("%s: %d bytes queued unread, closing the connection", self.name, self.outbox_bytes)
            self.close_soon(1008, "too slow: outbound queue full")
            return
        link = self.websocket
        if link is None:
            return
        if not self.outbox and link.send_within(frame, WRITE_AHEAD):
            return
        if self.outbox is None:
            self.outbox = collections.deque()
        self.outbox.append(frame)
        self.outbox_bytes += size
        link.want_writable()

    def drain(self) -> None:
        """Write queued messages while the transport takes them; then the close, if one is due
        (nothing may follow a close frame, and it follows everything queued before it)."""
        link = self.websocket
        if link is None:
            return
        outbox = self.outbox
        while outbox and not link.paused:
            frame = outbox.popleft()
            self.outbox_bytes -= len(frame)
            if link.open:
                link.send_now(frame)
        if not outbox:
            self.outbox = None
            if self.closed:
                link.close(*self.close_reason)

    def close_soon(self, code: int = 1000, reason: str = "") -> None:
        """Close after the messages already queued have been sent (all but the first are dropped
        when the connection is closed for being too slow); a client that has not taken them and
        the close within a few seconds (one after a 1008) is cut off."""
        if self.closed:
            return
        self.closed = True
        self.close_reason = (code, reason)
        if code == 1008 and reason.startswith("too slow"):
            self.outbox = None
            self.outbox_bytes = 0
        link = self.websocket
        if link is not None:
            link.abort_after(SLOW_CLOSE_GRACE if code == 1008 else CLOSE_GRACE)
            self.drain()
