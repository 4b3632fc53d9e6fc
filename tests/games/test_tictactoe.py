"""Tic-tac-toe rules, and the interface contract every game keeps (shown on the smallest game)."""

from __future__ import annotations

import json

import pytest

from partida.bots.local import play_local
from partida.bots.registry import make_agent
from partida.games.base import BadOptions, IllegalAction
from partida.games.registry import default_registry

GAME = default_registry().get("tictactoe")


def test_x_wins_a_row() -> None:
    state = GAME.create(seed=0)
    for seat, square in [(0, 0), (1, 3), (0, 1), (1, 4), (0, 2)]:
        state.apply(seat, square)
    assert state.is_over() and state.result().winners == [0] and state.result().ranks == [1, 2]
    assert state.pending() == []


def test_the_winner_kept_move_by_move_is_the_one_on_the_board() -> None:
    """The state keeps its winner up to date at each move rather than scanning every line each
    time it is asked; in random games it always agrees with a full scan of the board."""
    import random

    from partida.games.tictactoe.rules import LINES, TicTacToeState

    def scanned(board: list[int]) -> int | None:
        return next((board[a] for a, b, c in LINES if board[a] != -1 and board[a] == board[b] == board[c]), None)

    rng = random.Random(7)
    for _ in range(300):
        state = GAME.create(seed=0)
        while not state.is_over():
            decision = state.pending()[0]
            state.apply(decision.seat, decision.prompt.random_answer(rng))
            assert state.winner() == scanned(state.board)
            assert TicTacToeState(list(state.board), state.to_move).winner() == state.winner()
        assert state.is_over() == (scanned(state.board) is not None or -1 not in state.board)


def test_full_board_draws() -> None:
    state = GAME.create(seed=0)
    for i, square in enumerate([0, 1, 2, 4, 3, 5, 7, 6, 8]):
        state.apply(i % 2, square)
    assert state.result().is_draw and state.result().ranks == [1, 1]


def test_rejected_actions_leave_the_state_unchanged() -> None:
    state = GAME.create(seed=0)
    state.apply(0, 4)
    before = state.view(None)
    for seat, action, code in [
        (0, 0, "not_your_turn"),
        (1, 4, "illegal_action"),
        (1, "b2", "illegal_action"),
        (2, 0, "no_such_seat"),
    ]:
        with pytest.raises(IllegalAction) as exc:
            state.apply(seat, action)
        assert exc.value.code == code
        assert state.view(None) == before


def test_people_type_squares() -> None:
    state = GAME.create(seed=0)
    prompt = state.pending()[0].prompt
    assert GAME.parse_action(state.view(0), prompt, "b2") == 4
    assert GAME.parse_action(state.view(0), prompt, "9") == 8
    with pytest.raises(IllegalAction):
        GAME.parse_action(state.view(0), prompt, "z9")
    assert "a b c" in GAME.render(state.view(0))


def test_options_and_seats_are_checked() -> None:
    with pytest.raises(BadOptions):
        GAME.create({"size": 4})
    with pytest.raises(BadOptions):
        GAME.create(seats=3)


def test_a_game_replays_from_its_seed_and_json_actions() -> None:
    played = play_local(GAME, [make_agent("random", seed=1), make_agent("random", seed=2)], seed=5)
    actions = json.loads(json.dumps(played.actions))
    again = GAME.replay({}, 5, 2, actions)
    assert again.view(None) == played.state.view(None)
    assert GAME.determinize(played.state.view(0), 0, None).view(None) == played.state.view(None)  # type: ignore[arg-type]
