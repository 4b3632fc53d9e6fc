"""Othello and tic-tac-toe in lock-step with OpenSpiel, an implementation Partida's authors did
not write: the same legal moves, the same player to move, the same end and winner, ply by ply.
Runs where the `open_spiel` package is installed (scripts/test.sh installs it when a wheel
exists for the platform); skipped otherwise."""

from __future__ import annotations

import random

import pytest

from partida.games.othello.rules import OthelloState
from partida.games.tictactoe.rules import TicTacToeState

pyspiel = pytest.importorskip("pyspiel", reason="open_spiel is not installed (pip install open_spiel)")

OTHELLO_PASS = 64  # OpenSpiel's pass; Partida makes a forced pass itself


def winners_from_returns(returns: list[float]) -> list[int]:
    best = max(returns)
    return [seat for seat, value in enumerate(returns) if value == best]


@pytest.mark.slow
def test_othello_agrees_with_openspiel_over_random_games() -> None:
    game = pyspiel.load_game("othello")
    plies = passes = 0
    for seed in range(1000):
        rng = random.Random(seed)
        ours, theirs = OthelloState(), game.new_initial_state()
        while True:
            while not theirs.is_terminal() and theirs.legal_actions() == [OTHELLO_PASS]:
                theirs.apply_action(OTHELLO_PASS)
                passes += 1
            assert ours.is_over() == theirs.is_terminal(), (seed, plies)
            if ours.is_over():
                break
            assert ours.to_move == theirs.current_player()
            assert sorted(ours.legal_moves()) == theirs.legal_actions(), (seed, plies)
            square = rng.choice(ours.legal_moves())
            ours.play(square)
            theirs.apply_action(square)
            plies += 1
        assert ours.result().winners == winners_from_returns(theirs.returns()), seed
    assert plies > 55_000 and passes > 0


@pytest.mark.slow
def test_tictactoe_agrees_with_openspiel_in_every_reachable_position() -> None:
    game = pyspiel.load_game("tic_tac_toe")
    seen: set[tuple[int, ...]] = set()

    def walk(ours: TicTacToeState, theirs) -> None:
        if tuple(ours.board) in seen:
            return
        seen.add(tuple(ours.board))
        assert ours.is_over() == theirs.is_terminal()
        if ours.is_over():
            assert ours.result().winners == winners_from_returns(theirs.returns())
            return
        assert ours.to_move == theirs.current_player()
        assert ours.legal_squares() == theirs.legal_actions()
        for square in ours.legal_squares():
            child, other = TicTacToeState(list(ours.board), ours.to_move), theirs.clone()
            child.apply(ours.to_move, square)
            other.apply_action(square)
            walk(child, other)

    walk(TicTacToeState(), game.new_initial_state())
    assert len(seen) == 5478  # every position legal play can reach
