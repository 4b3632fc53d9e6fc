"""Points and tie-breaks of partida.competition.points against examples worked by hand, and the
next-round tables of each format on plain values."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from partida.competition.points import Score, points_by_seat, standings
from partida.competition.tables import next_tables


def test_points_by_rank() -> None:
    assert points_by_seat([0, 1]) == [1.0, 0.0]
    assert points_by_seat([0, 0]) == [0.5, 0.5]
    assert points_by_seat([0, 1, 2, 3]) == [1.0, 2 / 3, 1 / 3, 0.0]
    assert points_by_seat([0, 0, 2]) == [0.75, 0.75, 0.0]  # (1 below + 1/2 level) / 2 others
    assert points_by_seat([1, 0], arena=True) == [0.0, 2.0]


def test_standings_with_buchholz_and_sonneborn_berger_worked_by_hand() -> None:
    """A, B, C, D; games: A-B 1-0, C-D 1/2, A-C 1/2, B-D 1-0, A-D 0-1, B-C 1-0.
    Points: A 1.5, B 2, C 1, D 1.5.
    Buchholz: A = B+C+D = 2+1+1.5 = 4.5; D = C+B+A = 1+2+1.5 = 4.5; B = A+D+C = 4; C = 5.
    Sonneborn-Berger: A = 1*2 (beat B) + 1/2*1 (drew C) = 2.5; D = 1/2*1 (drew C) + 1*1.5 (beat A) = 2.
    So B first (2 points), then A and D on 1.5 and Buchholz 4.5, A ahead on S-B, then C."""
    A, B, C, D = 1, 2, 3, 4
    games = [
        ([A, B], [1.0, 0.0]),
        ([C, D], [0.5, 0.5]),
        ([A, C], [0.5, 0.5]),
        ([B, D], [1.0, 0.0]),
        ([A, D], [0.0, 1.0]),
        ([B, C], [1.0, 0.0]),
    ]
    rows = standings({a: Score(a) for a in (A, B, C, D)}, games)
    assert [r.account_id for r in rows] == [B, A, D, C]
    by = {r.account_id: r for r in rows}
    assert (by[A].points, by[B].points, by[C].points, by[D].points) == (1.5, 2.0, 1.0, 1.5)
    assert (by[A].buchholz, by[B].buchholz, by[C].buchholz, by[D].buchholz) == (4.5, 4.0, 5.0, 4.5)
    assert by[A].sonneborn_berger == 2.5 and by[D].sonneborn_berger == 2.0
    assert (by[B].wins, by[B].losses, by[C].draws) == (2, 1, 2)


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
    second = next_tables("swiss", 4, list(range(8)), [], round=2)
    assert second[0] == [1, 2, 3, 0]
