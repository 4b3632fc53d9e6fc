"""A tournament table's points and each entrant's record, from the stored results. Pure.

Points go by rank (`results.rank_points`: 1, 1/2, 0 for two seats; 1, 2/3, 1/3, 0 for four); an
arena doubles them (2 a win, 1 a draw), as lichess's arenas count. A bye is worth what its table
says: a win in a Swiss, nothing in a round robin (a rest, not a game). The tie-breaks and the
order of the standings are `tiebreaks.py`'s.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from partida.competition.results import rank_points


def table_points(result: dict[str, Any], arena: bool = False) -> list[float]:
    """The points of a decided table's seats, from its stored result."""
    if result.get("bye"):
        return [float(result.get("points", 1.0))]
    ranks = [int(r) for r in result.get("ranks", [])]
    if len(ranks) < 2:
        return [0.0] * len(ranks)
    return [float(p) * (2 if arena else 1) for p in rank_points(ranks)]


@dataclass
class Score:
    """An entrant's record: points (as the format counts them), games, wins, draws, losses, byes."""

    account_id: int
    points: float = 0.0
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    byes: int = 0

    def to_data(self) -> dict[str, Any]:
        return {
            "points": self.points,
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "byes": self.byes,
        }


def tally(scores: dict[int, Score], games: Iterable[tuple[list[int], list[float]]]) -> None:
    """Add each table's points to its accounts' scores (accounts not there yet are added)."""
    for accounts, points in games:
        if len(accounts) == 1:
            score = scores.setdefault(accounts[0], Score(accounts[0]))
            score.points += points[0]
            score.byes += 1
            continue
        best = max(points)
        for account, p in zip(accounts, points, strict=True):
            score = scores.setdefault(account, Score(account))
            score.points += p
            score.games += 1
            if p == best and points.count(best) == 1:
                score.wins += 1
            elif p == best:
                score.draws += 1
            else:
                score.losses += 1
