"""The fast Othello engine: a thin Python layer over the C extension `_engine`.

The C code holds bitboard move generation, the midgame search and the exact endgame solver (see
docs/othello.md for the design and the evaluation weights). This module converts between the
readable forms used elsewhere (square names, 64-character boards, `OthelloState`) and the
bitboards `(P, O)` the C code takes: P the discs of the side to move, O its opponent's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from partida.games.othello import _engine
from partida.games.othello import board as rules
from partida.games.othello.rules import OthelloState

DISC = 100  # midgame values are in hundredths of a disc


def bitboards(board: list[int], player: int) -> tuple[int, int]:
    """(P, O) for `player` to move on a plain board."""
    mine = theirs = 0
    for square, cell in enumerate(board):
        if cell == player:
            mine |= 1 << square
        elif cell == 1 - player:
            theirs |= 1 << square
    return mine, theirs


def squares(mask: int) -> list[int]:
    """The set bits of a bitboard, in increasing order."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def legal_moves(board: list[int], player: int) -> list[int]:
    return squares(_engine.moves(*bitboards(board, player)))


def flips(board: list[int], square: int, player: int) -> list[int]:
    mine, theirs = bitboards(board, player)
    return squares(_engine.flips(mine, theirs, square))


def perft(board: list[int], player: int, depth: int) -> int:
    """Move sequences of length `depth` (a forced pass counts as a move; finished games count once)."""
    return _engine.perft(*bitboards(board, player), depth)


def evaluate(board: list[int], player: int) -> float:
    """The static evaluation for `player`, in discs."""
    return _engine.evaluate(*bitboards(board, player)) / DISC


@dataclass
class SolveResult:
    """Exact outcome with perfect play: `score` is the final disc difference for the side to move
    (empty squares to the winner); `move` is None when the side to move must pass."""

    score: int
    move: int | None
    nodes: int
    seconds: float
    pv: list[int] = field(default_factory=list)


@dataclass
class SearchResult:
    """A search's answer: `value` in discs for the side to move (exact when `exact`), `depth`
    the last depth completed, `pv` the principal variation as square indices."""

    value: float
    move: int
    depth: int
    nodes: int
    seconds: float
    pv: list[int]
    exact: bool

    @property
    def nodes_per_second(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else 0.0


def solve(board: list[int], player: int, seconds: float = 0.0) -> SolveResult | None:
    """Solve exactly; None when `seconds` > 0 and the time ran out first."""
    score, move, nodes, elapsed, pv = _engine.solve(*bitboards(board, player), seconds)
    if score is None:
        return None
    return SolveResult(score, None if move < 0 else move, nodes, elapsed, pv)


def search(board: list[int], player: int, depth: int = 60, seconds: float = 0.0) -> SearchResult:
    """Iterative deepening up to `depth` plies, within `seconds` (0: no limit). The side to move
    must have a legal move. Reaching the end of the game switches to the exact solver."""
    value, move, done, nodes, elapsed, pv, exact = _engine.search(*bitboards(board, player), depth, seconds)
    return SearchResult(value / DISC, move, done, nodes, elapsed, pv, exact)


def search_state(state: OthelloState, depth: int = 60, seconds: float = 0.0) -> SearchResult:
    return search(state.board, state.to_move, depth, seconds)


def parse_position(text: str) -> tuple[list[int], int]:
    """Read `POSITION`: 64 characters (X, O, - from a1 to h8) then the side to move (X or O),
    as in OBF files; anything after a `;` (OBF's best-move annotations) is ignored."""
    text = text.split(";")[0].strip()
    parts = text.split()
    if len(parts) == 2 and len(parts[0]) == 64:
        board_text, side = parts
    elif len(parts) == 1 and len(parts[0]) == 65:
        board_text, side = parts[0][:64], parts[0][64]
    else:
        raise ValueError("a position is 64 characters (X, O, -) from a1 to h8, a space and the side to move (X or O)")
    board = rules.from_text(board_text)
    if side.upper() not in ("X", "O"):
        raise ValueError(f"the side to move must be X or O, not {side!r}")
    return board, rules.BLACK if side.upper() == "X" else rules.WHITE
