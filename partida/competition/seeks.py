"""Quick pairing: when two seeks make a game, and in which order seeks are matched.

A seek is "play a rated 5+3 Othello": a game, its options, a seat count, a clock, rated or casual,
optionally a rating range, and whether bots may answer. Two seeks are **compatible** when their
terms are the same (game, options, seats, clock, rated) and each accepts the other's owner:

- not the same owner;
- a rated seek accepts no guest (and a guest cannot post one: `seek_problem`);
- a rating range `(low, high)` accepts owners whose rating in the seek's clock class lies within
  it, bounds included; an owner without a rating (a guest) is outside every range;
- a bot is accepted only by a seek that allows bots, so a person who did not ask for bots never
  meets one through a seek.

**Order**: a new seek is matched with the oldest compatible waiting seek (by the time it was
posted, then by its id), so a seek that has waited longest is served first; a person clicking a
seek in the lobby takes it if the seek `accepts` them.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from partida.competition.ratings import ClockLike, clock_class


@dataclass(frozen=True, slots=True)
class Party:
    """Who posts a seek or answers one: its account (or guest id), its rating in the seek's class
    (None for guests and the unrated), and whether it is a bot or a guest."""

    owner: Hashable
    rating: float | None = None
    is_bot: bool = False
    is_guest: bool = False


@dataclass(frozen=True, slots=True)
class Seek:
    id: int
    posted: float
    party: Party
    game: str
    options: Mapping[str, Any] = field(default_factory=dict)
    seats: int = 2
    clock: ClockLike | None = None
    rated: bool = False
    rating_range: tuple[float, float] | None = None
    allow_bots: bool = False

    def terms(self) -> tuple[Any, ...]:
        clock = None if self.clock is None else (self.clock.initial, self.clock.increment, self.clock.per_move)
        return (self.game, sorted(self.options.items()), self.seats, clock, self.rated)


def seek_problem(seek: Seek) -> str | None:
    """Why a seek cannot be posted (a sentence), or None."""
    if seek.rated and seek.party.is_guest:
        return "guests cannot play rated games: log in, or seek a casual game"
    if seek.rated and clock_class(seek.clock) is None:
        return "a rated game needs a clock"
    if seek.rating_range is not None and seek.rating_range[0] > seek.rating_range[1]:
        return f"the rating range {seek.rating_range[0]:g}-{seek.rating_range[1]:g} is empty"
    return None


def accepts(seek: Seek, other: Party) -> bool:
    """Whether `seek` may be answered by `other`, by the rules in the module's docstring."""
    if other.owner == seek.party.owner:
        return False
    if seek.rated and other.is_guest:
        return False
    if seek.rating_range is not None:
        low, high = seek.rating_range
        if other.rating is None or not low <= other.rating <= high:
            return False
    return seek.allow_bots or not other.is_bot


def compatible(a: Seek, b: Seek) -> bool:
    return a.terms() == b.terms() and accepts(a, b.party) and accepts(b, a.party)


def first_match(new: Seek, waiting: Iterable[Seek]) -> Seek | None:
    """The waiting seek a new one is paired with: the oldest compatible one, or None."""
    for seek in sorted(waiting, key=lambda s: (s.posted, s.id)):
        if compatible(new, seek):
            return seek
    return None
