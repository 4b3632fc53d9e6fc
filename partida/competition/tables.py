"""Who sits at which table in a tournament's next round, by format: the service's one question to
the pairing rules. Pure: the entrants, the tables so far (with their stored outcomes), out come the
next tables, each a list of account ids in seat order; a table of one is a bye.

- Round robin (two seats): Berger tables (`roundrobin.py`); a second cycle swaps the seats.
- Swiss (two seats): the Dutch rules of `swiss.py`.
- Arena: `arena.py`'s pairing of the free entrants, by arena points (streaks counted).
- Games of more than two seats: `seating.py`'s tables of `seats` by points, each seat to whoever
  sat in it least; the rest (fewer than a table) rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any, Protocol

from partida.competition import arena, roundrobin, seating, swiss
from partida.competition.points import Score, table_points, tally
from partida.competition.results import Bye, GameResult


class Played(Protocol):
    round: int
    accounts: list[int]

    @property
    def result(self) -> dict[str, Any] | None: ...


def next_tables(
    format: str,
    seats: int,
    entrants: Sequence[int],
    tables: Sequence[Played],
    free: Sequence[int] | None = None,
    round: int = 1,
) -> list[list[int]]:
    if format == "arena":
        return arena_tables(seats, free if free is not None else entrants, tables)
    if seats == 2 and format == "round-robin":
        return round_robin_round(list(entrants), round)
    if seats == 2:
        return swiss_round(list(entrants), tables, round)
    return group_tables(seats, list(entrants), tables)


def scores_of(tables: Sequence[Played], arena: bool = False) -> dict[int, Score]:
    scores: dict[int, Score] = {}
    games: list[tuple[list[int], list[float]]] = []
    for t in tables:
        result = t.result
        if result is None or result.get("void"):
            continue
        games.append((t.accounts, table_points(result, arena)))
    tally(scores, games)
    return scores


def round_robin_round(entrants: list[int], round: int) -> list[list[int]]:
    """Round `round` (1, 2, ...) of Berger tables over `entrants` in entry order; after the
    first cycle, the same again with the seats swapped."""
    if len(entrants) < 2:
        return []
    cycle = roundrobin.schedule(entrants, double=True)
    this = cycle[(round - 1) % len(cycle)]
    return [list(game) for game in this.games] + ([[this.bye]] if this.bye is not None else [])  # type: ignore[list-item]


def history_of(tables: Sequence[Played]) -> list[GameResult | Bye]:
    """The decided tables as the pairing rules read them."""
    history: list[GameResult | Bye] = []
    for t in tables:
        result = t.result
        if result is None or result.get("void"):
            continue
        if result.get("bye"):
            history.append(Bye(t.round, t.accounts[0], Fraction(result.get("points", 1.0)).limit_denominator()))
        elif len(t.accounts) >= 2 and len(result.get("ranks", [])) == len(t.accounts):
            history.append(GameResult(t.round, tuple(t.accounts), tuple(int(r) for r in result["ranks"])))
    return history


def swiss_round(entrants: list[int], tables: Sequence[Played], round: int) -> list[list[int]]:
    if len(entrants) < 2:
        return []
    paired = swiss.pair_round(round, entrants, history_of(tables))
    return [list(game) for game in paired.games] + ([[paired.bye]] if paired.bye is not None else [])  # type: ignore[list-item]


def arena_scores(tables: Sequence[Played]) -> dict[int, arena.ArenaScore]:
    """Each account's arena points and current streak: `arena.py`'s rule (a win on fire counts
    double) over its decided games in the order they were paired (by round: an arena's every
    pairing is a round of its own). Byes and void tables count for nothing."""
    scores: dict[int, arena.ArenaScore] = {}
    for t in sorted(tables, key=lambda t: t.round):
        result = t.result
        if result is None or result.get("void") or result.get("bye"):
            continue
        ranks = [int(r) for r in result.get("ranks", [])]
        if len(ranks) != len(t.accounts) or len(ranks) < 2:
            continue
        best = min(ranks)
        ranks = [r - best + 1 for r in ranks]  # first place is rank 1, whatever the table stored
        for seat, account in enumerate(t.accounts):
            scores[account] = scores.get(account, arena.ArenaScore()).after(ranks, seat)
    return scores


def arena_tables(seats: int, free: Sequence[int], tables: Sequence[Played]) -> list[list[int]]:
    scores = arena_scores(tables)
    last: dict[int, frozenset[int]] = {}
    for t in sorted(tables, key=lambda t: t.round):
        for a in t.accounts:
            last[a] = frozenset(t.accounts) - {a}
    waiting = [
        arena.Waiting(a, scores[a].points if a in scores else 0, since=i, last_opponents=last.get(a, frozenset()))
        for i, a in enumerate(free)
    ]
    return [list(table) for table in arena.pair_waiting(waiting, seats)]


def group_tables(seats: int, entrants: list[int], tables: Sequence[Played]) -> list[list[int]]:
    """`seating.py`'s tables: by points (then entry order) in groups of `seats`, each table's seats
    given to whoever sat in them least so far; those left over rest (a table of one: a bye),
    the lowest placed who have not rested yet first."""
    if len(entrants) < seats:
        return []
    scores = scores_of(tables)
    order = {a: i for i, a in enumerate(entrants)}
    ranked = sorted(entrants, key=lambda a: (-(scores[a].points if a in scores else 0.0), order[a]))
    counts: dict[int, list[int]] = {}
    rested: set[int] = set()
    for t in tables:
        if len(t.accounts) == 1:
            rested.add(t.accounts[0])
        for seat, account in enumerate(t.accounts if len(t.accounts) > 1 else ()):
            counts.setdefault(account, [0] * seats)[seat] += 1
    paired = seating.pair_tables(ranked, seats, counts, frozenset(rested))
    rest = sorted(paired.byes, key=ranked.index)
    return [list(table) for table in paired.tables] + [[a] for a in rest]  # type: ignore[misc]
