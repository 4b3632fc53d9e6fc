"""Swiss pairing for two seats by the Dutch system's main rules.

Python's pairing libraries were measured before writing this (docs/competition.md): the one
that follows FIDE's Dutch rules to the letter, py4swiss, needs 14 to 64 seconds a round for
1,000 entrants on this project's machines, where a round must be paired well under a second. So
the rules below are the Dutch system's main ones, each of which the tests check, not the whole
FIDE handbook (no float histories beyond the current round, no acceleration):

1. **Bye.** With an odd field, the pairing-allocated bye goes to the lowest-ranked player (fewest
   points, then the lowest seed) who has not had one, provided the others can still be paired
   by the rules below; a player has at most one bye while anyone else has had none.
2. **Score groups, top down.** Players are ranked by points, then seed. The highest-ranked
   unpaired player's score group (the unpaired players with its points) is split in halves S1
   and S2, and S1's first meets S2's first, S1's second S2's second, and so on (a player left
   over floats down into the next group and meets its top).
3. **No repeat pairing while one can be avoided.** Two players who have met are not paired again;
   when the next candidate in the order above has met the player, the next one is tried (the rest
   of S2, then S1 from the bottom, then lower groups), backtracking when the players left could
   not all be paired. Only a round that cannot be paired at all without a repeat allows repeats.
4. **Colours (seats).** Two players who both must have the same seat (two games in a row in it,
   or two more games in it than in the other) are not paired while that can be avoided. Of a
   pair, the one whose seat difference is further from even gets the seat it lacks; then the one
   who played the other seat last; then the higher-ranked gets the seat it prefers.

The search is a depth-first search in that order with a budget of steps per relaxation (repeats
forbidden and colour clashes forbidden; then colour clashes allowed; then repeats allowed), so a
round is always paired; it backtracks little (near the bottom of late rounds), so a round of
1,000 takes about a tenth of a second (bench/competition_pairing.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from partida.competition.results import Bye, GameResult, Player
from partida.competition.roundrobin import Round

SEARCH_BUDGET = 200_000  # depth-first steps tried per relaxation before the next one


@dataclass(slots=True)
class Standing:
    """What the pairing knows of a player: its seed (0 = top), points, seats played in order
    (0 = first seat, 1 = second), opponents met, and whether it has had a bye."""

    player: Player
    seed: int
    points: Fraction = Fraction(0)
    seats: list[int] = field(default_factory=list)
    met: set[Player] = field(default_factory=set)
    had_bye: bool = False

    @property
    def balance(self) -> int:
        """First seats minus second seats played."""
        return self.seats.count(0) - self.seats.count(1)

    def must_have(self) -> int | None:
        """The seat this player must have (an absolute preference), if any."""
        if self.balance >= 2 or self.seats[-2:] == [0, 0]:
            return 1
        if self.balance <= -2 or self.seats[-2:] == [1, 1]:
            return 0
        return None

    def prefers(self) -> int | None:
        if self.balance > 0:
            return 1
        if self.balance < 0:
            return 0
        return 1 - self.seats[-1] if self.seats else None


def pairing_standings(players: Sequence[Player], history: Sequence[GameResult | Bye]) -> list[Standing]:
    """Each entrant's standing from the finished games and byes, in seed order. Games of players
    no longer entered (withdrawn) still count as met for those who remain."""
    table = {p: Standing(p, seed) for seed, p in enumerate(players)}
    for item in sorted(history, key=lambda h: h.round):
        if isinstance(item, Bye):
            if item.player in table:
                table[item.player].points += item.points
                table[item.player].had_bye = True
            continue
        for seat, (player, points) in enumerate(item.points().items()):
            if player in table:
                table[player].points += points
                table[player].seats.append(seat)
                table[player].met.update(p for p in item.players if p != player)
    return [table[p] for p in players]


def pair_round(number: int, players: Sequence[Player], history: Sequence[GameResult | Bye]) -> Round:
    """Round `number`'s games (first seat, second seat) and bye among `players` (the entrants
    still in, in seeding order), by the rules of the module's docstring."""
    if len(players) < 2:
        raise ValueError("a Swiss round needs at least two players")
    table = pairing_standings(players, history)
    ranked = sorted(table, key=lambda s: (-s.points, s.seed))
    for avoid_repeats, avoid_clashes in ((True, True), (True, False), (False, False)):
        for bye in _bye_candidates(ranked):
            field_ = [s for s in ranked if s is not bye]
            pairs = _search(field_, avoid_repeats, avoid_clashes)
            if pairs is not None:
                games = tuple(_seat(a, b) for a, b in pairs)
                return Round(number, games, bye.player if bye else None)
    raise AssertionError("a round without restrictions always pairs")  # pragma: no cover


