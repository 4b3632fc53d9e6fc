"""3x3, X (seat 0) moves first, three in a row wins, a full board draws.

Squares are numbered 0..8 row by row; people write them `a1`..`c3` (file a-c left to right,
rank 1-3 top to bottom) or as the digit 1-9.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from partida.games.base import Decision, Game, IllegalAction, Result, State, View
from partida.games.prompts import ChooseOne, Prompt

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
MARKS = "XO"
LINES_THROUGH = tuple(tuple(line for line in LINES if square in line) for square in range(9))


def square_name(square: int) -> str:
    return "abc"[square % 3] + str(square // 3 + 1)


SQUARE_NAMES = tuple(square_name(square) for square in range(9))


class TicTacToeState(State):
    def __init__(self, board: list[int] | None = None, to_move: int = 0) -> None:
        self.board = board if board is not None else [-1] * 9  # -1 empty, else seat
        self.to_move = to_move
        self._pending: list[Decision] | None = None  # until the next move: a server asks often
        # Kept up to date by `apply` (only the lines through the new mark can have changed): a
        # room asks whether the game is over and who won several times per move.
        self._winner = _scan_winner(self.board)

    @property
    def num_seats(self) -> int:
        return 2

    def winner(self) -> int | None:
        return self._winner

    def is_over(self) -> bool:
        return self._winner is not None or -1 not in self.board

    def legal_squares(self) -> list[int]:
        return [i for i, v in enumerate(self.board) if v == -1]

    def pending(self) -> list[Decision]:
        if self._pending is None:
            self._pending = self._decisions()
        return self._pending

    def _decisions(self) -> list[Decision]:
        if self.is_over():
            return []
        squares = self.legal_squares()
        prompt = ChooseOne(
            name="move",
            text=f"{MARKS[self.to_move]} to move: choose a square",
            options=squares,
            labels=[SQUARE_NAMES[s] for s in squares],
        )
        return [Decision(self.to_move, prompt)]

    def apply(self, seat: int, action: Any) -> None:
        decision = self.require_decision(seat)
        square = decision.prompt.validate(action)
        board = self.board
        board[square] = seat
        if any(board[a] == board[b] == board[c] for a, b, c in LINES_THROUGH[square]):
            self._winner = seat
        self.to_move = 1 - seat
        self._pending = None

    def view(self, seat: int | None) -> View:
        return {"board": list(self.board), "to_move": self.to_move}

    def result(self) -> Result:
        winner = self.winner()
        if winner is None:
            return Result([0.5, 0.5], [1, 1])
        scores = [1.0 if s == winner else 0.0 for s in range(2)]
        return Result.from_scores(scores)

    def scores(self) -> list[float]:
        return self.result().scores if self.is_over() else [0.0, 0.0]

    def clone(self) -> TicTacToeState:
        return TicTacToeState(list(self.board), self.to_move)


def _scan_winner(board: list[int]) -> int | None:
    for a, b, c in LINES:
        if board[a] != -1 and board[a] == board[b] == board[c]:
            return board[a]
    return None


class TicTacToe(Game):
    chance = False
    name = "tictactoe"
    title = "Tic-tac-toe"
    takebacks = True  # no chance, nothing hidden: a position is its moves
    description = "Three in a row on a 3x3 board. X moves first; perfect play draws."

    def new_state(self, options: Mapping[str, Any], seed: int, seats: int) -> TicTacToeState:
        return TicTacToeState()

    def determinize(self, view: View, seat: int | None, rng: random.Random) -> TicTacToeState:
        return TicTacToeState(list(view["board"]), int(view["to_move"]))

    def render(self, view: View) -> str:
        rows = []
        for r in range(3):
            cells = ["." if v == -1 else MARKS[v] for v in view["board"][3 * r : 3 * r + 3]]
            rows.append(f"{r + 1} " + " ".join(cells))
        return "  a b c\n" + "\n".join(rows)

    def format_action(self, view: View, action: Any) -> str:
        return square_name(int(action))

    def seat_label(self, seat: int) -> str | None:
        return MARKS[seat]

    def parse_action(self, view: View, prompt: Prompt, text: str) -> Any:
        text = text.strip().lower()
        if len(text) == 2 and text[0] in "abc" and text[1] in "123":
            return "abc".index(text[0]) + 3 * (int(text[1]) - 1)
        if text.isdigit() and 1 <= int(text) <= 9:
            return int(text) - 1
        raise IllegalAction(f"write a square as a1..c3 or 1..9, not {text!r}", code="bad_action")
