"""Server CPU per move with a running arena of bots, against the same load without it.

For each round, two servers are run in turn (`partida serve --no-bots`, a fresh SQLite file each,
the per-address limits lifted): one quiet but for the load, one with an arena tournament under way
among B bot accounts. The load is `bench/load.py`'s: M pairs of SDK clients playing tic-tac-toe
back to back until each pair made its moves. The arena's bots (in this process) join it over the
protocol, are seated by the server and answer each decision after a pause of `--think` seconds
(a random legal move), so the arena is a steady trickle of games the tournament service pairs
and scores, not a second flood of moves. One JSON line per run: the load's moves and latency,
the arena's moves and games made meanwhile, and the server's CPU (from /proc) per load move and
per move of either kind. What the tournament service costs shows as the difference in CPU per
move of either kind between the two lines of a round.

    python bench/arena_cpu.py --bots 200 --m 10 --moves 300 --rounds 1
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
from datetime import UTC, datetime
from typing import Any

from load import room_pair  # bench/load.py and server_process.py, beside this script
from server_process import LIFTED_PUBLIC_ROOMS, cpu_seconds, served

from partida.client import Client
from partida.games.prompts import Prompt
from partida.storage.database import Database
from partida.storage.store import Store
from partida.storage.tournaments import TournamentStore

ARENA = "bench-arena"


async def prepare(db_url: str, bots: int) -> list[str]:
    """The schema, B bot accounts and the arena (started now, an hour long); the bots' tokens."""
    db = await Database.open(db_url)
    try:
        store = Store(db)
        tokens = [(await store.create_bot(f"arena{i}"))[1] for i in range(bots)]
        clock = {"initial": 600.0, "increment": 0.0}
        await TournamentStore(db).create(
            ARENA, "tictactoe", {}, 2, clock, "arena", "bots", datetime.now(UTC), duration=3600.0
        )
    finally:
        await db.close()
    return tokens


class ArenaBot:
    """A bot account that enters the arena and plays every game it is seated in, slowly."""

    def __init__(self, url: str, token: str, think: float, rng: random.Random) -> None:
        self.url, self.token, self.think, self.rng = url, token, think, rng
        self.moves = 0
        self.games = 0

    async def run(self) -> None:
        client = await Client.connect(self.url, token=self.token, agent="random", games=["tictactoe"])
        games: set[asyncio.Task[None]] = set()
        try:
            await client.tournament_join(ARENA)
            while True:
                seated = await client.seated.get()
                task = asyncio.get_running_loop().create_task(self._play(client, seated["room"]))
                games.add(task)
                task.add_done_callback(games.discard)
        finally:
            for task in games:
                task.cancel()
            await asyncio.gather(*games, return_exceptions=True)
            await client.close()

    async def _play(self, client: Client, room: str) -> None:
        async def decide(update: dict[str, Any], prompt: Prompt) -> Any:
            await asyncio.sleep(self.think * (0.5 + self.rng.random()))
            self.moves += 1
            return prompt.random_answer(self.rng)

        await client.play(room, decide)
        self.games += 1


async def measure(url: str, pid: int, tokens: list[str], args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    bots = [ArenaBot(url, token, args.think, random.Random(rng.random())) for token in tokens]
    tasks = [asyncio.get_running_loop().create_task(bot.run()) for bot in bots]
    try:
        await asyncio.sleep(args.warmup if bots else 1.0)  # the arena under way: every bot paired once or more
        moves_before = sum(b.moves for b in bots)
        games_before = sum(b.games for b in bots)
        latencies: list[float] = []
        cpu_before = cpu_seconds(pid, children=True)
        started = time.perf_counter()
        made = await asyncio.gather(
            *(room_pair(url, args.moves, latencies, random.Random(rng.random())) for _ in range(args.m))
        )
        elapsed = time.perf_counter() - started
        cpu = cpu_seconds(pid, children=True) - cpu_before
        arena_moves = sum(b.moves for b in bots) - moves_before
        arena_games = (sum(b.games for b in bots) - games_before) // 2
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    load_moves = sum(made)
    latencies.sort()
    return {
        "arena_bots": len(tokens),
        "M": args.m,
        "load_moves": load_moves,
        "seconds": round(elapsed, 2),
        "load_moves_per_s": round(load_moves / elapsed, 1),
        "latency_ms_p50": round(statistics.median(latencies) * 1000, 2),
        "latency_ms_p99": round(latencies[int(len(latencies) * 0.99)] * 1000, 2),
        "arena_moves": arena_moves,
        "arena_games": arena_games,
        "server_cpu_s": round(cpu, 2),
        "server_cpu_ms_per_load_move": round(1000 * cpu / max(1, load_moves), 3),
        "server_cpu_ms_per_move": round(1000 * cpu / max(1, load_moves + arena_moves), 3),
    }


def one_run(bots: int, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        db = f"sqlite+aiosqlite:///{tmp}/arena.db"
        tokens = asyncio.run(prepare(db, bots))
        with served(db, "--no-bots", limits=LIFTED_PUBLIC_ROOMS) as server:
            return asyncio.run(measure(server.url, server.pid, tokens, args))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bots", type=int, default=200, help="the arena's bots (default: %(default)s)")
    parser.add_argument("--m", type=int, default=10, help="the load's concurrent games (default: %(default)s)")
    parser.add_argument("--moves", type=int, default=300, help="moves per load game pair (default: %(default)s)")
    parser.add_argument("--think", type=float, default=1.0, help="a bot's mean pause per move (default: %(default)s)")
    parser.add_argument(
        "--warmup", type=float, default=8.0, help="seconds of arena before the load (default: %(default)s)"
    )
    parser.add_argument("--rounds", type=int, default=1, help="runs of each kind (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for _ in range(args.rounds):
        for bots in (0, args.bots):
            print(json.dumps(one_run(bots, args)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
