"""The RECYCLE reader: valid descriptions compile; broken ones say where and what was expected."""

from __future__ import annotations

from pathlib import Path

import pytest

from partida.games.recycle import DESCRIPTIONS, RecycleGame, RecycleRuntimeError, RecycleSyntaxError
from partida.games.recycle.parser import SList, Sym, parse_sexpr
from partida.games.registry import GameLoadError, default_registry

SMALL = """\
(game
  (setup
    (create players 2)
    (create deck (game iloc STOCK) (deck (VALUE (1, 2, 3)))))
  (shuffle (game iloc STOCK))
  (all player 'P (move (top (game iloc STOCK)) (top ('P iloc HAND))))
  (stage player
    (end (all player 'P (== (size ('P iloc HAND)) 0)))
    (choice ((any ((current player) iloc HAND) 'C (move 'C (top ((current player) vloc PLAYED)))))))
  (scoring max (sum ((current player) vloc PLAYED) using 'PTS)))
"""


def error_of(text: str) -> RecycleSyntaxError:
    with pytest.raises(RecycleSyntaxError) as info:
        RecycleGame("broken", text)
    return info.value


def test_sexpressions_keep_their_positions() -> None:
    top = parse_sexpr("(game\n  (setup (create players 2)))  ; comment")
    assert isinstance(top, SList) and top.head() == "game"
    setup = top.items[1]
    assert isinstance(setup, SList) and (setup.line, setup.column) == (2, 3)
    assert isinstance(setup.items[0], Sym) and setup.items[0].name == "setup"


def test_a_small_valid_description_becomes_a_game() -> None:
    game = RecycleGame("small", SMALL)
    assert (game.min_seats, game.max_seats) == (2, 2)
    assert not game.perfect_information
    state = game.create(seed=3)
    assert not state.is_over()
    decision = state.pending()[0]
    assert decision.seat == 0 and len(decision.prompt.options) == 1


def test_every_shipped_description_compiles() -> None:
    names = sorted(path.stem for path in DESCRIPTIONS.glob("*.rcl"))
    assert {"agram", "dicepoints", "throwdicematchcard"} <= set(names)
    assert len(names) >= 5


def test_a_missing_parenthesis_is_reported_at_the_end() -> None:
    error = error_of("(game\n  (setup (create players 2))\n")
    assert (error.line, error.column) == (2, 29)
    assert "ends too early" in str(error) and "')'" in str(error)


def test_an_unexpected_character_is_reported_where_it_is() -> None:
    error = error_of('(game\n  (setup (create players 2))\n  (set (game sto X) "3"))')
    assert (error.line, error.column) == (3, 21)
    assert "unexpected character '\"'" in str(error)
    assert isinstance(error, ValueError)


def test_an_extra_closing_parenthesis_says_what_was_expected() -> None:
    error = error_of("(game (setup (create players 2))))")
    assert (error.line, error.column) == (1, 34)
    assert "expected" in str(error)


def test_a_move_without_a_position_is_reported_at_the_move() -> None:
    text = SMALL.replace("(move (top (game iloc STOCK)) (top ('P iloc HAND)))", "(move (top (game iloc STOCK)))")
    error = error_of(text)
    assert (error.line, error.column) == (6, 18)
    assert "expected (move CARD POSITION)" in str(error)


def test_an_unknown_action_lists_the_actions() -> None:
    error = error_of(SMALL.replace("(shuffle (game iloc STOCK))", "(shufle (game iloc STOCK))"))
    assert (error.line, error.column) == (5, 3)
    assert "expected an action" in str(error) and "'shufle'" in str(error)


def test_an_unbound_variable_is_an_error() -> None:
    error = error_of(SMALL.replace("(top ('P iloc HAND))))", "(top ('Q iloc HAND))))"))
    assert (error.line, error.column) == (6, 54)
    assert "unknown name 'Q" in str(error)


def test_a_location_nothing_is_ever_put_in_is_unknown() -> None:
    error = error_of(SMALL.replace("(shuffle (game iloc STOCK))", "(shuffle (game iloc STOKC))"))
    assert (error.line, error.column) == (5, 12)
    assert "unknown location iloc STOKC" in str(error)


def test_scoring_is_required() -> None:
    error = error_of("(game (setup (create players 2)))")
    assert (error.line, error.column) == (1, 1)
    assert "scoring" in str(error)


def test_a_stage_that_never_ends_fails_with_the_step_limit() -> None:
    text = """\
(game
  (setup (create players 2))
  (stage player
    (end (> (game sto X) 5))
    (inc (game sto Y) 1))
  (scoring max ((current player) sto SCORE)))
"""
    with pytest.raises(RecycleRuntimeError, match=r"stage at line 3, column 3 ran \d+ turns without ending"):
        RecycleGame("forever", text)


def test_a_dropped_file_becomes_a_game_and_a_broken_one_names_the_file(tmp_path: Path) -> None:
    good = tmp_path / "smallgame.rcl"
    good.write_text(SMALL)
    bad = tmp_path / "badgame.rcl"
    bad.write_text("(game (setup (create players 2))")
    registry = default_registry(game_files=[good])
    assert "smallgame" in registry.names()
    folder = tmp_path / "games"
    folder.mkdir()
    (folder / "foldergame.rcl").write_text(SMALL)
    (folder / "notes.txt").write_text("not a game")
    assert "foldergame" in default_registry(game_dirs=[folder]).names()
    assert registry.get("smallgame").create(seed=1).pending()
    with pytest.raises(GameLoadError, match=r"badgame\.rcl.*line 1, column 33"):
        registry.load_file(bad)


def test_a_choice_with_nothing_legal_passes_the_rest_of_the_turn() -> None:
    text = """\
(game
  (setup (create players 2) (create deck (game vloc PILE) (deck (VALUE (1, 2)))))
  (stage player
    (end (>= (game sto TURNS) 4))
    (inc (game sto TURNS) 1)
    (choice (((== (current player) 0) (inc ((current player) sto SCORE) 1))))
    (inc ((current player) sto AFTER) 1))
  (scoring max ((current player) sto SCORE)))
"""
    state = RecycleGame("passing", text).create(seed=1)
    while not state.is_over():
        decision = state.pending()[0]
        assert decision.seat == 0
        state.apply(0, decision.prompt.options[0])
    after = {(owner, name): value for owner, name, value in state.view(None)["storage"]}
    assert after[(0, "SCORE")] == 2 and after[(0, "AFTER")] == 2
    assert (1, "AFTER") not in after  # seat 1 had no legal option, so its turns passed
