"""Who plays whom next, and in which seats: the ladder's pairing rule.

The scheduler calls `pick_group` whenever a ladder has room for another game and at least as many
idle members as the game has seats. The rule, in order:

1. **Most uncertain first.** The anchor is the idle member with the highest sigma (ties: fewer
   rated games, then the lower member id). A game teaches most about the bot we know least about.
2. **Least met, closest, least known opponents.** The other seats go to the idle members that
   maximize the group's score: how unpredictable its winner is (the entropy of OpenSkill's
   predicted win probabilities over its maximum: 1 for an even match, near 0 for a foregone one)
   times how much is still unknown about it (the mean of sigma squared, over the initial sigma
   squared), divided by one plus how often its members have already met (summed over its
   pairs). The first factor wants close ratings; the second keeps a sure bot from being
   everyone's favourite opponent (OpenSkill's draw probability alone, its usual match quality,
   rises as sigma falls, so it picks the most-played bot again and again); the third spreads
   the games over every pair, so that two bots ranked next to each other have met rather than
   being ordered through third parties. For two seats every opponent is tried; for
   more seats every group containing the anchor is tried while there are at most `MAX_GROUPS` of
   them, else the seats are filled one at a time, each time with the member that keeps the score
   highest.
3. **No immediate rematch; wait rather than repeat.** A group in which some member's previous
   game was against another member of the group is set aside whenever any other group of idle
   members exists. When only such groups exist and other members are busy in games that will
   end (`busy` > 0), `pick_group` returns None: the scheduler waits for them to come free (up
   to `WAIT_FOR_OTHERS`, `may_repeat` after that), so that two bots that finish together are
   not paired again at once while the rest of the ladder is playing. The same pair plays twice
   in a row only when nobody else is in the ladder, or after that wait.
4. **Balanced seats.** The chosen members are ordered to even out how often each has sat in each
   seat (in two-seat games: who moves first, the colours): the order minimizing the sum, over
   members, of games already played in the seat given, ties broken by the members' order in the
   group.

Ties anywhere are broken by member id, so the rule is deterministic: the same standings give the
same pairing. `pick_random` is the baseline it is measured against (docs/ladders.md): a uniformly
random group of idle members in a random seat order.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from partida.competition.ratings import SIGMA, Rating, outcome_uncertainty

MAX_GROUPS = 2000  # groups scored exhaustively; beyond that, greedy filling
MAX_PERMUTED_SEATS = 6  # seat orders tried exhaustively (6! = 720); beyond that, greedy
WAIT_FOR_OTHERS = 30.0  # seconds a scheduler waits for busy members before allowing a rematch


@dataclass
class Candidate:
    """An idle ladder member as the pairing rule sees it. `last_opponents` are the members of its
    previous ladder game; `seat_counts[s]` how many of its games it played in seat s; `met[m]`
    how many ladder games it played with member m."""

    id: int
    rating: Rating
    games: int = 0
    last_opponents: frozenset[int] = frozenset()
    seat_counts: dict[int, int] = field(default_factory=dict)
    met: dict[int, int] = field(default_factory=dict)


def pick_group(
    idle: Sequence[Candidate], seats: int, busy: int = 0, may_repeat: bool = False
) -> list[Candidate] | None:
    """The next game's members in seat order, or None: fewer than `seats` are idle, or only a
    rematch is possible while `busy` other members are in games (wait for them, rule 3) and the
    caller has not yet allowed it (`may_repeat`)."""
    if len(idle) < seats or seats < 1:
        return None
    pool = sorted(idle, key=lambda c: c.id)
    anchor = min(pool, key=lambda c: (-c.rating.sigma, c.games, c.id))
    others = [c for c in pool if c is not anchor]
    group = _best_group(anchor, others, seats, avoid_repeats=True)
    if group is None:
        # the anchor's every group is a rematch; another member may still have a fresh one
        for other in others:
            rest = [c for c in pool if c is not other]
            group = _best_group(other, rest, seats, avoid_repeats=True)
            if group is not None:
                break
    if group is None:
        if busy > 0 and not may_repeat:
            return None
        group = _best_group(anchor, others, seats, avoid_repeats=False)
    assert group is not None
    return order_seats(group)


def _is_repeat(group: Sequence[Candidate]) -> bool:
    ids = {c.id for c in group}
    return any(c.last_opponents & (ids - {c.id}) for c in group)


def meetings(group: Sequence[Candidate]) -> int:
    """How many games the members of `group` have played with each other, summed over pairs."""
    return sum(a.met.get(b.id, 0) for a, b in itertools.combinations(group, 2))


def score(group: Sequence[Candidate]) -> float:
    """What a game of `group` would teach (rule 2)."""
    ratings = [c.rating for c in group]
    unknown = sum(r.sigma**2 for r in ratings) / (len(ratings) * SIGMA**2)
    return outcome_uncertainty(ratings) * unknown / (1 + meetings(group))


def _best_group(anchor: Candidate, others: list[Candidate], seats: int, avoid_repeats: bool) -> list[Candidate] | None:
    if math.comb(len(others), seats - 1) <= MAX_GROUPS:
        best: tuple[float, tuple[int, ...]] | None = None
        chosen: list[Candidate] | None = None
        for rest in itertools.combinations(others, seats - 1):
            group = [anchor, *rest]
            if avoid_repeats and _is_repeat(group):
                continue
            key = (-score(group), tuple(c.id for c in rest))
            if best is None or key < best:
                best, chosen = key, group
        return chosen
    group = [anchor]
    remaining = list(others)
    while len(group) < seats:
        options = [c for c in remaining if not (avoid_repeats and _is_repeat([*group, c]))]
        if not options:
            return None
        pick = min(options, key=lambda c: (-score([*group, c]), c.id))
        group.append(pick)
        remaining.remove(pick)
    return group


def order_seats(group: Sequence[Candidate]) -> list[Candidate]:
    """The order of `group` (seat 0 first) that evens out each member's seats."""

    def cost(order: Sequence[Candidate]) -> int:
        return sum(c.seat_counts.get(seat, 0) for seat, c in enumerate(order))

    if len(group) <= MAX_PERMUTED_SEATS:
        # permutations come in lexicographic order of positions: the first minimum keeps the
        # group's own order on ties
        return list(min(itertools.permutations(group), key=cost))
    order: list[Candidate] = []
    remaining = list(group)
    for seat in range(len(group)):
        pick = min(remaining, key=lambda c: (c.seat_counts.get(seat, 0), c.id))
        order.append(pick)
        remaining.remove(pick)
    return order


def pick_random(idle: Sequence[Candidate], seats: int, rng: random.Random) -> list[Candidate] | None:
    """The baseline: a uniformly random group of idle members in a random seat order."""
    if len(idle) < seats or seats < 1:
        return None
    return rng.sample(sorted(idle, key=lambda c: c.id), seats)
