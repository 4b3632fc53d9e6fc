"""Othello behind the Game/State interface. Seat 0 is black (moves first), seat 1 is white.

The side to move always has a legal move while the game goes on: when a player cannot move but
the opponent can, the pass is made automatically (transcripts leave passes implicit). The game
ends when neither player can move.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any, ClassVar

from partida.games.base import BadOptions, Decision, Game, IllegalAction, Option, Result, State, View
from partida.games.othello import board as rules
from partida.games.prompts import ChooseOne, Prompt

COLORS = ("black", "white")


class OthelloState(State):
    """A board, the side to move and the moves played so far (for transcripts)."""

    def __init__(self, board: list[int] | None = None, to_move: int = rules.BLACK, moves: list[int] | None = None):
        self.board = board if board is not None else rules.start_board()
        self.to_move = to_move
        self.moves = moves if moves is not None else []
        self._legal: list[int] | None = None
        self._settle()

    def _settle(self) -> None:
        """Pass automatically when the side to move is stuck and the opponent is not."""
        self._legal = rules.legal_moves(self.board, self.to_move)
        if not self._legal:
            other = rules.legal_moves(self.board, 1 - self.to_move)
            if other:
                self.to_move = 1 - self.to_move
                self._legal = other

    @property
    def num_seats(self) -> int:
        return 2

    def legal_moves(self) -> list[int]:
        """Squares open to the side to move (empty when the game is over)."""
        assert self._legal is not None
        return list(self._legal)

    def is_over(self) -> bool:
        return not self._legal

    def pending(self) -> list[Decision]:
        if self.is_over():
            return []
        names = [rules.square_name(s) for s in self._legal or []]
        prompt = ChooseOne(
            name="move",
            text=f"{COLORS[self.to_move]} to move: choose a square",
            options=names,
            labels=[name.upper() for name in names],
        )
        return [Decision(self.to_move, prompt)]

    def apply(self, seat: int, action: Any) -> None:
        self.require_decision(seat)
        square = rules.parse_square(action) if isinstance(action, str) else None
        if square is None or square not in (self._legal or []):
            shown = ", ".join(rules.square_name(s) for s in self._legal or [])
            raise IllegalAction(f"{action!r} is not a legal move (legal: {shown})")
        self.play(square)

    def play(self, square: int) -> None:
        """Play a legal square index for the side to move (no seat check: for search and replays)."""
        rules.play(self.board, square, self.to_move)
        self.moves.append(square)
        self.to_move = 1 - self.to_move
        self._settle()

    def counts(self) -> tuple[int, int]:
        return rules.counts(self.board)

    def scores(self) -> list[float]:
        black, white = self.counts()
        return [float(black), float(white)]

    def scores_with_empties(self) -> list[int]:
        """Final disc counts with the empty squares given to the winner (tournament convention)."""
        black, white = self.counts()
        empties = 64 - black - white
        if black > white:
            black += empties
        elif white > black:
            white += empties
        else:
            black += empties // 2
            white += empties // 2
        return [black, white]

    def result(self) -> Result:
        return Result.from_scores(self.scores())

    def evaluate(self, seat: int) -> float:
        """The engine's static evaluation from `seat`'s side, in discs (within [-60, 60]): the
        leaf value of the generic searches (alphabeta, expectimax). Mobility alone, which it
        was, let alpha-beta at depth 3 beat a random player only three games in four: it gave
        corners away. The engine's adds square weights, corners, frontier and stable edges, in C."""
        from partida.games.othello import engine  # which imports this module

        return engine.evaluate(self.board, seat)

    def view(self, seat: int | None) -> View:
        black, white = self.counts()
        data: View = {
            "board": rules.to_text(self.board),
            "to_move": self.to_move,
            "counts": [black, white],
            "legal": [rules.square_name(s) for s in self._legal or []],
            "moves": transcript_of(self.moves),
            "over": self.is_over(),
        }
        if self.is_over():
            data["final"] = self.scores_with_empties()
        return data

    def clone(self) -> OthelloState:
        copy = OthelloState.__new__(OthelloState)
        copy.board = list(self.board)
        copy.to_move = self.to_move
        copy.moves = list(self.moves)
        copy._legal = list(self._legal or [])
        return copy

    def position_text(self) -> str:
        """The OBF-style position: 64 characters then the side to move (`X` or `O`)."""
        return rules.to_text(self.board) + " " + "XO"[self.to_move]


