"""OpenSkill ratings (Plackett-Luce) for games of any number of seats, from their ranks.

Plackett-Luce rates a game of N seats from its ranks alone (1 = first, ties share a rank), so a
two-seat Othello game and a four-seat Hearts game go through the same update. Each seat is a team
of one. The model's parameters are fixed here rather than left to the library's defaults, so a
newer openskill that changes a default cannot make `rerate` disagree with the stored table.

The displayed rating is the conservative one, `mu - 3 * sigma`: a bot is shown where it stands
with high confidence, so a newcomer with few games starts at 0 and rises as its uncertainty
shrinks, rather than jumping to the top after one lucky win.

Everything here is a pure function of its inputs and of the order of the games: applying the same
results in the same order gives bit-for-bit the same floats, which is what `rerate` checks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from openskill.models import PlackettLuce

MU = 25.0
SIGMA = MU / 3
BETA = SIGMA / 2
TAU = MU / 300  # added uncertainty per game, so ratings can still move after many games
CONFIDENCE = 3.0  # the displayed rating is mu - CONFIDENCE * sigma


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float = MU
    sigma: float = SIGMA

    @property
    def display(self) -> float:
        """The conservative rating shown in standings."""
        return self.mu - CONFIDENCE * self.sigma


@cache
def model() -> PlackettLuce:
    return PlackettLuce(mu=MU, sigma=SIGMA, beta=BETA, tau=TAU, limit_sigma=False, balance=False)


def _teams(ratings: Sequence[Rating]) -> list[list[object]]:
    m = model()
    return [[m.rating(mu=r.mu, sigma=r.sigma)] for r in ratings]


def rate(ratings: Sequence[Rating], ranks: Sequence[int]) -> list[Rating]:
    """The ratings after one game: `ratings[i]` is seat i's rating before it, `ranks[i]` its
    place (1 = first; equal ranks are a tie)."""
    if len(ratings) != len(ranks):
        raise ValueError(f"{len(ratings)} ratings for {len(ranks)} ranks")
    if len(ratings) < 2:
        raise ValueError("a rated game has at least two seats")
    new = model().rate(_teams(ratings), ranks=[float(r) for r in ranks])
    return [Rating(float(team[0].mu), float(team[0].sigma)) for team in new]


def win_probabilities(ratings: Sequence[Rating]) -> list[float]:
    """OpenSkill's predicted probability that each seat finishes first."""
    return [float(p) for p in model().predict_win(_teams(ratings))]


def outcome_uncertainty(ratings: Sequence[Rating]) -> float:
    """How unpredictable the winner is, from 0 (certain) to 1 (every seat equally likely): the
    entropy of `win_probabilities` over its maximum, log(seats)."""
    probabilities = win_probabilities(ratings)
    entropy = -sum(p * math.log(p) for p in probabilities if p > 0)
    return entropy / math.log(len(probabilities))


def outcome(ranks: Sequence[int], seat: int) -> tuple[int, int, int]:
    """(win, draw, loss) for the standings, each 0 or 1: a win is first place alone, a draw first
    place shared, anything else a loss."""
    if ranks[seat] != 1:
        return (0, 0, 1)
    return (1, 0, 0) if list(ranks).count(1) == 1 else (0, 1, 0)
