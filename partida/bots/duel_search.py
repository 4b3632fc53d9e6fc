"""The spec's one-turn lookahead agent: breadth-first search over main-phase sequences, combat as
minimax (own attacks max, the opponent's blocks min, own damage orders max), every position scored
with the spec's R(s). It re-plans at every decision, so a block it did not predict simply leads to
a fresh plan for the second main phase. Myopic and aggressive by design."""

from __future__ import annotations

import random
from typing import Any

from partida.bots.base import Agent, AgentSpec, Turn
from partida.bots.duel_eval import evaluation as named_evaluation
from partida.bots.duel_mulligan import MulliganPolicy
from partida.bots.duel_plan import (
    MAX_ATTACK_SETS,
    MAX_BLOCK_SETS,
    Evaluator,
    best_attack,
    best_orders,
    defender_value,
    discard_choice,
    line_value,
    main_lines,
)
from partida.games.duel.state import DuelState


class Planner:
    """One-turn decisions on a full state, with a given evaluation function."""

    def __init__(
        self,
        evaluate: Evaluator,
        rng: random.Random,
        attack_limit: int = MAX_ATTACK_SETS,
        block_limit: int = MAX_BLOCK_SETS,
    ) -> None:
        self.evaluate = evaluate
        self.rng = rng
        self.attack_limit = attack_limit
        self.block_limit = block_limit

    def main_line(self, state: DuelState) -> list[Any]:
        """The best sequence of main-phase actions (empty: pass now)."""
        me = state.active
        best_value, best = float("-inf"), []
        for line in main_lines(state):
            if state.phase == "main1":
                value = line_value(line, self.evaluate, self.rng, self.attack_limit, self.block_limit)
            else:
                value = self.evaluate(line.state, me)
            if value > best_value + 1e-9:
                best_value, best = value, line.actions
        return best

    def main(self, state: DuelState) -> Any:
        line = self.main_line(state)
        return line[0] if line else "pass"

    def attackers(self, state: DuelState) -> list[str]:
        attack = best_attack(state, self.evaluate, self.rng, self.attack_limit, self.block_limit)[1]
        return [p.id for p in attack]

    def blockers(self, state: DuelState, me: int) -> list[list[str]]:
        attackers = [p for p in (state.permanent(a) for a in state.attackers) if p is not None]
        _, blocks = defender_value(state, attackers, me, self.evaluate, self.rng, None, self.block_limit)
        return [[b.id, aid] for aid, bs in blocks.items() for b in bs]

    def order(self, state: DuelState) -> list[str]:
        aid = state.order_queue[0]
        attackers = [p for p in (state.permanent(a) for a in state.attackers) if p is not None]
        blocks = {
            a: [p for p in (state.permanent(b) for b in state.blockers_of(a)) if p is not None] for a in state.attackers
        }
        _, ordered = best_orders(state, attackers, blocks, state.active, self.evaluate)
        return [p.id for p in ordered[aid]]

    def decide(self, state: DuelState, name: str, seat: int) -> Any:
        """An answer for the open decision of `state` (the search agents' shared policy)."""
        if name == "main":
            return self.main(state)
        if name == "attackers":
            return self.attackers(state)
        if name == "blockers":
            return self.blockers(state, seat)
        if name == "damage_order":
            return self.order(state)
        if name == "discard":
            return discard_choice(state)
        if name == "mulligan":
            return "keep"
        return "top"


def single_answer(turn: Turn) -> Any | None:
    """The only legal answer of a prompt, when there is just one (no search needed)."""
    answers = turn.prompt.answers(limit=1)
    if answers is not None and len(answers) == 1:
        return answers[0]
    return None


class SearchAgent(Agent):
    """The spec's reference search agent; mulligan and scry by the mulligan policy."""

    name = "duel-search"

    def __init__(self, seed: int | None = None, evaluation: str = "reference", weights: str | None = None) -> None:
        self.rng = random.Random(seed)
        self.policy = MulliganPolicy()
        self.planner = Planner(named_evaluation(evaluation, weights), self.rng)

    def act(self, turn: Turn) -> Any:
        name = turn.prompt.name
        if name in ("mulligan", "scry"):
            return self.policy.answer(turn)
        only = single_answer(turn)
        if only is not None:
            return only
        state = turn.state(self.rng)
        return self.planner.decide(state, name, turn.seat)


AGENTS = [
    AgentSpec(
        "duel-search",
        SearchAgent,
        "Duel: the spec's one-turn lookahead (main-phase BFS, combat minimax, R(s))",
        games=frozenset({"duel"}),
        params={"seed": None, "evaluation": "reference", "weights": None},
    )
]
