"""What `partida ladder plot` and `partida ladder h2h` show, computed from stored rows.

Pure functions over the storage layer's records (rating changes in rating order, finished games
with their ranks), so the command line, the tests and any other front end read the same figures.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from partida.competition.ratings import Rating


@dataclass(frozen=True, slots=True)
class Point:
    """A bot's rating after its `games`-th rated game (0: before its first)."""

    games: int
    mu: float
    sigma: float

    @property
    def display(self) -> float:
        return Rating(self.mu, self.sigma).display


def rating_series(changes: Iterable[tuple[str, Rating, Rating]]) -> dict[str, list[Point]]:
    """Each bot's rating over its own games, from `(name, before, after)` changes in rating
    order. Each series starts at the rating before the bot's first game, so a plot shows where
    every bot came from."""
    series: dict[str, list[Point]] = {}
    for name, before, after in changes:
        points = series.setdefault(name, [Point(0, before.mu, before.sigma)])
        points.append(Point(len(points), after.mu, after.sigma))
    return series


@dataclass
class Record:
    """How often the row bot finished ahead of, level with, and behind the column bot."""

    ahead: int = 0
    level: int = 0
    behind: int = 0

    @property
    def games(self) -> int:
        return self.ahead + self.level + self.behind

    def text(self) -> str:
        return f"{self.ahead}-{self.level}-{self.behind}" if self.games else ""


@dataclass
class HeadToHead:
    """Pairwise results: `records[a][b]` is a's record against b. In a game of more than two
    seats every pair of seats counts once (who finished ahead), which is what head-to-head means
    for Hearts as for Othello."""

    names: list[str]
    records: dict[str, dict[str, Record]] = field(default_factory=dict)

    def record(self, a: str, b: str) -> Record:
        return self.records.get(a, {}).get(b, Record())


def head_to_head(games: Iterable[tuple[Sequence[str], Sequence[int]]], order: Sequence[str] = ()) -> HeadToHead:
    """From `(seat names, ranks)` of finished games. `order` lists names first (the standings'
    order); names not in it follow alphabetically."""
    records: dict[str, dict[str, Record]] = {}
    seen: set[str] = set()
    for names, ranks in games:
        seen.update(names)
        for i, a in enumerate(names):
            for j, b in enumerate(names):
                if i == j or a == b:
                    continue
                line = records.setdefault(a, {}).setdefault(b, Record())
                if ranks[i] < ranks[j]:
                    line.ahead += 1
                elif ranks[i] == ranks[j]:
                    line.level += 1
                else:
                    line.behind += 1
    listed = [n for n in order if n in seen or n in order]
    rest = sorted(seen - set(listed))
    return HeadToHead(listed + rest, records)


def standings_after(
    changes: Iterable[tuple[int, str, Rating]], names: Iterable[str]
) -> Iterator[tuple[int, list[str]]]:
    """The standings order (best displayed rating first, ties by name) after each rated game,
    from `(rating seq, name, rating after)` changes in rating order. Bots not yet rated stand at
    the initial rating."""
    current = {name: Rating() for name in names}
    pending_seq: int | None = None
    for seq, name, after in changes:
        if pending_seq is not None and seq != pending_seq:
            yield pending_seq, _order(current)
        pending_seq = seq
        current[name] = after
    if pending_seq is not None:
        yield pending_seq, _order(current)


def _order(ratings: dict[str, Rating]) -> list[str]:
    return sorted(ratings, key=lambda name: (-ratings[name].display, name))


def kendall_tau(order: Sequence[str], truth: Sequence[str]) -> float:
    """Kendall's tau between two orders of the same names (no ties): 1 when they agree, -1 when
    one is the other reversed; (concordant - discordant pairs) / all pairs."""
    if sorted(order) != sorted(truth):
        raise ValueError("the two orders must hold the same names")
    place = {name: i for i, name in enumerate(order)}
    pairs = concordant = 0
    for i, a in enumerate(truth):
        for b in truth[i + 1 :]:
            pairs += 1
            concordant += 1 if place[a] < place[b] else -1
    return concordant / pairs if pairs else 1.0
