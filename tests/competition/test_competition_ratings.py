"""People's ratings and seeks (partida/competition/ratings.py, seeks.py) with plain values: clock
classes against lichess's boundaries, who is rated, provisional ratings, farming, and which
seeks make a game in which order."""

from __future__ import annotations

import pytest

from partida.competition.ratings import (
    FARM_LIMIT,
    ClockClass,
    FarmingVerdict,
    PersonRating,
    RatedSeat,
    clock_class,
    farming_verdict,
    rating_changes,
)
from partida.competition.seeks import Party, Seek, accepts, compatible, first_match, seek_problem
from partida.room.clocks import ClockSpec


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("15", ClockClass.BULLET),  # lichess's ultrabullet folds into bullet
        ("60", ClockClass.BULLET),
        ("120+1", ClockClass.BULLET),  # 120 + 40 = 160
        ("60+3", ClockClass.BLITZ),  # 60 + 120 = 180: the first blitz second
        ("180+2", ClockClass.BLITZ),  # 260
        ("300+3", ClockClass.BLITZ),  # 420
        ("300+5", ClockClass.RAPID),  # 500
        ("600", ClockClass.RAPID),
        ("900+10", ClockClass.RAPID),  # 1300: lichess calls 15+10 rapid
        ("900+15", ClockClass.CLASSICAL),  # 1500: the first classical second
        ("1800", ClockClass.CLASSICAL),
        ("move:5", ClockClass.BLITZ),  # 40 x 5 = 200
        ("move:30", ClockClass.RAPID),  # 1200
        ("move:3600", ClockClass.CORRESPONDENCE),
        ("move:86400", ClockClass.CORRESPONDENCE),
    ],
)
def test_clock_classes_by_estimated_duration(text: str, expected: ClockClass) -> None:
    assert clock_class(ClockSpec.from_text(text)) is expected


def test_no_clock_has_no_class() -> None:
    assert clock_class(None) is None


SPEC = ClockSpec.from_text("300+3")


def test_guests_aborts_casual_and_unclocked_games_are_not_rated() -> None:
    ada, bob = RatedSeat("ada"), RatedSeat("bob")
    guest = RatedSeat(None)
    assert rating_changes([ada, guest], [1, 2], created_rated=True, clock=SPEC, aborted=False) == {}
    assert rating_changes([ada, bob], [1, 2], created_rated=True, clock=SPEC, aborted=True) == {}
    assert rating_changes([ada, bob], [1, 2], created_rated=False, clock=SPEC, aborted=False) == {}
    assert rating_changes([ada, bob], [1, 2], created_rated=True, clock=None, aborted=False) == {}
    after = rating_changes([ada, bob], [1, 2], created_rated=True, clock=SPEC, aborted=False)
    assert after["ada"].rating > 1500 > after["bob"].rating and after["ada"].games == after["bob"].games == 1


def test_four_seats_rated_by_rank() -> None:
    seats = [RatedSeat(name) for name in "abcd"]
    after = rating_changes(seats, [2, 1, 4, 2], created_rated=True, clock=SPEC, aborted=False)
    assert after["b"].rating > after["a"].rating > after["c"].rating
    assert after["a"].rating == pytest.approx(after["d"].rating)


def test_provisional_for_sixteen_games() -> None:
    """Two newcomers trading wins: provisional (deviation above 110, lichess's rule) for their
    first 16 games, not after their 17th; shown with `?` while provisional."""
    a, b = PersonRating(), PersonRating()
    provisional = []
    for game in range(20):
        ranks = [1, 2] if game % 2 else [2, 1]
        after = rating_changes(
            [RatedSeat("a", a), RatedSeat("b", b)], ranks, created_rated=True, clock=SPEC, aborted=False
        )
        a, b = after["a"], after["b"]
        provisional.append(a.provisional)
    assert provisional.index(False) == 16
    assert PersonRating().shown() == "1500?" and not a.shown().endswith("?")
    assert a.shown() == str(round(a.rating))


def test_farming_is_flagged_then_refused() -> None:
    assert farming_verdict(["1.2.3.4", "5.6.7.8"], 10) is FarmingVerdict.OK
    assert farming_verdict(["1.2.3.4", None, None], 10) is FarmingVerdict.OK  # two bots of the house
    assert farming_verdict(["1.2.3.4", "1.2.3.4"], 0) is FarmingVerdict.FLAG
    assert farming_verdict(["1.2.3.4", "1.2.3.4"], FARM_LIMIT - 1) is FarmingVerdict.FLAG
    assert farming_verdict(["1.2.3.4", "1.2.3.4"], FARM_LIMIT) is FarmingVerdict.REFUSE


# --- seeks --------------------------------------------------------------------------------------

ADA = Party("ada", rating=20.0)
BOB = Party("bob", rating=12.0)
GUEST = Party("guest-1", is_guest=True)
BOT = Party("othello-engine", rating=30.0, is_bot=True)


def seek(party: Party, id: int = 0, posted: float = 0.0, **terms) -> Seek:  # type: ignore[no-untyped-def]
    base = {"game": "othello", "clock": SPEC, "rated": True}
    return Seek(id, posted, party, **{**base, **terms})


def test_seeks_match_on_equal_terms_only() -> None:
    assert compatible(seek(ADA), seek(BOB))
    assert compatible(seek(ADA, options={"size": 8}), seek(BOB, options={"size": 8}))
    assert not compatible(seek(ADA), seek(BOB, game="duel"))
    assert not compatible(seek(ADA), seek(BOB, options={"size": 6}))
    assert not compatible(seek(ADA), seek(BOB, clock=ClockSpec.from_text("300+2")))
    assert not compatible(seek(ADA), seek(BOB, rated=False))
    assert not compatible(seek(ADA), seek(ADA, id=1))  # not with oneself
    assert not compatible(seek(ADA, seats=4), seek(BOB))


def test_rating_ranges_and_guests() -> None:
    assert not compatible(seek(ADA, rating_range=(15, 25)), seek(BOB))
    assert compatible(seek(ADA, rating_range=(12, 25)), seek(BOB))  # bounds included
    assert not compatible(seek(ADA, rated=False, rating_range=(0, 50)), seek(GUEST, rated=False))
    assert compatible(seek(ADA, rated=False), seek(GUEST, rated=False))
    assert not accepts(seek(ADA), GUEST)
    assert seek_problem(seek(GUEST)) == "guests cannot play rated games: log in, or seek a casual game"
    assert seek_problem(seek(ADA, clock=None)) == "a rated game needs a clock"
    assert seek_problem(seek(ADA, rating_range=(30, 10))) == "the rating range 30-10 is empty"
    assert seek_problem(seek(ADA)) is None


def test_bots_answer_only_seeks_that_allow_them() -> None:
    assert not compatible(seek(ADA), seek(BOT, allow_bots=True))
    assert compatible(seek(ADA, allow_bots=True), seek(BOT))
    assert not accepts(seek(ADA), BOT) and accepts(seek(ADA, allow_bots=True), BOT)


def test_the_oldest_compatible_seek_is_matched_first() -> None:
    waiting = [
        seek(Party("cy", rating=5.0), id=3, posted=30.0),
        seek(BOB, id=1, posted=10.0, rated=False),  # the oldest, but casual
        seek(Party("di", rating=8.0), id=4, posted=20.0),
        seek(Party("ed", rating=9.0), id=2, posted=20.0),  # as old as di's, lower id
    ]
    assert first_match(seek(ADA, id=9, posted=40.0), waiting).id == 2  # type: ignore[union-attr]
    assert first_match(seek(ADA, id=9, posted=40.0, game="duel"), waiting) is None
