"""What a rated game adds to its storage: the farming verdict at its start and the rating at its
end (`Store.judge_farming`, `Store.rate_game`, each one write through the group writer), timed
one game after another on a database file, and the reads a page asks (a leaderboard, a history).
One JSON line:

    {"games": 200, "accounts": 20, "verdict_ms": {"median": ..., "p95": ...}, "rate_ms": {...},
     "finish_ms": {...}, "leaderboard_ms": ..., "history_ms": ...}

`finish_ms` is the game's own end (its result stored), for scale: a rated game costs the verdict
and the rating on top of it, a casual game nothing.

    python bench/person_ratings.py --games 200 --accounts 20 [--db FILE_OR_URL]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from partida.storage.database import Database
from partida.storage.store import Store

BLITZ = {"initial": 180, "increment": 2}


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median": round(statistics.median(ordered), 3),
        "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 3),
    }


async def run(url: str, games: int, accounts: int, seed: int) -> dict[str, object]:
    rng = random.Random(seed)
    db = await Database.open(url)
    try:
        store = Store(db)
        ids = [(await store.create_user(f"p{i}", f"p{i} horse battery")).id for i in range(accounts)]
        verdicts, rates, finishes = [], [], []
        for n in range(games):
            a, b = rng.sample(ids, 2)
            game_id = await store.create_game("tictactoe", {}, n, "hash", 2, f"B{n}", False, clock=BLITZ, rated=True)
            await store.start_game(game_id, [(0, a, f"p{a}"), (1, b, f"p{b}")])
            addresses = [f"10.0.{rng.randrange(accounts)}.1" for _ in range(2)]
            t0 = time.perf_counter()
            await store.judge_farming(game_id, [a, b], addresses, time.time())
            t1 = time.perf_counter()
            ranks = rng.choice([[1, 2], [2, 1], [1, 1]])
            await store.finish_game(game_id, {"scores": [0, 0], "ranks": ranks, "winners": []})
            t2 = time.perf_counter()
            await store.rate_game(game_id)
            t3 = time.perf_counter()
            verdicts.append((t1 - t0) * 1000)
            finishes.append((t2 - t1) * 1000)
            rates.append((t3 - t2) * 1000)
        t0 = time.perf_counter()
        await store.person_ratings.leaderboard("tictactoe", "blitz", 50)
        t1 = time.perf_counter()
        await store.person_ratings.history(ids[0], "tictactoe", "blitz")
        t2 = time.perf_counter()
    finally:
        await db.close()
    return {
        "games": games,
        "accounts": accounts,
        "verdict_ms": summary(verdicts),
        "rate_ms": summary(rates),
        "finish_ms": summary(finishes),
        "leaderboard_ms": round((t1 - t0) * 1000, 3),
        "history_ms": round((t2 - t1) * 1000, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--accounts", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--db", default=None, help="a database URL or file (default: a new file in a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = args.db or str(Path(folder) / "ratings.db")
        print(json.dumps(asyncio.run(run(url, args.games, args.accounts, args.seed))))


if __name__ == "__main__":
    main()
