"""The fast Othello engine as an agent, with strength levels a person can pick.

Levels trade strength for speed: low levels search a few plies (and blunder like a beginner),
high levels think for a fixed time with iterative deepening, and every level plays the end
exactly once its search reaches the last move. `depth` or `seconds` override the level.
"""

from __future__ import annotations

import random
from functools import partial
from typing import TYPE_CHECKING

from partida.bots.base import Agent, AgentSpec, Turn
from partida.games.base import Action
from partida.games.othello import board as rules

if TYPE_CHECKING:
    from partida.games.othello.engine import SearchResult

# level -> (depth, seconds): depth None means "as deep as the time allows"
LEVELS: dict[int, tuple[int | None, float]] = {
    1: (1, 0.0),
    2: (2, 0.0),
    3: (4, 0.0),
    4: (6, 0.0),
    5: (None, 0.5),
    6: (None, 1.0),
    7: (None, 3.0),
}
DEFAULT_LEVEL = 6


class OthelloEngineAgent(Agent):
    """Searches with the C engine; `last` keeps the latest search result (value, depth, PV) for
    people and benchmarks to inspect."""

    name = "othello-engine"

    def __init__(
        self, level: int | None = None, seconds: float | None = None, depth: int | None = None, seed: int | None = None
    ) -> None:
        if level is not None and level not in LEVELS:
            raise ValueError(f"level must be one of {', '.join(map(str, LEVELS))}, not {level!r}")
        level_depth, level_seconds = LEVELS[level if level is not None else DEFAULT_LEVEL]
        if depth is not None or seconds is not None:
            level_depth, level_seconds = depth, seconds or 0.0
        self.depth = level_depth
        self.seconds = level_seconds
        self.rng = random.Random(seed)
        self.last: SearchResult | None = None
        self.nodes = 0

    def act(self, turn: Turn) -> Action:
        # imported here so that listing agents works even where the C extension is not built
        from partida.games.othello import engine

        board = rules.from_text(turn.view["board"])
        player = int(turn.view["to_move"])
        depth = self.depth if self.depth is not None else 60
        self.last = engine.search(board, player, depth, self.seconds)
        self.nodes += self.last.nodes
        return rules.square_name(self.last.move)


def _spec(name: str, help: str, **fixed: object) -> AgentSpec:
    return AgentSpec(
        name,
        partial(OthelloEngineAgent, **fixed) if fixed else OthelloEngineAgent,
        help,
        games=frozenset({"othello"}),
        params={} if fixed else {"level": None, "seconds": None, "depth": None, "seed": None},
    )


AGENTS = [
    _spec("othello-engine", "bitboard alpha-beta engine with an exact endgame solver (level 1-7, seconds, depth)"),
    _spec("othello-engine-easy", "the Othello engine at level 2 (two plies)", level=2),
    _spec("othello-engine-medium", "the Othello engine at level 4 (six plies)", level=4),
    _spec("othello-engine-hard", "the Othello engine at level 7 (three seconds a move)", level=7),
]
