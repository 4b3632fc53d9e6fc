"""A server connection that reads its clients' ordinary frames itself and hands whole messages to
its handler through a queue of its own; websockets still does everything else.

Nearly every frame a client sends is one whole, masked binary (or text) frame, and most TCP reads
hold one such frame and nothing else. For those, websockets' general path is most of what a move
costs on the way in: a generator-based parser over a stream buffer, a frame object and its checks,
an event list, and an assembler of fragments behind a queue and a future. Here such a frame is
unmasked (websockets' own C `apply_mask`) and queued as the message it is, and `recv` takes it
from a deque, awaiting one future only when the queue is empty.

Everything else goes to websockets, byte for byte as it came: control frames (ping, pong, close),
fragments and whatever arrives while a fragmented message is open, unmasked frames, frames with
reserved bits or unknown opcodes, a frame longer than `max_size`, and all input once the
connection is not open (the closing handshake) or while websockets holds part of a frame. It is
handed over one whole frame at a time, so websockets' parser is between frames whenever this
connection reads again; a frame that is incomplete and not one of the ordinary kind is handed
over as it is, and the connection reads through websockets until its parser is between frames
again. The messages websockets assembles (fragmented ones) join the same queue, in order.
With websockets' debug logging on, every frame goes through websockets (which logs each).

Before the handshake is answered, websockets gets the request and nothing after it: its parser
reads on past the request at once, as frames, and a second HTTP request pipelined behind the first
is no frame; failing it, websockets sent EOF, then sent EOF again with the response and logged an
AssertionError as "unexpected internal error". What follows the request waits here until the
response is sent, then is read as frames after a 101 (a client that did not wait for it) and
dropped after any other response (which closes the connection).

What a client sees does not change: the same replies (pongs, close codes and reasons, 1007 for
text that is not UTF-8, 1009 past `max_size` or for too many fragments), the same messages in
the same order. tests/test_receiving.py feeds the same byte streams, cut at every byte, to this
connection and to websockets' own and compares what each handler receives and what each sends.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator
from typing import Any

from websockets.asyncio.messages import MAX_FRAGMENTS
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConcurrencyError, TooManyFragments
from websockets.frames import BINARY, CONT, TEXT, CloseCode, Frame, apply_mask
from websockets.protocol import CONNECTING, OPEN, Protocol
from websockets.streams import StreamReader
from websockets.typing import Data

FIN_TEXT, FIN_BINARY = 0x80 | 0x1, 0x80 | 0x2  # a whole text or binary frame, no reserved bits
MASKED = 0x80
# Where websockets' parser waits between two frames (checked once per switch, not per frame).
_BETWEEN_FRAMES = (Protocol.parse.__code__, StreamReader.at_eof.__code__)
REQUEST_END = b"\r\n\r\n"
HELD_BYTES = 64 * 1024  # input held back before the response past which reading pauses


def _between_frames(protocol: Protocol) -> bool:
    """Whether websockets' parser holds no part of a frame: its buffer is empty and it waits for
    the next frame's first byte (not in the middle of one, nor discarding after a close)."""
    if protocol.state is not OPEN or protocol.reader.buffer:
        return False
    outer, inner = None, protocol.parser
    while inner.gi_yieldfrom is not None:
        outer, inner = inner, inner.gi_yieldfrom
    return outer is not None and (outer.gi_code, inner.gi_code) == _BETWEEN_FRAMES