def transcript_of(moves: list[int]) -> str:
    return "".join(rules.square_name(s) for s in moves)


class Othello(Game):
    chance = False
    name = "othello"
    title = "Othello"
    takebacks = True  # no chance, nothing hidden: a position is its moves
    description = "Flip your opponent's discs by bracketing them; most discs at the end wins. Black moves first."

    options: ClassVar[Mapping[str, Option]] = {
        "opening": Option(
            "opening",
            "",
            help="moves played before the game begins, as a transcript (f5d6c3): a start position for "
            "engine matches (partida match --local takes them from the game's book)",
        )
    }

    def new_state(self, options: Mapping[str, Any], seed: int, seats: int) -> OthelloState:
        state = OthelloState()
        try:
            squares = parse_transcript_squares(options.get("opening", ""))
        except ValueError as exc:
            raise BadOptions(f"option 'opening': {exc}") from None
        for square in squares:
            if square not in state.legal_moves():
                raise BadOptions(f"option 'opening': {rules.square_name(square)} is not legal there")
            state.play(square)
        if state.is_over():
            raise BadOptions("option 'opening': the game is over after it")
        return state

    def openings(self) -> list[str]:
        return list(_book())

    def determinize(self, view: View, seat: int | None, rng: random.Random) -> OthelloState:
        moves = [s for s in parse_transcript_squares(view.get("moves", ""))]
        return OthelloState(rules.from_text(view["board"]), int(view["to_move"]), moves)

    def render(self, view: View) -> str:
        board = rules.from_text(view["board"])
        legal = set(view.get("legal", []))
        lines = ["  a b c d e f g h"]
        for rank in range(8):
            cells = []
            for file in range(8):
                square = 8 * rank + file
                cell = board[square]
                if cell == rules.EMPTY:
                    cells.append("*" if rules.square_name(square) in legal else ".")
                else:
                    cells.append("XO"[cell])
            lines.append(f"{rank + 1} " + " ".join(cells))
        black, white = view["counts"]
        status = "game over" if view.get("over") else f"{COLORS[view['to_move']]} to move"
        lines.append(f"X (black) {black}  O (white) {white}  - {status}")
        return "\n".join(lines)

    def record(self, state: State) -> str | None:
        assert isinstance(state, OthelloState)
        return transcript_of(state.moves)

    def format_action(self, view: View, action: Any) -> str:
        return str(action)

    def file_record(self, state: State, tags: Mapping[str, str]) -> str | None:
        assert isinstance(state, OthelloState)
        from partida.games.othello.notation import ggf_tags, write_ggf

        return write_ggf(state, ggf_tags(tags))

    def seat_label(self, seat: int) -> str | None:
        return f"{COLORS[seat]} ({'XO'[seat]})"

    def pass_note(self, view: View, last_seat: int | None) -> str | None:
        # passes are automatic: the same side to move again means the other had no move
        if last_seat is None or view.get("over") or view["to_move"] != last_seat:
            return None
        return f"{COLORS[1 - last_seat]} has no legal move and passes"

    def parse_action(self, view: View, prompt: Prompt, text: str) -> Any:
        square = rules.parse_square(text)
        if square is None:
            raise IllegalAction(f"write a square as a1..h8 (like f5), not {text.strip()!r}", code="bad_action")
        return rules.square_name(square)


def parse_transcript_squares(text: str) -> list[int]:
    """`"f5d6c3"` to square indices. Raises ValueError on anything that is not a square."""
    text = "".join(text.split())
    if len(text) % 2:
        raise ValueError("a transcript is a sequence of two-character squares like f5d6")
    squares = []
    for i in range(0, len(text), 2):
        square = rules.parse_square(text[i : i + 2])
        if square is None:
            raise ValueError(f"{text[i : i + 2]!r} is not a square")
        squares.append(square)
    return squares


@cache
def _book() -> tuple[str, ...]:
    """openings.txt: balanced positions a few plies in, made by scripts/othello_openings.py."""
    text = resources.files("partida.games.othello").joinpath("openings.txt").read_text()
    return tuple(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))
