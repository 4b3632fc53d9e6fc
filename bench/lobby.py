"""The lobby at scale: `list_rooms` and the lobby's pushes with many public rooms.

Starts `partida serve --no-bots` as its own process (SQLite in a temp dir, the per-address limits
lifted, since every client here comes from one loopback address), creates R public waiting rooms
(nobody seated: they never start) from a few raw websocket clients, then measures
1. `list_rooms` pages: the first page (default size, and the largest), cold (just after a room
   changed, so the page is built) and warm (its bytes cached), and a page deep in the lobby
   (reached by following `next`), each as the asker's round trip, with the answer's bytes;
2. the pushes' fan-out: W connections watch the lobby while rooms are created at a steady rate,
   and the same creations run again with nobody watching; the server's extra CPU (from /proc)
   over the pushes that reached the watchers is the fan-out cost, per push and per watcher,
   with the bytes each watcher received and how late a new room reached them (from its
   `create_room` reply to the `lobby` push naming it).
Prints one JSON line.

    python bench/lobby.py --rooms 100000 --watchers 200
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from typing import Any

import msgpack
from server_process import (  # bench/server_process.py, beside this script
    LIFTED_PUBLIC_ROOMS,
    cpu_seconds,
    rss_mib,
    served,
)
from websockets.asyncio.client import ClientConnection, connect


class Peer:
    """One raw client: MessagePack requests and their answers; pushes are counted, the codes of
    the rooms they name kept with when they arrived."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.next_id = 0
        self.waiting: dict[int, asyncio.Future[tuple[dict[str, Any], int]]] = {}
        self.pushes = 0
        self.push_bytes = 0
        self.seen: dict[str, float] = {}
        self.reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        async for frame in self.ws:
            message = msgpack.unpackb(frame)
            future = self.waiting.pop(message.get("id"), None) if "id" in message else None
            if future is not None:
                future.set_result((message, len(frame)))
            elif message.get("type") == "lobby":
                now = time.perf_counter()
                self.pushes += 1
                self.push_bytes += len(frame)
                for room in message.get("rooms", ()):
                    self.seen.setdefault(room["code"], now)

    async def request(self, message: dict[str, Any]) -> tuple[dict[str, Any], int]:
        self.next_id += 1
        message["id"] = self.next_id
        future: asyncio.Future[tuple[dict[str, Any], int]] = asyncio.get_running_loop().create_future()
        self.waiting[self.next_id] = future
        await self.ws.send(msgpack.packb(message))
        answer, size = await future
        if answer.get("type") == "error":
            raise RuntimeError(f"{answer.get('code')}: {answer.get('message')}")
        return answer, size

    async def close(self) -> None:
        await self.ws.close()
        self.reader.cancel()


async def open_peer(url: str, name: str) -> Peer:
    peer = Peer(await connect(url, compression=None, max_size=None, open_timeout=60))
    await peer.request({"type": "hello", "version": 1, "name": name})
    return peer


async def create_rooms(creators: list[Peer], count: int) -> list[str]:
    codes: list[str] = []
    for first in range(0, count, len(creators)):
        batch = range(first, min(first + len(creators), count))
        answers = await asyncio.gather(
            *(creators[i - first].request({"type": "create_room", "game": "tictactoe", "public": True}) for i in batch)
        )
        codes += [answer["room"]["code"] for answer, _ in answers]
    return codes


async def timed(peer: Peer, message: dict[str, Any]) -> tuple[float, int, dict[str, Any]]:
    started = time.perf_counter()
    answer, size = await peer.request(dict(message))
    return (time.perf_counter() - started) * 1000, size, answer


async def pages(creator: Peer, asker: Peer, repeats: int, deep: int) -> dict[str, Any]:
    """The round trips of page requests: cold ones follow a room's creation (its filter's pages
    are built again), warm ones repeat a request within the page's second."""
    figures: dict[str, Any] = {}
    for limit in (50, 200):
        cold, warm, size = [], [], 0
        for _ in range(repeats):
            await create_rooms([creator], 1)
            ms, size, _ = await timed(asker, {"type": "list_rooms", "limit": limit})
            cold.append(ms)
            warm.append((await timed(asker, {"type": "list_rooms", "limit": limit}))[0])
        figures[f"first_page_{limit}"] = {
            "cold_ms_median": round(statistics.median(cold), 2),
            "cold_ms_max": round(max(cold), 2),
            "warm_ms_median": round(statistics.median(warm), 2),
            "bytes": size,
        }
    cursor, walked = None, []
    for _ in range(deep):  # follow `next` down the lobby, 200 rooms a page
        ms, size, answer = await timed(asker, {"type": "list_rooms", "limit": 200, "cursor": cursor})
        walked.append(ms)
        cursor = answer["next"]
        if cursor is None:
            break
    figures["walk_200"] = {"pages": len(walked), "ms_median": round(statistics.median(walked), 2), "bytes": size}
    return figures


