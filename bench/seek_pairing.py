"""How long pairing one new seek takes with many seeks waiting (`partida.competition.seeks.
first_match`, which the server runs for every `seek` posted): `--waiting` seeks of random terms
(a few games, clocks, rated or casual, some with a rating range, some allowing bots), then
`--posts` new seeks of random terms, each timed against them all, and as many that meet none
(every waiting seek is read: the worst case). One JSON line:

    {"waiting": 10000, "posts": 200, "ms_mean": ..., "ms_max": ..., "paired": ...,
     "unmatched_ms_mean": ..., "unmatched_ms_max": ...}

    python bench/seek_pairing.py --waiting 10000 --posts 200
"""

from __future__ import annotations

import argparse
import json
import random
import time
from dataclasses import dataclass

from partida.competition.seeks import Party, Seek, first_match

GAMES = ("othello", "tictactoe", "duel")
CLOCKS = ((60.0, 0.0), (180.0, 2.0), (300.0, 3.0), (600.0, 5.0), (900.0, 10.0))


@dataclass(frozen=True)
class Clock:
    initial: float | None
    increment: float
    per_move: float | None = None


def random_seek(seek_id: int, rng: random.Random) -> Seek:
    initial, increment = rng.choice(CLOCKS)
    rating = rng.gauss(10.0, 8.0)
    ranged = rng.random() < 0.3
    return Seek(
        id=seek_id,
        posted=float(seek_id),
        party=Party(seek_id, rating=rating, is_bot=rng.random() < 0.05),
        game=rng.choice(GAMES),
        clock=Clock(initial, increment),
        rated=rng.random() < 0.5,
        rating_range=(rating - 5.0, rating + 5.0) if ranged else None,
        allow_bots=rng.random() < 0.2,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--waiting", type=int, default=10000)
    parser.add_argument("--posts", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    waiting = [random_seek(i, rng) for i in range(args.waiting)]
    times = []
    paired = 0
    for n in range(args.posts):
        new = random_seek(args.waiting + n, rng)
        start = time.perf_counter()
        match = first_match(new, waiting)
        times.append((time.perf_counter() - start) * 1000)
        paired += match is not None
    unmatched = []
    for n in range(args.posts):
        new = random_seek(args.waiting + args.posts + n, rng)
        new = Seek(new.id, new.posted, new.party, "a-game-nobody-seeks", clock=new.clock)
        start = time.perf_counter()
        assert first_match(new, waiting) is None
        unmatched.append((time.perf_counter() - start) * 1000)
    print(
        json.dumps(
            {
                "waiting": args.waiting,
                "posts": args.posts,
                "ms_mean": round(sum(times) / len(times), 3),
                "ms_max": round(max(times), 3),
                "paired": paired,
                "unmatched_ms_mean": round(sum(unmatched) / len(unmatched), 3),
                "unmatched_ms_max": round(max(unmatched), 3),
            }
        )
    )


if __name__ == "__main__":
    main()
