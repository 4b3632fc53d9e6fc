"""Generic alpha-beta search for any perfect-information game behind the games interface.

Negamax with iterative deepening under a per-move time budget (or a fixed depth). Values are
from the point of view of the seat to move; when the same seat moves twice in a row (a pass, a
game with extra turns) the child's value is not negated. Leaves use the state's own
`evaluate(seat)` when it has one, else 0; finished games score a win, draw or loss far above any
evaluation, sooner wins scoring higher. Search stops deepening once a depth was searched without
meeting the horizon, since the result is then exact.
"""

from __future__ import annotations

import random
import time
from typing import Any

from partida.bots.base import Agent, AgentSpec, Turn
from partida.bots.deepening import Timeout, deepen
from partida.games.base import Action, State

WIN = 1_000_000.0


class AlphaBetaAgent(Agent):
    """Iterative-deepening negamax with alpha-beta pruning and best-move-first root ordering."""

    name = "alphabeta"

    def __init__(self, seconds: float = 1.0, depth: int | None = None, seed: int | None = None) -> None:
        self.seconds = seconds
        self.depth = depth
        self.rng = random.Random(seed)
        self.nodes = 0
        self.completed_depth = 0
        self._deadline = float("inf")
        self._horizon_hit = False

    def act(self, turn: Turn) -> Action:
        answers = turn.prompt.answers()
        if answers is None:
            return turn.prompt.random_answer(self.rng)
        if len(answers) == 1:
            return answers[0]
        state = turn.state(self.rng)
        self.rng.shuffle(answers)
        self.nodes = 0
        self._deadline = float("inf") if self.depth is not None else time.perf_counter() + self.seconds

        def search(depth: int) -> tuple[Any, bool]:
            self._horizon_hit = False
            value, move = self._root(state, turn.seat, answers, depth)
            return move, not self._horizon_hit or abs(value) >= WIN / 2  # exact: deeper cannot change it

        best, self.completed_depth = deepen(answers, self.depth, search)
        return best

    def _root(self, state: State, seat: int, answers: list[Any], depth: int) -> tuple[float, Any]:
        alpha, beta = -float("inf"), float("inf")
        best_move = answers[0]
        for action in answers:
            child = state.clone()
            child.apply(seat, action)
            value = self._value_for(child, seat, depth - 1, -beta, -alpha, 1)
            if value > alpha:
                alpha, best_move = value, action
        return alpha, best_move

    def _value_for(self, state: State, seat: int, depth: int, alpha: float, beta: float, ply: int) -> float:
        """The value of `state` for `seat`, whoever moves there; (alpha, beta) belong to `seat`'s
        opponent if the window was negated by the caller, so flip it back when seat moves again."""
        mover = state.pending()[0].seat if not state.is_over() else None
        if mover is None or mover != seat:
            return -self._negamax(state, depth, alpha, beta, ply) if mover is not None else self._leaf(state, seat, ply)
        return self._negamax(state, depth, -beta, -alpha, ply)

    def _negamax(self, state: State, depth: int, alpha: float, beta: float, ply: int) -> float:
        self.nodes += 1
        if self.nodes & 255 == 0 and time.perf_counter() > self._deadline:
            raise Timeout
        decision = state.pending()[0]
        seat = decision.seat
        if depth <= 0:
            self._horizon_hit = True
            return self._evaluate(state, seat)
        answers = decision.prompt.answers()
        if answers is None:
            answers = [decision.prompt.random_answer(self.rng)]
        best = -float("inf")
        for action in answers:
            child = state.clone()
            child.apply(seat, action)
            value = self._value_for(child, seat, depth - 1, -beta, -alpha, ply + 1)
            if value > best:
                best = value
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        break
        return best

    def _leaf(self, state: State, seat: int, ply: int) -> float:
        """A finished game: win/draw/loss for `seat`, sooner wins and later losses preferred."""
        result = state.result()
        if result.is_draw:
            return 0.0
        return WIN - ply if seat in result.winners else -WIN + ply

    @staticmethod
    def _evaluate(state: State, seat: int) -> float:
        evaluate = getattr(state, "evaluate", None)
        return float(evaluate(seat)) if evaluate is not None else 0.0


AGENTS = [
    AgentSpec(
        "alphabeta",
        AlphaBetaAgent,
        "alpha-beta minimax with iterative deepening (any perfect-information game)",
        perfect_information_only=True,
        params={"seconds": 1.0, "depth": None, "seed": None},
    )
]
