"""Generic UCT Monte Carlo tree search for perfect-information games.

Each iteration walks down the tree choosing children by UCB1, expands one untried answer, plays
a uniformly random game to the end and backs the result up. A child's statistics are kept from
the point of view of the seat that chose it (reward 1 for a win, 0.5 for a shared first place,
0 otherwise), so the walk needs no assumption about who moves next and passes cost nothing.
The answer is the most visited root child.

Chance is searched, not fixed: the state is asked to stop at chance (`State.stop_at_chance`), a
node where it waits on the dice is a chance node whose children are its outcomes, and each walk
through it (and each rollout) draws an outcome with its probability. Without that, every
iteration would replay the one future the rebuilt state's generator holds. Games that cannot
list a chance event keep drawing it themselves.
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

from partida.bots.base import Agent, AgentSpec, Turn
from partida.games.base import Action, State


class _Node:
    __slots__ = ("action", "chance", "children", "outcomes", "parent", "reward", "seat", "untried", "visits")

    def __init__(
        self,
        parent: _Node | None,
        action: Any,
        seat: int | None,
        untried: list[Any],
        chance: list[tuple[Any, float]] | None = None,
    ) -> None:
        self.parent = parent
        self.action = action  # the answer, or the chance outcome, that led here
        self.seat = seat  # who chooses among this node's children (None when over or at chance)
        self.untried = untried
        self.chance = chance  # at a chance node: its outcomes and their probabilities
        self.outcomes: dict[Any, _Node] = {}  # a chance node's children, by outcome
        self.children: list[_Node] = []
        self.visits = 0
        self.reward = 0.0  # summed from the point of view of the parent's seat


def _draw(outcomes: list[tuple[Any, float]], rng: random.Random) -> Any:
    return rng.choices([o for o, _ in outcomes], weights=[p for _, p in outcomes])[0]


def _node_for(parent: _Node | None, action: Any, state: State, rng: random.Random) -> _Node:
    chance = state.chance_outcomes()
    if chance is not None:
        return _Node(parent, action, None, [], chance)
    seat, untried = _answers(state, rng)
    return _Node(parent, action, seat, untried)


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
        root_state.stop_at_chance()
        root = _node_for(None, None, root_state, self.rng)
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
        # Selection: descend through fully expanded nodes, drawing the outcome at chance nodes.
        while True:
            if node.chance is not None:
                outcome = _draw(node.chance, self.rng)
                state.apply_chance(outcome)
                child = node.outcomes.get(outcome)
                if child is None:
                    child = node.outcomes[outcome] = _node_for(node, outcome, state, self.rng)
                    node.children.append(child)
                node = child
            elif not node.untried and node.children:
                node = self._select(node)
                state.apply(node.parent.seat, node.action)  # type: ignore[union-attr, arg-type]
            else:
                break
        # Expansion.
        if node.untried:
            action = node.untried.pop()
            state.apply(node.seat, action)  # type: ignore[arg-type]
            child = _node_for(node, action, state, self.rng)
            node.children.append(child)
            node = child
        # Rollout.
        while not state.is_over():
            outcomes = state.chance_outcomes()
            if outcomes is not None:
                state.apply_chance(_draw(outcomes, self.rng))
                continue
            decision = state.pending()[0]
            state.apply(decision.seat, decision.prompt.random_answer(self.rng))
        rewards = _rewards(state)
        # Backpropagation: a child's reward is for the seat that chose it (none at chance).
        while node is not None:
            node.visits += 1
            if node.parent is not None and node.parent.seat is not None:
                node.reward += rewards[node.parent.seat]
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
