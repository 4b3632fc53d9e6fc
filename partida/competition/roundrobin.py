"""Round robin by Berger tables, single or double.

With n players (a dummy added when n is odd: playing it is the round's bye), m = n - 1 and rounds
r = 1 .. m, the FIDE Berger tables are: players i and j (both below n) meet in round r when
i + j = r + 1 (mod m), the one from whom the other is an odd number of steps on (mod m) taking the
first seat; the player i with 2i = r + 1 (mod m) meets player n, who takes the first seat in even
rounds. That reproduces the published tables (for six: 1-6 2-5 3-4 / 6-4 5-3 1-2 / 2-6 3-1 4-5 /
6-5 1-4 2-3 / 3-6 4-2 5-1). A double round robin plays the same rounds again with the seats
swapped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from partida.competition.results import Player


@dataclass(frozen=True, slots=True)
class Round:
    """One round: the games as (first seat, second seat), and the bye (None when n is even)."""

    number: int
    games: tuple[tuple[Player, Player], ...]
    bye: Player | None = None


def berger_pairs(n: int, r: int) -> list[tuple[int, int]]:
    """The games of round r (1 .. n - 1) among starting numbers 1 .. n (n even), by the rule above,
    in the order of their lower starting number."""
    if n < 2 or n % 2:
        raise ValueError(f"Berger tables are for an even count, not {n}")
    m = n - 1
    if not 1 <= r <= m:
        raise ValueError(f"round {r} of a round robin of {n} (1 .. {m})")
    games: list[tuple[int, int]] = []
    seen: set[int] = set()
    for i in range(1, n):
        if i in seen:
            continue
        if (2 * i) % m == (r + 1) % m:
            games.append((n, i) if r % 2 == 0 else (i, n))
            seen.add(i)
            continue
        j = next(j for j in range(1, n) if j != i and (i + j) % m == (r + 1) % m)
        seen |= {i, j}
        games.append((i, j) if (j - i) % m % 2 == 1 else (j, i))
    return sorted(games, key=min)


def schedule(players: Sequence[Player], double: bool = False) -> list[Round]:
    """Every round of a round robin of `players` in their seeding order (the first is starting
    number 1). An odd field gets a dummy last: whoever meets it has the round's bye."""
    if len(players) < 2:
        raise ValueError("a round robin needs at least two players")
    if len(set(players)) != len(players):
        raise ValueError("a player enters a round robin once")
    field = list(players)
    dummy = object()
    if len(field) % 2:
        field.append(dummy)
    n = len(field)
    rounds: list[Round] = []
    for cycle in range(2 if double else 1):
        for r in range(1, n):
            games: list[tuple[Player, Player]] = []
            bye: Player | None = None
            for a, b in berger_pairs(n, r):
                first, second = (field[a - 1], field[b - 1]) if cycle == 0 else (field[b - 1], field[a - 1])
                if first is dummy or second is dummy:
                    bye = second if first is dummy else first
                else:
                    games.append((first, second))
            rounds.append(Round(len(rounds) + 1, tuple(games), bye))
    return rounds
