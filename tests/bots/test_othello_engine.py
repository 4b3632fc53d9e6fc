"""The C engine against the plain rules: move generation, flips, perft, exact solving, the bot."""

from __future__ import annotations

import json
import random

import pytest

from partida.bots.local import play_local
from partida.bots.othello_engine import OthelloEngineAgent
from partida.bots.registry import make_agent
from partida.cli import main
from partida.games.othello import board as rules
from partida.games.othello import engine
from partida.games.othello.rules import OthelloState
from partida.games.registry import default_registry

OTHELLO = default_registry().get("othello")
FFO_40 = "O--OOOOX-OOOOOOXOOXXOOOXOOXOOOXXOOOOOOXX---OOOOX----O--X-------- X"


def random_positions(count: int, seed: int) -> list[OthelloState]:
    """Positions from random games at every stage, passes and finished games included."""
    rng = random.Random(seed)
    positions = []
    while len(positions) < count:
        state = OthelloState()
        while not state.is_over():
            positions.append(state.clone())
            state.play(rng.choice(state.legal_moves()))
        positions.append(state)
    return positions[:count]


def exact_score(board: list[int], player: int, passed: bool = False) -> int:
    """Plain minimax to the end on the plain rules: the slow, obviously right answer."""
    moves = rules.legal_moves(board, player)
    if not moves:
        if passed:
            black, white = rules.counts(board)
            diff = black - white if player == rules.BLACK else white - black
            empties = 64 - black - white
            return diff + empties if diff > 0 else diff - empties if diff < 0 else 0
        return -exact_score(board, 1 - player, True)
    best = -65
    for square in moves:
        child = list(board)
        rules.play(child, square, player)
        best = max(best, -exact_score(child, 1 - player))
    return best


@pytest.mark.slow
def test_move_generation_and_flips_match_the_plain_rules() -> None:
    for state in random_positions(1500, seed=1):
        for player in (rules.BLACK, rules.WHITE):
            assert engine.legal_moves(state.board, player) == rules.legal_moves(state.board, player)
            for square in range(64):
                assert engine.flips(state.board, square, player) == sorted(rules.flips(state.board, square, player))


# Published Othello perft counts from the start position (a pass counts as a move), depths 1-12
PUBLISHED_PERFT = [4, 12, 56, 244, 1396, 8200, 55092, 390216, 3005288, 24571284, 212258800, 1939886636]


@pytest.mark.slow
def test_perft_from_the_start_position_matches_the_published_counts() -> None:
    """Through depth 11 (about two seconds); depth 12 agrees too but takes twenty."""
    start = rules.start_board()
    counts = [engine.perft(start, rules.BLACK, depth) for depth in range(1, 12)]
    assert counts == PUBLISHED_PERFT[:11]


def test_solver_agrees_with_plain_minimax_near_the_end() -> None:
    rng = random.Random(2)
    checked = 0
    while checked < 6:
        state = OthelloState()
        while not state.is_over() and 64 - sum(state.counts()) > 6:
            state.play(rng.choice(state.legal_moves()))
        if state.is_over():
            continue
        result = engine.solve(state.board, state.to_move)
        assert result is not None and result.score == exact_score(state.board, state.to_move)
        child = list(state.board)
        rules.play(child, result.move, state.to_move)  # type: ignore[arg-type]
        assert -exact_score(child, 1 - state.to_move) == result.score
        checked += 1


@pytest.mark.slow
def test_solves_ffo_40() -> None:
    board, player = engine.parse_position(FFO_40)
    result = engine.solve(board, player)
    assert result is not None and result.score == 38 and rules.square_name(result.move) == "a2"  # type: ignore[arg-type]


def test_search_returns_a_legal_move_and_a_principal_variation() -> None:
    state = OthelloState()
    state.play(rules.parse_square("f5"))  # type: ignore[arg-type]
    result = engine.search_state(state, depth=6)
    assert result.depth == 6 and not result.exact and result.nodes > 0
    assert result.move in state.legal_moves() and result.pv[0] == result.move
    replay = state.clone()
    for square in result.pv:
        assert square in replay.legal_moves()
        replay.play(square)


def position_with_empties(empties: int, seed: int) -> OthelloState:
    rng = random.Random(seed)
    while True:
        state = OthelloState()
        while not state.is_over() and 64 - sum(state.counts()) > empties:
            state.play(rng.choice(state.legal_moves()))
        if not state.is_over():
            return state


def test_search_is_exact_when_it_reaches_the_end() -> None:
    for seed in range(3):
        state = position_with_empties(14, seed)
        solved = engine.solve(state.board, state.to_move)
        result = engine.search_state(state, depth=60)
        assert solved is not None and result.exact and result.value == solved.score


def test_positions_are_read_in_obf_form() -> None:
    board, player = engine.parse_position(FFO_40 + "; a2:+38")
    assert player == rules.BLACK and rules.to_text(board) == FFO_40[:64]
    with pytest.raises(ValueError):
        engine.parse_position("XO- X")


def test_engine_beats_the_reference_agent() -> None:
    for seat in (0, 1):
        bot = OthelloEngineAgent(depth=4)
        reference = make_agent("othello-reference", OTHELLO, depth=2, seed=seat)
        agents = [bot, reference] if seat == 0 else [reference, bot]
        assert play_local(OTHELLO, agents, seed=seat).state.result().winners == [seat]


def test_levels_and_their_errors() -> None:
    assert make_agent("othello-engine-easy", OTHELLO).depth == 2  # type: ignore[attr-defined]
    assert make_agent("othello-engine", OTHELLO, level=5).seconds == 0.5  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="level"):
        OthelloEngineAgent(level=99)


def test_cli_solve_and_analyze(capsys: pytest.CaptureFixture[str]) -> None:
    state = position_with_empties(16, seed=4)
    position = state.position_text()
    solved = engine.solve(state.board, state.to_move)
    assert solved is not None and solved.move is not None
    assert main(["othello", "solve", position, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["score"] == solved.score and data["pv"][0] == data["move"]
    assert main(["othello", "analyze", position, "--depth", "4", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["depth"] == 4 and data["move"] in [rules.square_name(s) for s in state.legal_moves()]
    assert main(["othello", "solve", "not a position"]) == 2
    assert "64 characters" in capsys.readouterr().err
