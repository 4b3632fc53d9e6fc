"""Ratings: the one module that rates both the bot ladders and people's games, with people's
clock classes, who is rated, and farming.

**The models.** Two, each where it is the field's choice:

- **Glicko-2** (`partida.competition.glicko2`, lichess's system) for people's games of two seats:
  a rating, a deviation (how unsure it is) and a volatility, on the familiar 1500-centred scale,
  each game its own rating period. The settings are lichess's: a newcomer at 1500 with deviation
  500 and volatility 0.09, tau 0.75, the deviation kept within 45-500, the volatility at most 0.1,
  and the deviation widened by the days since the player's last game before the next (`aged`).
- **OpenSkill's Plackett-Luce** for games of more seats (it rates N seats from their ranks; ties
  share a rank) and for the bot ladders (whose pairing rule is built on its predictions). Its
  parameters (mu 25, sigma 25/3, beta sigma/2, tau mu/300) are fixed here, once, rather than left
  to the library's defaults: a newer openskill that changes a default cannot make `partida ladder
  rerate` disagree with the stored table. Applying the same results in the same order gives
  bit-for-bit the same floats, which is what `rerate` checks.

`partida ratings evaluate` replays stored rated games through both and an Elo baseline
(`partida.competition.rating_evaluation`); docs/ratings.md has the measured figures.

**One scale for people.** A person's rating is stored and shown on Glicko's scale whatever the
model: `rating` (1500 for a newcomer) and `deviation`, in rating points. OpenSkill's mu and sigma
map onto it linearly (`openskill_to_scale`): mu 25 is 1500, and one unit of mu is
`POINTS_PER_MU` points, chosen so that a rating gap predicts the same result in both models:
Plackett-Luce between two sure players is logistic in (mu1 - mu2) / (sqrt(2) beta), Glicko's in
(r1 - r2) / 173.7178, so POINTS_PER_MU = 173.7178 / (sqrt(2) beta) (29.5; OpenSkill's newcomer
sigma is then a deviation of 246). A rating is **provisional** (shown with `?`) while its deviation
is above 110, lichess's rule; a rating never goes below `RATING_FLOOR` (600, lichess's floor), so
no run of losses makes it negative. The ladders show OpenSkill's own conservative mu - 3 sigma.

**Clock classes** (`clock_class`), as lichess defines them: a Fischer clock's estimated duration
is `initial + 40 * increment` seconds; under 3 minutes is bullet (lichess's ultrabullet, under
30 s, is folded into bullet: too few games here to split), under 8 minutes blitz, under 25 minutes
rapid, otherwise classical. A per-move clock of an hour or more a move is correspondence; a
shorter per-move clock is estimated as 40 moves of it (5 s a move: 200 s, blitz). A game without
a clock has no class and is never rated: nothing makes it end.

**People's ratings**: one rating per account, game and clock class, updated from a finished game's
ranks by the model its number of seats picks (`model_for`). Provisional ratings are shown with a
`?` and listed, marked, after the established ones on leaderboards.

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

from partida.competition import glicko2
from partida.competition.glicko2 import Glicko2

MU = 25.0
SIGMA = MU / 3
BETA = SIGMA / 2
TAU = MU / 300  # added uncertainty per game, so ratings can still move after many games
CONFIDENCE = 3.0  # a ladder's displayed rating is mu - CONFIDENCE * sigma

# People's scale and Glicko-2's settings (lichess's).
CENTRE = glicko2.CENTRE
NEWCOMER_DEVIATION = 500.0
NEWCOMER_VOLATILITY = 0.09
GLICKO_TAU = 0.75
MIN_DEVIATION = 45.0
MAX_DEVIATION = 500.0
PROVISIONAL_DEVIATION = 110.0
MAX_VOLATILITY = 0.1  # lichess's cap: past it a rating might never settle again
# Lichess's rating periods a day of absence: a deviation of 60 (volatility 0.06) is 110 after a year.
RATING_PERIODS_PER_DAY = 0.21436
RATING_FLOOR = 600.0
POINTS_PER_MU = glicko2.SCALE / (math.sqrt(2.0) * BETA)
GLICKO2 = "glicko2"
OPENSKILL = "openskill"

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


def model_for(seats: int) -> str:
    """The model that rates a people's game of this many seats."""
    return GLICKO2 if seats == 2 else OPENSKILL


def openskill_to_scale(mu: float, sigma: float) -> tuple[float, float]:
    """OpenSkill's (mu, sigma) as (rating, deviation) on people's scale (the module's docstring)."""
    return CENTRE + POINTS_PER_MU * (mu - MU), POINTS_PER_MU * sigma


def scale_to_openskill(rating: float, deviation: float) -> tuple[float, float]:
    return MU + (rating - CENTRE) / POINTS_PER_MU, deviation / POINTS_PER_MU