async def fan_out(url: str, pid: int, creator: Peer, watchers: int, seconds: float, rate: float) -> dict[str, Any]:
    """Rooms created at `rate` a second for `seconds`, first with nobody watching, then with
    `watchers` watching: the server's CPU in each run, and what the watchers received."""
    runs: dict[str, Any] = {}
    peers: list[Peer] = []
    for label in ("unwatched", "watched"):
        if label == "watched":
            for first in range(0, watchers, 100):
                batch = range(first, min(first + 100, watchers))
                peers += await asyncio.gather(*(open_peer(url, f"watcher{i}") for i in batch))
            await asyncio.gather(*(p.request({"type": "list_rooms", "watch": True}) for p in peers))
        await asyncio.sleep(1.5)
        for peer in peers:
            peer.pushes = peer.push_bytes = 0
        created: dict[str, float] = {}
        before = cpu_seconds(pid)
        started = time.perf_counter()
        count = 0
        while time.perf_counter() - started < seconds:
            count += 1
            (code,) = await create_rooms([creator], 1)
            created[code] = time.perf_counter()
            await asyncio.sleep(max(0.0, started + count / rate - time.perf_counter()))
        await asyncio.sleep(1.0)  # the last push
        runs[label] = {"cpu_s": cpu_seconds(pid) - before, "rooms": count}
        if label == "watched":
            late = [p.seen[code] - at for p in peers for code, at in created.items() if code in p.seen]
            pushes = statistics.mean(p.pushes for p in peers)
            runs["watched"] |= {
                "pushes_per_watcher": round(pushes, 1),
                "bytes_per_push": round(sum(p.push_bytes for p in peers) / max(1, sum(p.pushes for p in peers))),
                "rooms_seen_share": round(len(late) / max(1, len(created) * len(peers)), 3),
                "push_delay_ms_median": round(statistics.median(late) * 1000, 1) if late else None,
                "push_delay_ms_p99": round(sorted(late)[int(len(late) * 0.99)] * 1000, 1) if late else None,
            }
    extra = runs["watched"]["cpu_s"] - runs["unwatched"]["cpu_s"]
    pushes = runs["watched"]["pushes_per_watcher"]
    await asyncio.gather(*(p.close() for p in peers), return_exceptions=True)
    return {
        "watchers": watchers,
        "rooms_per_s": rate,
        "seconds": seconds,
        "runs": {k: {**v, "cpu_s": round(v["cpu_s"], 3)} for k, v in runs.items()},
        "fan_out_cpu_ms_per_push": round(1000 * extra / max(pushes, 1), 3),
        "fan_out_cpu_us_per_watcher_push": round(1e6 * extra / max(pushes * watchers, 1), 2),
    }


async def measure(url: str, pid: int, args: argparse.Namespace) -> dict[str, Any]:
    creators = [await open_peer(url, f"creator{i}") for i in range(args.creators)]
    asker = await open_peer(url, "asker")
    started = time.perf_counter()
    await create_rooms(creators, args.rooms)
    figures: dict[str, Any] = {"rooms": args.rooms, "create_seconds": round(time.perf_counter() - started, 1)}
    figures["server_rss_mib"] = round(rss_mib(pid), 1)
    figures["pages"] = await pages(creators[0], asker, args.repeats, args.deep)
    figures["pushes"] = await fan_out(url, pid, creators[0], args.watchers, args.seconds, args.rate)
    await asyncio.gather(*(p.close() for p in [*creators, asker]), return_exceptions=True)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rooms", type=int, default=100_000, help="public waiting rooms (default: %(default)s)")
    parser.add_argument("--creators", type=int, default=50, help="connections creating them (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=10, help="timed first-page requests (default: %(default)s)")
    parser.add_argument("--deep", type=int, default=20, help="pages followed down the lobby (default: %(default)s)")
    parser.add_argument("--watchers", type=int, default=200, help="connections watching (default: %(default)s)")
    parser.add_argument("--seconds", type=float, default=10.0, help="each push run's length (default: %(default)s)")
    parser.add_argument("--rate", type=float, default=20.0, help="rooms created a second (default: %(default)s)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        with served(f"sqlite+aiosqlite:///{tmp}/lobby.db", "--no-bots", limits=LIFTED_PUBLIC_ROOMS) as server:
            print(json.dumps(asyncio.run(measure(server.url, server.pid, args))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
