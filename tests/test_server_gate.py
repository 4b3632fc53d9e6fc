"""Before any handshake: new connections and plain HTTP requests per address, files from memory
with ETags, and the client address behind a trusted reverse proxy."""

from __future__ import annotations

import asyncio

import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import InvalidStatus

from partida.server.addresses import Addresses, network_of


async def get(port: int, path: str = "/", headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    lines = [f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", *(f"{k}: {v}" for k, v in (headers or {}).items())]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    await writer.drain()
    raw = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode().split("\r\n")
    fields = {k.lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines)}
    return int(status_line.split()[1]), fields, body


async def test_plain_http_requests_per_address_are_rate_limited(limited) -> None:
    server = await limited(http_request_burst=5, http_requests_per_second=0.5)
    statuses = [(await get(server.config.port, "/app.js"))[0] for _ in range(8)]
    assert statuses[:5] == [200] * 5 and statuses[5:] == [429] * 3
    async with ws_connect(server.url) as ws:  # websocket connections have a budget of their own
        await ws.send('{"type":"hello","version":2}')
        assert "welcome" in await ws.recv()


async def test_new_connections_per_address_are_rate_limited(limited) -> None:
    server = await limited(connection_burst=4, connections_per_address=2, connections_per_second=0.5)
    for _ in range(4):
        async with ws_connect(server.url):
            pass
    with pytest.raises(InvalidStatus) as refused:
        await ws_connect(server.url)
    assert refused.value.response.status_code == 429
    assert (await get(server.config.port))[0] == 200  # the page itself is still served


async def test_files_are_served_with_an_etag_and_not_sent_again(limited) -> None:
    server = await limited()
    status, headers, body = await get(server.config.port, "/app.js")
    assert status == 200 and body and headers["etag"].startswith('"')
    again, _, empty = await get(server.config.port, "/app.js", {"If-None-Match": headers["etag"]})
    assert again == 304 and empty == b""
    changed, _, full = await get(server.config.port, "/app.js", {"If-None-Match": '"other"'})
    assert changed == 200 and full == body


async def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_budget(limited) -> None:
    server = await limited(trusted_proxies=["127.0.0.1"], http_request_burst=2, http_requests_per_second=0.1)
    port = server.config.port
    for client in ("10.0.0.1", "10.0.0.2"):
        statuses = [(await get(port, "/", {"X-Forwarded-For": f"6.6.6.6, {client}"}))[0] for _ in range(3)]
        assert statuses == [200, 200, 429]  # the forged first hop is not who it is limited as


async def test_forwarded_addresses_from_an_untrusted_peer_are_ignored(limited) -> None:
    server = await limited(http_request_burst=2, http_requests_per_second=0.1)
    port = server.config.port
    statuses = [(await get(port, "/", {"X-Forwarded-For": f"10.0.0.{i}"}))[0] for i in range(3)]
    assert statuses == [200, 200, 429]  # one peer, whatever it claims to forward


def test_the_client_address_is_the_last_hop_that_is_not_a_trusted_proxy() -> None:
    addresses = Addresses(["10.0.0.0/8", "127.0.0.1"])
    assert addresses.client("127.0.0.1", "1.2.3.4, 5.6.7.8, 10.1.1.1") == "5.6.7.8"
    assert addresses.client("127.0.0.1", "10.1.1.1") == "127.0.0.1"  # nothing but proxies
    assert addresses.client("127.0.0.1", "not an address") == "127.0.0.1"
    assert addresses.client("8.8.8.8", "1.2.3.4") == "8.8.8.8"  # not a proxy of ours
    assert network_of("192.0.2.77") == "192.0.2.0/24"
    assert network_of("2001:db8:1:2:3:4:5:6") == "2001:db8:1:2::/64"
