"""The four forms the study's own descriptions use, and teams, each on a tiny description."""

from __future__ import annotations

from typing import Any

import pytest

from partida.games.recycle import RecycleGame
from partida.games.recycle.parser import RecycleSyntaxError


def storage(state: Any) -> dict[tuple[int, str], int]:
    return {(owner, name): value for owner, name, value in state.view(None)["storage"]}


def play_first(state: Any) -> list[tuple[int, str]]:
    """Play the first option every time; the (seat, option) sequence."""
    seen = []
    while not state.is_over():
        decision = state.pending()[0]
        option = decision.prompt.options[0]
        seen.append((decision.seat, option))
        state.apply(decision.seat, option)
    return seen


def test_cycle_to_a_bare_previous_or_next() -> None:
    text = """\
(game
  (setup (create players 3))
  (cycle current 1)
  (cycle current previous)
  (set ((current player) sto WAS) 1)
  (cycle next previous)
  (stage player
    (end (>= (game sto TURNS) 2))
    (inc (game sto TURNS) 1)
    (choice ((inc ((current player) sto SCORE) 1))))
  (scoring max ((current player) sto SCORE)))
"""
    state = RecycleGame("bare", text).create(seed=1)
    assert storage(state)[(0, "WAS")] == 1  # previous of seat 1 is seat 0
    # (cycle next previous) from seat 0 names seat 2: the stage's first turn is the current
    # player's (0), the second the one in next
    assert [seat for seat, _ in play_first(state)] == [0, 2]


def test_do_wrapping_an_any_inside_a_choice() -> None:
    text = """\
(game
  (setup (create players 2) (create deck (game vloc ROW) (deck (VALUE (1, 2, 3)))))
  (stage player
    (end (== (size (game vloc ROW)) 2))
    (choice ((do ((any (game vloc ROW) 'C (move 'C (top ((current player) vloc MINE)))))))))
  (scoring max (size ((current player) vloc MINE))))
"""
    state = RecycleGame("doany", text).create(seed=1)
    assert state.pending()[0].prompt.options == ["1", "2", "3"]  # one option per card, not one action
    state.apply(0, "2")
    assert state.is_over()
    mine = next(loc for loc in state.view(None)["locations"] if loc["name"] == "MINE")
    assert [c["attrs"]["VALUE"] for c in mine["cards"]] == [2]


def test_union_over_all_players_locations() -> None:
    text = """\
(game
  (setup (create players 3) (create deck (game vloc STOCK) (deck (VALUE (1, 2, 3, 4, 5, 6)))))
  (all player 'P (move (top (game vloc STOCK)) (top ('P vloc TRICK))))
  (move (top (game vloc STOCK)) (top (1 vloc TRICK)))
  (set (game sto SEEN) (size (union (all player 'P ('P vloc TRICK)))))
  (set (game sto TOTAL) (sum (union (all player 'P ('P vloc TRICK)) (game vloc STOCK)) using 'V))
  (put points 'V (((VALUE (1)) 1) ((VALUE (6)) 6)))
  (set (game sto AFTER) (sum (union (all player 'P ('P vloc TRICK)) (game vloc STOCK)) using 'V))
  (scoring max ((current player) sto SCORE)))
"""
    values = storage(RecycleGame("unionall", text).create(seed=1))
    assert values[(-1, "SEEN")] == 4
    assert values[(-1, "TOTAL")] == 0  # no point table yet
    assert values[(-1, "AFTER")] == 7  # every card is in one of the players' tricks or the stock


def test_player_expression_applied_to_a_player_expression() -> None:
    text = """\
(game
  (setup (create players 2))
  (cycle current 1)
  (inc (((current player) player) sto SCORE) 5)
  (scoring max ((current player) sto SCORE)))
"""
    state = RecycleGame("applied", text).create(seed=1)
    assert storage(state)[(1, "SCORE")] == 5
    assert state.scores() == [0.0, 5.0]


def test_teams_take_turns_and_own_locations() -> None:
    text = """\
(game
  (setup (create players 4) (create teams (0 2) (1 3)))
  (stage team
    (end (>= (game sto TURNS) 4))
    (inc (game sto TURNS) 1)
    (choice ((inc ((current team) sto POINTS) 1) (inc ((current team) sto POINTS) 2)))
    (inc (((current player) team) sto TURNS) 1))
  (scoring max (((current player) team) sto POINTS)))
"""
    state = RecycleGame("teams", text).create(seed=1)
    turns = []
    while not state.is_over():
        seat = state.pending()[0].seat
        turns.append(seat)
        state.apply(seat, state.pending()[0].prompt.options[1 if seat == 0 else 0])
    assert turns == [0, 1, 0, 1]  # each team's turn goes to its first seat
    values = storage(state)
    assert values[(-2, "POINTS")] == 4 and values[(-3, "POINTS")] == 2
    assert values[(-2, "TURNS")] == 2 and values[(-3, "TURNS")] == 2
    assert state.scores() == [4.0, 2.0, 4.0, 2.0]  # team mates share the team's storage
    assert "team 1 4" in RecycleGame("teams", text).render(state.view(None)).split("Points:")[1]


def test_a_team_hand_is_seen_by_its_members_only() -> None:
    text = """\
(game
  (setup (create players 4) (create teams (0 2) (1 3)) (create deck (game iloc STOCK) (deck (VALUE (1, 2)))))
  (move (top (game iloc STOCK)) (top (((current player) team) iloc HAND)))
  (scoring max ((current player) sto SCORE)))
"""
    state = RecycleGame("teamhand", text).create(seed=1)
    for seat, sees in ((0, True), (2, True), (1, False), (3, False)):
        hand = next(loc for loc in state.view(seat)["locations"] if loc["name"] == "HAND")
        assert ("cards" in hand) is sees


@pytest.mark.parametrize(
    ("text", "at", "says"),
    [
        ("(game (setup (create players 2)) (cycle current sideways) (scoring max 1))", "sideways", "a player"),
        ("(game (setup (create players 2)) (stage team (end (== 1 1))) (scoring max 1))", "(stage", "create teams"),
        ("(game (setup (create players 2) (create teams (0) (0))) (scoring max 1))", "0))", "seat number"),
        ("(game (setup (create players 3) (create teams (0 1))) (scoring max 1))", "(create teams", "every seat"),
        ("(game (setup (create players 2)) (stage crowd (end (== 1 1))) (scoring max 1))", "crowd", "stage team"),
        (
            "(game (setup (create players 2)) (set (game sto X) (size (union (all seat 'P ('P vloc T))))) "
            "(scoring max 1))",
            "seat",
            "all player 'P COLLECTION",
        ),
        (
            "(game (setup (create players 2)) (set (((current player) crowd) sto X) 1) (scoring max 1))",
            "((current player) crowd)",
            "a player",
        ),
        (
            "(game (setup (create players 2) (create deck (game vloc R) (deck (V (1))))) "
            "(stage player (end (== 1 2)) (choice ((do ((any (game vloc R) 'C)))))) (scoring max 1))",
            "(any",
            "(any COLLECTION 'C ACTION)",
        ),
    ],
)
def test_everything_else_is_an_error_at_line_and_column(text: str, at: str, says: str) -> None:
    with pytest.raises(RecycleSyntaxError) as info:
        RecycleGame("bad", text)
    where = text.rindex(at) + 1 if at == "0))" else text.index(at) + 1
    assert (info.value.line, info.value.column) == (1, where), str(info.value)
    assert says in str(info.value)
