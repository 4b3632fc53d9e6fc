"""Load benchmark: N concurrent tic-tac-toe rooms, two SDK clients each, playing games back to back
through one server on loopback, for a fixed number of moves per room.

The server runs as its own process (`partida serve --no-bots`, SQLite in a temp dir, the abuse
limits lifted: every client comes from one loopback address) so that its peak RSS is its own; the
clients share this process. Prints one JSON line per N:
moves per second, move round-trip latency percentiles in milliseconds (from one client sending a
move to the other client receiving the new view), and the server's peak RSS in MiB.

    python bench/load.py --rooms 10 100 500 --moves 40
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time

from server_process import peak_rss_mib, served  # bench/server_process.py, beside this script

from partida.client import Client


async def room_pair(url: str, moves: int, latencies: list[float], rng: random.Random) -> int:
    """Play games back to back until `moves` moves have been made in this pair's rooms."""
    alice = await Client.connect(url, name="alice")
    bob = await Client.connect(url, name="bob")
    clients = [alice, bob]
    made = 0
    try:
        while made < moves:
            code = (await alice.create_room("tictactoe", seat=0, public=False))["room"]
            await bob.join(code)
            sent_at: dict[int, float] = {}
            seat_to_move = 0
            update = await alice.next_update(code)
            await bob.next_update(code)
            while update["status"] != "finished" and made < moves:
                mover, other = clients[seat_to_move], clients[1 - seat_to_move]
                square = rng.choice(update["decision"]["options"])
                sent_at[update["seq"] + 1] = time.perf_counter()
                await mover.send({"type": "act", "room": code, "action": square, "seq": update["seq"]})
                update = await other.next_update(code)
                latencies.append(time.perf_counter() - sent_at[update["seq"]])
                await mover.next_update(code)
                made += 1
                seat_to_move = 1 - seat_to_move
            if update["status"] != "finished":
                await alice.leave(code)
                await bob.leave(code)
    finally:
        await alice.close()
        await bob.close()
    return made


async def run_level(url: str, rooms: int, moves: int, seed: int) -> dict[str, float | int]:
    latencies: list[float] = []
    rng = random.Random(seed)
    start = time.perf_counter()
    made = await asyncio.gather(*(room_pair(url, moves, latencies, random.Random(rng.random())) for _ in range(rooms)))
    elapsed = time.perf_counter() - start
    latencies.sort()
    quantiles = statistics.quantiles(latencies, n=100, method="inclusive")
    return {
        "rooms": rooms,
        "clients": 2 * rooms,
        "moves": sum(made),
        "seconds": round(elapsed, 3),
        "moves_per_second": round(sum(made) / elapsed, 1),
        "latency_ms_p50": round(quantiles[49] * 1000, 2),
        "latency_ms_p95": round(quantiles[94] * 1000, 2),
        "latency_ms_p99": round(quantiles[98] * 1000, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rooms", type=int, nargs="+", default=[10, 100, 500], help="values of N")
    parser.add_argument("--moves", type=int, default=40, help="moves per room (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--db", default=None, help="database URL for the server (default: SQLite in a temp dir)")
    args = parser.parse_args()
    for rooms in args.rooms:
        with tempfile.TemporaryDirectory() as tmp:
            db = args.db or f"sqlite+aiosqlite:///{tmp}/load.db"
            with served(db, "--no-bots") as server:
                figures = asyncio.run(run_level(server.url, rooms, args.moves, args.seed))
                figures["server_peak_rss_mib"] = round(peak_rss_mib(server.pid), 1)
                figures["database"] = db.split(":", 1)[0]
                print(json.dumps(figures), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
