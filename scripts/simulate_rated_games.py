"""Write a database of simulated rated games between bot accounts of known strengths, for
`partida ratings evaluate` (docs/ratings.md has the figures it gave):

    python scripts/simulate_rated_games.py sim.db --games 2400 --tables 400 --bots 40 --seed 1
    partida ratings evaluate --db sim.db --plot docs/img/ratings-evaluate.png

The results are **drawn from known strengths**, not played: each bot has a true strength on the
Elo scale (drawn from a normal law, mean 1500, spread 300), and a quarter of them improve by 300
points over the run, as people who are learning do (the case Glicko-2's volatility is for). A
two-seat game is drawn by the logistic law (the stronger side wins 1 / (1 + 10^(-gap/400)) of
the decisive games) with draws likelier between equals (`DRAWS` of even games, fewer as the gap
grows). A four-seat game's order is drawn by Plackett-Luce from the same strengths.

Why drawn rather than played: the strengths are then known exactly (a search budget's strength
is itself only measured by such games), the game-by-game law is known, and 2,000 games take
seconds where real games between engines at several budgets would take an hour of this machine's
two shared cores. The price: the law is the logistic one that Elo and Glicko assume, so it
favours neither against the other but does not test how they cope with another law.

Bots arrive over the first 60% of the run (newcomers keep coming, as on a server); half the games
pair a bot with a random active one, half with one of the five nearest in strength (as seeks with
rating ranges do). Everything goes through the real store: bot accounts, rated games with a blitz
clock, started, finished with ranks, and rated by the server's own `rate_game`, so the file is a
server's database like any other. The seed fixes everything.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from partida.storage.database import Database
from partida.storage.store import Store

BLITZ = {"initial": 180, "increment": 2}
SPREAD = 300.0
LEARNERS = 0.25
GAIN = 300.0
DRAWS = 0.15  # the draw share of a game between equals
ARRIVALS = 0.6  # the share of the run over which bots arrive
FIRST = 6  # bots there from the start


@dataclass
class Bot:
    name: str
    account: int
    start: float
    gain: float
    arrives: int

    def strength(self, progress: float) -> float:
        return self.start + self.gain * progress


def two_seat_law(a: float, b: float) -> tuple[float, float]:
    """The first seat's chance of winning a decisive game, and the chance of a draw."""
    p = 1.0 / (1.0 + 10.0 ** ((b - a) / 400.0))
    return p, DRAWS * (1.0 - abs(2.0 * p - 1.0))


def two_seat_ranks(rng: random.Random, a: float, b: float) -> list[int]:
    p, draw = two_seat_law(a, b)
    if rng.random() < draw:
        return [1, 1]
    return [1, 2] if rng.random() < p else [2, 1]


def table_ranks(rng: random.Random, strengths: list[float]) -> list[int]:
    """Plackett-Luce: first place drawn with weights 10^(s/400), then second among the rest..."""
    left = list(range(len(strengths)))
    ranks = [0] * len(strengths)
    for place in range(1, len(strengths) + 1):
        weights = [10.0 ** (strengths[i] / 400.0) for i in left]
        pick = rng.choices(left, weights)[0]
        ranks[pick] = place
        left.remove(pick)
    return ranks


