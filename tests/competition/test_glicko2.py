"""Glicko-2 (partida/competition/glicko2.py) against the worked example of Glickman's paper
("Example of the Glicko-2 system"), and people's ratings on the 1500 scale
(partida/competition/ratings.py): a newcomer at 1500, never negative, provisional marking, the
model picked by the number of seats and OpenSkill's mapping onto the scale."""

from __future__ import annotations

import math

import pytest

from partida.competition import glicko2
from partida.competition.glicko2 import Glicko2
from partida.competition.ratings import (
    BETA,
    GLICKO2,
    MU,
    OPENSKILL,
    RATING_FLOOR,
    SIGMA,
    PersonRating,
    RatedSeat,
    Rating,
    aged,
    model_for,
    newcomer,
    openskill_to_scale,
    rate,
    rate_people,
    rating_changes,
    scale_to_openskill,
)
from partida.room.clocks import ClockSpec

# The paper's example: a player rated 1500, RD 200, volatility 0.06, tau 0.5, beats a 1400 (RD 30)
# and loses to a 1550 (RD 100) and a 1700 (RD 300).
PLAYER = Glicko2(1500, 200, 0.06)
RESULTS = [(Glicko2(1400, 30), 1.0), (Glicko2(1550, 100), 0.0), (Glicko2(1700, 300), 0.0)]


def test_glickmans_worked_example() -> None:
    after = glicko2.update(PLAYER, RESULTS, tau=0.5)
    # The paper's figures: mu' = -0.2069, phi' = 0.8722, sigma' = 0.05999, i.e. r' = 1464.06, RD' = 151.52.
    assert (after.rating - 1500) / glicko2.SCALE == pytest.approx(-0.2069, abs=5e-5)
    assert after.deviation / glicko2.SCALE == pytest.approx(0.8722, abs=5e-5)
    assert after.volatility == pytest.approx(0.05999, abs=1e-5)
    assert after.rating == pytest.approx(1464.06, abs=0.02)
    assert after.deviation == pytest.approx(151.52, abs=0.01)


def test_the_examples_intermediate_quantities() -> None:
    """Steps 3 and 4 of the paper: v = 1.7785 and delta = -0.4834, to the paper's precision (it
    computes them from g and E rounded to three or four places, so the exact values differ in the
    fourth decimal), then step 5's volatility."""
    mu, phi = 0.0, 200 / glicko2.SCALE
    terms = []
    for opponent, score in RESULTS:
        mu_j, phi_j = (opponent.rating - 1500) / glicko2.SCALE, opponent.deviation / glicko2.SCALE
        g = glicko2._g(phi_j)
        terms.append((g, glicko2._e(mu, mu_j, phi_j), score))
    v = 1 / sum(g * g * e * (1 - e) for g, e, _ in terms)
    delta = v * sum(g * (s - e) for g, e, s in terms)
    assert v == pytest.approx(1.7785, abs=1e-3) and delta == pytest.approx(-0.4834, abs=1e-3)
    assert glicko2._volatility(delta, phi, v, 0.06, 0.5) == pytest.approx(0.05999, abs=1e-5)


def test_a_period_without_games_only_widens_the_deviation() -> None:
    after = glicko2.update(PLAYER, [])
    assert after.rating == 1500 and after.deviation > 200 and after.volatility == 0.06


def test_expected_scores_are_symmetric_and_ordered() -> None:
    strong, weak = Glicko2(1700, 80), Glicko2(1500, 80)
    p = glicko2.expected_score(strong, weak)
    assert p > 0.5 and p + glicko2.expected_score(weak, strong) == pytest.approx(1.0)
    # more uncertainty pulls the prediction towards even
    assert glicko2.expected_score(Glicko2(1700, 300), Glicko2(1500, 300)) < p


def test_a_newcomer_shows_1500_provisional() -> None:
    assert PersonRating().shown() == "1500?" and PersonRating().display == 1500
    assert newcomer(2).shown() == newcomer(4).shown() == "1500?"


