"""Single-observer information-set Monte Carlo tree search (Cowling, Powley and Whitehouse, 2012).

The agent cannot see the hidden cards, so each iteration starts from a different full state drawn
with `game.determinize(view, seat, rng)`: the seat's own knowledge is exact, everything hidden is
sampled. One tree is shared by all the samples; a node's children are keyed by answer, and only
answers legal in the current sample may be followed. Selection is UCB1 where a child's
"parent visits" is the number of times it was available (so answers that are rarely legal are not
penalized). Rewards: 1 for a sole win, 1/k for a first place shared by k, 0 otherwise, each edge
scored from the point of view of the seat that chose it. The answer is the most visited root child.

It works for any game behind the common interface, hidden information or not (a perfect-information
game's `determinize` is an exact rebuild, and this becomes plain UCT).
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

from partida.bots.base import Agent, AgentSpec, Turn
from partida.games.base import Action, State
from partida.games.prompts import freeze

SAMPLED_ANSWERS = 8  # for prompts too large to enumerate


class _Node:
    __slots__ = ("action", "available", "children", "reward", "seat", "visits")

    def __init__(self, action: Any, seat: int) -> None:
        self.action = action
        self.seat = seat  # who chose the action leading here
        self.children: dict[Any, _Node] = {}
        self.visits = 0
        self.available = 0
        self.reward = 0.0


def _answers(state: State, rng: random.Random) -> tuple[int, list[Any]]:
    decision = state.pending()[0]
    answers = decision.prompt.answers()
    if answers is None:
        answers = [decision.prompt.random_answer(rng) for _ in range(SAMPLED_ANSWERS)]
    return decision.seat, answers


def _rewards(state: State) -> list[float]:
    winners = state.result().winners
    return [1.0 / len(winners) if seat in winners else 0.0 for seat in range(state.num_seats)]


def _rollout(state: State, rng: random.Random, limit: int) -> None:
    for _ in range(limit):
        if state.is_over():
            return
        decision = state.pending()[0]
        state.apply(decision.seat, decision.prompt.random_answer(rng))


class IsmctsAgent(Agent):
    """ISMCTS with a fixed number of iterations, or a time budget per decision."""

    name = "ismcts"

    def __init__(
        self,
        seconds: float = 1.0,
        iterations: int | None = None,
        seed: int | None = None,
        exploration: float = 0.7,
        rollout_limit: int = 10_000,
    ) -> None:
        self.seconds = seconds
        self.iterations = iterations
        self.rng = random.Random(seed)
        self.exploration = exploration
        self.rollout_limit = rollout_limit

    def act(self, turn: Turn) -> Action:
        answers = turn.prompt.answers()
        if answers is not None and len(answers) == 1:
            return answers[0]
        root = self.search(turn)
        if not root.children:
            return turn.prompt.random_answer(self.rng)
        legal = None if answers is None else {freeze(a) for a in answers}
        best = max(
            (c for k, c in root.children.items() if legal is None or k in legal),
            key=lambda c: (c.visits, c.reward),
            default=None,
        )
        return turn.prompt.random_answer(self.rng) if best is None else turn.prompt.validate(best.action)

    def search(self, turn: Turn) -> _Node:
        """Grow the tree from the seat's information set; returns its root."""
        root = _Node(None, turn.seat)
        deadline = None if self.iterations is not None else time.perf_counter() + self.seconds
        done = 0
        while True:
            if self.iterations is not None and done >= self.iterations:
                break
            if deadline is not None and done > 0 and time.perf_counter() >= deadline:
                break
            done += 1
            self._iterate(root, turn.state(self.rng))
        return root

    def _iterate(self, root: _Node, state: State) -> None:
        node = root
        path: list[_Node] = []
        while not state.is_over():
            seat, answers = _answers(state, self.rng)
            keyed = [(freeze(a), a) for a in answers]
            available = []
            untried = []
            for key, answer in keyed:
                child = node.children.get(key)
                if child is None:
                    untried.append((key, answer))
                else:
                    child.available += 1
                    available.append(child)
            if untried:
                key, answer = self.rng.choice(untried)
                child = _Node(answer, seat)
                child.available = 1
                node.children[key] = child
                state.apply(seat, answer)
                path.append(child)
                break
            c = self.exploration
            node = max(
                available,
                key=lambda ch: ch.reward / ch.visits + c * math.sqrt(math.log(ch.available) / ch.visits),
            )
            state.apply(seat, node.action)
            path.append(node)
        _rollout(state, self.rng, self.rollout_limit)
        if not state.is_over():
            return
        rewards = _rewards(state)
        for child in path:
            child.visits += 1
            child.reward += rewards[child.seat]


AGENTS = [
    AgentSpec(
        "ismcts",
        IsmctsAgent,
        "information-set MCTS through determinize (any game); params seconds, iterations, seed",
        params={"seconds": 1.0, "iterations": None, "seed": None},
    )
]
