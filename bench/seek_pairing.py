"""How long pairing one new seek takes with many seeks waiting: the server's way
(`partida.competition.seeks.SeekBook.match`, which reads only the bucket of the new seek's
terms) against reading every waiting seek (`first_match`, the rule it must agree with, and what
the server ran before the buckets).

`--waiting` seeks of random terms (a few games, clocks, rated or casual, some with a rating
range, some allowing bots), then `--posts` new seeks of random terms, each timed both ways
against them all (the two must pick the same seek); as many that meet none (a game nobody
seeks: the book reads no bucket, the scan reads everything); and, the buckets' worst case, as
many new seeks of one terms against `--waiting` seeks of those same terms whose rating ranges
refuse them (every one of the bucket is read). One JSON line:

    {"waiting": 6000, "posts": 200, "book_ms_mean": ..., "book_ms_max": ..., "scan_ms_mean": ...,
     "scan_ms_max": ..., "paired": ..., "unmatched_book_ms_mean": ..., "unmatched_scan_ms_mean": ...,
     "one_bucket_book_ms_mean": ..., "one_bucket_book_ms_max": ...}

    python bench/seek_pairing.py --waiting 6000 --posts 200
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from partida.competition.seeks import Party, Seek, SeekBook, first_match

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


def timed(find: Callable[[], Seek | None]) -> tuple[Seek | None, float]:
    start = time.perf_counter()
    found = find()
    return found, (time.perf_counter() - start) * 1000


def mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--waiting", type=int, default=6000, help="seeks waiting (default: %(default)s)")
    parser.add_argument("--posts", type=int, default=200, help="new seeks timed, of each kind (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default: %(default)s)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    waiting = [random_seek(i, rng) for i in range(args.waiting)]
    book = SeekBook()
    for seek in waiting:
        book.add(seek)
    book_ms, scan_ms = [], []
    paired = 0
    for n in range(args.posts):
        new = random_seek(args.waiting + n, rng)
        mine, book_time = timed(lambda new=new: book.match(new))
        theirs, scan_time = timed(lambda new=new: first_match(new, waiting))
        assert mine is theirs, (mine, theirs)
        book_ms.append(book_time)
        scan_ms.append(scan_time)
        paired += mine is not None
    unmatched_book, unmatched_scan = [], []
    for n in range(args.posts):
        new = random_seek(args.waiting + args.posts + n, rng)
        new = Seek(new.id, new.posted, new.party, "a-game-nobody-seeks", clock=new.clock)
        found, book_time = timed(lambda new=new: book.match(new))
        assert found is None and first_match(new, waiting) is None
        unmatched_book.append(book_time)
        unmatched_scan.append(timed(lambda new=new: first_match(new, waiting))[1])
    crowd = SeekBook()  # one terms, every range refusing the newcomers (rated 0 to 1)
    for i in range(args.waiting):
        crowd.add(Seek(i, float(i), Party(i, rating=50.0), "duel", clock=Clock(None, 0.0, 30.0), rating_range=(90, 99)))
    one_bucket = []
    for n in range(args.posts):
        new = Seek(args.waiting + n, 0.0, Party(-n, rating=rng.random()), "duel", clock=Clock(None, 0.0, 30.0))
        found, book_time = timed(lambda new=new: crowd.match(new))
        assert found is None
        one_bucket.append(book_time)
    print(
        json.dumps(
            {
                "waiting": args.waiting,
                "posts": args.posts,
                "book_ms_mean": mean(book_ms),
                "book_ms_max": round(max(book_ms), 3),
                "scan_ms_mean": mean(scan_ms),
                "scan_ms_max": round(max(scan_ms), 3),
                "paired": paired,
                "unmatched_book_ms_mean": mean(unmatched_book),
                "unmatched_scan_ms_mean": mean(unmatched_scan),
                "one_bucket_book_ms_mean": mean(one_bucket),
                "one_bucket_book_ms_max": round(max(one_bucket), 3),
            }
        )
    )


if __name__ == "__main__":
    main()