def test_one_loss_never_makes_a_rating_negative() -> None:
    """A newcomer who loses to a newcomer, or to a strong player, stays far above zero; a long run
    of losses stops at the floor."""
    lost, _ = rate_people([PersonRating(), PersonRating()], [2, 1])
    assert 1000 < lost.rating < 1500 and lost.shown() == f"{round(lost.rating)}?"
    hopeless = PersonRating(650, 60)
    for _ in range(50):
        hopeless, _ = rate_people([hopeless, PersonRating(2500, 60)], [2, 1])
        assert hopeless.rating >= RATING_FLOOR
    four = [newcomer(4)] * 4
    for _ in range(200):
        four = rate_people(four, [4, 1, 2, 3])
    assert four[0].rating == RATING_FLOOR


def test_provisional_is_a_deviation_above_110() -> None:
    assert PersonRating(1500, 110.5).provisional and PersonRating(1500, 110.5).shown() == "1500?"
    assert not PersonRating(1622.4, 110).provisional and PersonRating(1622.4, 110).shown() == "1622"


def test_two_seats_go_to_glicko2_more_to_openskill() -> None:
    assert model_for(2) == GLICKO2 and model_for(3) == model_for(4) == OPENSKILL
    a, b = PersonRating(1600, 90, 0.06), PersonRating(1500, 120, 0.06)
    after = rate_people([a, b], [1, 2])
    expected = glicko2.update(Glicko2(1600, 90, 0.06), [(Glicko2(1500, 120, 0.06), 1.0)], 0.75)
    assert after[0].rating == pytest.approx(expected.rating) and after[0].games == 1
    draw = rate_people([PersonRating(), PersonRating()], [1, 1])
    assert draw[0].rating == pytest.approx(1500) == pytest.approx(draw[1].rating)


def test_openskill_maps_onto_the_scale_both_ways() -> None:
    """mu 25 is 1500; a rating gap predicts the same two-seat result in both models (the
    mapping's reason: Plackett-Luce's likelihood between two sure players is logistic in the mu
    gap over sqrt(2) beta), and a four-seat game on the scale is OpenSkill's own update."""
    assert openskill_to_scale(MU, SIGMA)[0] == 1500
    assert scale_to_openskill(*openskill_to_scale(31.0, 2.0)) == pytest.approx((31.0, 2.0))
    gap = openskill_to_scale(30.0, 0.0)[0] - 1500
    glicko_p = glicko2.expected_score(Glicko2(1500 + gap, 0.0), Glicko2(1500, 0.0))
    plackett_luce_p = 1 / (1 + math.exp(-(30.0 - 25.0) / (math.sqrt(2) * BETA)))
    assert glicko_p == pytest.approx(plackett_luce_p)
    four = [newcomer(4)] * 4
    after = rate_people(four, [1, 2, 3, 4])
    native = rate([Rating()] * 4, [1, 2, 3, 4])
    assert [r.rating for r in after] == pytest.approx([openskill_to_scale(n.mu, n.sigma)[0] for n in native])


def test_a_rated_seat_without_a_rating_starts_as_a_newcomer() -> None:
    after = rating_changes(
        [RatedSeat("a"), RatedSeat("b", PersonRating(1700, 60))],
        [1, 2],
        created_rated=True,
        clock=ClockSpec.from_text("300+3"),
        aborted=False,
    )
    assert after["a"].rating > 1700 - 200 and after["a"].games == 1 and after["b"].games == 1


def test_an_absence_widens_the_deviation_as_lichess_ages_it() -> None:
    """A deviation of 60 (volatility 0.06) is 110 after a year without games, lichess's figure;
    a year and a half makes it provisional; the rating does not move and a newcomer's stays 500."""
    settled = PersonRating(1700, 60, 0.06, 40)
    assert aged(settled, 0) == settled
    year = aged(settled, 365)
    assert year.deviation == pytest.approx(110, abs=1) and year.rating == 1700 and year.games == 40
    assert aged(settled, 548).provisional and not aged(settled, 300).provisional
    assert aged(PersonRating(), 1000).deviation == 500
