"""Points from a table's ranks, and the standings with their tie-breaks. Pure: plain values in,
plain values out.

A table's points go by rank: each seat scores one point per other seat ranked below it and half
a point per other seat ranked level, divided by the other seats, so a two-seat game gives the
usual 1, 1/2 and 0, and a four-seat table 1, 2/3, 1/3 and 0 for first to last. An arena doubles
them (2 a win, 1 a draw), as lichess's arenas count. A bye is worth what its table says: a win
in a Swiss, nothing in a round robin (a rest, not a game).

Tie-breaks, in order: Buchholz (the sum of one's opponents' points), Sonneborn-Berger (the sum
over one's games of the points scored in it times the opponents' points), then wins.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


def table_points(result: dict[str, Any], arena: bool = False) -> list[float]:
    """The points of a decided table's seats, from its stored result."""
    if result.get("bye"):
        return [float(result.get("points", 1.0))]
    return points_by_seat([int(r) for r in result.get("ranks", [])], arena)


def points_by_seat(ranks: list[int], arena: bool = False) -> list[float]:
    n = len(ranks)
    if n < 2:
        return [0.0] * n
    points = []
    for seat, rank in enumerate(ranks):
        below = sum(1 for other, r in enumerate(ranks) if other != seat and r > rank)
        level = sum(1 for other, r in enumerate(ranks) if other != seat and r == rank)
        points.append((below + level / 2) / (n - 1))
    return [2 * p for p in points] if arena else points


@dataclass
class Score:
    account_id: int
    points: float = 0.0
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    byes: int = 0
    buchholz: float = 0.0
    sonneborn_berger: float = 0.0
    opponents: list[int] = field(default_factory=list)

    def to_data(self) -> dict[str, Any]:
        return {
            "points": self.points,
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "byes": self.byes,
            "buchholz": self.buchholz,
            "sonneborn_berger": self.sonneborn_berger,
        }


def tally(
    scores: Mapping[int, Score], games: Iterable[tuple[list[int], list[float]]]
) -> list[tuple[list[int], list[float]]]:
    """Add each table's points to its accounts' scores (accounts unknown to `scores` are added);
    returns the games as a list, for the tie-breaks' second pass."""
    played = list(games)
    table: dict[int, Score] = dict(scores)
    for accounts, points in played:
        if len(accounts) == 1:
            score = table.setdefault(accounts[0], Score(accounts[0]))
            score.points += points[0]
            score.byes += 1
            continue
        best = max(points)
        for account, p in zip(accounts, points, strict=True):
            score = table.setdefault(account, Score(account))
            score.points += p
            score.games += 1
            score.opponents.extend(a for a in accounts if a != account)
            if p == best and points.count(best) == 1:
                score.wins += 1
            elif p == best:
                score.draws += 1
            else:
                score.losses += 1
    if isinstance(scores, dict):
        scores.update(table)  # type: ignore[arg-type]
    return played


def standings(scores: dict[int, Score], games: Iterable[tuple[list[int], list[float]]]) -> list[Score]:
    """The scores of `games` ranked: points, then Buchholz, Sonneborn-Berger and wins."""
    played = tally(scores, games)
    for score in scores.values():
        score.buchholz = sum(scores[o].points for o in score.opponents if o in scores)
    for accounts, points in played:
        if len(accounts) < 2:
            continue
        for account, p in zip(accounts, points, strict=True):
            others = [scores[a].points for a in accounts if a != account]
            scores[account].sonneborn_berger += p * sum(others)
    return sorted(scores.values(), key=lambda s: (-s.points, -s.buchholz, -s.sonneborn_berger, -s.wins, s.account_id))
