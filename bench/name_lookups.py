"""What a guest's hello costs the database: `Store.reserved_name` (is this name an account's, in
any case?), asked for many names at once, as when many guests connect together.

    python bench/name_lookups.py [--db URL] [--n 1000] [--rounds 3]

Prints one JSON line per round: the lookups, and the process's CPU milliseconds and wall
milliseconds per lookup. Without --db it uses a fresh SQLite file in a temporary folder. To
compare two builds, run this file with each one's Python (each imports its own `partida`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from partida.storage.database import Database
from partida.storage.store import Store


async def run(url: str, n: int, rounds: int) -> None:
    db = await Database.open(url)
    store = Store(db)
    try:
        for _ in range(rounds):
            cpu, wall = time.process_time(), time.perf_counter()
            found = await asyncio.gather(*(store.reserved_name(f"guest-{i}") for i in range(n)))
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            assert not any(found)
            figures = {"backend": db.dialect, "lookups": n}
            figures |= {"cpu_ms_per_lookup": round(1000 * cpu / n, 3), "wall_ms_per_lookup": round(1000 * wall / n, 3)}
            print(json.dumps(figures), flush=True)
    finally:
        await db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default=None, help="database URL (default: a fresh SQLite file)")
    parser.add_argument("--n", type=int, default=1000, help="lookups at once (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (default: %(default)s)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(run(args.db or f"sqlite:///{Path(tmp) / 'p.db'}", args.n, args.rounds))


if __name__ == "__main__":
    main()
