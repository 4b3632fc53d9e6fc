"""Ratings, the one OpenSkill model (Plackett-Luce for games of any number of seats, from their
ranks) that rates both the bot ladders and people's games, with people's clock classes, who is
rated, and farming.

**The model.** Plackett-Luce rates a game of N seats from its ranks alone (1 = first, ties share a
rank), so a two-seat Othello game and a four-seat Hearts game go through the same update. Each seat
is a team of one. The model's parameters (mu 25, sigma 25/3, beta sigma/2, tau mu/300) are fixed
here, once, rather than left to the library's defaults: a newer openskill that changes a default
cannot make `partida ladder rerate` disagree with the stored table, and tuning the model cannot
fork the ladders' ratings from people's. Everything here is a pure function of its inputs and of
the order of the games: applying the same results in the same order gives bit-for-bit the same
floats, which is what `rerate` checks.

The displayed rating is the conservative one, `mu - 3 * sigma`: a player is shown where it stands
with high confidence, so a newcomer with few games starts at 0 and rises as its uncertainty
shrinks, rather than jumping to the top after one lucky win.

**Clock classes** (`clock_class`), as lichess defines them: a Fischer clock's estimated duration
is `initial + 40 * increment` seconds; under 3 minutes is bullet (lichess's ultrabullet, under
30 s, is folded into bullet: too few games here to split), under 8 minutes blitz, under 25 minutes
rapid, otherwise classical. A per-move clock of an hour or more a move is correspondence; a
shorter per-move clock is estimated as 40 moves of it (5 s a move: 200 s, blitz). A game without
a clock has no class and is never rated: nothing makes it end.

**People's ratings**: one rating per account, game and clock class, updated by the model from a
finished game's ranks. A rating is **provisional** while its sigma is above `PROVISIONAL_SIGMA`
(6.0, from 8.33 at the start): about a dozen two-seat games against other newcomers
(`tests/competition/test_competition_ratings.py` counts them), fewer at tables of four. Provisional ratings
are shown with a `?` and do not enter leaderboards.

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

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import Protocol

from openskill.models import PlackettLuce

MU = 25.0
SIGMA = MU / 3
BETA = SIGMA / 2
TAU = MU / 300  # added uncertainty per game, so ratings can still move after many games
CONFIDENCE = 3.0  # the displayed rating is mu - CONFIDENCE * sigma
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


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float = MU
    sigma: float = SIGMA

    @property
    def display(self) -> float:
        """The conservative rating shown in standings."""
        return self.mu - CONFIDENCE * self.sigma


@cache
def model() -> PlackettLuce:
    return PlackettLuce(mu=MU, sigma=SIGMA, beta=BETA, tau=TAU, limit_sigma=False, balance=False)


def _teams(ratings: Sequence[Rating | PersonRating]) -> list[list[object]]:
    m = model()
    return [[m.rating(mu=r.mu, sigma=r.sigma)] for r in ratings]


def rate(ratings: Sequence[Rating | PersonRating], ranks: Sequence[int]) -> list[Rating]:
    """The ratings after one game: `ratings[i]` is seat i's rating before it, `ranks[i]` its
    place (1 = first; equal ranks are a tie)."""
    if len(ratings) != len(ranks):
        raise ValueError(f"{len(ratings)} ratings for {len(ranks)} ranks")
    if len(ratings) < 2:
        raise ValueError("a rated game has at least two seats")
    new = model().rate(_teams(ratings), ranks=[float(r) for r in ranks])
    return [Rating(float(team[0].mu), float(team[0].sigma)) for team in new]


def win_probabilities(ratings: Sequence[Rating]) -> list[float]:
    """OpenSkill's predicted probability that each seat finishes first."""
    return [float(p) for p in model().predict_win(_teams(ratings))]


def outcome_uncertainty(ratings: Sequence[Rating]) -> float:
    """How unpredictable the winner is, from 0 (certain) to 1 (every seat equally likely): the
    entropy of `win_probabilities` over its maximum, log(seats)."""
    probabilities = win_probabilities(ratings)
    entropy = -sum(p * math.log(p) for p in probabilities if p > 0)
    return entropy / math.log(len(probabilities))


def outcome(ranks: Sequence[int], seat: int) -> tuple[int, int, int]:
    """(win, draw, loss) for the standings, each 0 or 1: a win is first place alone, a draw first
    place shared, anything else a loss."""
    if ranks[seat] != 1:
        return (0, 0, 1)
    return (1, 0, 0) if list(ranks).count(1) == 1 else (0, 1, 0)


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
    after = rate([s.rating for s in seats], ranks)
    return {s.account: PersonRating(r.mu, r.sigma, s.rating.games + 1) for s, r in zip(seats, after, strict=True)}


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
