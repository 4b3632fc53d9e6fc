"""People's ratings: clock classes, OpenSkill ratings for N seats, who is rated, and farming.

**Clock classes** (`clock_class`), as lichess defines them: a Fischer clock's estimated duration
is `initial + 40 * increment` seconds; under 3 minutes is bullet (lichess's ultrabullet, under
30 s, is folded into bullet: too few games here to split), under 8 minutes blitz, under 25 minutes
rapid, otherwise classical. A per-move clock of an hour or more a move is correspondence; a
shorter per-move clock is estimated as 40 moves of it (5 s a move: 200 s, blitz). A game without
a clock has no class and is never rated: nothing makes it end.

**Ratings** are OpenSkill's Plackett-Luce, the model and parameters the bot ladders use
(`partida.ladder.ratings`: mu 25, sigma 25/3, beta sigma/2, tau mu/300), one rating per account,
game and clock class, updated from a finished game's ranks, so two seats and four go through one
update. A rating is **provisional** while its sigma is above `PROVISIONAL_SIGMA` (6.0, from 8.33
at the start): about a dozen two-seat games against other newcomers (`tests/competition/
test_competition_ratings.py` counts them), fewer at tables of four. Provisional ratings are shown with a `?` and
do not enter leaderboards.

**Who is rated** (`rating_changes`): a game changes ratings only if it was created rated, every
seat is an account (guests are never rated, so a rated room refuses guests), it has a clock class,
and it was not aborted (an abort is possible only before every seat has moved). A seat that lost
on time, including by disconnecting under a clock, lost: that game is rated like any other.

**Farming** (`farming_verdict`): two accounts of one address trading wins is the classic way to
inflate a rating. Households and campuses share addresses too, so the rule flags before it
refuses: a rated game whose seats share an address is rated and *flagged* for review; once the
same accounts have played `FARM_LIMIT` (3) flagged rated games with each other in the last
`FARM_WINDOW` (24 h), the next is *refused* as rated (the room or seek may still be played
casual). The address is whatever key the server's address rules give (an IPv4 address, an IPv6
/64 prefix).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import Protocol

from openskill.models import PlackettLuce

MU = 25.0
SIGMA = MU / 3
BETA = SIGMA / 2
TAU = MU / 300
CONFIDENCE = 3.0  # the displayed rating is mu - CONFIDENCE * sigma, as the ladders show theirs
PROVISIONAL_SIGMA = 6.0

BULLET_BELOW = 180.0
BLITZ_BELOW = 480.0
RAPID_BELOW = 1500.0
CORRESPONDENCE_PER_MOVE = 3600.0
ESTIMATED_MOVES = 40

FARM_LIMIT = 3
FARM_WINDOW = 24 * 3600.0


class ClockClass(StrEnum):
    BULLET = "bullet"
    BLITZ = "blitz"
    RAPID = "rapid"
    CLASSICAL = "classical"
    CORRESPONDENCE = "correspondence"


class ClockLike(Protocol):
    """The fields of a time control that classify it (`partida.room.clocks.ClockSpec` has them)."""

    @property
    def initial(self) -> float | None: ...
    @property
    def increment(self) -> float: ...
    @property
    def per_move(self) -> float | None: ...


def estimated_seconds(clock: ClockLike) -> float:
    if clock.per_move is not None:
        return ESTIMATED_MOVES * clock.per_move
    return (clock.initial or 0.0) + ESTIMATED_MOVES * clock.increment


def clock_class(clock: ClockLike | None) -> ClockClass | None:
    """The rating class of a time control; None (never rated) for a game without a clock."""
    if clock is None:
        return None
    if clock.per_move is not None and clock.per_move >= CORRESPONDENCE_PER_MOVE:
        return ClockClass.CORRESPONDENCE
    seconds = estimated_seconds(clock)
    if seconds < BULLET_BELOW:
        return ClockClass.BULLET
    if seconds < BLITZ_BELOW:
        return ClockClass.BLITZ
    if seconds < RAPID_BELOW:
        return ClockClass.RAPID
    return ClockClass.CLASSICAL


@dataclass(frozen=True, slots=True)
class PersonRating:
    mu: float = MU
    sigma: float = SIGMA
    games: int = 0

    @property
    def display(self) -> float:
        return self.mu - CONFIDENCE * self.sigma

    @property
    def provisional(self) -> bool:
        return self.sigma > PROVISIONAL_SIGMA

    def shown(self) -> str:
        """The rating as people read it: rounded, with `?` while provisional."""
        return f"{self.display:.1f}{'?' if self.provisional else ''}"


@cache
def _model() -> PlackettLuce:
    return PlackettLuce(mu=MU, sigma=SIGMA, beta=BETA, tau=TAU, limit_sigma=False, balance=False)


@dataclass(frozen=True, slots=True)
class RatedSeat:
    """A seat of a finished game: its account (None for a guest) and that account's rating in the
    game's class before the game."""

    account: Hashable | None
    rating: PersonRating = PersonRating()


def is_rated(seats: Sequence[RatedSeat], created_rated: bool, clock: ClockLike | None, aborted: bool) -> bool:
    """Whether a finished game changes ratings, by the rules in the module's docstring."""
    accounts = [s.account for s in seats]
    return (
        created_rated
        and not aborted
        and clock_class(clock) is not None
        and len(seats) >= 2
        and None not in accounts
        and len(set(accounts)) == len(accounts)
    )


def rating_changes(
    seats: Sequence[RatedSeat], ranks: Sequence[int], *, created_rated: bool, clock: ClockLike | None, aborted: bool
) -> dict[Hashable, PersonRating]:
    """Each account's rating after the game (empty when the game is not rated)."""
    if len(seats) != len(ranks):
        raise ValueError(f"{len(seats)} seats for {len(ranks)} ranks")
    if not is_rated(seats, created_rated, clock, aborted):
        return {}
    m = _model()
    teams = [[m.rating(mu=s.rating.mu, sigma=s.rating.sigma)] for s in seats]
    after = m.rate(teams, ranks=[float(r) for r in ranks])
    return {
        s.account: PersonRating(float(t[0].mu), float(t[0].sigma), s.rating.games + 1)
        for s, t in zip(seats, after, strict=True)
    }


class FarmingVerdict(StrEnum):
    OK = "ok"
    FLAG = "flag"  # rated, and recorded for review
    REFUSE = "refuse"  # not rated: the game may be played casual


def farming_verdict(addresses: Sequence[str | None], recent_shared_games: int) -> FarmingVerdict:
    """The verdict on a rated game about to start: `addresses` are its seats' address keys (None:
    unknown, as a bot on the server's own machine), `recent_shared_games` how many flagged rated
    games these same accounts played together in the last `FARM_WINDOW`."""
    known = [a for a in addresses if a is not None]
    if len(set(known)) == len(known):
        return FarmingVerdict.OK
    return FarmingVerdict.REFUSE if recent_shared_games >= FARM_LIMIT else FarmingVerdict.FLAG
