"""Chance in the game interface (RECYCLE dice and shuffles) and the agents that search it."""

from __future__ import annotations

from math import isclose

import pytest

from partida.bots.base import Turn
from partida.bots.expectimax import ExpectimaxAgent
from partida.bots.local import play_local
from partida.bots.mcts import MctsAgent
from partida.bots.registry import make_agent
from partida.games.base import IllegalAction
from partida.games.recycle import RecycleGame
from partida.games.recycle.compiler import shuffle_outcomes
from partida.games.registry import default_registry

REGISTRY = default_registry()
MATCH_CARD = REGISTRY.get("throwdicematchcard")
DICE_POINTS = REGISTRY.get("dicepoints")

# Seat 0 takes a sure 3 points or throws a d6 and scores its face; seat 1 has RIVAL points.
GAMBLE = RecycleGame(
    "gamble",
    """
(game
  (declare 4 'RIVAL)
  (setup (create players 2) (create dicestorage 'DIE (6)))
  (set ((next player) sto SCORE) 'RIVAL)
  (choice ((set ((current player) sto SCORE) 3)
           (do ((throwalldice 'DIE) (set ((current player) sto SCORE) (dievalue 'DIE))))))
  (scoring max ((current player) sto SCORE)))
""",
)
SURE, THROW = GAMBLE.create(seed=0).pending()[0].prompt.answers()

# Each turn the player may shuffle a three-card pile (two 1s and a 2) and scores its top card.
PILE = RecycleGame(
    "pile",
    """
(game
  (setup
    (create players 2)
    (create deck (game vloc PILE) (deck (VALUE (1, 1, 2)))))
  (set (game sto TURNS) 0)
  (stage player
    (end (>= (game sto TURNS) 4))
    (choice ((shuffle (game vloc PILE)) (set (game sto KEEP) 1)))
    (inc ((current player) sto SCORE) (cardatt VALUE (top (game vloc PILE))))
    (inc (game sto TURNS) 1))
  (scoring max ((current player) sto SCORE)))
""",
)


def _play_to_chance(state, rng_answer=0):
    """Answer decisions (the first answer each time) until the state waits on chance."""
    while state.chance_outcomes() is None:
        assert not state.is_over()
        decision = state.pending()[0]
        state.apply(decision.seat, decision.prompt.answers()[rng_answer])
    return state.chance_outcomes()


def test_a_five_sided_die_has_five_outcomes_of_one_fifth() -> None:
    state = MATCH_CARD.create(seed=3)
    assert state.chance_outcomes() is None  # never waits unless asked
    assert state.stop_at_chance()
    outcomes = _play_to_chance(state)
    assert [o for o, _ in outcomes] == [(1,), (2,), (3,), (4,), (5,)]
    assert all(isclose(p, 1 / 5) for _, p in outcomes)
    assert state.pending() == [] and not state.is_over()
    state.apply_chance((4,))
    assert state.view(0)["dice"]["DIE"] == [4]
    assert state.pending()  # the next player's card


def test_two_dice_list_every_pair_and_sum_to_one() -> None:
    state = DICE_POINTS.create({"ndice": 2, "sides": 5}, seed=1)
    state.stop_at_chance()
    outcomes = _play_to_chance(state)
    assert len(outcomes) == 25 and len({o for o, _ in outcomes}) == 25
    assert isclose(sum(p for _, p in outcomes), 1.0)
    assert all(1 <= face <= 5 for o, _ in outcomes for face in o)
    # the sum of two d5 is 6 with probability 5/25, as the rules say
    assert isclose(sum(p for o, p in outcomes if sum(o) == 6), 5 / 25)


def test_too_many_outcomes_are_drawn_by_the_state() -> None:
    state = DICE_POINTS.create({"ndice": 3, "sides": 10}, seed=1)  # 1000 outcomes: not listed
    state.stop_at_chance()
    decision = state.pending()[0]
    state.apply(decision.seat, decision.prompt.answers()[0])
    assert state.chance_outcomes() is None and state.pending()
    assert shuffle_outcomes(list(range(7)), [{"V": v} for v in range(7)]) is None  # 5040 orders


