"""Generic UCT Monte Carlo tree search for perfect-information games.

Each iteration walks down the tree choosing children by UCB1, expands one untried answer, plays
a uniformly random game to the end and backs the result up. A child's statistics are kept from
the point of view of the seat that chose it (reward 1 for a win, 0.5 for a shared first place,
0 otherwise), so the walk needs no assumption about who moves next and passes cost nothing.
The answer is the most visited root child.
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

from partida.bots.base import Agent, AgentSpec, Turn
from partida.games.base import Action, State


class _Node:
    __slots__ = ("action", "children", "parent", "reward", "seat", "untried", "visits")

    def __init__(self, parent: _Node | None, action: Any, seat: int | None, untried: list[Any]) -> None:
        self.parent = parent
        self.action = action
        self.seat = seat  # who chooses among this node's children (None when the game is over)
        self.untried = untried
        self.children: list[_Node] = []
        self.visits = 0
        self.reward = 0.0  # summed from the point of view of the parent's seat


def _rewards(state: State) -> list[float]:
    result = state.result()
    winners = result.winners
    return [1.0 / len(winners) if seat in winners else 0.0 for seat in range(state.num_seats)]


def _answers(state: State, rng: random.Random) -> tuple[int | None, list[Any]]:
    if state.is_over():
        return None, []
    decision = state.pending()[0]
    answers = decision.prompt.answers()
    if answers is None:
        answers = [decision.prompt.random_answer(rng) for _ in range(8)]
    rng.shuffle(answers)
    return decision.seat, answers


class MctsAgent(Agent):
    """UCT with random rollouts, under a time budget or a fixed number of iterations."""

    name = "mcts"

    def __init__(
        self, seconds: float = 1.0, iterations: int | None = None, seed: int | None = None, exploration: float = 1.4
    ) -> None:
        self.seconds = seconds
        self.iterations = iterations
        self.rng = random.Random(seed)
        self.exploration = exploration
        self.last_iterations = 0

    def act(self, turn: Turn) -> Action:
        answers = turn.prompt.answers()
        if answers is not None and len(answers) == 1:
            return answers[0]
        root_state = turn.state(self.rng)
        seat, untried = _answers(root_state, self.rng)
        root = _Node(None, None, seat, untried)
        deadline = time.perf_counter() + self.seconds
        count = 0
        while True:
            if self.iterations is not None:
                if count >= self.iterations:
                    break
            elif count & 7 == 0 and time.perf_counter() > deadline:
                break
            self._iterate(root, root_state.clone())
            count += 1
        self.last_iterations = count
        if not root.children:
            return turn.prompt.random_answer(self.rng)
        return max(root.children, key=lambda child: child.visits).action

    def _iterate(self, node: _Node, state: State) -> None:
        # Selection: descend through fully expanded nodes.
        while not node.untried and node.children:
            node = self._select(node)
            state.apply(node.parent.seat, node.action)  # type: ignore[union-attr, arg-type]
        # Expansion.
        if node.untried:
            action = node.untried.pop()
            state.apply(node.seat, action)  # type: ignore[arg-type]
            seat, untried = _answers(state, self.rng)
            child = _Node(node, action, seat, untried)
            node.children.append(child)
            node = child
        # Rollout.
        while not state.is_over():
            decision = state.pending()[0]
            state.apply(decision.seat, decision.prompt.random_answer(self.rng))
        rewards = _rewards(state)
        # Backpropagation: a child's reward is for the seat that chose it.
        while node is not None:
            node.visits += 1
            if node.parent is not None:
                node.reward += rewards[node.parent.seat]  # type: ignore[index]
            node = node.parent  # type: ignore[assignment]

    def _select(self, node: _Node) -> _Node:
        log_n = math.log(node.visits)
        c = self.exploration
        return max(
            node.children,
            key=lambda ch: ch.reward / ch.visits + c * math.sqrt(log_n / ch.visits),
        )


AGENTS = [
    AgentSpec(
        "mcts",
        MctsAgent,
        "UCT Monte Carlo tree search with random rollouts (any perfect-information game)",
        perfect_information_only=True,
        params={"seconds": 1.0, "iterations": None, "seed": None},
    )
]
