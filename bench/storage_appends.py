"""How fast the hot path is: `Store.append_action` from many concurrent rooms.

    python bench/storage_appends.py [--db URL] [--rooms 500] [--moves 20]

Each room appends its moves one after another, as a room task does (each append committed before
the next); all rooms run at once. Prints one JSON line: appends per second overall, and the median
and 99th-percentile latency of one append. Without --db it uses a fresh SQLite file in a temporary
folder. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from partida.storage.database import Database
from partida.storage.store import Store


async def run(url: str, rooms: int, moves: int) -> dict[str, object]:
    db = await Database.open(url)
    store = Store(db)
    try:
        games = [await store.create_game("tictactoe", {}, i, "h", 2, f"B{i}", True) for i in range(rooms)]
        latencies: list[float] = []

        async def play(game_id: int) -> None:
            for index in range(moves):
                began = time.perf_counter()
                await store.append_action(game_id, index, index % 2, {"cell": index})
                latencies.append(time.perf_counter() - began)

        began = time.perf_counter()
        await asyncio.gather(*(play(game_id) for game_id in games))
        seconds = time.perf_counter() - began
        stored = await store.load_game(games[-1])
        assert stored is not None and len(stored.actions) == moves
    finally:
        await db.close()
    latencies.sort()
    return {
        "backend": db.dialect,
        "rooms": rooms,
        "moves_per_room": moves,
        "appends": rooms * moves,
        "seconds": round(seconds, 3),
        "appends_per_second": round(rooms * moves / seconds, 1),
        "latency_ms_median": round(statistics.median(latencies) * 1000, 2),
        "latency_ms_p99": round(latencies[int(len(latencies) * 0.99) - 1] * 1000, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default=None, help="database URL (default: a fresh SQLite file)")
    parser.add_argument("--rooms", type=int, default=500)
    parser.add_argument("--moves", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = args.db or str(Path(folder) / "bench.db")
        print(json.dumps(asyncio.run(run(url, args.rooms, args.moves))), flush=True)


if __name__ == "__main__":
    main()
