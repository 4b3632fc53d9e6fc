"""Othello rules, records (transcripts and GGF) and the interface contract."""

from __future__ import annotations

import random

import pytest

from partida.games.base import IllegalAction
from partida.games.othello import board as rules
from partida.games.othello.notation import from_transcript, read_ggf, to_transcript, write_ggf
from partida.games.othello.rules import OthelloState
from partida.games.registry import default_registry

GAME = default_registry().get("othello")


def perft(state: OthelloState, depth: int) -> int:
    if depth == 0 or state.is_over():
        return 1
    total = 0
    for square in state.legal_moves():
        child = state.clone()
        child.play(square)
        total += perft(child, depth - 1)
    return total


def random_game(seed: int) -> OthelloState:
    rng = random.Random(seed)
    state = OthelloState()
    while not state.is_over():
        state.play(rng.choice(state.legal_moves()))
    return state


def test_start_position_and_first_moves() -> None:
    state = GAME.create(seed=0)
    view = state.view(0)
    assert view["board"][27] == "O" and view["board"][28] == "X"  # d4 white, e4 black
    assert view["to_move"] == 0 and view["counts"] == [2, 2]
    assert sorted(view["legal"]) == ["c4", "d3", "e6", "f5"]
    state.apply(0, "f5")
    assert state.view(1)["counts"] == [4, 1]
    assert sorted(state.view(1)["legal"]) == ["d6", "f4", "f6"]


def test_perft_counts_from_the_start_match_the_published_ones() -> None:
    """The rules the server plays, through depth 6 (no pass occurs that early)."""
    assert [perft(OthelloState(), d) for d in range(1, 7)] == [4, 12, 56, 244, 1396, 8200]


def test_flips_every_bracketed_line() -> None:
    board = rules.from_text("XOO-OX--" + "-" * 56)
    board[12], board[21] = rules.WHITE, rules.BLACK  # e2 white, f3 black: a diagonal from d1
    board[11] = rules.WHITE  # d2 white with nothing behind it: not bracketed
    flipped = rules.play(board, 3, rules.BLACK)  # d1
    assert sorted(rules.square_name(s) for s in flipped) == ["b1", "c1", "e1", "e2"]
    assert board[11] == rules.WHITE and rules.flips(board, 3, rules.WHITE) == []


def test_a_stuck_player_passes_automatically() -> None:
    board = rules.from_text("XO-O----" + "-" * 56)
    state = OthelloState(board, rules.BLACK)
    state.apply(0, "c1")
    assert state.to_move == 0 and not state.is_over()  # white cannot move, black can: white passes
    state.apply(0, "e1")
    assert state.is_over() and state.result().winners == [0]
    assert state.view(None)["final"] == [64, 0]


def test_rejected_actions_leave_the_state_unchanged() -> None:
    state = GAME.create(seed=0)
    before = state.view(None)
    for seat, action, code in [(1, "f5", "not_your_turn"), (0, "a1", "illegal_action"), (0, 37, "illegal_action")]:
        with pytest.raises(IllegalAction) as exc:
            state.apply(seat, action)
        assert exc.value.code == code
        assert state.view(None) == before


def test_people_type_squares_in_either_case() -> None:
    state = GAME.create(seed=0)
    prompt = state.pending()[0].prompt
    assert GAME.parse_action(state.view(0), prompt, "F5") == "f5"
    assert GAME.parse_action(state.view(0), prompt, " f5 ") == "f5"
    with pytest.raises(IllegalAction):
        GAME.parse_action(state.view(0), prompt, "i9")
    assert "a b c d e f g h" in GAME.render(state.view(0))


def test_a_random_game_ends_with_consistent_scores() -> None:
    state = random_game(7)
    black, white = state.counts()
    assert state.pending() == [] and state.scores() == [black, white]
    final = state.scores_with_empties()
    assert sum(final) == 64 and (final[0] - final[1]) * (black - white) >= 0
    assert state.result().ranks == ([1, 2] if black > white else [2, 1] if white > black else [1, 1])


def test_views_rebuild_the_exact_state() -> None:
    state = random_game(3)
    rng = random.Random(0)
    for number in range(1, len(state.moves), 9):
        partial = from_transcript(to_transcript(state)[: 2 * number])
        rebuilt = GAME.determinize(partial.view(0), 0, rng)
        assert rebuilt.board == partial.board and rebuilt.to_move == partial.to_move
        assert rebuilt.moves == partial.moves and rebuilt.pending() == partial.pending()


def test_transcripts_round_trip() -> None:
    for seed in range(5):
        state = random_game(seed)
        text = to_transcript(state)
        assert len(text) == 2 * len(state.moves)
        again = from_transcript(text.upper())
        assert again.board == state.board and to_transcript(again) == text
    with pytest.raises(ValueError, match="move 1"):
        from_transcript("a1")


def test_ggf_round_trip_with_passes() -> None:
    for seed in range(20):
        state = random_game(seed)
        record = write_ggf(state, {"PB": "alice", "PW": "bob"})
        game = read_ggf(record)
        assert game.tags["PB"] == "alice" and game.tags["RE"].startswith(("+", "-"))
        assert [m for m in game.moves if m is not None] == state.moves
        assert game.replay().board == state.board


def test_reads_a_ggf_record_from_a_server() -> None:
    record = (
        "(;GM[Othello]PC[NIOS]DT[2003.12.15_13:24:03.MST]PB[Saio1200]PW[Saio3000]RB[2197.01]RW[2199.72]"
        "TI[15:00//02:00]TY[8]RE[+4.000]BO[8 -------- -------- -------- ---O*--- ---*O--- -------- "
        "-------- -------- *]B[f5//0.01]W[d6//0.01]B[c3//0.01]W[d3//0.01]B[c4//0.01];)"
    )
    game = read_ggf(record)
    assert game.tags["PB"] == "Saio1200" and game.tags["RE"] == "+4.000"
    assert to_transcript(game.replay()) == "f5d6c3d3c4"
    with pytest.raises(ValueError):
        read_ggf("(;GM[Chess]B[e4];)")
