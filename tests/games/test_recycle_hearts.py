"""Hearts as people play it: the rules a player sitting down at "Hearts" expects."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest

from partida.games.base import Decision
from partida.games.recycle import GAMES
from partida.games.recycle.state import RecycleState

HEARTS = next(game for game in GAMES if game.name == "hearts")
HAND, TRICK = "HAND", (-1, "vloc", "TRICK")
POINTS = {("Q", "SPADES")}
RANKS = [2, 3, 4, 5, 6, 7, 8, 9, 10, "J", "Q", "K", "A"]


def points(attrs: dict[str, Any]) -> bool:
    return attrs["SUIT"] == "HEARTS" or (attrs["RANK"], attrs["SUIT"]) in POINTS


def hand(state: RecycleState, seat: int) -> list[dict[str, Any]]:
    return [state.cards[c] for c in state.locs.get((seat, "iloc", HAND), [])]


def sto(state: RecycleState, owner: int, name: str) -> int:
    return state.sto.get((owner, "sto", name), 0)


def games(count: int, target: int = 100) -> Iterator[tuple[RecycleState, Decision | None]]:
    """(state, decision) before every decision of `count` random games, then the finished state."""
    for seed in range(count):
        state = HEARTS.create({"target": target}, seed=seed)
        rng = random.Random(seed)
        while not state.is_over():
            decision = state.pending()[0]
            yield state, decision
            state.apply(decision.seat, decision.prompt.random_answer(rng))
        yield state, None


def test_the_two_of_clubs_leads_each_hand() -> None:
    leads = 0
    for state, decision in games(3):
        if decision is None or sto(state, -1, "TRICK") != 1 or state.locs.get(TRICK):
            continue
        if sto(state, -1, "PASSED") < 4 and sto(state, -1, "SHIFT"):
            continue  # still passing
        assert decision.prompt.options == ["2 CLUBS"]
        assert {"RANK": 2, "SUIT": "CLUBS"} in hand(state, decision.seat)
        leads += 1
    assert leads >= 3


def test_no_points_on_the_first_trick_unless_nothing_else_is_held() -> None:
    checked = 0
    for state, decision in games(4):
        if decision is None or sto(state, -1, "TRICK") != 1 or not state.locs.get(TRICK):
            continue
        held = hand(state, decision.seat)
        if any(card["SUIT"] == state.cards[state.locs[TRICK][0]]["SUIT"] for card in held):
            continue
        offered = decision.prompt.options
        if any(not points(card) for card in held):
            assert not any(o.endswith("HEARTS") or o == "Q SPADES" for o in offered), offered
            checked += 1
    assert checked > 0


@pytest.mark.slow
def test_hearts_are_not_led_until_broken_unless_nothing_else_is_held() -> None:
    checked = 0
    for state, decision in games(4):
        if decision is None or state.locs.get(TRICK) or sto(state, -1, "TRICK") == 0:
            continue
        if sto(state, -1, "PASSED") < 4 and sto(state, -1, "SHIFT"):
            continue
        if sto(state, -1, "BROKEN") == 0 and any(c["SUIT"] != "HEARTS" for c in hand(state, decision.seat)):
            assert not any(o.endswith("HEARTS") for o in decision.prompt.options), decision.prompt.options
            checked += 1
    assert checked > 20


def test_taking_all_26_points_gives_26_to_everyone_else() -> None:
    state = HEARTS.create({"target": 1}, seed=2)
    rng = random.Random(2)
    while not (sto(state, -1, "TRICK") == 13 and len(state.locs.get(TRICK, [])) == 3):
        decision = state.pending()[0]
        state.apply(decision.seat, decision.prompt.random_answer(rng))
    decision = state.pending()[0]
    last = decision.prompt.options[0]
    cards = [(state.cards[c], state.card_owner[c]) for c in state.locs[TRICK]]
    cards += [(card, decision.seat) for card in hand(state, decision.seat) if f"{card['RANK']} {card['SUIT']}" == last]
    led = cards[0][0]["SUIT"]
    winner = max((c for c in cards if c[0]["SUIT"] == led), key=lambda c: RANKS.index(c[0]["RANK"]))[1]
    in_trick = sum(13 if (c["RANK"], c["SUIT"]) in POINTS else 1 if c["SUIT"] == "HEARTS" else 0 for c, _ in cards)
    for p in range(4):  # the winner of the last trick took every point before it
        state.sto[(p, "sto", "TAKEN")] = 26 - in_trick if p == winner else 0
    state.apply(decision.seat, last)
    assert state.is_over()
    assert [sto(state, p, "SCORE") for p in range(4)] == [0 if p == winner else 26 for p in range(4)]
    assert state.result().winners == [winner]


def test_three_cards_are_passed_left_right_across_then_held() -> None:
    state = HEARTS.create({"target": 1000}, seed=4)
    rng = random.Random(4)
    for shift in (1, 3, 2, 0):
        passed: dict[int, set[str]] = {p: set() for p in range(4)}
        for _ in range(12 if shift else 0):
            decision = state.pending()[0]
            before = {json.dumps(c) for c in hand(state, decision.seat)}
            state.apply(decision.seat, decision.prompt.random_answer(rng))
            passed[decision.seat] |= before - {json.dumps(c) for c in hand(state, decision.seat)}
        assert all(len(cards) == (3 if shift else 0) for cards in passed.values()), (shift, passed)
        for p in range(4):
            got = {json.dumps(c) for c in hand(state, (p + shift) % 4)}
            assert passed[p] <= got
            assert len(hand(state, p)) == 13
            known = [e for e in state.view(p)["known"] if e["owner"] == (p + shift) % 4]
            assert {json.dumps(e["attrs"]) for e in known} == passed[p]
            sample = HEARTS.determinize(json.loads(json.dumps(state.view(p))), p, rng)
            assert passed[p] <= {json.dumps(sample.cards[c]) for c in sample.locs[((p + shift) % 4, "iloc", HAND)]}
        assert state.pending()[0].prompt.options == ["2 CLUBS"]
        while sto(state, -1, "TRICK") != 13 or len(state.locs.get(TRICK, [])) != 3:
            decision = state.pending()[0]
            state.apply(decision.seat, decision.prompt.random_answer(rng))
        decision = state.pending()[0]
        state.apply(decision.seat, decision.prompt.random_answer(rng))


@pytest.mark.slow
def test_hands_are_played_until_someone_reaches_the_target() -> None:
    for seed in range(3):
        state = HEARTS.create(seed=seed)
        rng = random.Random(seed)
        while not state.is_over():
            decision = state.pending()[0]
            state.apply(decision.seat, decision.prompt.random_answer(rng))
        rounds = state.round_scores()
        assert len(rounds) > 1 and max(rounds[-1]) >= 100
        assert all(max(r) < 100 for r in rounds[:-1])
        assert all(sum(b) - sum(a) in (26, 78) for a, b in zip([[0] * 4, *rounds], rounds, strict=False))