def test_a_wrong_outcome_is_refused_and_changes_nothing() -> None:
    state = MATCH_CARD.create(seed=3)
    state.stop_at_chance()
    _play_to_chance(state)
    before = state.view(None)
    with pytest.raises(IllegalAction) as err:
        state.apply_chance((6,))
    assert err.value.code == "bad_outcome"
    assert state.view(None) == before and state.chance_outcomes() is not None
    played = MATCH_CARD.create(seed=3)
    with pytest.raises(IllegalAction) as err:
        played.apply_chance((1,))
    assert err.value.code == "no_chance"


def test_a_shuffle_lists_its_distinct_orders() -> None:
    state = PILE.create(seed=5)
    state.stop_at_chance()
    decision = state.pending()[0]
    state.apply(decision.seat, "(shuffle (game vloc PILE))")
    outcomes = state.chance_outcomes()
    assert outcomes is not None and len(outcomes) == 3  # 3! / 2! orders of 1, 1, 2
    assert all(isclose(p, 1 / 3) for _, p in outcomes)
    tops = []
    for order, _ in outcomes:
        branch = state.clone()
        branch.apply_chance(order)
        pile = next(loc for loc in branch.view(None)["locations"] if loc["name"] == "PILE")
        tops.append(pile["cards"][-1]["attrs"]["VALUE"])
        assert branch.scores()[0] == tops[-1]  # the top card scored
    assert sorted(tops) == [1, 1, 2]


def test_stopping_at_chance_plays_the_same_game_when_the_state_draws() -> None:
    """Replays are unchanged: a game that never stops at chance draws exactly as before."""
    a = MATCH_CARD.create(seed=11)
    b = MATCH_CARD.create(seed=11)
    b.stop_at_chance(False)
    while not a.is_over():
        decision = a.pending()[0]
        answer = decision.prompt.answers()[-1]
        a.apply(decision.seat, answer)
        b.apply(decision.seat, answer)
        assert a.view(None) == b.view(None)


@pytest.mark.parametrize(("rival", "best", "value"), [(4, THROW, 5 / 12), (2, SURE, 1.0)])
def test_expectimax_takes_the_move_of_highest_expectation(rival: int, best: str, value: float) -> None:
    # rival 4: the sure 3 loses, the die wins on 5 or 6 and ties on 4 (2/6 + 1/6 * 1/2 = 5/12);
    # rival 2: the sure 3 wins, the die only 3/4 of a win.
    for seed in range(4):
        state = GAMBLE.create({"rival": rival}, seed=seed)
        agent = ExpectimaxAgent(depth=2, seed=seed)
        assert agent.act(Turn(GAMBLE, 0, state.pending()[0].prompt, state.view(0))) == best
        assert isclose(agent.last_values[best], value)


@pytest.mark.parametrize(("rival", "best"), [(4, THROW), (2, SURE)])
def test_mcts_draws_the_die_at_every_iteration(rival: int, best: str) -> None:
    """With one sampled future MCTS would see the throw win or lose for sure and choose either
    move about half the time; drawing the die at its chance node it finds the expectation."""
    for seed in range(8):
        state = GAMBLE.create({"rival": rival}, seed=seed)
        agent = MctsAgent(iterations=300, seed=seed)
        assert agent.act(Turn(GAMBLE, 0, state.pending()[0].prompt, state.view(0))) == best


def test_expectimax_beats_random_at_throw_dice_match_card() -> None:
    matches = 30
    credit = [0.0] * 4
    for m in range(matches):
        agents = [make_agent("expectimax", MATCH_CARD, depth=3, seed=m)]
        agents += [make_agent("random", MATCH_CARD, seed=100 * m + s) for s in range(3)]
        winners = play_local(MATCH_CARD, agents, seed=m).state.result().winners
        for seat in winners:
            credit[seat] += 1 / len(winners)
    # a random seat expects a quarter; 0.5 over 30 matches is more than 3 standard errors above
    assert credit[0] / matches > 0.5
    assert credit[0] > max(credit[1:])
