"""Takebacks in the game's log: a takeback is an entry of its own, never a deletion, so the record
keeps the move and the takeback that undid it and a replay shows both.

A log entry is `(seat, action)`; a takeback is `(TAKEBACK_SEAT, {"takeback": N, "by": SEAT})`:
the last N moves still standing are undone, at the request of `SEAT`. No seat is numbered -1,
so no game action is ever read as one. The game itself is what the log's standing moves
(`line`) give when re-run from the seed: the seed commitment still verifies, since every state
of a game with takebacks is a state of the same seed and moves.

Only games that declare `Game.takebacks` allow them (Othello, tic-tac-toe): a takeback re-runs
the seed, so in a game with chance the asker would learn the die or the card that comes next and
then play differently, and in a game with hidden cards the taken-back move may have shown its
player a card. Pure: no I/O, plain values in and out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from partida.games.base import Action, IllegalAction

TAKEBACK_SEAT = -1
# Takebacks one game may hold: each makes a replay re-run the moves before it, so a game of
# unbounded takebacks (one person in both seats) would cost a replay the square of its log.
MAX_PER_GAME = 20


def entry(by: int, count: int) -> tuple[int, dict[str, int]]:
    """The log entry of `by`'s takeback of the last `count` standing moves."""
    return TAKEBACK_SEAT, {"takeback": count, "by": by}


def is_takeback(seat: int) -> bool:
    return seat == TAKEBACK_SEAT


def count_of(action: Any) -> int:
    """How many standing moves a takeback entry undoes; `IllegalAction` for an entry that is not
    one (a record written by hand, or changed)."""
    count = action.get("takeback") if isinstance(action, dict) else None
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise IllegalAction(f"{action!r} is not a takeback", code="bad_takeback")
    return count


def line(log: Sequence[tuple[int, Action]]) -> list[tuple[int, Action]]:
    """The moves that stand: the log with every takeback and the moves it undid left out. Raises
    `IllegalAction` for a takeback of more moves than stood."""
    standing: list[tuple[int, Action]] = []
    for seat, action in log:
        if seat != TAKEBACK_SEAT:
            standing.append((seat, action))
            continue
        count = count_of(action)
        if count > len(standing):
            raise IllegalAction(f"a takeback of {count} moves where {len(standing)} stand", code="bad_takeback")
        del standing[-count:]
    return standing


def has_takebacks(log: Sequence[tuple[int, Action]]) -> bool:
    return any(seat == TAKEBACK_SEAT for seat, _ in log)


def taken_back(log: Sequence[tuple[int, Action]]) -> set[int]:
    """The positions in `log` of the moves a later takeback undid."""
    standing: list[int] = []
    undone: set[int] = set()
    for i, (seat, action) in enumerate(log):
        if seat != TAKEBACK_SEAT:
            standing.append(i)
            continue
        count = min(count_of(action), len(standing))
        undone.update(standing[len(standing) - count :])
        del standing[len(standing) - count :]
    return undone


def undo_count(standing: Sequence[tuple[int, Action]], seat: int) -> int:
    """How many standing moves `seat`'s takeback undoes: from its last move to the end (its
    opponent's reply with it, as on Lichess: the asker gets its move back to play again); 0 when
    it has no move standing."""
    for back, (mover, _) in enumerate(reversed(standing), start=1):
        if mover == seat:
            return back
    return 0


def undone_seqs(log: Sequence[tuple[int, Action]]) -> list[int]:
    """The move numbers (a move's `seq` after it, from 1) that the log's last entry, a takeback,
    undid: what a client strikes through in its list of moves."""
    if not log or log[-1][0] != TAKEBACK_SEAT:
        return []
    before = taken_back(log[:-1])
    after = taken_back(log)
    return sorted(i + 1 for i in after - before)


def told(count: int) -> str:
    """The takeback in words, after the asker's name."""
    return f"takes back {'a move' if count == 1 else f'{count} moves'}"


def public_last(log: Sequence[tuple[int, Action]]) -> dict[str, Any]:
    """An update's `last` after a takeback (the log's last entry): who asked, and the move
    numbers it undid."""
    _, action = log[-1]
    count = count_of(action)
    return {
        "seat": action.get("by"),
        "action": None,
        "text": told(count),
        "takeback": count,
        "undone": undone_seqs(log),
    }


def taken(log: Sequence[tuple[int, Action]]) -> int:
    """How many takebacks the log holds."""
    return sum(1 for seat, _ in log if seat == TAKEBACK_SEAT)
