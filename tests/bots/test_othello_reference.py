"""The study's reference agent: fixed-depth alpha-beta on the mobility heuristic."""

from __future__ import annotations

import pytest

from partida.bots.base import Turn
from partida.bots.local import play_local
from partida.bots.othello_reference import OthelloReferenceAgent, ReferenceSearch, mobility
from partida.bots.registry import make_agent
from partida.games.othello import board as rules
from partida.games.registry import default_registry

OTHELLO = default_registry().get("othello")


def test_mobility_heuristic() -> None:
    board = rules.start_board()
    assert mobility(board, rules.BLACK) == 0.0
    rules.play(board, rules.parse_square("f5"), rules.BLACK)  # type: ignore[arg-type]
    assert mobility(board, rules.WHITE) == 100.0 * (3 - 3) / 6  # both sides have three moves


def test_node_counts_grow_with_depth() -> None:
    nodes = []
    for depth in (1, 2, 3):
        search = ReferenceSearch()
        square, _ = search.best_move(rules.start_board(), rules.BLACK, depth)
        assert square in rules.legal_moves(rules.start_board(), rules.BLACK)
        nodes.append(search.nodes)
    assert nodes[0] == 5 and nodes[0] < nodes[1] < nodes[2]


@pytest.mark.slow
def test_agent_beats_random_most_of_the_time() -> None:
    wins = 0
    for game_number in range(4):
        reference = OthelloReferenceAgent(depth=4, seed=game_number)
        seat = game_number % 2
        opponent = make_agent("random", OTHELLO, seed=game_number)
        agents = [reference, opponent] if seat == 0 else [opponent, reference]
        wins += play_local(OTHELLO, agents, seed=game_number).state.result().winners == [seat]
        assert reference.nodes > 0
    assert wins >= 3


def test_takes_a_winning_wipeout() -> None:
    board = rules.from_text("XO-O----" + "-" * 56)
    view = {"board": rules.to_text(board), "to_move": 0}
    from partida.games.othello.rules import OthelloState

    prompt = OthelloState(board, 0).pending()[0].prompt
    assert OthelloReferenceAgent(depth=3).act(Turn(OTHELLO, 0, prompt, view)) == "c1"
