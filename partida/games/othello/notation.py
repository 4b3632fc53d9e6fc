"""Othello records: transcripts (`f5d6c3...`, passes implicit) and GGF (Generic Game Format).

A GGF game looks like
`(;GM[Othello]PC[NIOS]PB[alice]PW[bob]RE[+4.000]TY[8]BO[8 -------- ... * ]B[f5]W[d6]...;)`:
`BO` is the start board row by row (`*` black, `O` white, `-` empty) then the side to move, and
moves are `B[..]`/`W[..]` with an optional `/eval/time` suffix; a pass is `PA`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from partida.games.othello import board as rules
from partida.games.othello.rules import OthelloState, parse_transcript_squares, transcript_of


def from_transcript(text: str) -> OthelloState:
    """Replay a transcript from the start position. Raises ValueError naming the bad move."""
    state = OthelloState()
    for number, square in enumerate(parse_transcript_squares(text), start=1):
        if square not in state.legal_moves():
            raise ValueError(f"move {number} ({rules.square_name(square)}) is not legal")
        state.play(square)
    return state


def to_transcript(state: OthelloState) -> str:
    return transcript_of(state.moves)


@dataclass
class GgfGame:
    """One GGF game: its tags (PB, PW, RE, ...), start position and moves (None is a pass)."""

    tags: dict[str, str] = field(default_factory=dict)
    board: list[int] = field(default_factory=rules.start_board)
    to_move: int = rules.BLACK
    moves: list[int | None] = field(default_factory=list)

    def replay(self) -> OthelloState:
        """The position after the moves. Raises ValueError on an illegal move or a wrong pass."""
        state = OthelloState(list(self.board), self.to_move)
        if state.to_move != self.to_move and not state.is_over():
            raise ValueError("the side to move in BO has no legal move")
        for number, move in enumerate(self.moves, start=1):
            if move is None:
                continue  # the state passes by itself; an explicit PA is only checked by count
            if move not in state.legal_moves():
                raise ValueError(f"move {number} ({rules.square_name(move)}) is not legal")
            state.play(move)
        return state


_TAG = re.compile(r"([A-Z]+)\[([^\]]*)\]")


def read_ggf(text: str) -> GgfGame:
    """Parse one GGF game. Raises ValueError with a sentence for malformed records."""
    text = text.strip()
    if not text.startswith("(;") or not text.endswith(";)"):
        raise ValueError("a GGF game is written (; ... ;)")
    game = GgfGame()
    for key, value in _TAG.findall(text[2:-2]):
        if key in ("B", "W"):
            move = value.split("/")[0].strip()
            if move.upper() == "PA":
                game.moves.append(None)
                continue
            square = rules.parse_square(move)
            if square is None:
                raise ValueError(f"{move!r} is not a square")
            game.moves.append(square)
        elif key == "BO":
            game.board, game.to_move = _read_ggf_board(value)
        else:
            game.tags[key] = value
    if game.tags.get("GM", "Othello").lower() != "othello":
        raise ValueError(f"not an Othello game: GM[{game.tags['GM']}]")
    return game


def _read_ggf_board(value: str) -> tuple[list[int], int]:
    parts = value.split()
    if len(parts) != 10 or parts[0] != "8":
        raise ValueError("BO must be '8', eight rows of eight squares and the side to move")
    board = rules.from_text("".join(parts[1:9]))
    if parts[9] not in ("*", "O"):
        raise ValueError(f"the side to move in BO must be * or O, not {parts[9]!r}")
    return board, rules.BLACK if parts[9] == "*" else rules.WHITE


# How a game that did not end on the board is scored in RE: the winner's side takes every disc,
# with GGS's suffix for why (r: resigned, t: timed out, s: a score agreed).
_ENDED = {"resign": "r", "abandoned": "r", "time": "t"}


def ggf_tags(tags: Mapping[str, str]) -> dict[str, str]:
    """GGF's tags from an export's PGN-style ones: PC (place), DT (date), PB and PW (players,
    black first), TI (main time/increment, as GGS writes its clocks) and RE (black's disc
    difference; a game ended off the board gives the winner all 64 discs, with GGS's suffix)."""
    out = {"PC": tags.get("Site", "Partida"), "DT": tags.get("Date", "")}
    for key, seat in (("PB", "Player1"), ("PW", "Player2")):
        name = tags.get(seat, "?")
        out[key] = name.split(" (")[0]
    control = tags.get("TimeControl", "-")
    if "+" in control:
        initial, increment = (float(x) for x in control.split("+"))
        out["TI"] = f"{_clock(initial)}/{_clock(increment)}"
    reason, result = tags.get("Termination", "normal"), tags.get("Result", "*")
    if reason in _ENDED and result in ("1-0", "0-1"):
        out["RE"] = f"{'+' if result == '1-0' else '-'}64.000:{_ENDED[reason]}"
    elif reason == "draw_agreed":
        out["RE"] = "0.000:s"
    if tags.get("Round", "-") != "-":
        out["PC"] += f" {tags.get('Event', '')} round {tags['Round']}"
    return {key: value.replace("]", ")") for key, value in out.items()}


def _clock(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 60:02d}:{whole % 60:02d}"


def write_ggf(
    state: OthelloState, tags: dict[str, str] | None = None, start: tuple[list[int], int] | None = None
) -> str:
    """A GGF record of a game played from `start` (default: the standard start position).

    Passes are written explicitly as `PA`, as GGF requires; the result tag RE is filled in from
    the final disc difference (black's point of view) when the game is over and not given."""
    board, to_move = start if start is not None else (rules.start_board(), rules.BLACK)
    tags = {"GM": "Othello", "TY": "8", **(tags or {})}
    if state.is_over() and "RE" not in tags:
        black, white = state.scores_with_empties()
        tags["RE"] = f"{black - white:+d}.000"
    rows = " ".join(rules.to_text(board)[8 * r : 8 * r + 8].replace("X", "*") for r in range(8))
    parts = [f"{key}[{value}]" for key, value in tags.items()]
    parts.append(f"BO[8 {rows} {'*O'[to_move]}]")
    replay = OthelloState(list(board), to_move)
    expected = to_move  # who moves next if nobody passes
    for square in state.moves:
        if replay.to_move != expected:
            parts.append(f"{'BW'[expected]}[PA]")
        mover = replay.to_move
        parts.append(f"{'BW'[mover]}[{rules.square_name(square)}]")
        replay.play(square)
        expected = 1 - mover
    return "(;" + "".join(parts) + ";)"
