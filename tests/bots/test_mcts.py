"""Generic UCT MCTS: finds forced wins in tic-tac-toe and plays whole Othello games."""

from __future__ import annotations

import pytest

from partida.bots.base import Turn
from partida.bots.local import play_local
from partida.bots.mcts import MctsAgent
from partida.bots.registry import make_agent
from partida.games.registry import default_registry

REGISTRY = default_registry()
TICTACTOE = REGISTRY.get("tictactoe")
OTHELLO = REGISTRY.get("othello")


def test_takes_an_immediate_win() -> None:
    state = TICTACTOE.create(seed=0)
    for seat, square in [(0, 0), (1, 4), (0, 1), (1, 8)]:
        state.apply(seat, square)
    prompt = state.pending()[0].prompt
    assert MctsAgent(iterations=400, seed=0).act(Turn(TICTACTOE, 0, prompt, state.view(0))) == 2


def test_blocks_a_threat() -> None:
    state = TICTACTOE.create(seed=0)
    for seat, square in [(0, 0), (1, 4), (0, 8), (1, 1)]:
        state.apply(seat, square)
    prompt = state.pending()[0].prompt
    assert MctsAgent(iterations=800, seed=0).act(Turn(TICTACTOE, 0, prompt, state.view(0))) == 7


def test_rarely_loses_to_random_at_tictactoe() -> None:
    losses = 0
    for game_number in range(10):
        agent = MctsAgent(iterations=600, seed=game_number)
        opponent = make_agent("random", TICTACTOE, seed=game_number)
        seat = game_number % 2
        agents = [agent, opponent] if seat == 0 else [opponent, agent]
        losses += seat not in play_local(TICTACTOE, agents, seed=game_number).state.result().winners
    assert losses <= 1


@pytest.mark.slow
def test_beats_random_at_othello() -> None:
    agents = [MctsAgent(iterations=60, seed=0), make_agent("random", OTHELLO, seed=0)]
    result = play_local(OTHELLO, agents, seed=0).state.result()
    assert result.winners == [0]
