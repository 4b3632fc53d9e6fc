"""The server's transport (server/transport.py: websockets' sans-I/O protocol driven by our own
asyncio protocol) against websockets' own asyncio server: the same byte streams, cut into reads at
every byte, sent over real sockets to each; what each hands its application and what each sends
back (pongs, close frames with their codes and reasons) must be the same."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import struct
from collections.abc import AsyncIterator, Iterable
from typing import Any

import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode
from websockets.protocol import State

from partida.server.transport import Inbox, Link, Listener
from partida.server.transport import serve as serve_transport

MAX_SIZE = 70_000  # past 65,535, so that a frame too long for it has a 64-bit length
KEY = b"\x37\xfa\x21\x3d"


def frame(opcode: int, payload: bytes, fin: bool = True, masked: bool = True, rsv: int = 0) -> bytes:
    """A client's frame written by hand (any opcode, reserved bits, masked or not)."""
    size = len(payload)
    if size < 126:
        head = bytes((fin << 7 | rsv << 4 | opcode, masked << 7 | size))
    elif size < 1 << 16:
        head = struct.pack("!BBH", fin << 7 | rsv << 4 | opcode, masked << 7 | 126, size)
    else:
        head = struct.pack("!BBQ", fin << 7 | rsv << 4 | opcode, masked << 7 | 127, size)
    if not masked:
        return head + payload
    return head + KEY + bytes(b ^ KEY[i % 4] for i, b in enumerate(payload))


def binary(payload: bytes, fin: bool = True) -> bytes:
    return frame(0x2, payload, fin)


def text(payload: str | bytes, fin: bool = True) -> bytes:
    return frame(0x1, payload.encode() if isinstance(payload, str) else payload, fin)


def cont(payload: bytes, fin: bool = True) -> bytes:
    return frame(0x0, payload, fin)


def ping(payload: bytes = b"") -> bytes:
    return frame(0x9, payload)


def pong(payload: bytes = b"") -> bytes:
    return frame(0xA, payload)


def close(code: int = 1000, reason: str = "") -> bytes:
    return frame(0x8, struct.pack("!H", code) + reason.encode())


def cutting(base: type[Any], cuts: list[Iterable[int]]) -> type[Any]:
    """`base` (either server's connection class) whose connections cut what they read at the next
    offsets of `cuts` (counted from the first byte after the handshake) into separate reads."""

    class Cutting(base):  # type: ignore[misc,valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.offset = 0
            self.cut_at = sorted(cuts.pop(0))

        def data_received(self, data: bytes) -> None:
            if self.protocol.state is State.CONNECTING:
                super().data_received(data)
                return
            begin = self.offset
            self.offset += len(data)
            previous = 0
            for cut in [c - begin for c in self.cut_at if begin < c < self.offset] + [len(data)]:
                super().data_received(data[previous:cut])
                previous = cut

    return Cutting


