"""Tables for games of more than two seats: who sits together in a round, and in which seat.

A round of a Swiss or round-based event for an N-seat game is paired by table: the players are
ranked by points (then seed) and cut into consecutive tables of N, so each table holds players
near each other in score. When the count does not divide, the lowest-ranked players who have not
sat out yet sit out the round (they get a bye), at most N - 1 of them. Within a table the seats
rotate: the order given is the one that minimizes, over the table's players, how often each has
already sat in the seat it gets (ties: ranking order), so over a long event everyone sits in every
seat about as often (in Hearts, who leads; in Agram, who plays first).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from partida.competition.results import Player

MAX_PERMUTED_SEATS = 6  # seat orders tried exhaustively (6! = 720); beyond that, a greedy choice


@dataclass(frozen=True, slots=True)
class TableRound:
    tables: tuple[tuple[Player, ...], ...]
    byes: tuple[Player, ...] = ()


def pair_tables(
    ranked: Sequence[Player],
    seats: int,
    seat_counts: Mapping[Player, Sequence[int]] | None = None,
    had_bye: frozenset[Player] = frozenset(),
) -> TableRound:
    """A round of tables of `seats` from `ranked` (best first). `seat_counts[p][s]` is how often p
    sat in seat s; `had_bye` the players who already sat a round out."""
    if seats < 2:
        raise ValueError("a table has at least two seats")
    if len(ranked) < seats:
        raise ValueError(f"{len(ranked)} players cannot fill a table of {seats}")
    counts = seat_counts or {}
    out = len(ranked) % seats
    byes: list[Player] = []
    for player in reversed(ranked):
        if len(byes) == out:
            break
        if player not in had_bye:
            byes.append(player)
    for player in reversed(ranked):  # everyone has sat out once: the lowest sit out again
        if len(byes) == out:
            break
        if player not in byes:
            byes.append(player)
    playing = [p for p in ranked if p not in byes]
    tables = tuple(seat_order(playing[i : i + seats], counts) for i in range(0, len(playing), seats))
    return TableRound(tables, tuple(byes))


def seat_order(group: Sequence[Player], seat_counts: Mapping[Player, Sequence[int]]) -> tuple[Player, ...]:
    """The group's players in seat order, rotating the seats as the module's docstring says."""

    def used(player: Player, seat: int) -> int:
        counts = seat_counts.get(player, ())
        return counts[seat] if seat < len(counts) else 0

    if len(group) <= MAX_PERMUTED_SEATS:
        best = min(
            itertools.permutations(range(len(group))),
            key=lambda order: (sum(used(group[i], seat) for seat, i in enumerate(order)), order),
        )
        return tuple(group[i] for i in best)
    left = list(group)
    order: list[Player] = []
    for seat in range(len(group)):
        pick = min(left, key=lambda p: (used(p, seat), group.index(p)))
        left.remove(pick)
        order.append(pick)
    return tuple(order)