@dataclass(frozen=True, slots=True)
class PersonRating:
    """A person's rating in one game and class, on people's scale."""

    rating: float = CENTRE
    deviation: float = NEWCOMER_DEVIATION
    volatility: float = NEWCOMER_VOLATILITY
    games: int = 0

    @property
    def display(self) -> int:
        """The rating as shown: whole points, as lichess shows them."""
        return round(self.rating)

    @property
    def provisional(self) -> bool:
        return self.deviation > PROVISIONAL_DEVIATION

    def shown(self) -> str:
        """The rating as people read it, with `?` while provisional: `1500?`, `1622`."""
        return f"{self.display}{'?' if self.provisional else ''}"


def newcomer(seats: int) -> PersonRating:
    """An account's rating before its first game of a class: 1500, as unsure as the model that
    rates its game starts (OpenSkill's sigma 25/3 is a deviation of 246, Glicko's is 500)."""
    if model_for(seats) == GLICKO2:
        return PersonRating()
    return PersonRating(CENTRE, openskill_to_scale(MU, SIGMA)[1])


def aged(rating: PersonRating, idle_days: float) -> PersonRating:
    """A Glicko-2 rating after `idle_days` without a game: Glickman's step 6 once per rating
    period sat out (lichess counts 0.21436 a day), so a player back after a long absence is
    unsure, and provisional again, as on lichess. The rating itself does not move."""
    if idle_days <= 0:
        return rating
    spread = rating.volatility * glicko2.SCALE
    deviation = math.sqrt(rating.deviation**2 + idle_days * RATING_PERIODS_PER_DAY * spread**2)
    return PersonRating(rating.rating, min(MAX_DEVIATION, deviation), rating.volatility, rating.games)


def _floor(rating: float) -> float:
    return max(RATING_FLOOR, rating)


def _glicko(r: PersonRating) -> Glicko2:
    return Glicko2(r.rating, r.deviation, r.volatility)


def pair_score(ranks: Sequence[int]) -> float:
    """Seat 0's score in a two-seat game from its ranks: 1 a win, 1/2 a draw, 0 a loss."""
    if ranks[0] == ranks[1]:
        return 0.5
    return 1.0 if ranks[0] < ranks[1] else 0.0


def rate_people(ratings: Sequence[PersonRating], ranks: Sequence[int]) -> list[PersonRating]:
    """Each seat's rating after one game (the games count included), by the model of its seats."""
    if len(ratings) != len(ranks):
        raise ValueError(f"{len(ratings)} ratings for {len(ranks)} ranks")
    if len(ratings) < 2:
        raise ValueError("a rated game has at least two seats")
    if model_for(len(ratings)) == GLICKO2:
        score = pair_score(ranks)
        a, b = _glicko(ratings[0]), _glicko(ratings[1])
        new = [glicko2.update(a, [(b, score)], GLICKO_TAU), glicko2.update(b, [(a, 1.0 - score)], GLICKO_TAU)]
        return [
            PersonRating(
                _floor(n.rating),
                min(MAX_DEVIATION, max(MIN_DEVIATION, n.deviation)),
                min(MAX_VOLATILITY, n.volatility),
                r.games + 1,
            )
            for r, n in zip(ratings, new, strict=True)
        ]
    before = [Rating(*scale_to_openskill(r.rating, r.deviation)) for r in ratings]
    after = rate(before, ranks)
    out = []
    for r, n in zip(ratings, after, strict=True):
        rating, deviation = openskill_to_scale(n.mu, n.sigma)
        out.append(PersonRating(_floor(rating), deviation, r.volatility, r.games + 1))
    return out


def expected_first(ratings: Sequence[PersonRating]) -> list[float]:
    """Each seat's predicted chance of finishing first, by the model of its seats (two seats: its
    expected score, a draw counting half)."""
    if model_for(len(ratings)) == GLICKO2:
        p = glicko2.expected_score(_glicko(ratings[0]), _glicko(ratings[1]))
        return [p, 1.0 - p]
    return win_probabilities([Rating(*scale_to_openskill(r.rating, r.deviation)) for r in ratings])


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


def _teams(ratings: Sequence[Rating]) -> list[list[object]]:
    m = model()
    return [[m.rating(mu=r.mu, sigma=r.sigma)] for r in ratings]


def rate(ratings: Sequence[Rating], ranks: Sequence[int]) -> list[Rating]:
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
    rating: PersonRating | None = None  # None: a newcomer (`newcomer`, by the game's seats)


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
    before = [newcomer(len(seats)) if s.rating is None else s.rating for s in seats]
    after = rate_people(before, ranks)
    return {s.account: r for s, r in zip(seats, after, strict=True)}


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