async def simulate(path: Path, games: int, tables: int, bots: int, seed: int) -> dict[str, object]:
    rng = random.Random(seed)
    db = await Database.open(f"sqlite:///{path}")
    store = Store(db)
    total = games + tables
    try:
        crew = []
        for n in range(bots):
            start = rng.gauss(1500.0, SPREAD)
            gain = GAIN if rng.random() < LEARNERS else 0.0
            arrives = 0 if n < FIRST else int(rng.random() * ARRIVALS * total)
            name = f"sim{n:02d}-{round(start)}" + ("-learns" if gain else "")
            account, _token = await store.create_bot(name)
            crew.append(Bot(name, account.id, start, gain, arrives))
        kinds = ["pair"] * games + ["table"] * tables
        rng.shuffle(kinds)
        draws = 0
        # The truth as a model: the loss and share of a predictor that knows the strengths, the
        # best any rating model can do on these games (the same counts as `ratings evaluate`).
        truth = {"loss": 0.0, "decisive": 0, "predicted": 0.0, "table_loss": 0.0, "table_predicted": 0.0}
        began = time.perf_counter()
        for n, kind in enumerate(kinds):
            progress = n / total
            active = [b for b in crew if b.arrives <= n]
            if kind == "pair":
                first = rng.choice(active)
                others = [b for b in active if b is not first]
                if rng.random() < 0.5:
                    others.sort(key=lambda b: abs(b.strength(progress) - first.strength(progress)))
                    others = others[:5]
                seated = [first, rng.choice(others)]
                rng.shuffle(seated)
                a, b = (bot.strength(progress) for bot in seated)
                ranks = two_seat_ranks(rng, a, b)
                draws += ranks[0] == ranks[1]
                p, draw = two_seat_law(a, b)
                expected = draw / 2 + (1 - draw) * p
                score = 0.5 if ranks[0] == ranks[1] else (1.0 if ranks[0] == 1 else 0.0)
                truth["loss"] -= score * math.log(expected) + (1 - score) * math.log(1 - expected)
                if score != 0.5:
                    truth["decisive"] += 1
                    truth["predicted"] += 0.5 if expected == 0.5 else float((expected > 0.5) == (score == 1.0))
                game = "othello"
            else:
                seated = rng.sample(active, 4)
                strengths = [b.strength(progress) for b in seated]
                ranks = table_ranks(rng, strengths)
                weights = [10.0 ** (s / 400.0) for s in strengths]
                winner = ranks.index(1)
                truth["table_loss"] -= math.log(weights[winner] / sum(weights))
                truth["table_predicted"] += float(weights[winner] == max(weights))
                game = "hearts"
            game_id = await store.create_game(
                game, {}, n, "simulated", len(seated), f"S{n}", False, clock=BLITZ, rated=True
            )
            await store.start_game(game_id, [(i, b.account, b.name) for i, b in enumerate(seated)])
            winners = [i for i, r in enumerate(ranks) if r == 1]
            result = {"scores": [len(ranks) - r for r in ranks], "ranks": ranks, "winners": winners}
            await store.finish_game(game_id, result)
            if not await store.rate_game(game_id):
                raise RuntimeError(f"game {game_id} was not rated")
        seconds = time.perf_counter() - began
    finally:
        await db.close()
    return {
        "database": str(path),
        "two_seat_games": games,
        "draws": draws,
        "four_seat_games": tables,
        "bots": bots,
        "learners": sum(1 for b in crew if b.gain),
        "seed": seed,
        "seconds": round(seconds, 1),
        "truth": {
            "two_seat": {
                "predicted": round(truth["predicted"] / max(1, truth["decisive"]), 4),
                "log_loss": round(truth["loss"] / max(1, games), 4),
            },
            "four_seat": {
                "predicted": round(truth["table_predicted"] / max(1, tables), 4),
                "log_loss": round(truth["table_loss"] / max(1, tables), 4),
            },
        },
        "strengths": {b.name: [round(b.start), round(b.start + b.gain)] for b in crew},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("database", type=Path, help="a new SQLite file")
    parser.add_argument("--games", type=int, default=2400, help="two-seat rated games (default: %(default)s)")
    parser.add_argument("--tables", type=int, default=400, help="four-seat rated games (default: %(default)s)")
    parser.add_argument("--bots", type=int, default=40, help="bot accounts (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.database.exists():
        print(f"{args.database} exists: name a new file", file=sys.stderr)
        return 2
    if args.bots < FIRST:
        print(f"at least {FIRST} bots", file=sys.stderr)
        return 2
    print(json.dumps(asyncio.run(simulate(args.database, args.games, args.tables, args.bots, args.seed)), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
