"""Language features on tiny descriptions whose outcome is known without playing."""

from __future__ import annotations

from typing import Any

from partida.games.recycle import RecycleGame


def storage(state: Any) -> dict[tuple[int, str], int]:
    return {(owner, name): value for owner, name, value in state.view(None)["storage"]}


def test_memory_union_min_and_arithmetic() -> None:
    text = """\
(game
  (setup
    (create players 2)
    (create deck (game vloc ROW) (deck (VALUE (5, 2, 9)) (COLOR (RED, BLUE)))))
  (put points 'FACE (((VALUE (2)) 2) ((VALUE (5)) 5) ((VALUE (9)) 9)))
  (remember (min (game vloc ROW) using 'FACE) (top (game mem LOW)))
  (remember (max (game vloc ROW) using 'FACE) (top (game mem LOW)))
  (forget (top (game mem LOW)))
  (move (bottom (game vloc ROW)) (top (0 vloc MINE)))
  (set (game sto LOWEST) (cardatt VALUE (top (game mem LOW))))
  (set (game sto BOTH) (size (union (game vloc ROW) (0 vloc MINE))))
  (set (game sto RED) (size (filter (game vloc ROW) 'C (== (cardatt COLOR 'C) RED))))
  (set (game sto CALC) (mod (* (+ 7 3) (- 9 2)) 8))
  (set (game sto HALF) (// (sum (game vloc ROW) using 'FACE) 2))
  (dec (game sto HALF) 1)
  (scoring max ((current player) sto SCORE)))
"""
    state = RecycleGame("features", text).create(seed=1)
    assert state.is_over()
    values = storage(state)
    assert values[(-1, "LOWEST")] == 2  # the max was remembered on top, then forgotten
    assert values[(-1, "BOTH")] == 6  # one card moved to MINE, the union sees all six
    assert values[(-1, "RED")] == 2  # the moved card (5 RED) is no longer in the row
    assert values[(-1, "CALC")] == (10 * 7) % 8
    assert values[(-1, "HALF")] == (5 + 2 + 2 + 9 + 9) // 2 - 1
    mine = next(loc for loc in state.view(None)["locations"] if loc["name"] == "MINE")
    assert [c["attrs"] for c in mine["cards"]] == [{"VALUE": 5, "COLOR": "RED"}]
    assert mine["cards"][0]["owner"] == 0


def test_cycle_sets_who_plays_and_previous_player_follows() -> None:
    text = """\
(game
  (setup (create players 3) (create deck (game vloc PILE) (deck (VALUE (1)))))
  (cycle current 2)
  (stage player
    (end (>= (game sto TURNS) 3))
    (inc (game sto TURNS) 1)
    (choice ((inc ((current player) sto SCORE) (game sto TURNS))))
    (set ((previous player) sto SAW) 1))
  (scoring max ((current player) sto SCORE)))
"""
    state = RecycleGame("cycling", text).create(seed=1)
    order = []
    while not state.is_over():
        decision = state.pending()[0]
        order.append(decision.seat)
        state.apply(decision.seat, decision.prompt.options[0])
    assert order == [2, 0, 1]
    assert state.scores() == [2.0, 3.0, 1.0]
    assert state.result().ranks == [2, 1, 3]
    values = storage(state)
    assert values[(1, "SAW")] == values[(2, "SAW")] == values[(0, "SAW")] == 1


def test_min_scoring_ranks_the_lowest_first_and_declares_are_options() -> None:
    text = """\
;; Countdown
;; Each player's score is set from a declared constant.
;; option START 0..10: the starting value
(game
  (declare 3 'START)
  (setup (create players 2) (create deck (game vloc PILE) (deck (VALUE (1)))))
  (set (0 sto SCORE) 'START)
  (set (1 sto SCORE) (+ 'START 1))
  (scoring min ((current player) sto SCORE)))
"""
    game = RecycleGame("countdown", text)
    assert game.title == "Countdown"
    assert game.options["start"].maximum == 10
    state = game.create({"start": 7}, seed=1)
    assert state.scores() == [7.0, 8.0]
    assert state.result().ranks == [1, 2]
