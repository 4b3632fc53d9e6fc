"""A finished game as a tournament counts it, and the points each seat takes from its rank.

Points come from ranks alone, so two seats and four are scored by one rule: the seats sharing a
rank share the points of the places they cover, and place p of n is worth (n - p) / (n - 1). For
two seats that is 1 for a win, 1/2 each for a draw, 0 for a loss; for four seats 1, 2/3, 1/3 and
0, and a tie for second between two seats gives each (2/3 + 1/3) / 2 = 1/2.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from fractions import Fraction

Player = Hashable


@dataclass(frozen=True, slots=True)
class GameResult:
    """One finished game of a tournament: its players in seat order and each seat's rank (1 =
    first, equal ranks a tie), as the room's result gives them."""

    round: int
    players: tuple[Player, ...]
    ranks: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.players) != len(self.ranks) or len(self.players) < 2:
            raise ValueError(f"a game has at least two seats and one rank per seat: {self}")
        if len(set(self.players)) != len(self.players):
            raise ValueError(f"a player sits at one seat of a game: {self}")

    def points(self) -> dict[Player, Fraction]:
        return dict(zip(self.players, rank_points(self.ranks), strict=True))


@dataclass(frozen=True, slots=True)
class Bye:
    """A round a player sat out by the pairing's choice, worth `points` (a Swiss bye: 1)."""

    round: int
    player: Player
    points: Fraction = Fraction(1)


def rank_points(ranks: Sequence[int]) -> list[Fraction]:
    """Each seat's points from the ranks, as the module's docstring says: exact fractions, so that
    standings compare equal scores as equal."""
    n = len(ranks)
    order = sorted(ranks)
    points = []
    for rank in ranks:
        first = order.index(rank)  # the places this rank covers: first .. first + count - 1
        count = order.count(rank)
        covered = sum(Fraction(n - 1 - p, n - 1) for p in range(first, first + count))
        points.append(covered / count)
    return points
