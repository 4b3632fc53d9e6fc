"""One connection: who it is, which format it speaks, and its outbound queue.

Rooms never await a client: a message goes straight to the socket when the socket keeps up,
else into the session's outbox, which a writer task drains as the client reads. The outbox is
bounded in bytes, not messages (one `rooms` listing can weigh a megabyte): a client too slow to
drain it is disconnected instead of growing the server or slowing a room.
Messages are encoded when they are queued, so the byte count is exact and a message that cannot
be encoded closes its connection with a logged reason instead of killing the writer silently.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import logging
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from partida.protocol import PROTOCOL_VERSION, Encoding, encode
from partida.server.limits import ConnectionLimits

if TYPE_CHECKING:
    from partida.server.rooms import Room

log = logging.getLogger(__name__)

OUTBOX_BYTES = 4 * 1024 * 1024  # default bound of one connection's queued output
WRITE_AHEAD = 64 * 1024  # bytes the socket's buffer may hold before messages wait in the outbox
_ids = itertools.count(1)
OPCODE_TEXT, OPCODE_BINARY = 0x1, 0x2


def _header(opcode: int, size: int) -> bytes:
    """The header of a whole, unmasked frame (RFC 6455 section 5.2): FIN and the opcode, then
    the payload's length in 7, 7+16 or 7+64 bits."""
    if size < 126:
        return bytes((0x80 | opcode, size))
    if size < 1 << 16:
        return struct.pack("!BBH", 0x80 | opcode, 126, size)
    return struct.pack("!BBQ", 0x80 | opcode, 127, size)


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


@dataclass
class Identity:
    """Who a session is: a guest, a user account or a bot account (kind), and for bots the agent
    it runs."""

    name: str
    kind: str = "guest"  # guest | user | bot
    account_id: int | None = None
    agent: str | None = None
    games: list[str] | None = None

    def to_data(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "agent": self.agent}


@dataclass(eq=False)
class Session:
    websocket: ServerConnection | None
    id: int = field(default_factory=lambda: next(_ids))
    encoding: Encoding = Encoding.MSGPACK
    identity: Identity | None = None
    rooms: set[Room] = field(default_factory=set)
    address: str = ""
    outbox_limit: int = OUTBOX_BYTES
    limits: ConnectionLimits | None = None  # None for sessions the server makes itself
    outbox: collections.deque[bytes | str] = field(default_factory=collections.deque)
    outbox_bytes: int = 0
    closed: bool = False
    close_reason: tuple[int, str] = (1000, "")
    _ready: asyncio.Event = field(default_factory=asyncio.Event)
    _flush_due: bool = False
    _frames: list[bytes] = field(default_factory=list)  # headers and payloads to write this turn
    _unsent: int = 0  # their payloads' bytes
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
        """Queue an encoded message (see `send`)."""
        if self.closed:
            return
        size = len(frame)
        if self.outbox and self.outbox_bytes + size > self.outbox_limit:
            log.warning("%s: %d bytes queued unread, closing the connection", self.name, self.outbox_bytes)
            self.close_soon(1008, "too slow: outbound queue full")
            return
        if not self.outbox and self._write_now(frame, size):
            return
        self.outbox.append(frame)
        self.outbox_bytes += size
        self._ready.set()

    def _write_now(self, frame: bytes | str, size: int) -> bool:
        """Hand the frame to the socket at once when nothing is queued before it and the socket
        keeps up (its buffer holds less than `WRITE_AHEAD`): no writer task has to wake for it.
        The frames handed over in one turn of the event loop (an update and the reply to the move
        that caused it) reach the socket together, in one write, at the end of that turn.
        False: the writer task sends it, in order, with the outbox's bound on a slow reader.

        The frame's header is written here rather than by websockets: the server's frames are
        never masked, fragmented or compressed (`compression=None`), so a header is two to ten
        bytes, cheaper to write than websockets' general path is to run (a frame object, its
        checks, its serializer, its buffer: a few percent of the server's CPU per move)."""
        websocket = self.websocket
        if websocket is None or websocket.transport.get_write_buffer_size() + self._unsent + size > WRITE_AHEAD:
            return False
        if websocket.protocol.state is not State.OPEN:
            return False  # closing: the writer's `send` sorts it out
        if isinstance(frame, str):
            data = frame.encode()
            self._frames += (_header(OPCODE_TEXT, len(data)), data)
        else:
            self._frames += (_header(OPCODE_BINARY, size), frame)
        self._unsent += size
        if not self._flush_due:
            self._flush_due = True
            asyncio.get_running_loop().call_soon(self._flush)
        return True

    def _flush(self) -> None:
        """Write the frames handed over this turn, in one write. On a connection that started to
        close meanwhile they are dropped: nothing may follow a close frame."""
        self._flush_due = False
        frames, self._frames, self._unsent = self._frames, [], 0
        websocket = self.websocket
        if not frames or websocket is None or websocket.transport.is_closing():
            return
        if websocket.protocol.state is State.OPEN:
            websocket.transport.write(b"".join(frames))

    def close_soon(self, code: int = 1000, reason: str = "") -> None:
        """Close after the messages already queued have been sent (all but the first are dropped
        when the connection is closed for being too slow)."""
        if self.closed:
            return
        self.closed = True
        self.close_reason = (code, reason)
        if code == 1008 and reason.startswith("too slow"):
            self.outbox.clear()
            self.outbox_bytes = 0
        self._ready.set()

    async def writer(self) -> None:
        assert self.websocket is not None
        try:
            while True:
                while not self.outbox:
                    if self.closed:
                        code, reason = self.close_reason
                        self._flush()  # what was handed over directly goes before the close
                        await self.websocket.close(code, reason)
                        return
                    self._ready.clear()
                    await self._ready.wait()
                frame = self.outbox.popleft()
                self.outbox_bytes -= len(frame)
                self._flush()  # frames handed over directly went before this one
                await self.websocket.send(frame)
        except ConnectionClosed:
            pass
        except Exception as exc:  # never a silent writer: the connection goes, with the reason logged
            log.error("%s: the writer failed (%s: %s); closing the connection", self.name, type(exc).__name__, exc)
            self.closed = True
            self.websocket.transport.abort()
