"""Elo from match counts, as engine testers compute it.

A match is either a list of single games (trinomial: losses, draws, wins) or a list of game pairs
played on the same deal with the seats swapped (pentanomial: pairs scoring 0, 1/4, 1/2, 3/4 and 1
for the first agent). Both reduce to outcomes with a score each and their observed frequencies;
the mean score, its variance per trial and the number of trials give every figure here.

The pentanomial view is the sharper one when pairs are correlated (the deal favours one seat):
the variance is measured between pairs, where the luck of the deal has cancelled."""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

# fastchess regularizes empty outcome classes to this small count, so the likelihood ratio
# (which takes logarithms of frequencies) stays finite.
EMPTY_CLASS = 1e-3

# 800 / ln 10: d(elo)/d(score) at a score of 1/2, the unit of normalized Elo.
NELO_UNIT = 800.0 / math.log(10)

TRINOMIAL_SCORES = (0.0, 0.5, 1.0)
PENTANOMIAL_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)


@dataclass(frozen=True)
class Trinomial:
    """Single games from the first agent's side."""

    wins: int
    draws: int
    losses: int

    def __post_init__(self) -> None:
        if min(self.wins, self.draws, self.losses) < 0:
            raise ValueError("counts must not be negative")

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def counts(self) -> tuple[int, ...]:
        """Counts in the order of TRINOMIAL_SCORES."""
        return (self.losses, self.draws, self.wins)

    scores = TRINOMIAL_SCORES


@dataclass(frozen=True)
class Pentanomial:
    """Game pairs by the first agent's total over the pair: LL, LD, DD+WL, WD, WW."""

    ll: int
    ld: int
    dd_wl: int
    wd: int
    ww: int

    def __post_init__(self) -> None:
        if min(self.counts) < 0:
            raise ValueError("counts must not be negative")

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    @property
    def counts(self) -> tuple[int, ...]:
        """Counts in the order of PENTANOMIAL_SCORES."""
        return (self.ll, self.ld, self.dd_wl, self.wd, self.ww)

    scores = PENTANOMIAL_SCORES


Counts = Trinomial | Pentanomial


def frequencies(counts: Counts, regularize: bool = False) -> tuple[float, list[float]]:
    """(number of trials, observed frequency of each outcome). `regularize`: empty classes count
    as EMPTY_CLASS, as the likelihood ratio needs."""
    raw = [float(c) if c or not regularize else EMPTY_CLASS for c in counts.counts]
    total = sum(raw)
    if total == 0:
        return 0.0, [0.0] * len(raw)
    return total, [c / total for c in raw]


def mean_and_variance(scores: tuple[float, ...], probs: list[float]) -> tuple[float, float]:
    mu = sum(a * p for a, p in zip(scores, probs, strict=True))
    return mu, sum(p * (a - mu) ** 2 for a, p in zip(scores, probs, strict=True))


def score_to_elo(score: float) -> float:
    """Logistic Elo difference of an expected score; infinite at 0 and 1."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def elo_to_score(elo: float) -> float:
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


@dataclass(frozen=True)
class Estimate:
    """What a match says about the first agent against the second."""

    trials: int  # games (trinomial) or pairs (pentanomial)
    score: float
    elo: float
    elo_low: float  # 95% interval
    elo_high: float
    nelo: float  # normalized Elo: (score - 1/2) / sigma of a game, in NELO_UNIT
    nelo_error: float
    los: float  # likelihood of superiority: P(first agent is the stronger)
    draw_ratio: float  # draws per game, or pairs scoring 1/2 per pair

    def as_dict(self) -> dict[str, float | int | None]:
        """JSON-ready: an infinite Elo (a score of 0 or 1) becomes None."""
        return {
            k: (round(v, 4) if math.isfinite(v) else None) if isinstance(v, float) else v
            for k, v in self.__dict__.items()
        }


Z95 = NormalDist().inv_cdf(0.975)


def estimate(counts: Counts, z: float = Z95) -> Estimate:
    """Score and Elo with a z-sigma interval (95% by default) from the score's standard error,
    as fastchess and OpenBench report them. A pair's score is the mean of its two games, so the
    spread of one game implied by the pairs is sqrt(2 var_pair): normalized Elo divides by it."""
    n, probs = frequencies(counts)
    if n == 0:
        return Estimate(0, 0.5, 0.0, -math.inf, math.inf, 0.0, math.inf, 0.5, 0.0)
    score, var = mean_and_variance(counts.scores, probs)
    error = math.sqrt(var / n)
    pentanomial = isinstance(counts, Pentanomial)
    game_sigma = math.sqrt(2.0 * var) if pentanomial else math.sqrt(var)
    if game_sigma > 0:
        nelo = (score - 0.5) / game_sigma * NELO_UNIT
        nelo_error = z * error / game_sigma * NELO_UNIT
    else:
        nelo, nelo_error = (0.0, math.inf)
    if pentanomial:
        los = NormalDist().cdf((score - 0.5) / error) if error > 0 else (0.5 if score == 0.5 else float(score > 0.5))
        draw_ratio = probs[2]
    else:
        assert isinstance(counts, Trinomial)
        decisive = counts.wins + counts.losses
        los = 0.5 if decisive == 0 else NormalDist().cdf((counts.wins - counts.losses) / math.sqrt(decisive))
        draw_ratio = probs[1]
    return Estimate(
        trials=int(n),
        score=score,
        elo=score_to_elo(score),
        elo_low=score_to_elo(score - z * error),
        elo_high=score_to_elo(score + z * error),
        nelo=nelo,
        nelo_error=nelo_error,
        los=los,
        draw_ratio=draw_ratio,
    )