class Harness:
    """websockets' asyncio server, whose connections cut what they read at the given offsets
    (counted from the first byte after the handshake) into separate reads, on top of however the
    kernel delivered it."""

    def __init__(self) -> None:
        self.cuts: list[Iterable[int]] = []
        self.results: asyncio.Queue[list[Any]] = asyncio.Queue()

    async def __aenter__(self) -> Harness:
        Cutting = cutting(ServerConnection, self.cuts)

        async def handler(ws: ServerConnection) -> None:
            got: list[Any] = []
            try:
                while True:
                    got.append(await ws.recv())
            except ConnectionClosed as exc:
                got.append(("closed", exc.rcvd, exc.sent, exc.rcvd_then_sent))
            await self.results.put(got)

        self.server = await serve(
            handler, "127.0.0.1", 0, create_connection=Cutting, compression=None, max_size=MAX_SIZE, ping_interval=None
        )
        self.port = next(iter(self.server.sockets)).getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()
        await self.server.wait_closed()

    async def run(self, stream: bytes, cuts: Iterable[int] = (), eof: bool = False) -> tuple[list[Any], bytes]:
        """Send `stream` after the handshake (then end the TCP stream if `eof`); what the handler
        received and the bytes the server sent back, up to the end of the connection."""
        self.cuts.append(cuts)
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(
            f"GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        response = await reader.readuntil(b"\r\n\r\n")
        assert response.startswith(b"HTTP/1.1 101")
        writer.write(stream)
        if eof:
            writer.write_eof()
        sent_back = await asyncio.wait_for(reader.read(), 10)  # to the server's end of the stream
        writer.close()
        got = await asyncio.wait_for(self.results.get(), 10)
        return got, sent_back


class Recorder:
    """The server's transport's receiver in the harness: every message, then how it closed."""

    def __init__(self, link: Link, results: asyncio.Queue[list[Any]]) -> None:
        self.link = link
        self.results = results
        self.got: list[Any] = []

    def received(self, message: bytes | str) -> None:
        self.got.append(message)

    def writable(self) -> None:
        pass

    def rest(self) -> None:
        pass

    def lost(self) -> None:
        exc = self.link.protocol.close_exc
        self.got.append(("closed", exc.rcvd, exc.sent, exc.rcvd_then_sent))
        self.results.put_nowait(self.got)


class TransportHarness(Harness):
    """The same, with the server's transport."""

    async def __aenter__(self) -> Harness:
        Cutting = cutting(Link, self.cuts)

        listener = Listener(
            lambda link: Recorder(link, self.results),
            None,
            max_size=MAX_SIZE,
            ping_interval=None,
            ping_timeout=None,
            close_timeout=10,
            open_timeout=10,
        )
        loop = asyncio.get_running_loop()
        listener.server = await loop.create_server(lambda: Cutting(listener), "127.0.0.1", 0)
        self.server = listener  # type: ignore[assignment]
        self.port = next(iter(listener.sockets)).getsockname()[1]
        return self


@pytest.fixture
async def pair() -> AsyncIterator[tuple[Harness, Harness]]:
    async with Harness() as theirs, TransportHarness() as ours:
        yield theirs, ours


async def same(pair: tuple[Harness, Harness], stream: bytes, cuts: Iterable[int] = (), eof: bool = False) -> Any:
    cuts = list(cuts)
    theirs = await pair[0].run(stream, cuts, eof)
    ours = await pair[1].run(stream, cuts, eof)
    assert ours == theirs, f"cut at {cuts}"
    return ours


async def every_cut(pair: tuple[Harness, Harness], stream: bytes, eof: bool = False) -> Any:
    """The stream in one read, then cut in two at every byte, then one byte per read."""
    first = await same(pair, stream, eof=eof)
    for at in range(1, len(stream)):
        await same(pair, stream, [at], eof)
    await same(pair, stream, range(1, len(stream)), eof)
    return first


@pytest.mark.slow
async def test_ordinary_frames_at_every_length_boundary(pair: tuple[Harness, Harness]) -> None:
    small = b"".join(binary(bytes([n]) * n) for n in (0, 1, 2, 125, 126, 127))
    got, sent_back = await every_cut(pair, small + text("héllo ✓") + close())
    assert got[:7] == [bytes([n]) * n for n in (0, 1, 2, 125, 126, 127)] + ["héllo ✓"]
    assert got[7][0] == "closed" and got[7][1].code == 1000
    assert sent_back == Frame(Opcode.CLOSE, struct.pack("!H", 1000)).serialize(mask=False)
    for size in (65_535, 65_536, MAX_SIZE):
        stream = binary(b"x" * size) + binary(b"after") + close()
        got, _ = await same(pair, stream)
        assert got[:2] == [b"x" * size, b"after"]
        for at in [*range(1, 16), len(stream) - 20, len(stream) - 1]:
            await same(pair, stream, [at])


async def test_control_frames_between_and_inside_messages(pair: tuple[Harness, Harness]) -> None:
    stream = (
        binary(b"one")
        + ping(b"p1")
        + binary(b"two")
        + pong(b"unasked")
        + binary(b"thr", fin=False)
        + ping()
        + cont(b"e", fin=False)
        + cont(b"e")
        + text("fo", fin=False)
        + cont("ür".encode()[:1], fin=False)
        + cont("ür".encode()[1:])
        + binary(b"five")
        + close(1001, "bye")
    )
    got, sent_back = await every_cut(pair, stream)
    assert got[:5] == [b"one", b"two", b"three", "foür", b"five"]
    pongs = Frame(Opcode.PONG, b"p1").serialize(mask=False) + Frame(Opcode.PONG, b"").serialize(mask=False)
    assert sent_back.startswith(pongs)


@pytest.mark.slow
async def test_refused_frames_close_as_websockets_does(pair: tuple[Harness, Harness]) -> None:
    streams = [
        binary(b"ok") + frame(0x2, b"unmasked", masked=False),
        binary(b"ok") + frame(0x2, b"rsv", rsv=4),
        binary(b"ok") + frame(0x3, b"opcode"),
        binary(b"ok") + cont(b"nothing to continue"),
        binary(b"ok") + binary(b"a", fin=False) + binary(b"b"),
        binary(b"ok") + frame(0x9, b"x" * 126),
        binary(b"ok") + frame(0x9, b"x", fin=False),
        binary(b"ok") + text(b"\xff\xfe") + binary(b"after"),
        binary(b"ok") + text(b"\xc3", fin=False) + cont(b"\x28") + binary(b"after"),
        binary(b"ok") + close(999),
        binary(b"ok") + close() + binary(b"after the close"),
        binary(b"ok") + frame(0x8, b"\x03"),
    ]
    for stream in streams:
        got, _ = await every_cut(pair, stream)
        assert got[0] == b"ok" and got[-1][0] == "closed"
    # past max_size: refused from the header on
    for size in (MAX_SIZE + 1, 1 << 40):
        head = struct.pack("!BBQ", 0x82, 0x80 | 127, size) + KEY
        stream = binary(b"ok") + head + b"y" * 100
        got, _ = await every_cut(pair, stream)
        assert got[0] == b"ok" and got[-1][0] == "closed" and got[-1][2].code == 1009
    too_long = binary(b"z" * 40_000, fin=False) + cont(b"z" * 40_000)
    got, _ = await same(pair, binary(b"ok") + too_long)
    assert got[-1][2].code == 1009


async def test_streams_that_end_inside_a_frame(pair: tuple[Harness, Harness]) -> None:
    for stream in (binary(b"ok") + binary(b"cut short")[:7], binary(b"ok") + b"\x82", binary(b"ok") + ping(b"x")[:3]):
        got, _ = await every_cut(pair, stream, eof=True)
        assert got[0] == b"ok" and got[-1][0] == "closed"


async def test_too_many_fragments(pair: tuple[Harness, Harness]) -> None:
    from websockets.asyncio.messages import MAX_FRAGMENTS

    stream = binary(b"a", fin=False) + cont(b"b", fin=False) * MAX_FRAGMENTS + cont(b"c") + binary(b"after")
    got, _ = await same(pair, binary(b"ok") + stream)
    assert got[0] == b"ok" and got[-1][2].code == 1009 and len(got) == 2


async def raw_client(server: Any) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A socket past the opening handshake with `server`, for frames written by hand."""
    port = next(iter(server.sockets)).getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        b"GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    await reader.readuntil(b"\r\n\r\n")
    return reader, writer


@pytest.mark.parametrize("ours", [False, True])
async def test_a_handler_that_falls_behind_stops_the_reading(ours: bool) -> None:
    """Past `high` messages waiting, a connection's inbox stops reading from the socket (the
    client's writes back up in TCP) and reads again once its handler has caught up, as
    websockets' own connections do past `max_queue`."""
    go = asyncio.Event()
    states: list[bool] = []
    got: list[bytes] = []
    links: list[Any] = []

    async def handler(ws: ServerConnection) -> None:
        links.append(ws)
        await go.wait()
        states.append(ws.transport.is_reading())
        with contextlib.suppress(ConnectionClosed):
            while True:
                got.append(await ws.recv())  # type: ignore[arg-type]
                states.append(ws.transport.is_reading())

    class Slow(Inbox):
        async def handle(self, message: bytes | str) -> None:
            if not go.is_set():
                await go.wait()
                states.append(self.link.transport.is_reading())
            got.append(message)  # type: ignore[arg-type]
            states.append(self.link.transport.is_reading())

    def opened(link: Link) -> Any:
        links.append(link)
        recorder = Recorder(link, asyncio.Queue())
        recorder.received = Slow(link, high=8, low=2).put  # type: ignore[method-assign]
        return recorder

    if ours:
        listener = Listener(
            opened, None, max_size=MAX_SIZE, ping_interval=None, ping_timeout=None, close_timeout=10, open_timeout=10
        )
        listener.server = await asyncio.get_running_loop().create_server(lambda: Link(listener), "127.0.0.1", 0)
        server: Any = listener
    else:
        server = await serve(handler, "127.0.0.1", 0, max_queue=8, compression=None)
    reader, writer = await raw_client(server)
    for n in range(40):
        writer.write(binary(b"%d" % n))
        await writer.drain()
    for _ in range(500):  # until the server has read past its bound
        if links and not links[0].transport.is_reading():
            break
        await asyncio.sleep(0.01)
    go.set()
    for _ in range(500):
        if len(got) == 40:
            break
        await asyncio.sleep(0.01)
    writer.write(close())
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(reader.read(), 5)
    writer.close()
    server.close()
    await server.wait_closed()
    assert got == [b"%d" % n for n in range(40)]
    assert states[0] is False and states[-1] is True


async def test_keepalive_fails_a_client_that_does_not_answer_pings() -> None:
    """A ping every `ping_interval`; a client that answers keeps its connection, one that does
    not is closed (1011, "keepalive ping timeout") as websockets' own server closes it."""

    async def handler(ws: ServerConnection) -> None:
        with contextlib.suppress(ConnectionClosed):
            await ws.recv()

    listener = await serve_transport(
        lambda link: Recorder(link, asyncio.Queue()), "127.0.0.1", 0, ping_interval=0.1, ping_timeout=0.1
    )
    theirs = await serve(handler, "127.0.0.1", 0, compression=None, ping_interval=0.1, ping_timeout=0.1)
    try:
        seen = []
        for server in (theirs, listener):
            reader, writer = await raw_client(server)
            sent_back = await asyncio.wait_for(reader.read(), 5)  # a ping, then the close and EOF
            writer.close()
            ping_header = sent_back[:2]
            close_frame = sent_back[2 + sent_back[1] :]
            seen.append((ping_header, close_frame))
        assert seen[0] == seen[1]
        assert seen[1] == (
            b"\x89\x04",
            Frame(Opcode.CLOSE, struct.pack("!H", 1011) + b"keepalive ping timeout").serialize(mask=False),
        )
        answering = await ws_connect(f"ws://127.0.0.1:{next(iter(listener.sockets)).getsockname()[1]}")
        await asyncio.sleep(0.5)  # five pings, each answered by the client
        assert answering.state is State.OPEN
        await answering.close()
    finally:
        theirs.close()
        listener.close()
        await theirs.wait_closed()
        await listener.wait_closed()
