"""The six game-quality metrics of docs/specs/metrics.md, as pure functions of a score matrix.

`rounds[m - 1][p]` is the score of seat p after round m (m = 1..M). Ties in a ranking keep seat
order. Negative scores count as 0 in the point shares of the uncertainty metrics (a share cannot
be negative).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from fractions import Fraction

Scores = Sequence[Sequence[float]]

DRAMA = ("drama_points", "drama_position", "drama_path")
METRICS = (*DRAMA, "lead_change", "uncertainty_entropy", "uncertainty_distance")
# Reported over the matches that score above 0 (with how many do), as the study reports them.
ABOVE_ZERO = (*DRAMA, "lead_change")


def ranking(scores: Sequence[float]) -> list[int]:
    """Seats from first to last: highest score first, ties in seat order."""
    return sorted(range(len(scores)), key=lambda p: (-scores[p], p))


def ranks(scores: Sequence[float]) -> list[int]:
    """1-based rank of every seat (ties broken by seat order, so ranks are distinct)."""
    out = [0] * len(scores)
    for position, seat in enumerate(ranking(scores)):
        out[seat] = position + 1
    return out


def leader(scores: Sequence[float]) -> int:
    return ranking(scores)[0]


def winner(rounds: Scores) -> int:
    return leader(rounds[-1]) if rounds else 0


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


class _Match:
    """Rankings computed once per round and shared by the six metrics."""

    __slots__ = ("leaders", "players", "rounds", "winner", "winner_ranks")

    def __init__(self, rounds: Scores) -> None:
        self.rounds = rounds
        self.players = len(rounds[0]) if rounds else 0
        orders = [ranking(s) for s in rounds]
        self.leaders = [o[0] for o in orders]
        self.winner = self.leaders[-1] if orders else 0
        self.winner_ranks = [o.index(self.winner) + 1 for o in orders]


def _drama_points(m: _Match) -> float:
    w = m.winner
    terms = []
    for scores, lead in zip(m.rounds[:-1], m.leaders[:-1], strict=False):
        if lead == w:
            continue
        denominator = scores[lead] - 0
        terms.append(math.sqrt(max(0.0, (scores[lead] - scores[w]) / denominator)) if denominator > 0 else 0.0)
    return _mean(terms)


def _drama_position(m: _Match) -> float:
    return _mean([math.sqrt((r - 1) / m.players) for r in m.winner_ranks[:-1] if r > 1])


def _drama_path(m: _Match) -> float:
    m_last, players = len(m.rounds), m.players
    if m_last < 2 or players < 2:
        return 0.0
    behind = sum(1 for r in m.winner_ranks if r > 1)
    if behind == 0:
        return 0.0
    mdp = [math.ceil(players + Fraction(1 - players) * (i - 1) / (m_last - 1)) for i in range(1, m_last + 1)]
    distance = sum(abs(r - d) for r, d in zip(m.winner_ranks, mdp, strict=True))
    return (behind / (m_last - 1)) * (1 - distance / ((players - 1) * (m_last - 1)))


def _lead_change(m: _Match) -> float:
    """The study's equation 2.5: leaders over rounds 1..M (no round 0), the distinct leaders and the
    changes of leader between consecutive rounds, the changes divided by M - 1."""
    if len(m.rounds) < 2 or m.players < 2:
        return 0.0
    changes = sum(1 for a, b in itertools.pairwise(m.leaders) if a != b)
    spread = math.sqrt((len(set(m.leaders)) - 1) / (m.players - 1))
    return (spread + math.sqrt(changes / (len(m.rounds) - 1))) / 2


def shares(scores: Sequence[float]) -> list[float]:
    """Each player's chance to win as their share of the points (uniform when nobody has any)."""
    clipped = [max(0.0, float(s)) for s in scores]
    total = sum(clipped)
    if total <= 0:
        return [1 / len(scores)] * len(scores)
    return [s / total for s in clipped]


def uncertainty_entropy(rounds: Scores) -> float:
    if len(rounds) < 2 or len(rounds[0]) < 2:
        return 0.0
    norm = math.log2(len(rounds[0]))
    values = [-sum(p * math.log2(p) for p in shares(s) if p > 0) / norm for s in rounds[:-1]]
    return _mean(values)


def uncertainty_distance(rounds: Scores) -> float:
    if len(rounds) < 2 or len(rounds[0]) < 2:
        return 0.0
    n = len(rounds[0])
    uniform = 1 / math.sqrt(n)
    norm = 2 - 2 / math.sqrt(n)
    values = [1 - math.sqrt(sum((math.sqrt(p) - uniform) ** 2 for p in shares(s)) / norm) for s in rounds[:-1]]
    return _mean(values)


def drama_points(rounds: Scores) -> float:
    return _drama_points(_Match(rounds))


def drama_position(rounds: Scores) -> float:
    return _drama_position(_Match(rounds))


def drama_path(rounds: Scores) -> float:
    return _drama_path(_Match(rounds))


def lead_change(rounds: Scores) -> float:
    return _lead_change(_Match(rounds))


def all_metrics(rounds: Scores) -> dict[str, float]:
    """The six values for one match, by name."""
    match = _Match(rounds)
    return {
        "drama_points": _drama_points(match),
        "drama_position": _drama_position(match),
        "drama_path": _drama_path(match),
        "lead_change": _lead_change(match),
        "uncertainty_entropy": uncertainty_entropy(rounds),
        "uncertainty_distance": uncertainty_distance(rounds),
    }
