"""Generate Othello's openings book (partida/games/othello/openings.txt): positions a few plies in,
balanced by the engine's search, for paired engine matches (`partida match --book`).

Every sequence of PLIES legal moves from the start is played out; positions that repeat (by
transposition or by one of the board's 8 symmetries) are kept once; each is searched by the
engine to DEPTH plies and kept when its value lies within MARGIN discs of even. The first lines
of the file say how the book was made and how balanced it is.

    nice -n 10 .venv/bin/python scripts/othello_openings.py --plies 6 --depth 10 --margin 2
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from partida.games.othello import board as rules
from partida.games.othello import engine
from partida.games.othello.rules import OthelloState, transcript_of

BOOK = Path(__file__).resolve().parent.parent / "partida" / "games" / "othello" / "openings.txt"


def symmetries(board: list[int]) -> list[tuple[int, ...]]:
    """The board under the 8 symmetries of the square (a position and its mirror images)."""
    out = []
    for transpose in (False, True):
        for flip_rank in (False, True):
            for flip_file in (False, True):
                cells = []
                for square in range(64):
                    rank, file = divmod(square, 8)
                    if transpose:
                        rank, file = file, rank
                    if flip_rank:
                        rank = 7 - rank
                    if flip_file:
                        file = 7 - file
                    cells.append(board[8 * rank + file])
                out.append(tuple(cells))
    return out


def openings(plies: int) -> dict[tuple[int, ...], list[int]]:
    """One move sequence for each distinct position (up to symmetry) PLIES moves in."""
    found: dict[tuple[int, ...], list[int]] = {}

    def walk(state: OthelloState) -> None:
        if len(state.moves) == plies:
            key = (*min(symmetries(state.board)), state.to_move)
            found.setdefault(key, list(state.moves))
            return
        for square in state.legal_moves():
            child = state.clone()
            child.play(square)
            walk(child)

    walk(OthelloState())
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plies", type=int, default=6)
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--margin", type=float, default=2.0, help="largest |value| kept, in discs")
    parser.add_argument("--output", type=Path, default=BOOK)
    args = parser.parse_args()
    started = time.perf_counter()
    kept: list[tuple[float, str]] = []
    positions = openings(args.plies)
    for moves in positions.values():
        state = OthelloState()
        for square in moves:
            state.play(square)
        value = engine.search(state.board, state.to_move, args.depth).value
        black_value = value if state.to_move == rules.BLACK else -value
        if abs(black_value) <= args.margin:
            kept.append((black_value, transcript_of(moves)))
    kept.sort(key=lambda row: row[1])
    values = [v for v, _ in kept]
    facts = {
        "plies": args.plies,
        "depth": args.depth,
        "margin_discs": args.margin,
        "distinct_positions": len(positions),
        "kept": len(kept),
        "mean_black_value": round(statistics.fmean(values), 3),
        "stdev_black_value": round(statistics.pstdev(values), 3),
        "seconds": round(time.perf_counter() - started, 1),
    }
    lines = [
        "# Othello openings: balanced positions for paired engine matches (scripts/othello_openings.py).",
        "# One transcript a line; each was searched by the engine and kept within the margin of even.",
        "# " + json.dumps({k: v for k, v in facts.items() if k != "seconds"}),
        *(t for _, t in kept),
    ]
    args.output.write_text("\n".join(lines) + "\n")
    json.dump(facts, sys.stdout)
    print()


if __name__ == "__main__":
    main()
