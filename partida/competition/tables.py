"""Who sits at which table in a tournament's next round, by format: the service's one question to
the pairing rules. Pure: the entrants, the tables so far (with their stored outcomes), out come the
next tables, each a list of account ids in seat order; a table of one is a bye.

- Round robin (two seats): Berger tables (`roundrobin.py`); a second cycle swaps the seats.
- Swiss (two seats): the Dutch rules of `swiss.py`.
- Arena: `arena.py`'s pairing of the free entrants, by arena points.
- Games of more than two seats: tables of `seats` by points, seats turning each round, the rest
  (fewer than a table) rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any, Protocol

from partida.competition import arena, roundrobin, swiss
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
    return group_tables(seats, list(entrants), tables, round)


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


def arena_tables(seats: int, free: Sequence[int], tables: Sequence[Played]) -> list[list[int]]:
    scores = scores_of(tables, arena=True)
    last: dict[int, frozenset[int]] = {}
    for t in sorted(tables, key=lambda t: t.round):
        for a in t.accounts:
            last[a] = frozenset(t.accounts) - {a}
    waiting = [
        arena.Waiting(a, int(scores[a].points) if a in scores else 0, since=i, last_opponents=last.get(a, frozenset()))
        for i, a in enumerate(free)
    ]
    return [list(table) for table in arena.pair_waiting(waiting, seats)]


def group_tables(seats: int, entrants: list[int], tables: Sequence[Played], round: int) -> list[list[int]]:
    scores = scores_of(tables)
    order = {a: i for i, a in enumerate(entrants)}
    ranked = sorted(entrants, key=lambda a: (-(scores[a].points if a in scores else 0.0), order[a]))
    result = []
    for start in range(0, len(ranked) - seats + 1, seats):
        group = ranked[start : start + seats]
        turn = (round - 1) % seats
        result.append(group[turn:] + group[:turn])
    result.extend([a] for a in ranked[len(ranked) - len(ranked) % seats :] if len(ranked) % seats)
    return result
