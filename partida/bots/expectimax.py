"""Expectimax: search that weighs every outcome of the dice instead of one sampled future.

The agent rebuilds a state from its seat's view (`game.determinize`: exact for perfect
information, one sample of the hidden cards otherwise) and asks it to stop at chance
(`State.stop_at_chance`). Then it runs expectiminimax from its own seat's point of view: it
maximizes at its own decisions, every other seat minimizes (the paranoid reduction, so a game of
more than two seats stays a two-sided search with alpha-beta), and a chance node is the
probability-weighted mean of its outcomes.

All values lie in [0, 1]: a finished game is worth the seat's share of first place (1 alone,
1/k shared by k, 0 otherwise); at the horizon the state's `evaluate(seat)` (if it has one) is
squashed into [0.05, 0.95], so any finished game outranks any estimate. Known bounds are what
lets a chance node prune (Ballard's Star1): after some outcomes are searched, the rest can only
add between 0 and 1 times their probability, so each outcome gets a window that proves the node
below alpha or above beta as soon as possible. Iterative deepening under a time budget (or a fixed
depth); depth counts decisions, chance nodes are free. Chance events a game cannot enumerate
(a shuffle of a whole deck) stay drawn by the state, as one sampled future.
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

from partida.bots.base import Agent, AgentSpec, Turn
from partida.bots.deepening import Timeout, deepen
from partida.games.base import Action, State

LOW, HIGH = 0.0, 1.0


class ExpectimaxAgent(Agent):
    """Expectiminimax with alpha-beta at decisions and Star1 pruning at chance nodes."""

    name = "expectimax"

    def __init__(
        self, seconds: float = 1.0, depth: int | None = None, seed: int | None = None, scale: float = 2.0
    ) -> None:
        self.seconds = seconds
        self.depth = depth
        self.scale = scale  # evaluation units for which the estimate moves from 0.5 to ~0.71
        self.rng = random.Random(seed)
        self.nodes = 0
        self.completed_depth = 0
        self.last_values: dict[Any, float] = {}
        self._me = 0
        self._deadline = float("inf")
        self._horizon_hit = False

    def act(self, turn: Turn) -> Action:
        answers = turn.prompt.answers()
        if answers is None:
            return turn.prompt.random_answer(self.rng)
        if len(answers) == 1:
            return answers[0]
        state = turn.state(self.rng)
        state.stop_at_chance()
        self._me = turn.seat
        self.rng.shuffle(answers)
        self.nodes = 0
        self._deadline = float("inf") if self.depth is not None else time.perf_counter() + self.seconds

        def search(depth: int) -> tuple[Any, bool]:
            self._horizon_hit = False
            values = self._root(state, turn.seat, answers, depth)
            self.last_values = {_key(answers[i]): v for i, v in values.items()}
            best = max(range(len(answers)), key=lambda i: values[i])  # first of the best, in search order
            return answers[best], not self._horizon_hit  # exact: deeper search cannot change the answer

        best, self.completed_depth = deepen(answers, self.depth, search)
        return best

    def _root(self, state: State, seat: int, answers: list[Any], depth: int) -> dict[int, float]:
        """Each answer's value, by its place in `answers` (an answer may be a map, as Duel's are,
        which no dict can key); an answer that cannot beat the best so far may be a bound."""
        values: dict[int, float] = {}
        alpha = -math.inf
        for index, action in enumerate(answers):
            child = state.clone()
            child.apply(seat, action)
            value = self._value(child, depth - 1, alpha, HIGH)
            values[index] = value
            alpha = max(alpha, value)
        return values

    def _value(self, state: State, depth: int, alpha: float, beta: float) -> float:
        """Fail-soft value of `state` for the searching seat within the window (alpha, beta)."""
        self.nodes += 1
        if self.nodes & 255 == 0 and time.perf_counter() > self._deadline:
            raise Timeout
        if state.is_over():
            winners = state.result().winners
            return 1.0 / len(winners) if self._me in winners else 0.0
        outcomes = state.chance_outcomes()
        if outcomes is not None:
            return self._chance(state, outcomes, depth, alpha, beta)
        if depth <= 0:
            self._horizon_hit = True
            return self.estimate(state)
        decision = state.pending()[0]
        answers = decision.prompt.answers()
        if answers is None:
            answers = [decision.prompt.random_answer(self.rng)]
        maximizing = decision.seat == self._me
        best = -math.inf if maximizing else math.inf
        for action in answers:
            child = state.clone()
            child.apply(decision.seat, action)
            value = self._value(child, depth - 1, alpha, beta)
            if maximizing:
                best = max(best, value)
                alpha = max(alpha, best)
            else:
                best = min(best, value)
                beta = min(beta, best)
            if alpha >= beta:
                break
        return best

    def _chance(self, state: State, outcomes: list[tuple[Any, float]], depth: int, alpha: float, beta: float) -> float:
        """Star1: the node's value is sum(p_i v_i); with v in [LOW, HIGH] the outcomes not yet
        searched bound it, so outcome i only needs the window that can still move it across
        alpha or beta. A cut returns the bound that proves it (fail-soft)."""
        done = 0.0  # sum of p_j v_j over the outcomes searched
        rest = 1.0  # probability of the outcomes not searched yet
        for outcome, p in sorted(outcomes, key=lambda op: -op[1]):
            rest -= p
            rest = max(rest, 0.0)
            low = (alpha - done - HIGH * rest) / p
            high = (beta - done - LOW * rest) / p
            child = state.clone()
            child.apply_chance(outcome)
            value = self._value(child, depth, max(low, LOW), min(high, HIGH))
            done += p * value
            if value >= high:
                return done + LOW * rest  # at least this, which is at least beta
            if value <= low:
                return done + HIGH * rest  # at most this, which is at most alpha
        return done

    def estimate(self, state: State) -> float:
        """The horizon value in [0.05, 0.95]: a logistic of the state's own evaluation."""
        evaluate = getattr(state, "evaluate", None)
        if evaluate is None:
            return 0.5
        x = float(evaluate(self._me)) / self.scale
        return 0.05 + 0.9 / (1.0 + math.exp(-max(-60.0, min(60.0, x))))


AGENTS = [
    AgentSpec(
        "expectimax",
        ExpectimaxAgent,
        "expectiminimax over the game's chance events, alpha-beta and Star1 pruning (one sample of hidden cards)",
        params={"seconds": 1.0, "depth": None, "seed": None},
    )
]


def _key(action: Any) -> Any:
    """`last_values`' key for an answer: itself, or its repr when it cannot be hashed (a map)."""
    try:
        hash(action)
    except TypeError:
        return repr(action)
    return action
