"""Iterative deepening, the driver both depth-first searchers share (`alphabeta`, `expectimax`):
search to depth 1, 2, 3, ... until the time is up or a search was exact, each depth's best answer
searched first at the next, and keep the deepest completed search's answer. A searcher checks
the clock inside its own search (every few hundred nodes) and raises `Timeout`; the unfinished
depth is then dropped, since a partial search's answer is not better informed than the last
complete one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Timeout(Exception):
    """Raised by a search when its deadline has passed."""


def deepen(answers: list[Any], depth: int | None, search: Callable[[int], tuple[Any, bool]]) -> tuple[Any, int]:
    """`search(d)` searches every answer (`answers`, in the order to try them) to depth `d` and
    returns the best and whether its value is exact (no search deeper can change it). Up to
    `depth` (None: until a search times out or is exact). Returns the best answer of the deepest
    completed depth (the first answer if none completed) and that depth. Reorders `answers`."""
    best, completed = answers[0], 0
    for current in range(1, (depth if depth is not None else 10_000) + 1):
        try:
            move, exact = search(current)
        except Timeout:
            break
        best, completed = move, current
        answers.remove(move)
        answers.insert(0, move)  # search the previous best first next time
        if exact:
            break
    return best, completed
