"""Client connections: websockets' sans-I/O `ServerProtocol` driven by an `asyncio.Protocol` of our own.

websockets parses every byte a client sends and writes every byte the server sends (the HTTP
request and response, frames, pongs, close frames and their codes); this module only moves bytes
between it and asyncio's transport, the way websockets' guide "Integrate the Sans-I/O layer"
describes (`receive_data`, `events_received`, `data_to_send`, `close_expected`), and adds what a
server needs around it:

- the HTTP request: `process_request` answers it synchronously (a file, a 429) or lets the
  handshake go on, so nothing the client pipelined behind the request reaches websockets' parser
  before the response is written: after a 101 it is read as frames, after any other response it
  is dropped (with the request and what follows in one read, websockets' parser would otherwise
  read past the request at once, as frames);
- messages: data frames reassembled, text decoded (1007 when it is not UTF-8), at most
  `MAX_FRAGMENTS` fragments (1009), handed to the connection's `Receiver` as they arrive;
- keepalive: a ping every `ping_interval` seconds, the connection failed (1011) when its pong is
  not back within `ping_timeout`;
- closing: the TCP connection is cut `close_timeout` seconds after a close frame if the client
  has not closed it, and `abort_after` lets the server cut a client that does not read;
- flow control: frames sent within one turn of the event loop are written together at its end;
  the transport pauses writing past `WRITE_LIMIT` buffered bytes and says when it can take more
  (`Receiver.writable`); an `Inbox` stops reading while its handler is behind.

No task exists per connection: an idle one is this object, websockets' protocol object, asyncio's
transport and the receiver.
"""

from __future__ import annotations

import asyncio
import collections
import http
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from websockets.frames import Opcode
from websockets.http11 import Request, Response
from websockets.protocol import State
from websockets.server import ServerProtocol

log = logging.getLogger(__name__)
WS_LOG = logging.getLogger("websockets.server")

Data = bytes | str
MAX_FRAGMENTS = 4096  # fragments of one message, as websockets' own connections allow
WRITE_LIMIT = 64 * 1024  # bytes the transport buffers before it pauses writing
REQUEST_END = b"\r\n\r\n"
HELD_BYTES = 64 * 1024  # a request's bytes past which reading pauses until it is answered

OPEN, CONNECTING, CLOSED = State.OPEN, State.CONNECTING, State.CLOSED
TEXT, BINARY, CONT, PONG = Opcode.TEXT, Opcode.BINARY, Opcode.CONT, Opcode.PONG


class Receiver(Protocol):
    """The server's side of one open connection."""

    def received(self, message: Data) -> None:
        """A whole message from the client."""

    def writable(self) -> None:
        """The transport takes writes again (or did not stop): queued output may go."""

    def lost(self) -> Awaitable[None] | None:
        """The connection is gone; what it returns is awaited before the listener is closed."""

    def rest(self) -> None:
        """Called once per keepalive interval."""


Opened = Callable[["Link"], Receiver | None]
ProcessRequest = Callable[["Link", Request], Response | None]


