"""Arena: continuous pairing for a fixed time, as lichess runs it, and its points.

**Pairing.** Whenever players are waiting (they have just finished a game, or joined), the
waiting players are ranked by their arena score (then by their rating, then by when they started
waiting) and paired down the ranking: each unpaired player meets the nearest player below it
who was not its opponent in its previous game (nor it in theirs). A player whose only possible
opponent is the one it just played keeps waiting for the next call: never the same opponent back
to back. For tables of more than two seats the same walk fills each table with the next
waiting players none of whom sat with another at the previous game of either.

**Points** (lichess's, with its win streak): a win is 2 points, a draw 1, a loss 0. Two wins in a
row put a player *on fire*: from then on a win is worth 4 and a draw 2, until a game that is not a
win ends the streak. Lichess's draw-streak rule (only the first of consecutive draws scores) is
not taken: some games here, tic-tac-toe first, are drawn by correct play, and a player drawing
them correctly would be punished. For more than two seats, "win" is first place alone and "draw"
first place shared (the ladders' reading of ranks, `ratings.outcome`), so a table of four gives 2
(or 4) to its winner and nothing to the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from partida.competition.results import Player

WIN, DRAW = 2, 1
FIRE_MULTIPLIER = 2
STREAK_FOR_FIRE = 2


@dataclass(frozen=True, slots=True)
class Waiting:
    """A waiting player as the arena's pairing sees it: its score, rating (higher first among
    equal scores), when it began to wait (earlier first) and the players of its previous game."""

    player: Player
    score: int
    rating: float = 0.0
    since: float = 0.0
    last_opponents: frozenset[Player] = frozenset()


def pair_waiting(waiting: Sequence[Waiting], seats: int = 2) -> list[tuple[Player, ...]]:
    """The tables to start now, each a tuple of `seats` players in seat order (the higher-ranked
    first); whoever is in none keeps waiting."""
    ranked = sorted(waiting, key=lambda w: (-w.score, -w.rating, w.since))
    taken = [False] * len(ranked)
    tables: list[tuple[Player, ...]] = []
    for i in range(len(ranked)):
        if taken[i]:
            continue
        table = [i]
        j = i + 1
        while len(table) < seats and j < len(ranked):
            if not taken[j] and all(_fresh(ranked[k], ranked[j]) for k in table):
                table.append(j)
            j += 1
        if len(table) == seats:
            for k in table:
                taken[k] = True
            tables.append(tuple(ranked[k].player for k in table))
    return tables


def _fresh(a: Waiting, b: Waiting) -> bool:
    return b.player not in a.last_opponents and a.player not in b.last_opponents


@dataclass(frozen=True, slots=True)
class ArenaScore:
    """A player's arena score and the streak it is on (consecutive wins)."""

    points: int = 0
    streak: int = 0

    @property
    def on_fire(self) -> bool:
        return self.streak >= STREAK_FOR_FIRE

    def after(self, ranks: Sequence[int], seat: int) -> ArenaScore:
        """The score after a game in which this player sat at `seat` with these ranks."""
        first = ranks[seat] == 1
        shared = first and list(ranks).count(1) > 1
        multiplier = FIRE_MULTIPLIER if self.on_fire else 1
        if first and not shared:
            return ArenaScore(self.points + WIN * multiplier, self.streak + 1)
        if shared:
            return ArenaScore(self.points + DRAW * multiplier, 0)
        return ArenaScore(self.points, 0)
