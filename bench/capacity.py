"""Capacity benchmark: what idle connections and waiting rooms cost a server, and how long the
lobby listing takes once it holds many rooms.

Starts `partida serve --no-bots` as its own process (SQLite in a temp dir, per-address limits
lifted since every client here comes from one loopback address), then
1. opens C idle websocket connections that each say hello and then stay silent,
2. creates R waiting public rooms (no one seated, so they never start) from a few of them,
3. asks for `list_rooms` several times and times the answer,
and prints one JSON line: the server's RSS at each stage, RSS per connection and per room, and
the `list_rooms` round trip (median and worst, in milliseconds, with the answer's size).

    python bench/capacity.py --connections 10000 --rooms 5000

Each connection takes a file descriptor in this process and in the server; the soft open-file
limit is raised to the hard one (the server inherits it), and the benchmark says so if that is
still too low.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import sys
import tempfile
import time
from typing import Any

import msgpack
from server_process import LIFTED_PUBLIC_ROOMS, rss_mib, served  # bench/server_process.py, beside this script
from websockets.asyncio.client import ClientConnection, connect


def raise_open_files(needed: int) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft < needed:
        sys.exit(f"the open-file limit is {soft}, below the {needed} this run needs; raise it (ulimit -Hn)")
    return soft


class Peer:
    """One raw client: MessagePack requests and their answers, nothing else."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.next_id = 0

    async def request(self, message: dict[str, Any]) -> tuple[dict[str, Any], int]:
        self.next_id += 1
        message["id"] = self.next_id
        await self.ws.send(msgpack.packb(message))
        while True:
            frame = await self.ws.recv()
            answer = msgpack.unpackb(frame)
            if answer.get("id") == self.next_id:
                if answer.get("type") == "error":
                    raise RuntimeError(f"{answer.get('code')}: {answer.get('message')}")
                return answer, len(frame)


async def open_peer(url: str, name: str) -> Peer:
    ws = await connect(url, compression=None, max_size=None, open_timeout=60)
    peer = Peer(ws)
    await peer.request({"type": "hello", "version": 1, "name": name})
    return peer


async def measure(url: str, pid: int, connections: int, rooms: int, repeats: int) -> dict[str, Any]:
    figures: dict[str, Any] = {"connections": connections, "rooms": rooms}
    await asyncio.sleep(1)
    figures["rss_mib_start"] = round(rss_mib(pid), 1)
    peers: list[Peer] = []
    started = time.perf_counter()
    for first in range(0, connections, 250):
        names = [f"idle{i}" for i in range(first, min(first + 250, connections))]
        peers += await asyncio.gather(*(open_peer(url, name) for name in names))
    figures["connect_seconds"] = round(time.perf_counter() - started, 2)
    await asyncio.sleep(2)
    figures["rss_mib_connections"] = round(rss_mib(pid), 1)
    creators = peers[: max(1, min(50, len(peers)))]
    started = time.perf_counter()
    for first in range(0, rooms, len(creators)):
        batch = range(first, min(first + len(creators), rooms))
        await asyncio.gather(
            *(creators[i - first].request({"type": "create_room", "game": "tictactoe", "public": True}) for i in batch)
        )
    figures["create_seconds"] = round(time.perf_counter() - started, 2)
    await asyncio.sleep(2)
    figures["rss_mib_rooms"] = round(rss_mib(pid), 1)
    asker = peers[-1]
    times, size, listed = [], 0, 0
    for _ in range(repeats):
        started = time.perf_counter()
        answer, size = await asker.request({"type": "list_rooms"})
        times.append(time.perf_counter() - started)
        listed = len(answer["rooms"])
    figures["list_rooms_listed"] = listed
    figures["list_rooms_ms_median"] = round(statistics.median(times) * 1000, 1)
    figures["list_rooms_ms_max"] = round(max(times) * 1000, 1)
    figures["list_rooms_bytes"] = size
    figures["kib_per_connection"] = round(
        (figures["rss_mib_connections"] - figures["rss_mib_start"]) * 1024 / max(connections, 1), 1
    )
    figures["kib_per_room"] = round(
        (figures["rss_mib_rooms"] - figures["rss_mib_connections"]) * 1024 / max(rooms, 1), 1
    )
    for first in range(0, len(peers), 500):
        await asyncio.gather(*(p.ws.close() for p in peers[first : first + 500]), return_exceptions=True)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--connections", type=int, default=10_000, help="idle connections (default: %(default)s)")
    parser.add_argument("--rooms", type=int, default=5_000, help="waiting rooms (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=10, help="list_rooms requests to time (default: %(default)s)")
    parser.add_argument("--db", default=None, help="database URL for the server (default: SQLite in a temp dir)")
    args = parser.parse_args()
    limit = raise_open_files(args.connections + 256)
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or f"sqlite+aiosqlite:///{tmp}/capacity.db"
        with served(db, "--no-bots", limits=LIFTED_PUBLIC_ROOMS) as server:
            figures = asyncio.run(measure(server.url, server.pid, args.connections, args.rooms, args.repeats))
            figures["open_file_limit"] = limit
            figures["database"] = db.split(":", 1)[0]
            print(json.dumps(figures), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
