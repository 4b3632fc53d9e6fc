"""The rules of partida/client/links.py on plain values: which URLs a client follows, the pause
between tries to reach a node, and what a websocket that cannot be opened raises."""

from __future__ import annotations

import asyncio
import socket

import pytest

from partida.client import ConnectionLost
from partida.client.links import (
    FIRST_PAUSE,
    LONGEST_PAUSE,
    host_of,
    listed_nodes,
    open_websocket,
    retry_pause,
    same_url,
)


def test_retry_pauses_double_from_the_first_to_the_longest() -> None:
    pauses = []
    pause = 0.0
    for _ in range(7):
        pause = retry_pause(pause)
        pauses.append(pause)
    assert pauses == [0.2, 0.4, 0.8, 1.6, 2.0, 2.0, 2.0]
    assert (FIRST_PAUSE, LONGEST_PAUSE) == (0.2, 2.0)


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("ws://Node-A.example:8765", "node-a.example"),
        ("wss://node-b.example/", "node-b.example"),
        ("ws://127.0.0.1:9000", "127.0.0.1"),
        ("ws://[::1]:9000", "::1"),
        ("http://node-a.example:8765", None),  # not a websocket URL: no host to trust
        ("node-a.example:8765", None),
        ("ws://", None),
        ("ws://[::1", None),  # urlsplit refuses it
        ("", None),
    ],
)
def test_host_of(url: str, host: str | None) -> None:
    assert host_of(url) == host


def test_same_url_ignores_case_and_a_trailing_slash() -> None:
    assert same_url("ws://Node-A:8765/", "ws://node-a:8765")
    assert not same_url("ws://node-a:8765", "ws://node-a:8766")


def test_listed_nodes_keeps_the_urls_of_a_welcome() -> None:
    assert listed_nodes({"nodes": ["ws://a:1", 7, None, "ws://b:2"]}) == ["ws://a:1", "ws://b:2"]
    assert listed_nodes({"nodes": "ws://a:1"}) == []
    assert listed_nodes({}) == []


async def test_a_url_that_is_no_websocket_url_is_a_lost_connection_saying_so() -> None:
    with pytest.raises(ConnectionLost, match="is not a websocket URL"):
        await open_websocket("http://127.0.0.1:1", 2.0)


async def test_a_port_nobody_listens_on_is_a_lost_connection() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago, and nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ConnectionLost, match="cannot reach") as lost:
        await open_websocket(f"ws://127.0.0.1:{port}", 2.0)
    assert lost.value.retry_after is None


async def refusing_server(response: bytes) -> asyncio.Server:
    """A loopback HTTP server that answers every opening handshake with `response`."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(response)
        await writer.drain()
        writer.close()

    return await asyncio.start_server(answer, "127.0.0.1", 0)


@pytest.mark.parametrize(("header", "seconds"), [(b"Retry-After: 7\r\n", 7.0), (b"", None)])
async def test_a_refused_opening_says_when_to_try_again(header: bytes, seconds: float | None) -> None:
    server = await refusing_server(b"HTTP/1.1 429 Too Many Requests\r\n" + header + b"Content-Length: 0\r\n\r\n")
    async with server:
        port = server.sockets[0].getsockname()[1]
        with pytest.raises(ConnectionLost, match="refused a new connection for now") as lost:
            await open_websocket(f"ws://127.0.0.1:{port}", 5.0)
    assert lost.value.retry_after == seconds


async def test_an_http_server_that_is_no_websocket_server() -> None:
    server = await refusing_server(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
    async with server:
        port = server.sockets[0].getsockname()[1]
        with pytest.raises(ConnectionLost, match="did not answer as a websocket server") as lost:
            await open_websocket(f"ws://127.0.0.1:{port}", 5.0)
    assert lost.value.retry_after is None