class Listener:
    """The listening socket and its connections (what `serve` returns)."""

    def __init__(
        self,
        opened: Opened,
        process_request: ProcessRequest | None,
        *,
        max_size: int | None,
        ping_interval: float | None,
        ping_timeout: float | None,
        close_timeout: float,
        open_timeout: float,
    ) -> None:
        self.opened = opened
        self.process_request = process_request
        self.max_size = max_size
        self.ping_interval = ping_interval
        self.ping_timeout = ping_timeout
        self.close_timeout = close_timeout
        self.open_timeout = open_timeout
        self.links: set[Link] = set()  # every connection not yet lost
        self.endings: set[Awaitable[None]] = set()  # receivers' work after their connection was lost
        self.server: asyncio.Server | None = None
        self.serving = True
        self._all_lost: asyncio.Future[None] | None = None
        self._due: list[Link] = []  # connections with output to write at the end of this turn

    def flush_soon(self, link: Link) -> None:
        """`link`'s output is written at the end of this turn, with every other connection's."""
        if not self._due:
            asyncio.get_running_loop().call_soon(self._flush)
        self._due.append(link)

    def _flush(self) -> None:
        due, self._due = self._due, []
        for link in due:
            link._flush()

    @property
    def sockets(self) -> tuple[Any, ...]:
        return tuple(self.server.sockets) if self.server is not None else ()

    def close(self) -> None:
        """Stop listening; open connections are closed (1001), handshakes cut."""
        self.serving = False
        if self.server is not None:
            self.server.close()
        for link in list(self.links):
            if link.protocol.state is OPEN:
                link.close(1001)
            elif link.protocol.state is CONNECTING:
                link.transport.abort()

    async def wait_closed(self) -> None:
        """Until every connection is lost and what its receiver does then is done."""
        if self.links:
            self._all_lost = asyncio.get_running_loop().create_future()
            await self._all_lost
        while self.endings:
            await asyncio.gather(*self.endings, return_exceptions=True)

    def _lost(self, link: Link, ending: Awaitable[None] | None) -> None:
        self.links.discard(link)
        if ending is not None:
            future = asyncio.ensure_future(ending)
            self.endings.add(future)
            future.add_done_callback(self.endings.discard)
        if not self.links and self._all_lost is not None and not self._all_lost.done():
            self._all_lost.set_result(None)


async def serve(
    opened: Opened,
    host: str,
    port: int,
    *,
    process_request: ProcessRequest | None = None,
    max_size: int | None = 2**20,
    ping_interval: float | None = 20,
    ping_timeout: float | None = 20,
    close_timeout: float = 10,
    open_timeout: float = 10,
) -> Listener:
    """Listen on `host`:`port`; `opened(link)` is called for each connection once its handshake
    succeeded and returns the receiver of its messages (None: the connection was refused)."""
    listener = Listener(
        opened,
        process_request,
        max_size=max_size,
        ping_interval=ping_interval,
        ping_timeout=ping_timeout,
        close_timeout=close_timeout,
        open_timeout=open_timeout,
    )
    loop = asyncio.get_running_loop()
    listener.server = await loop.create_server(lambda: Link(listener), host, port)
    return listener


