"""A table's points from its stored result, and the next-round tables of each format (the service's
way into the pairing rules) on plain values."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from partida.competition.points import table_points
from partida.competition.tables import next_tables


def test_table_points() -> None:
    assert table_points({"ranks": [0, 1]}) == [1.0, 0.0]
    assert table_points({"ranks": [0, 0]}) == [0.5, 0.5]
    assert table_points({"ranks": [0, 1, 2, 3]}) == [1.0, 2 / 3, 1 / 3, 0.0]
    assert table_points({"ranks": [1, 0]}, arena=True) == [0.0, 2.0]
    assert table_points({"ranks": [0], "bye": True, "points": 0.0}) == [0.0]  # a round robin's rest
    assert table_points({"ranks": [0], "bye": True}) == [1.0]  # a Swiss bye


@dataclass
class T:
    round: int
    accounts: list[int]
    result: dict[str, Any] | None


def test_round_robin_meets_everyone_once_a_cycle_with_balanced_seats() -> None:
    for n in (4, 5, 8):
        met: Counter[frozenset[int]] = Counter()
        first: Counter[int] = Counter()
        per_cycle = n - 1 if n % 2 == 0 else n
        for r in range(1, 2 * per_cycle + 1):
            for table in next_tables("round-robin", 2, list(range(n)), [], round=r):
                if len(table) == 2:
                    met[frozenset(table)] += 1
                    first[table[0]] += 1
        assert len(met) == n * (n - 1) // 2 and set(met.values()) == {2}
        assert max(first.values()) - min(first.values()) <= (0 if n % 2 == 0 else 2)


def test_swiss_of_nine_over_four_rounds() -> None:
    tables: list[T] = []
    for r in range(1, 5):
        new = next_tables("swiss", 2, list(range(9)), tables, round=r)
        assert sum(1 for t in new if len(t) == 1) == 1
        assert sorted(a for t in new for a in t) == list(range(9))
        for t in new:
            result = {"ranks": [0], "bye": True, "points": 1.0} if len(t) == 1 else {"ranks": [0, 1]}
            tables.append(T(r, t, result))
    games = [frozenset(t.accounts) for t in tables if len(t.accounts) == 2]
    assert len(games) == len(set(games)) == 16
    assert len({t.accounts[0] for t in tables if len(t.accounts) == 1}) == 4


def test_arena_never_repeats_the_last_opponent_while_another_is_free() -> None:
    tables = [T(1, [1, 2], {"ranks": [0, 1]}), T(1, [3, 4], {"ranks": [0, 1]})]
    new = next_tables("arena", 2, [1, 2, 3, 4], tables, free=[1, 2, 3, 4], round=2)
    assert sorted(map(sorted, new)) == [[1, 3], [2, 4]]  # winners meet, losers meet, no rematch


def test_tables_of_four_turn_their_seats_and_rest_the_remainder() -> None:
    first = next_tables("swiss", 4, list(range(10)), [], round=1)
    assert first[:2] == [[0, 1, 2, 3], [4, 5, 6, 7]] and first[2:] == [[8], [9]]
    level = {"ranks": [1, 1, 1, 1]}  # all level: the same groups again, each in a seat it has not had
    second = next_tables("swiss", 4, list(range(8)), [T(1, [0, 1, 2, 3], level), T(1, [4, 5, 6, 7], level)], round=2)
    assert second == [[1, 0, 3, 2], [5, 4, 7, 6]]
