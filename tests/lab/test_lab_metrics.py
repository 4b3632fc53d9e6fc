"""The six metrics on small matches worked out by hand (specs/metrics.md)."""

from __future__ import annotations

import math

import pytest

from partida.lab.metrics import all_metrics, ranks

# Three players, three rounds, with ties. Scores after each round:
#   round 1: [1, 1, 0]  ranking p0, p1 (tied with p0, later seat), p2   -> leader p0, ranks [1, 2, 3]
#   round 2: [1, 2, 2]  ranking p1, p2 (tied with p1, later seat), p0   -> leader p1, ranks [3, 1, 2]
#   round 3: [2, 2, 3]  ranking p2, p0, p1 (p0 and p1 tied)             -> leader p2, ranks [2, 3, 1]
# The winner w is p2.
MATCH = [[1, 1, 0], [1, 2, 2], [2, 2, 3]]


def test_ties_keep_seat_order_in_the_ranking() -> None:
    assert [ranks(s) for s in MATCH] == [[1, 2, 3], [3, 1, 2], [2, 3, 1]]


def test_the_hand_computed_three_player_match() -> None:
    # Drama by points, rounds 1..2, both led by someone other than p2:
    #   round 1: leader p0 with 1, winner 0: sqrt((1 - 0) / (1 - 0)) = 1
    #   round 2: leader p1 with 2, winner tied at 2: sqrt(0 / 2) = 0  -> mean 1/2
    drama_points = (1 + 0) / 2
    # Drama by position: rank of p2 is 3 then 2: mean of sqrt(2/3) and sqrt(1/3).
    drama_position = (math.sqrt(2 / 3) + math.sqrt(1 / 3)) / 2
    # Drama by path: MDP(m) = ceil(3 - (m - 1)) = 3, 2, 1; p2's ranks 3, 2, 1 follow it exactly;
    # p2 was behind in 2 of the M - 1 = 2 rounds: (2 / 2) * (1 - 0 / (2 * 2)) = 1.
    drama_path = 1.0
    # Lead change: leaders p0, p1, p2 over rounds 1..3: three distinct, two changes in M - 1 = 2.
    lead_change = (math.sqrt(2 / 2) + math.sqrt(2 / 2)) / 2
    # Uncertainty over rounds 1..2; shares [1/2, 1/2, 0] and [1/5, 2/5, 2/5].
    h1 = -(0.5 * math.log2(0.5) * 2) / math.log2(3)
    h2 = -(0.2 * math.log2(0.2) + 2 * 0.4 * math.log2(0.4)) / math.log2(3)
    entropy = (h1 + h2) / 2
    u = 1 / math.sqrt(3)
    norm = 2 - 2 / math.sqrt(3)
    d1 = 1 - math.sqrt((2 * (math.sqrt(0.5) - u) ** 2 + u**2) / norm)
    d2 = 1 - math.sqrt(((math.sqrt(0.2) - u) ** 2 + 2 * (math.sqrt(0.4) - u) ** 2) / norm)
    distance = (d1 + d2) / 2
    expected = {
        "drama_points": drama_points,
        "drama_position": drama_position,
        "drama_path": drama_path,
        "lead_change": lead_change,
        "uncertainty_entropy": entropy,
        "uncertainty_distance": distance,
    }
    got = all_metrics(MATCH)
    assert got == pytest.approx(expected)
    # The same values written as decimals, so a reader can check them against a calculator.
    assert got["drama_position"] == pytest.approx(0.696923, abs=1e-6)
    assert got["lead_change"] == 1.0
    assert got["uncertainty_entropy"] == pytest.approx(0.795580, abs=1e-6)
    assert got["uncertainty_distance"] == pytest.approx(0.588048, abs=1e-6)


def test_a_winner_who_leads_throughout_has_no_drama() -> None:
    # p0 leads after every round; p1 and p2 tie behind.
    match = [[3, 1, 1], [5, 2, 2], [9, 4, 4]]
    got = all_metrics(match)
    assert got["drama_points"] == got["drama_position"] == got["drama_path"] == 0
    # Leader p0 in every round: no change, one distinct leader.
    assert got["lead_change"] == 0


def test_a_tie_with_the_leader_counts_as_a_round_behind_with_no_points_gap() -> None:
    # Round 1: p0 and p1 tied at 2, so p0 leads and p1 (the eventual winner) is second.
    match = [[2, 2], [2, 3]]
    got = all_metrics(match)
    assert got["drama_points"] == 0  # the term is sqrt(0 / 2)
    assert got["drama_position"] == pytest.approx(math.sqrt(1 / 2))
    # Leaders p0, p1 over rounds 1..2: two distinct, one change in M - 1 = 1.
    assert got["lead_change"] == 1.0


def test_all_zero_scores_are_uniform_and_a_single_round_has_no_earlier_rounds() -> None:
    got = all_metrics([[0, 0, 0, 0], [0, 0, 0, 1]])
    assert got["uncertainty_entropy"] == pytest.approx(1.0)
    assert got["uncertainty_distance"] == pytest.approx(1.0)
    one = all_metrics([[4, 2, 1]])
    assert one["drama_path"] == one["uncertainty_entropy"] == one["uncertainty_distance"] == 0


def test_lead_change_has_no_round_zero() -> None:
    # p1 leads after every round: the first seat's lead before play does not count as a change.
    assert all_metrics([[0, 2], [1, 3], [2, 5]])["lead_change"] == 0


def test_lead_change_is_reported_over_the_matches_above_zero_like_drama() -> None:
    from partida.lab.report import summarize

    results = [{"ranks": [1, 2]}, {"ranks": [2, 1]}, {"ranks": [1, 2]}]
    metrics = [all_metrics(m) for m in ([[2, 0], [3, 1]], [[2, 0], [2, 3]], [[0, 1], [3, 1]])]
    lead = summarize(results, metrics, 2)["metrics"]["lead_change"]
    assert lead == {"above_zero": 2, "mean": 1.0, "std": 0.0}


def test_win_shares_as_the_study_counts_them_credit_ties_to_the_earliest_seat() -> None:
    from partida.lab.report import summarize

    results = [{"ranks": [1, 1, 3]}, {"ranks": [3, 1, 1]}, {"ranks": [2, 1, 3]}, {"ranks": [1, 2, 3]}]
    metrics = [all_metrics([[1, 1, 0], [2, 2, 0]])] * 4
    summary = summarize(results, metrics, 3)
    assert summary["wins"] == [0.25, 0.25, 0.0] and summary["draws"] == 0.5
    assert summary["wins_earliest_seat"] == [0.5, 0.5, 0.0]  # (0,1) tie to seat 0, (1,2) tie to seat 1
    assert summary["shares"] == [0.375, 0.5, 0.125]  # ties split
    # seat 1's credits 0.5, 0.5, 1, 0: sample std sqrt(1/6), so 1.96 * sqrt(1/6) / 2
    assert summary["shares_ci95"][1] == pytest.approx(1.96 * (1 / 6) ** 0.5 / 2)
