"""Replaying rated games through the models (partida/competition/rating_evaluation.py): every
model predicts a game from what it learned before it, never after; the share predicted leaves
draws out and counts an even call half; the log loss is the textbook one; the measured choice is
the lowest log loss."""

from __future__ import annotations

import math

import pytest

from partida.competition.rating_evaluation import EloModel, RatedResult, Tally, evaluate, log_loss

POOL = ("othello", "blitz")


def game(a: str, b: str, ranks: tuple[int, int] = (1, 2)) -> RatedResult:
    return RatedResult(POOL, (a, b), ranks)


def test_the_first_game_is_a_coin_for_every_model() -> None:
    found = evaluate([game("ann", "bea")])
    for name in ("glicko2", "openskill", "elo"):
        tally = found.every[name].to_data()
        assert tally == {"games": 1, "decisive": 1, "predicted": 0.5, "log_loss": round(math.log(2), 4)}


def test_a_player_who_always_wins_is_predicted_from_the_second_game_on() -> None:
    found = evaluate([game("ann", "bea") if n % 2 else game("bea", "ann", (2, 1)) for n in range(30)])
    for name in ("glicko2", "openskill", "elo"):
        every = found.every[name].to_data()
        assert every["predicted"] == pytest.approx((0.5 + 29) / 30, abs=1e-4)
        assert found.second_half[name].to_data()["predicted"] == 1.0
        assert found.curves[name][-1] < found.curves[name][0] == pytest.approx(math.log(2))
    assert found.two_seat == 30 and found.draws == 0 and found.chosen in {"glicko2", "openskill", "elo"}
    # the chosen model has the lowest mean log loss
    losses = {name: t.loss / t.games for name, t in found.every.items()}
    assert losses[found.chosen] == min(losses.values())


def test_draws_count_in_the_log_loss_only() -> None:
    tally = Tally()
    tally.add(0.7, 0.5)  # a draw: no favourite to be right or wrong
    tally.add(0.7, 1.0)
    tally.add(0.5, 0.0)  # an even call: half right
    assert tally.to_data()["decisive"] == 2 and tally.to_data()["predicted"] == 0.75
    expected = (log_loss(0.7, 0.5) + log_loss(0.7, 1.0) + log_loss(0.5, 0.0)) / 3
    assert tally.to_data()["log_loss"] == round(expected, 4)
    assert log_loss(0.7, 0.5) == pytest.approx(-(0.5 * math.log(0.7) + 0.5 * math.log(0.3)))


def test_pools_are_rated_apart_and_tables_go_to_openskill_alone() -> None:
    results = [game("ann", "bea")] * 5 + [RatedResult(("othello", "rapid"), ("bea", "ann"), (1, 2))]
    results.append(RatedResult(("hearts", "blitz"), ("a", "b", "c", "d"), (1, 2, 3, 4)))
    results.append(RatedResult(("hearts", "blitz"), ("a", "b", "c", "d"), (1, 2, 3, 4)))
    found = evaluate(results)
    # in rapid, ann and bea are newcomers again: a coin
    assert found.curves["elo"][5] * 6 - found.curves["elo"][4] * 5 == pytest.approx(math.log(2))
    assert found.more_seats == 2 and found.tables.games == 2
    assert found.tables.predicted == 1.25  # four even chances first (a quarter), then "a" favoured
    assert found.to_data()["more_seats_openskill"]["games"] == 2


def test_elo_moves_by_k_times_the_surprise() -> None:
    elo = EloModel(k=20)
    elo.learn(game("ann", "bea"))
    assert elo.ratings[(POOL, "ann")] == 1510 and elo.ratings[(POOL, "bea")] == 1490
