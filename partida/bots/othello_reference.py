"""The reference Othello agent of the study this project measures against.

Depth-limited minimax with alpha-beta pruning (written as negamax) on the plain rules, scoring
the leaves with the mobility heuristic `100 * (my_moves - opp_moves) / (my_moves + opp_moves)`
(0 when both are 0). Finished games score the disc difference times 1000, beyond any mobility
value. A pass counts as a ply. `nodes` counts every position visited, for the benchmark.
"""

from __future__ import annotations

import random

from partida.bots.base import Agent, AgentSpec, Turn
from partida.games.base import Action
from partida.games.othello import board as rules

INF = float("inf")


def mobility(board: list[int], player: int) -> float:
    mine = len(rules.legal_moves(board, player))
    theirs = len(rules.legal_moves(board, 1 - player))
    return 0.0 if mine + theirs == 0 else 100.0 * (mine - theirs) / (mine + theirs)


class ReferenceSearch:
    """The search itself, usable without the agent wrapper (the benchmark calls it directly)."""

    def __init__(self) -> None:
        self.nodes = 0

    def best_move(self, board: list[int], player: int, depth: int, order: list[int] | None = None) -> tuple[int, float]:
        """(best square, value for `player`). `order` optionally fixes the root move order."""
        moves = order if order is not None else rules.legal_moves(board, player)
        self.nodes += 1
        best_square, alpha = moves[0], -INF
        for square in moves:
            child = list(board)
            rules.play(child, square, player)
            value = -self.negamax(child, 1 - player, depth - 1, -INF, -alpha)
            if value > alpha:
                best_square, alpha = square, value
        return best_square, alpha

    def negamax(self, board: list[int], player: int, depth: int, alpha: float, beta: float) -> float:
        self.nodes += 1
        moves = rules.legal_moves(board, player)
        if not moves:
            if not rules.legal_moves(board, 1 - player):
                black, white = rules.counts(board)
                diff = black - white if player == rules.BLACK else white - black
                return 1000.0 * diff
            if depth <= 0:
                return mobility(board, player)
            return -self.negamax(board, 1 - player, depth - 1, -beta, -alpha)
        if depth <= 0:
            theirs = len(rules.legal_moves(board, 1 - player))
            mine = len(moves)
            return 100.0 * (mine - theirs) / (mine + theirs)
        best = -INF
        for square in moves:
            child = list(board)
            rules.play(child, square, player)
            value = -self.negamax(child, 1 - player, depth - 1, -beta, -alpha)
            if value > best:
                best = value
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        break
        return best


class OthelloReferenceAgent(Agent):
    """Fixed-depth alpha-beta with the mobility heuristic; `seed` shuffles the root moves so
    equal-valued moves vary between games."""

    name = "othello-reference"

    def __init__(self, depth: int = 4, seed: int | None = None) -> None:
        self.depth = depth
        self.rng = random.Random(seed) if seed is not None else None
        self.nodes = 0

    def act(self, turn: Turn) -> Action:
        view = turn.view
        board = rules.from_text(view["board"])
        player = int(view["to_move"])
        moves = rules.legal_moves(board, player)
        if self.rng is not None:
            self.rng.shuffle(moves)
        search = ReferenceSearch()
        square, _ = search.best_move(board, player, self.depth, moves)
        self.nodes += search.nodes
        return rules.square_name(square)


AGENTS = [
    AgentSpec(
        "othello-reference",
        OthelloReferenceAgent,
        "the study's reference: fixed-depth alpha-beta with the mobility heuristic",
        games=frozenset({"othello"}),
        params={"depth": 4, "seed": None},
    )
]
