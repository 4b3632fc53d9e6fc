"""The plain Othello rules on a list of 64 cells: the readable reference implementation.

Squares are numbered 0..63 from a1 to h8: `index = 8 * rank + file`, files a-h left to right and
ranks 1-8 top to bottom, so a1 is 0, h1 is 7 and h8 is 63 (the order of OBF position strings).
A cell holds BLACK (0), WHITE (1) or EMPTY (-1); a player is the seat number, black moves first.

These functions are deliberately simple (walk each ray, collect the bracketed discs): the fast
bitboard engine is checked against them on many random positions.
"""

from __future__ import annotations

from collections.abc import Sequence

BLACK, WHITE, EMPTY = 0, 1, -1
FILES = "abcdefgh"
DIRECTIONS = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]


def square_name(square: int) -> str:
    """`0 -> "a1"`, `63 -> "h8"`."""
    return FILES[square % 8] + str(square // 8 + 1)


def parse_square(text: str) -> int | None:
    """`"f5"` or `"F5"` to its index, or None when the text is not a square."""
    text = text.strip().lower()
    if len(text) == 2 and text[0] in FILES and text[1] in "12345678":
        return FILES.index(text[0]) + 8 * (int(text[1]) - 1)
    return None


def _rays(square: int) -> list[list[int]]:
    rank, file = divmod(square, 8)
    rays = []
    for dr, df in DIRECTIONS:
        ray = []
        r, f = rank + dr, file + df
        while 0 <= r < 8 and 0 <= f < 8:
            ray.append(8 * r + f)
            r, f = r + dr, f + df
        if len(ray) >= 2:
            rays.append(ray)
    return rays


RAYS: list[list[list[int]]] = [_rays(square) for square in range(64)]


def start_board() -> list[int]:
    """White on d4 and e5, black on d5 and e4."""
    board = [EMPTY] * 64
    board[parse_square("d4")] = board[parse_square("e5")] = WHITE  # type: ignore[index]
    board[parse_square("d5")] = board[parse_square("e4")] = BLACK  # type: ignore[index]
    return board


def flips(board: Sequence[int], square: int, player: int) -> list[int]:
    """The discs a move of `player` on `square` would flip (empty when the move is illegal)."""
    if board[square] != EMPTY:
        return []
    opponent = 1 - player
    flipped: list[int] = []
    for ray in RAYS[square]:
        run = []
        for s in ray:
            cell = board[s]
            if cell == opponent:
                run.append(s)
                continue
            if cell == player and run:
                flipped.extend(run)
            break
    return flipped


def legal_moves(board: Sequence[int], player: int) -> list[int]:
    """Squares where `player` may move, in increasing order."""
    return [s for s in range(64) if board[s] == EMPTY and flips(board, s, player)]


def play(board: list[int], square: int, player: int) -> list[int]:
    """Place a disc and flip in place; returns the flipped squares. Raises ValueError if illegal."""
    flipped = flips(board, square, player)
    if not flipped:
        raise ValueError(f"{square_name(square)} is not a legal move")
    board[square] = player
    for s in flipped:
        board[s] = player
    return flipped


def counts(board: Sequence[int]) -> tuple[int, int]:
    """(black discs, white discs)."""
    return board.count(BLACK), board.count(WHITE)


def to_text(board: Sequence[int]) -> str:
    """The 64-character form: X black, O white, - empty, a1 to h8."""
    return "".join("-" if c == EMPTY else "XO"[c] for c in board)


def from_text(text: str) -> list[int]:
    """Read the 64-character form (X/x/* black, O/o white, - or . empty). Raises ValueError."""
    text = "".join(text.split())
    if len(text) != 64:
        raise ValueError(f"a board has 64 squares, not {len(text)}")
    board = []
    for ch in text:
        if ch in "Xx*":
            board.append(BLACK)
        elif ch in "Oo":
            board.append(WHITE)
        elif ch in "-.":
            board.append(EMPTY)
        else:
            raise ValueError(f"unexpected character {ch!r} in a board (use X, O and -)")
    return board