def _bye_candidates(ranked: list[Standing]) -> Iterator[Standing | None]:
    if len(ranked) % 2 == 0:
        yield None
        return
    lowest_first = ranked[::-1]
    fresh = [s for s in lowest_first if not s.had_bye]
    yield from fresh or lowest_first


def _search(ranked: list[Standing], avoid_repeats: bool, avoid_clashes: bool) -> list[tuple[Standing, Standing]] | None:
    """Pairs covering all of `ranked` (best ranked first), tried in the Dutch order, or None."""
    budget = SEARCH_BUDGET

    def allowed(a: Standing, b: Standing) -> bool:
        if avoid_repeats and b.player in a.met:
            return False
        if avoid_clashes:
            need = a.must_have()
            if need is not None and need == b.must_have():
                return False
        return True

    def candidates(rest: list[Standing]) -> Iterator[int]:
        """The indices in `rest` of its top player's possible opponents, in the Dutch order."""
        top = rest[0]
        end = 1
        while end < len(rest) and rest[end].points == top.points:
            end += 1
        group = end  # rest[0:end] is the top player's score group
        if group == 1:
            yield from range(1, len(rest))  # a floater meets the next group from its top
            return
        half = group // 2
        yield from range(half, group)  # S2 in order
        yield from range(half - 1, 0, -1)  # then S1 from the bottom
        yield from range(group, len(rest))  # then down into lower groups

    # a depth-first search without recursion (a field of thousands would exceed Python's stack):
    # a stack of the choices made, each with the candidates still untried and the field before it
    remaining = ranked
    chosen: list[tuple[Standing, Standing, Iterator[int], list[Standing]]] = []
    untried = candidates(remaining) if remaining else iter(())
    while remaining:
        for i in untried:
            budget -= 1
            if budget < 0:
                return None
            if allowed(remaining[0], remaining[i]):
                chosen.append((remaining[0], remaining[i], untried, remaining))
                remaining = remaining[1:i] + remaining[i + 1 :]
                untried = candidates(remaining) if remaining else iter(())
                break
        else:
            if not chosen:
                return None
            _, _, untried, remaining = chosen.pop()
    return [(a, b) for a, b, _, _ in chosen]


def _seat(a: Standing, b: Standing) -> tuple[Player, Player]:
    """(first seat, second seat) for a pair, `a` the higher-ranked, by rule 4."""
    first = _first_seat(a, b)
    return (a.player, b.player) if first is a else (b.player, a.player)


def _first_seat(a: Standing, b: Standing) -> Standing:
    for s, other in ((a, b), (b, a)):
        if s.must_have() == 0 and other.must_have() != 0:
            return s
        if s.must_have() == 1 and other.must_have() != 1:
            return other
    if abs(a.balance) != abs(b.balance):
        strong = a if abs(a.balance) > abs(b.balance) else b
        weak = b if strong is a else a
        return strong if strong.balance < 0 else weak
    if a.seats and b.seats and a.seats[-1] != b.seats[-1]:
        return a if a.seats[-1] == 1 else b
    want = a.prefers()
    if want is None:
        want = b.prefers()
        if want is None:
            return a if a.seed % 2 == 0 else b  # round 1: seeds alternate down the boards
        return b if want == 0 else a
    return a if want == 0 else b