class Connection(ServerConnection):
    """`websockets.asyncio.server.ServerConnection` with the ordinary frames read here (see the
    module's docstring); pass it to `serve` as `create_connection`. `recv` works as websockets'
    does; `recv_streaming` yields each message whole."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._reading = False  # frames are read here (else by websockets)
        self._partial = bytearray()  # the start of an ordinary frame, while the rest is on its way
        self._limit: int | None = None  # the longest ordinary frame websockets would take
        self._inbox: collections.deque[Data | Exception] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None
        self._fragments: list[bytes | bytearray] = []  # of a fragmented message, from websockets
        self._fragmented_text = False
        self._lost = False
        self._paused = False
        self._answered = False  # the handshake's response is sent
        self._request_tail = b""  # the last bytes of the request fed to websockets, for its end
        self._held: bytearray | None = None  # what came after the request, before the response
        high = self.max_queue_high
        low = self.max_queue_low
        if high is not None and low is None:
            low = high // 4
        if high is None and low is not None:
            high = low * 4
        self._high, self._low = high, low

    # Reading.

    async def handshake(self, *args: Any, **kwargs: Any) -> None:
        try:
            await super().handshake(*args, **kwargs)
        finally:
            self._answered = True
            held, self._held = self._held, None
            if held is not None and len(held) > HELD_BYTES:
                self.transport.resume_reading()
            if held and self.protocol.state is OPEN:
                self.data_received(bytes(held))

    def data_received(self, data: bytes) -> None:
        if not self._reading:
            if not self._answered and self.protocol.state is CONNECTING:
                self._before_response(data)
                return
            if self.debug or not _between_frames(self.protocol):
                super().data_received(data)
                return
            self._reading = True
            sizes = [s for s in (self.protocol.max_message_size, self.protocol.max_fragment_size) if s is not None]
            self._limit = min(sizes) if sizes else None
        elif self.protocol.state is not OPEN:  # closing: websockets takes it all from here
            self._hand_over(self._partial + data if self._partial else data, 0)
            return
        buffer: bytes | bytearray = data
        if self._partial:
            self._partial += data
            buffer = self._partial
        end = len(buffer)
        at = 0
        protocol = self.protocol
        while end - at >= 2:
            head1 = buffer[at]
            head2 = buffer[at + 1]
            length = head2 & 0x7F
            start = at + 2
            if length == 126:
                start += 2
            elif length == 127:
                start += 8
            if end >= start and start - at > 2:
                length = int.from_bytes(buffer[at + 2 : start], "big")
            if head2 & MASKED:
                start += 4
            ordinary = (head1 == FIN_BINARY or head1 == FIN_TEXT) and head2 & MASKED and protocol.current_size is None
            if not ordinary:
                # websockets' to read: one whole frame, then again here if its parser is between
                # frames (a ping while open); else all there is, and websockets reads from now on
                if end >= start and end >= start + length:
                    super().data_received(bytes(buffer[at : start + length]))
                    at = start + length
                    if _between_frames(protocol):
                        continue
                self._hand_over(buffer, at)
                return
            if end < start:
                break  # the rest of the header is on its way
            if self._limit is not None and length > self._limit:
                self._hand_over(buffer, at)  # websockets closes the connection (1009)
                return
            if end < start + length:
                break  # the rest of the frame is on its way
            payload = apply_mask(buffer[start : start + length], buffer[start - 4 : start])
            at = start + length
            if head1 == FIN_BINARY:
                self._deliver(payload)
            else:
                try:
                    self._deliver(payload.decode())
                except UnicodeDecodeError as exc:  # told when it is read, as websockets' recv does
                    self._deliver(exc)
        if buffer is self._partial:
            del self._partial[:at]
        elif at < end:
            self._partial = bytearray(buffer[at:])

    def _before_response(self, data: bytes) -> None:
        """The request goes to websockets; what follows it is held (see the module's docstring)."""
        if self._held is not None:
            self._held += data
            if len(self._held) > HELD_BYTES:
                self.transport.pause_reading()
            return
        seen = self._request_tail + data
        end = seen.find(REQUEST_END)
        if end < 0:
            self._request_tail = seen[-(len(REQUEST_END) - 1) :]
            super().data_received(data)
            return
        split = end + len(REQUEST_END) - len(self._request_tail)
        self._held = bytearray(data[split:])
        super().data_received(data[:split])

    def _hand_over(self, buffer: bytes | bytearray, at: int) -> None:
        """websockets reads from here on, starting with `buffer[at:]`, until its parser is between
        frames again."""
        rest = bytes(buffer[at:])
        self._reading = False
        self._partial = bytearray()
        if rest:
            super().data_received(rest)

    def eof_received(self) -> None:
        self._held = None  # a client that stopped sending before it was answered: nothing follows
        self._hand_over(self._partial, 0)  # websockets says how many bytes the stream ended after
        super().eof_received()

    def process_event(self, event: Any) -> None:
        """The frames websockets read: data frames join the queue as messages (reassembled if
        fragmented), the others go on to websockets (pongs acknowledge pings)."""
        if self.request is None or not isinstance(event, Frame) or event.opcode not in (TEXT, BINARY, CONT):
            super().process_event(event)
            return
        if event.opcode is not CONT:
            self._fragments = []
            self._fragmented_text = event.opcode is TEXT
        elif len(self._fragments) >= MAX_FRAGMENTS:
            if len(self._fragments) == MAX_FRAGMENTS:
                self._fragments.append(b"")  # told once
                self._deliver(TooManyFragments(MAX_FRAGMENTS))
            return
        self._fragments.append(event.data)
        if not event.fin:
            return
        fragments, self._fragments = self._fragments, []
        data = fragments[0] if len(fragments) == 1 else b"".join(fragments)
        if self._fragmented_text:
            try:
                self._deliver(bytes(data).decode())
            except UnicodeDecodeError as exc:
                self._deliver(exc)
        else:
            self._deliver(bytes(data))

    def _deliver(self, message: Data | Exception) -> None:
        inbox = self._inbox
        inbox.append(message)
        waiter = self._waiter
        if waiter is not None:
            if not waiter.done():
                waiter.set_result(None)
        elif self._high is not None and len(inbox) > self._high and not self._paused:
            self._paused = True  # the handler is behind: stop reading until it catches up
            self.transport.pause_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self._lost = True
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # The handler's side.

    async def recv(self, decode: bool | None = None) -> Data:  # type: ignore[override]
        inbox = self._inbox
        if not inbox and not self._lost:
            if self._waiter is not None:
                raise ConcurrencyError(
                    "cannot call recv while another coroutine is already running recv or recv_streaming"
                )
            waiter = self._waiter = self.loop.create_future()
            try:
                await waiter
            finally:
                self._waiter = None
        if inbox:
            message = inbox.popleft()
            if self._paused and len(inbox) <= self._low:  # type: ignore[operator]
                self._paused = False
                self.transport.resume_reading()
            if type(message) is bytes:
                return message.decode() if decode else message
            if type(message) is str:
                return message.encode() if decode is False else message
            await self._failed(message)  # type: ignore[arg-type]
        await asyncio.shield(self.connection_lost_waiter)
        raise self.close_exc

    async def _failed(self, exc: Exception) -> None:
        """Close the connection for a message it cannot take, as websockets' recv does."""
        self.set_connection_exc(exc)
        async with self.send_context():
            if isinstance(exc, TooManyFragments):
                self.protocol.fail(CloseCode.MESSAGE_TOO_BIG, "too many fragments")
            else:
                assert isinstance(exc, UnicodeDecodeError)
                self.protocol.fail(CloseCode.INVALID_DATA, f"{exc.reason} at position {exc.start}")

    async def recv_streaming(self, decode: bool | None = None) -> AsyncIterator[Data]:  # type: ignore[override]
        yield await self.recv(decode)
