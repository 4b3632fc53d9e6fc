"""Chat benchmark: N rooms, two SDK clients each, both saying lines as fast as they can while
the server stores each line (through its group writer, sharing transactions) before pushing it.

The server runs as its own process (`partida serve --no-bots`, SQLite in a temp dir, the abuse
limits and the chat limits lifted: every client comes from one loopback address). Prints one
JSON line per N: lines stored per second, the latency from a client sending a line to the other
client receiving it (milliseconds, percentiles), and the CPU milliseconds per line of the server
and its SQLite writer process together.

    python bench/chat.py --rooms 10 100 --lines 20
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from server_process import LIFTED, cpu_seconds, served  # bench/server_process.py, beside this script

from partida.client import Client

CHAT_LIFTED = (
    *LIFTED,
    "chat_lines_per_second=1e9",
    "chat_burst=1e9",
    "address_chat_lines_per_second=1e9",
    "address_chat_burst=1e9",
)


def server_cpu(pid: int) -> float:
    """The server's CPU seconds and its live children's (the SQLite writer runs as one)."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    return cpu_seconds(pid) + sum(cpu_seconds(int(child)) for child in children)


async def room_pair(url: str, lines: int, latencies: list[float]) -> int:
    """Two players in one room, each saying `lines` lines one after the other; the latency of
    each line is read on the other side."""
    alice = await Client.connect(url, name="alice")
    bob = await Client.connect(url, name="bob")
    try:
        code = (await alice.create_room("tictactoe", seat=0, public=False, auto_start=False))["room"]
        await bob.join(code)
        sent: dict[str, float] = {}

        async def talk(me: Client, name: str) -> None:
            for n in range(lines):
                text = f"{name} {n}"
                sent[text] = time.perf_counter()
                await me.chat(text, room=code)

        async def listen(me: Client, other: str) -> None:
            heard = 0
            while heard < lines:
                message = await me.next_message(code, timeout=60)
                if message["type"] == "chat" and message["message"]["name"] == other:
                    latencies.append(time.perf_counter() - sent[message["message"]["text"]])
                    heard += 1

        await asyncio.gather(talk(alice, "alice"), talk(bob, "bob"), listen(alice, "bob"), listen(bob, "alice"))
        return 2 * lines
    finally:
        await alice.close()
        await bob.close()


async def run_level(url: str, pid: int, rooms: int, lines: int) -> dict[str, float | int]:
    latencies: list[float] = []
    cpu, start = server_cpu(pid), time.perf_counter()
    said = await asyncio.gather(*(room_pair(url, lines, latencies) for _ in range(rooms)))
    elapsed, cpu = time.perf_counter() - start, server_cpu(pid) - cpu
    latencies.sort()
    quantiles = statistics.quantiles(latencies, n=100, method="inclusive")
    total = sum(said)
    return {
        "rooms": rooms,
        "lines": total,
        "seconds": round(elapsed, 3),
        "lines_per_second": round(total / elapsed, 1),
        "latency_ms_p50": round(quantiles[49] * 1000, 2),
        "latency_ms_p99": round(quantiles[98] * 1000, 2),
        "server_cpu_ms_per_line": round(1000 * cpu / total, 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rooms", type=int, nargs="+", default=[10, 100], help="values of N")
    parser.add_argument("--lines", type=int, default=20, help="lines each player says (default: %(default)s)")
    parser.add_argument("--db", default=None, help="database URL for the server (default: SQLite in a temp dir)")
    args = parser.parse_args()
    for rooms in args.rooms:
        with tempfile.TemporaryDirectory() as tmp:
            db = args.db or f"sqlite+aiosqlite:///{tmp}/chat.db"
            with served(db, "--no-bots", limits=CHAT_LIFTED) as server:
                figures = asyncio.run(run_level(server.url, server.pid, rooms, args.lines))
                figures["database"] = db.split(":", 1)[0]
                print(json.dumps(figures), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
