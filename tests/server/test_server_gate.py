"""Before any handshake: new connections and plain HTTP requests per address, files from memory
with ETags, and the client address behind a trusted reverse proxy."""

from __future__ import annotations

import asyncio
import re
from importlib import resources

import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.datastructures import Headers
from websockets.exceptions import InvalidStatus
from websockets.http11 import Response

from partida.server import web
from partida.server.addresses import Addresses, network_of


async def get(
    port: int, path: str = "/", headers: dict[str, str] | None = None, source: str | None = None
) -> tuple[int, dict[str, str], bytes]:
    """One GET on a connection of its own (the server closes each), from `source` if given."""
    local = (source, 0) if source is not None else None
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=local)
    lines = [f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", *(f"{k}: {v}" for k, v in (headers or {}).items())]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    await writer.drain()
    raw = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode().split("\r\n")
    fields = {k.lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines)}
    return int(status_line.split()[1]), fields, body


LINKED = re.compile(r'(?:href|src)="(/[^"#]+)"')  # a link to a route (`/#/account`) loads nothing
IMPORTED = re.compile(r'^import [^;]*? from "\./([^"]+)";', re.M)


async def page_load(port: int, source: str, cache: dict[str, tuple[str, bytes]] | None = None) -> dict[str, int]:
    """Load the page as a browser does: the page, then what it links, then each module's
    imports as they arrive, several at once. With `cache` (path -> ETag and body) the requests
    are conditional and a 304 is read from it, as a browser's cache is. The status of every file."""
    statuses: dict[str, int] = {}

    async def fetch(path: str) -> bytes:
        kept = cache.get(path) if cache is not None else None
        status, headers, body = await get(port, path, {"If-None-Match": kept[0]} if kept else None, source)
        statuses[path] = status
        if status == 304 and kept:
            return kept[1]
        if cache is not None and status == 200:
            cache[path] = (headers["etag"], body)
        return body if status == 200 else b""

    wanted = LINKED.findall((await fetch("/")).decode())
    while wanted:
        fresh = [path for path in dict.fromkeys(wanted) if path not in statuses]
        bodies = await asyncio.gather(*(fetch(path) for path in fresh))
        wanted = [
            f"/{name}" for path, body in zip(fresh, bodies, strict=True) for name in IMPORTED.findall(body.decode())
        ]
    return statuses


@pytest.mark.realtime
async def test_a_crowd_behind_one_address_gets_every_file_of_every_page(limited) -> None:
    """30 people behind one address (a class, an office's NAT) open the page at once: every file
    of every page is served, with the default limits. (30 more 10 s later are served too:
    tests/server/test_limits.py, on the limiter's clock moved by hand.)"""
    server = await limited()
    port = server.config.port
    first = await asyncio.gather(*(page_load(port, "127.0.0.5") for _ in range(30)))
    assert set(first[0]) - {"/"} == set(web.FILES) - {"/index.html"}  # the page loads every shipped file
    refused = [(path, status) for load in first for path, status in load.items() if status != 200]
    assert refused == [] and all(load.keys() == first[0].keys() for load in first)


async def test_a_page_load_costs_one_page_and_a_reload_from_the_cache_half(limited) -> None:
    # two page loads and a rounding's worth: a file's cost is a float share of the page
    server = await limited(http_page_burst=2.001, http_pages_per_second=0.001)
    port = server.config.port
    cache: dict[str, tuple[str, bytes]] = {}
    assert set((await page_load(port, "127.0.0.6", cache)).values()) == {200}
    for _ in range(2):  # every file not modified: 18 requests, half a page
        assert set((await page_load(port, "127.0.0.6", cache)).values()) == {304}
    status, headers, _ = await get(port, "/", source="127.0.0.6")
    assert status == 429 and int(headers["retry-after"]) > 0


@pytest.mark.realtime
async def test_a_flood_of_the_biggest_script_from_one_address_is_refused(limited) -> None:
    """Someone GETting app.js in a loop is held to the rate; a refusal costs nothing more and
    says when to come back, and at that time the same request is served."""
    server = await limited()
    port = server.config.port
    statuses: list[int] = []
    while len(statuses) < 2000 and 429 not in statuses:
        statuses.append((await get(port, "/app.js", source="127.0.0.7"))[0])
    assert statuses[-1] == 429 and 100 < len(statuses) < 1000  # a few hundred: the burst of 60 pages
    status, headers, _ = await get(port, "/app.js", source="127.0.0.7")
    assert status == 429 and headers["retry-after"] == "1"  # 1 page a second: a sixth of a page comes in 1 s
    assert (await get(port, "/app.js", source="127.0.0.8"))[0] == 200  # another address is not held
    await asyncio.sleep(int(headers["retry-after"]))
    assert (await get(port, "/app.js", source="127.0.0.7"))[0] == 200


def app_js_per_page() -> int:
    """How many loads of the biggest script one page load's budget pays for (web.cost): fewer
    as the page's other files grow."""
    body = (resources.files("partida.web") / "app.js").read_bytes()
    fits = int(1 / web.cost(Response(200, "OK", Headers(), body)))
    assert fits >= 2
    return fits


async def test_plain_http_requests_per_address_are_rate_limited(limited) -> None:
    server = await limited(http_page_burst=1, http_pages_per_second=0.001)
    fits = app_js_per_page()
    statuses = [(await get(server.config.port, "/app.js"))[0] for _ in range(fits + 3)]
    assert statuses == [200] * fits + [429] * 3
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
    server = await limited(trusted_proxies=["127.0.0.1"], http_page_burst=1, http_pages_per_second=0.001)
    port = server.config.port
    fits = app_js_per_page()
    for client in ("10.0.0.1", "10.0.0.2"):
        statuses = [(await get(port, "/app.js", {"X-Forwarded-For": f"6.6.6.6, {client}"}))[0] for _ in range(fits + 1)]
        assert statuses == [200] * fits + [429]  # the forged first hop is not who it is limited as


async def test_forwarded_addresses_from_an_untrusted_peer_are_ignored(limited) -> None:
    server = await limited(http_page_burst=1, http_pages_per_second=0.001)
    port = server.config.port
    fits = app_js_per_page()
    statuses = [(await get(port, "/app.js", {"X-Forwarded-For": f"10.0.0.{i}"}))[0] for i in range(fits + 1)]
    assert statuses == [200] * fits + [429]  # one peer, whatever it claims to forward


def test_the_client_address_is_the_last_hop_that_is_not_a_trusted_proxy() -> None:
    addresses = Addresses(["10.0.0.0/8", "127.0.0.1"])
    assert addresses.client("127.0.0.1", "1.2.3.4, 5.6.7.8, 10.1.1.1") == "5.6.7.8"
    assert addresses.client("127.0.0.1", "10.1.1.1") == "127.0.0.1"  # nothing but proxies
    assert addresses.client("127.0.0.1", "not an address") == "127.0.0.1"
    assert addresses.client("8.8.8.8", "1.2.3.4") == "8.8.8.8"  # not a proxy of ours
    assert network_of("192.0.2.77") == "192.0.2.0/24"
    assert network_of("2001:db8:1:2:3:4:5:6") == "2001:db8:1:2::/64"
