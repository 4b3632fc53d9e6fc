"""ISMCTS: legal answers from a seat's information set, and sound choices where they are clear."""

from __future__ import annotations

import random

import pytest

from partida.bots.base import RandomAgent, Turn
from partida.bots.ismcts import IsmctsAgent
from partida.bots.local import play_local
from partida.bots.registry import make_agent
from partida.games.recycle import GAMES
from partida.games.tictactoe.rules import TicTacToe, TicTacToeState

RECYCLE = {game.name: game for game in GAMES}


def test_it_takes_an_immediate_win_at_tictactoe() -> None:
    game = TicTacToe()
    # X on a1, b1; O on a2, b2; X to move: c1 (square 2) wins.
    state = TicTacToeState([0, 0, -1, 1, 1, -1, -1, -1, -1], to_move=0)
    decision = state.pending()[0]
    agent = IsmctsAgent(iterations=300, seed=1)
    assert agent.act(Turn(game, 0, decision.prompt, state.view(0))) == 2


@pytest.mark.slow
def test_it_answers_only_legal_choices_from_what_its_seat_sees() -> None:
    game = RECYCLE["hearts"]
    state = game.create({"target": 1}, seed=3)
    agent = IsmctsAgent(iterations=40, seed=2)
    rng = random.Random(0)
    for _ in range(8):
        decision = state.pending()[0]
        turn = Turn(game, decision.seat, decision.prompt, lambda s=decision.seat: state.view(s))
        action = agent.act(turn)
        assert action in decision.prompt.options
        state.apply(decision.seat, action)
        other = state.pending()[0]
        state.apply(other.seat, other.prompt.random_answer(rng))


def test_it_is_found_by_name_with_its_parameters() -> None:
    agent = make_agent("ismcts", RECYCLE["agram"], iterations=10, seed=4, unknown=1)
    assert isinstance(agent, IsmctsAgent) and agent.iterations == 10


@pytest.mark.slow
def test_it_wins_agram_more_often_than_a_random_seat_would() -> None:
    game = RECYCLE["agram"]
    wins = 0
    for seed in range(12):
        agents = [IsmctsAgent(iterations=60, seed=seed), *(RandomAgent(seed * 5 + i) for i in range(3))]
        wins += 0 in play_local(game, agents, seed=seed).state.result().winners
    assert wins > 3  # random play wins a quarter of the games
