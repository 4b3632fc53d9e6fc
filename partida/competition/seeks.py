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

**Buckets** (`SeekBook`): only seeks of equal terms can meet, so the waiting seeks are kept in one
bucket per terms, each in posting order (ids are given in posting order): a new seek reads its
own bucket, oldest first, and never the seeks of other games, clocks or options. What it costs
grows with the seeks it could meet, not with every seek waiting.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from partida.competition.ratings import ClockLike, clock_class


@dataclass(frozen=True, slots=True)
class Party:
    """Who posts a seek or answers one: its account (or guest id), its rating in the seek's class
    (None for guests and the unrated) and whether that rating is provisional (shown `1500?`),
    and whether it is a bot or a guest."""

    owner: Hashable
    rating: float | None = None
    is_bot: bool = False
    is_guest: bool = False
    provisional: bool = False


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


def terms_key(seek: Seek) -> Hashable:
    """The bucket of a seek: equal exactly when two seeks' terms are (`Seek.terms`), and hashable
    whatever its options hold (lists, maps)."""
    clock = seek.clock
    timing = None if clock is None else (clock.initial, clock.increment, clock.per_move)
    options = json.dumps(dict(seek.options), sort_keys=True, separators=(",", ":"), default=repr)
    return (seek.game, options, seek.seats, timing, seek.rated)


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


@dataclass
class _Bucket:
    ids: list[int] = field(default_factory=list)  # sorted: posting order
    seeks: dict[int, Seek] = field(default_factory=dict)


class SeekBook:
    """The waiting seeks by terms, each bucket in posting order: `match` is `first_match` over the
    one bucket a new seek could meet in. Adding or removing a seek touches its bucket alone, and a
    seek put back (a pairing that failed) takes its old place."""

    def __init__(self) -> None:
        self._buckets: dict[Hashable, _Bucket] = {}
        self._keys: dict[int, Hashable] = {}  # seek id -> its bucket's key

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, seek_id: object) -> bool:
        return seek_id in self._keys

    def __iter__(self) -> Iterator[Seek]:
        for bucket in self._buckets.values():
            yield from bucket.seeks.values()

    def add(self, seek: Seek) -> None:
        if seek.id in self._keys:
            return
        key = terms_key(seek)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket()
        bisect.insort(bucket.ids, seek.id)
        bucket.seeks[seek.id] = seek
        self._keys[seek.id] = key

    def remove(self, seek_id: int) -> Seek | None:
        key = self._keys.pop(seek_id, None)
        if key is None:
            return None
        bucket = self._buckets[key]
        del bucket.ids[bisect.bisect_left(bucket.ids, seek_id)]
        seek = bucket.seeks.pop(seek_id)
        if not bucket.ids:
            del self._buckets[key]  # an empty bucket is no bucket: their number follows the seeks
        return seek

    def bucket_size(self, seek: Seek) -> int:
        """How many waiting seeks have `seek`'s terms (those `match` may read)."""
        bucket = self._buckets.get(terms_key(seek))
        return 0 if bucket is None else len(bucket.ids)

    def match(self, new: Seek) -> Seek | None:
        """The oldest waiting seek compatible with `new`, or None."""
        bucket = self._buckets.get(terms_key(new))
        if bucket is None:
            return None
        seeks = bucket.seeks
        for seek_id in bucket.ids:
            seek = seeks[seek_id]
            if accepts(seek, new.party) and accepts(new, seek.party):
                return seek
        return None