class Link(asyncio.Protocol):
    """One client connection: asyncio's transport below, websockets' `ServerProtocol` in the
    middle, a `Receiver` above."""

    __slots__ = (
        "_deadline",
        "_eof_sent",
        "_flush_due",
        "_fragments",
        "_held",
        "_ping",
        "_ping_at",
        "_tail",
        "_text",
        "_timer",
        "_unsent",
        "_wanted",
        "listener",
        "paused",
        "protocol",
        "receiver",
        "request",
        "transport",
    )

    def __init__(self, listener: Listener) -> None:
        self.listener = listener
        self.protocol = ServerProtocol(max_size=listener.max_size, logger=WS_LOG)
        self.transport: asyncio.Transport = None  # type: ignore[assignment]  # set in connection_made
        self.request: Request | None = None  # the opening request, until `opened` has returned
        self.receiver: Receiver | None = None
        self.paused = False  # the transport buffers more than WRITE_LIMIT bytes
        self._fragments: list[bytes] | None = None  # of a fragmented message being received
        self._text = False  # that message is text
        self._held: bytearray | None = None  # what followed an unanswered request
        self._tail = b""  # the last bytes of the request so far, for its end
        self._timer: asyncio.TimerHandle | None = None  # the open timeout, then keepalive
        self._deadline: asyncio.TimerHandle | None = None  # when the TCP connection is cut
        self._ping: bytes | None = None  # the keepalive ping waiting for its pong
        self._ping_at = 0.0
        self._flush_due = False
        self._unsent = 0  # bytes sent this turn, written at its end
        self._eof_sent = False
        self._wanted = False  # the receiver waits for `writable`

    # What the server uses.

    @property
    def remote_address(self) -> Any:
        return self.transport.get_extra_info("peername")

    @property
    def open(self) -> bool:
        return self.protocol.state is OPEN

    def send_within(self, message: Data, ahead: int) -> bool:
        """Send `message` in one frame if the connection is open, writing is not paused, and no
        more than `ahead` bytes would then wait for the kernel (else False). It is written at the
        end of this turn of the event loop, with everything else sent to any connection in it."""
        unsent = self._unsent + len(message)
        protocol = self.protocol
        if (
            self.paused
            or protocol.state is not OPEN
            or (unsent > ahead or self.transport.get_write_buffer_size() + unsent > ahead)
        ):
            return False
        if type(message) is bytes:
            protocol.send_binary(message)
        else:
            protocol.send_text(message.encode())  # type: ignore[union-attr]
        self._unsent = unsent
        if not self._flush_due:
            self._flush_due = True
            self.listener.flush_soon(self)
        return True

    def send_now(self, message: Data) -> None:
        """Send `message` in one frame and write it at once (the transport says at once whether
        it must pause). The connection must be open."""
        if type(message) is bytes:
            self.protocol.send_binary(message)
        else:
            self.protocol.send_text(message.encode())  # type: ignore[union-attr]
        self._write()

    def want_writable(self) -> None:
        """Call `Receiver.writable` at the end of this turn unless the transport is paused (then
        it is called when the transport resumes)."""
        self._wanted = True
        if not self._flush_due:
            self._flush_due = True
            self.listener.flush_soon(self)

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Start the closing handshake (after what was sent before); nothing if it started."""
        if self.protocol.state is OPEN:
            self.protocol.send_close(code, reason)
            self._write()

    def fail(self, code: int, reason: str = "") -> None:
        """Close at once with `code`, reading nothing more (websockets' `fail`)."""
        if self.protocol.state is not CLOSED:
            self.protocol.fail(code, reason)
            self._write()

    def abort_after(self, seconds: float) -> None:
        """Cut the TCP connection in `seconds` unless it is gone by then (or cut sooner)."""
        loop = asyncio.get_running_loop()
        if self.transport.is_closing() and self.protocol.state is CLOSED:
            return
        if self._deadline is not None:
            if self._deadline.when() <= loop.time() + seconds:
                return
            self._deadline.cancel()
        self._deadline = loop.call_later(seconds, self.transport.abort)

    def pause_reading(self) -> None:
        if not self.transport.is_closing():
            self.transport.pause_reading()

    def resume_reading(self) -> None:
        if not self.transport.is_closing():
            self.transport.resume_reading()

    # Writing.

    def _flush(self) -> None:
        self._flush_due = False
        self._write()
        if self._wanted and not self.paused and self.receiver is not None:
            self._wanted = False
            self.receiver.writable()

    def _write(self) -> None:
        """Hand websockets' output to the transport; after a close frame, cut the connection
        `close_timeout` from now unless the client closes it first."""
        writes = self.protocol.data_to_send()
        if not writes:
            return  # a close frame or the end of the stream is always written, so no close is due
        self._unsent = 0
        transport = self.transport
        if not self._eof_sent and not transport.is_closing():
            if writes[-1]:
                transport.write(writes[0] if len(writes) == 1 else b"".join(writes))
            else:
                self._eof_sent = True  # websockets writes nothing after the end of its stream
                data = b"".join(writes)
                if data:
                    transport.write(data)
                if transport.can_write_eof():
                    transport.write_eof()
                else:
                    transport.close()
        if self._deadline is None and self.protocol.state is not OPEN and self.protocol.close_expected():
            self.abort_after(self.listener.close_timeout)

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        if self.receiver is not None:
            self.receiver.writable()

    # Reading.

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.transport.set_write_buffer_limits(WRITE_LIMIT)
        self.listener.links.add(self)
        self._timer = asyncio.get_running_loop().call_later(self.listener.open_timeout, self._open_late)

    def data_received(self, data: bytes) -> None:
        if self.receiver is None and self.request is None and self.protocol.state is CONNECTING:
            self._request_data(data)
            return
        protocol = self.protocol
        protocol.receive_data(data)
        events = protocol.events_received()
        if len(events) == 1 and protocol.state is OPEN:
            frame = events[0]
            if frame.opcode is BINARY and frame.fin:
                # One whole binary message and the connection still open: websockets has nothing
                # to write (it writes only for control frames and errors, which close it).
                if self.receiver is not None:
                    self.receiver.received(frame.data)  # type: ignore[arg-type]
                return
        self._write()  # pongs, the echo of a close frame, the end of the stream
        receiver = self.receiver
        for frame in events:
            opcode = frame.opcode
            if opcode is BINARY or opcode is TEXT:
                if frame.fin:
                    if opcode is BINARY:
                        message: Data = frame.data  # type: ignore[assignment]
                    else:
                        try:
                            message = bytes(frame.data).decode()
                        except UnicodeDecodeError as exc:
                            self.fail(1007, f"{exc.reason} at position {exc.start}")
                            return
                    if receiver is not None:
                        receiver.received(message)
                else:
                    self._fragments = [frame.data]  # type: ignore[list-item]
                    self._text = opcode is TEXT
            elif opcode is CONT:
                fragments = self._fragments
                assert fragments is not None  # websockets refuses a continuation of nothing
                if len(fragments) >= MAX_FRAGMENTS:
                    self.fail(1009, "too many fragments")
                    return
                fragments.append(frame.data)  # type: ignore[arg-type]
                if frame.fin:
                    self._fragments = None
                    whole = b"".join(fragments)
                    if self._text:
                        try:
                            message = whole.decode()
                        except UnicodeDecodeError as exc:
                            self.fail(1007, f"{exc.reason} at position {exc.start}")
                            return
                    else:
                        message = whole
                    if receiver is not None:
                        receiver.received(message)
            elif opcode is PONG:
                self._ponged(bytes(frame.data))

    def _request_data(self, data: bytes) -> None:
        """The request goes to websockets up to its end and is answered before anything that
        follows it is read (see the module's docstring)."""
        if self._held is not None:  # the request is being answered
            self._held += data
            if len(self._held) > HELD_BYTES:
                self.transport.pause_reading()
            return
        seen = self._tail + data
        end = seen.find(REQUEST_END)
        if end < 0:
            self._tail = seen[-(len(REQUEST_END) - 1) :]
            self.protocol.receive_data(data)
            self._write()  # websockets' refusal of a request line or headers too long
            return
        split = end + len(REQUEST_END) - len(self._tail)
        self._held = bytearray(data[split:])
        self.protocol.receive_data(data[:split])
        for event in self.protocol.events_received():
            if isinstance(event, Request):
                self._answer(event)
        self._write()
        held, self._held = self._held, None
        if self.protocol.state is OPEN:
            if len(held) > HELD_BYTES:
                self.transport.resume_reading()
            if held:
                self.data_received(bytes(held))

    def _answer(self, request: Request) -> None:
        """The response to the opening request: `process_request`'s, or the handshake's."""
        listener = self.listener
        protocol = self.protocol
        self.request = request
        response = None
        if listener.process_request is not None:
            try:
                response = listener.process_request(self, request)
            except Exception as exc:
                protocol.handshake_exc = exc
                log.exception("process_request failed")
                response = protocol.reject(http.HTTPStatus.INTERNAL_SERVER_ERROR, "The server failed.\n")
        if response is None:
            response = protocol.accept(request)
            if response.status_code == 101 and not listener.serving:
                response = protocol.reject(http.HTTPStatus.SERVICE_UNAVAILABLE, "Server is shutting down.\n")
        protocol.send_response(response)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if protocol.state is not OPEN:
            return
        self._write()  # the 101 goes before anything the receiver sends
        # The connection's frames go to a protocol object made open, without the handshake's
        # parser state (which would keep the request and its headers for the connection's life).
        self.protocol = ServerProtocol(state=OPEN, max_size=listener.max_size, logger=WS_LOG)
        if listener.ping_interval is not None:
            self._timer = asyncio.get_running_loop().call_later(listener.ping_interval, self._keepalive)
        self.receiver = listener.opened(self)
        self.request = None  # its headers are most of what an idle connection would keep

    def _open_late(self) -> None:
        self._timer = None
        if self.protocol.state is CONNECTING:
            self.transport.abort()

    def eof_received(self) -> None:
        self._held = None  # a client that stopped sending before it was answered: nothing follows
        self.protocol.receive_eof()
        self._write()

    def connection_lost(self, exc: Exception | None) -> None:
        self.protocol.receive_eof()  # CLOSED: websockets knows how the connection ended
        for timer in (self._timer, self._deadline):
            if timer is not None:
                timer.cancel()
        self._timer = self._deadline = None
        receiver, self.receiver = self.receiver, None
        self.listener._lost(self, receiver.lost() if receiver is not None else None)

    # Keepalive.

    def _keepalive(self) -> None:
        self._timer = None
        if self.protocol.state is not OPEN:
            return
        if self.receiver is not None:
            self.receiver.rest()
        self._ping = os.urandom(4)
        self._ping_at = asyncio.get_running_loop().time()
        self.protocol.send_ping(self._ping)
        self._write()
        if self.listener.ping_timeout is not None:
            self._timer = asyncio.get_running_loop().call_later(self.listener.ping_timeout, self._pong_late)

    def _ponged(self, data: bytes) -> None:
        if self._ping is None or data != self._ping:
            return  # unasked
        self._ping = None
        if self._timer is not None:
            self._timer.cancel()
        loop = asyncio.get_running_loop()
        interval = self.listener.ping_interval or 0.0
        self._timer = loop.call_later(max(interval - (loop.time() - self._ping_at), 0.0), self._keepalive)

    def _pong_late(self) -> None:
        self._timer = None
        self.fail(1011, "keepalive ping timeout")


class Inbox:
    """A connection's messages handed to `handle` one at a time, in order, by one task. Past
    `high` waiting, the connection stops reading (the client's writes back up in TCP) until they
    are down to `low`.

    Once no message waits, the task ends unless `lingers()` says more are expected soon (a
    player in a game); a lingering task waits for the next message and ends at the first `rest`
    (called once per keepalive interval) that finds no message since the one before, so a quiet
    connection holds no task."""

    __slots__ = ("_heard", "_paused", "_waiter", "high", "link", "low", "messages", "task")

    def __init__(self, link: Link, high: int = 16, low: int = 4) -> None:
        self.link = link
        self.high = high
        self.low = low
        self.messages: collections.deque[Data] | None = None
        self.task: asyncio.Task[None] | None = None
        self._waiter: asyncio.Future[bool] | None = None  # of a lingering task
        self._heard = False  # a message came since the last `rest`
        self._paused = False

    def handle(self, message: Data) -> Awaitable[None] | None:
        """Start handling `message`; what it returns is awaited before the next message (an
        `async def` will do)."""
        raise NotImplementedError

    def handled(self) -> Awaitable[None] | None:
        """Called after each message's handling; what it returns is awaited too."""
        return None

    def lingers(self) -> bool:
        """Whether the task waits for the next message once none is left."""
        return False

    def put(self, message: Data) -> None:
        messages = self.messages
        if messages is None:
            messages = self.messages = collections.deque()
        messages.append(message)
        self._heard = True
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            waiter.set_result(True)
        elif self.task is None:
            self.task = asyncio.get_running_loop().create_task(self._run())
        elif len(messages) > self.high and not self._paused:
            self._paused = True
            self.link.pause_reading()

    def rest(self) -> None:
        """A lingering task with no message since the last call ends."""
        if not self._heard:
            self._wake(False)
        self._heard = False

    def clear(self) -> None:
        """Drop the messages waiting; a lingering task ends."""
        self.messages = None
        self._wake(False)

    def _wake(self, go_on: bool) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            waiter.set_result(go_on)

    async def _run(self) -> None:
        try:
            while True:
                messages = self.messages
                if not messages:
                    if not self.lingers():
                        return
                    waiter = self._waiter = asyncio.get_running_loop().create_future()
                    if not await waiter:
                        return
                    continue
                message = messages.popleft()
                if self._paused and len(messages) <= self.low:
                    self._paused = False
                    self.link.resume_reading()
                # `handle` returns its work rather than awaiting it: a move's wait for its
                # write suspends and resumes one frame fewer.
                handling = self.handle(message)
                if handling is not None:
                    await handling
                after = self.handled()
                if after is not None:
                    await after
        finally:
            self.task = None
            self.messages = None
            self._waiter = None
            if self._paused:
                self._paused = False
                self.link.resume_reading()
