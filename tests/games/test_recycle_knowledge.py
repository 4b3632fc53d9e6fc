"""Deals for search agree with what the table has shown: voids read off the rules, cards a seat
saw go somewhere, face-up cards with their ids."""

from __future__ import annotations

import json
import random

import pytest

from partida.games.recycle import GAMES
from partida.games.recycle.knowledge import deal
from partida.games.recycle.state import RecycleState

BY_NAME = {game.name: game for game in GAMES}
AGRAM_REPRO = [(0, "4 SPADES"), (1, "3 SPADES"), (2, "9 SPADES"), (3, "10 SPADES"), (3, "5 DIAMONDS"), (0, "7 HEARTS")]


def voids_hold(state: RecycleState) -> bool:
    """Every void the state records is true of its cards: at least n of the location's cards
    are of none of the void's kinds."""
    for key, voids in state.voids.items():
        cards = state.locs.get(key, [])
        for mask, n in voids:
            if sum(1 for c in cards if not mask >> state.kind[c] & 1) < n:
                return False
    return True


def test_a_seat_that_did_not_follow_diamonds_is_never_dealt_one() -> None:
    game = BY_NAME["agram"]
    state = game.create(seed=1)
    for seat, action in AGRAM_REPRO:
        state.apply(seat, action)
    view = json.loads(json.dumps(state.view(1)))
    hand = next(loc for loc in view["locations"] if loc["owner"] == 0 and loc["name"] == "HAND")
    assert "10 DIAMONDS" in hand["voids"][0][0]
    rng = random.Random(0)
    diamonds = 0
    for _ in range(300):
        sample = game.determinize(view, 1, rng)
        diamonds += any(sample.cards[c]["SUIT"] == "DIAMONDS" for c in sample.locs[(0, "iloc", "HAND")])
    assert diamonds == 0


@pytest.mark.slow
@pytest.mark.parametrize("name", ["agram", "hearts"])
def test_samples_keep_every_shown_void_and_rebuild_the_same_view(name: str) -> None:
    game = BY_NAME[name]
    voids = 0
    for seed in range(6):
        state = game.create({"target": 1} if name == "hearts" else {}, seed=seed)
        rng = random.Random(seed)
        while not state.is_over():
            assert voids_hold(state)  # what the rules told the table is true
            voids += sum(len(v) for v in state.voids.values())
            for seat in range(state.num_seats):
                view = state.view(seat)
                sample = game.determinize(json.loads(json.dumps(view)), seat, rng)
                assert voids_hold(sample)
                assert sample.view(seat) == view  # ids of face-up cards included
            decision = state.pending()[0]
            state.apply(decision.seat, decision.prompt.random_answer(rng))
    assert voids > 0


def test_a_draw_in_crazy_eights_tells_that_nothing_could_be_played() -> None:
    game = BY_NAME["crazyeights"]
    found = False
    for seed in range(20):
        state = game.create(seed=seed, seats=2)
        rng = random.Random(seed)
        while not state.is_over() and not found:
            decision = state.pending()[0]
            action = decision.prompt.random_answer(rng)
            state.apply(decision.seat, action)
            assert voids_hold(state)
            if action.startswith("(move"):
                hand = (decision.seat, "iloc", "HAND")
                found = any(n == len(state.locs[hand]) - 1 for _, n in state.voids.get(hand, ()))
    assert found  # all but the card drawn are known to be unplayable


def test_a_deal_fills_every_bin_within_its_constraints() -> None:
    kind = [0, 0, 1, 1, 2, 2]  # three kinds, two cards each
    bins = [(0b011, 2), (0b100, 2), (0, 2)]  # no kind 0 or 1; no kind 2; anything
    rng = random.Random(3)
    for _ in range(50):
        out = deal(bins, list(range(6)), kind, rng)
        assert sorted(c for cards in out for c in cards) == list(range(6))
        assert all(len(cards) == size for cards, (_, size) in zip(out, bins, strict=True))
        assert all(not mask >> kind[c] & 1 for cards, (mask, _) in zip(out, bins, strict=True) for c in cards)
