"""Tie-breaks and the standings they order.

From the games of an event (`GameResult`, any number of seats) and its byes:

- **Points**: the sum of a player's points (`results.rank_points`) and byes.
- **Buchholz**: the sum, over the player's games, of its opponents' points (for a table of N, the
  mean of the other N - 1 players' points, so that a four-seat game weighs as one game). A bye
  counts as a game against an opponent with the player's own points, so that sitting out neither
  helps nor hurts.
- **Buchholz cut-1**: Buchholz without its lowest term.
- **Sonneborn-Berger**: the sum, over the player's games, of the points it took in the game times
  that mean of its opponents' points (two seats: the points of the opponents it beat, plus half
  of those it drew with). Byes add nothing.
- **Direct encounter**: among players still tied when it is applied, the points each took in the
  games between them; applied only when every pair of the tied group has met (otherwise it
  leaves them tied, as FIDE's rule does).

`standings` orders players by points, then each tie-break in the order given, refining only the
groups still tied, then by seed; the rank is shared by players equal on everything but the seed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from partida.competition.results import Bye, GameResult, Player

SWISS_ORDER = ("buchholz_cut1", "buchholz", "sonneborn_berger", "direct_encounter")
ROUND_ROBIN_ORDER = ("direct_encounter", "sonneborn_berger")
TIEBREAKS = {"buchholz", "buchholz_cut1", "sonneborn_berger", "direct_encounter"}


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the standings: rank (shared on a tie), player, points and each tie-break."""

    rank: int
    player: Player
    points: Fraction
    tiebreaks: dict[str, Fraction]


def points(players: Sequence[Player], history: Sequence[GameResult | Bye]) -> dict[Player, Fraction]:
    total = {p: Fraction(0) for p in players}
    for item in history:
        if isinstance(item, Bye):
            total[item.player] = total.get(item.player, Fraction(0)) + item.points
        else:
            for p, pts in item.points().items():
                total[p] = total.get(p, Fraction(0)) + pts
    return total


Scores = dict[Player, Fraction]


def _terms(player: Player, history: Sequence[GameResult | Bye], score: Scores) -> list[tuple[Fraction, Fraction]]:
    """(points taken, mean opponents' points) for each of the player's games and byes (a bye: its
    points and the player's own points, with no Sonneborn-Berger share)."""
    terms = []
    for item in history:
        if isinstance(item, Bye):
            if item.player == player:
                terms.append((Fraction(0), score[player]))
        elif player in item.players:
            others = [p for p in item.players if p != player]
            mean = sum((score.get(p, Fraction(0)) for p in others), Fraction(0)) / len(others)
            terms.append((item.points()[player], mean))
    return terms


def buchholz(player: Player, history: Sequence[GameResult | Bye], score: Scores, cut: int = 0) -> Fraction:
    opponents = sorted(mean for _, mean in _terms(player, history, score))
    return sum(opponents[cut:], Fraction(0))


def sonneborn_berger(player: Player, history: Sequence[GameResult | Bye], score: Scores) -> Fraction:
    return sum((taken * mean for taken, mean in _terms(player, history, score)), Fraction(0))


def direct_encounter(group: Sequence[Player], history: Sequence[GameResult | Bye]) -> dict[Player, Fraction]:
    """Each tied player's points in the games among `group`; all zero unless every pair met."""
    members = set(group)
    met: set[frozenset[Player]] = set()
    taken: dict[Player, Fraction] = defaultdict(Fraction)
    for item in history:
        if isinstance(item, GameResult):
            inside = [p for p in item.players if p in members]
            if len(inside) < 2:
                continue
            sub_ranks = [item.ranks[item.players.index(p)] for p in inside]
            sub = GameResult(item.round, tuple(inside), tuple(sub_ranks))
            for p, pts in sub.points().items():
                taken[p] += pts
            met.update(frozenset((a, b)) for i, a in enumerate(inside) for b in inside[i + 1 :])
    everyone_met = all(frozenset((a, b)) in met for i, a in enumerate(group) for b in group[i + 1 :])
    return {p: taken[p] if everyone_met else Fraction(0) for p in group}


def standings(
    players: Sequence[Player], history: Sequence[GameResult | Bye], order: Sequence[str] = SWISS_ORDER
) -> list[Row]:
    """The standings of `players` (in seeding order), as the module's docstring says."""
    unknown = set(order) - TIEBREAKS
    if unknown:
        raise ValueError(f"unknown tie-break {sorted(unknown)[0]!r} (known: {', '.join(sorted(TIEBREAKS))})")
    score = points(players, history)
    mine: dict[Player, list[GameResult | Bye]] = {p: [] for p in players}
    for item in history:
        for p in (item.player,) if isinstance(item, Bye) else item.players:
            if p in mine:
                mine[p].append(item)
    values: dict[Player, dict[str, Fraction]] = {p: {} for p in players}
    for p in players:
        for name in order:
            if name == "buchholz":
                values[p][name] = buchholz(p, mine[p], score)
            elif name == "buchholz_cut1":
                values[p][name] = buchholz(p, mine[p], score, cut=1)
            elif name == "sonneborn_berger":
                values[p][name] = sonneborn_berger(p, mine[p], score)
    seed = {p: i for i, p in enumerate(players)}
    groups: list[list[Player]] = [sorted(players, key=lambda p: (-score[p], seed[p]))] if players else []
    groups = _split(groups, lambda p: score[p])
    for name in order:
        if name == "direct_encounter":
            for group in groups:
                for p, v in direct_encounter(group, history).items():
                    values[p][name] = v
        groups = _split(groups, lambda p, name=name: values[p][name])
    rows: list[Row] = []
    for group in groups:
        rank = len(rows) + 1
        rows.extend(Row(rank, p, score[p], values[p]) for p in sorted(group, key=seed.__getitem__))
    return rows


def _split(groups: list[list[Player]], key) -> list[list[Player]]:  # type: ignore[no-untyped-def]
    """Each group cut into runs of equal `key`, highest first; the groups' order kept."""
    out: list[list[Player]] = []
    for group in groups:
        ordered = sorted(group, key=key, reverse=True)
        run = [ordered[0]]
        for p in ordered[1:]:
            if key(p) == key(run[0]):
                run.append(p)
            else:
                out.append(run)
                run = [p]
        out.append(run)
    return out
