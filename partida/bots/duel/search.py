"""The spec's one-turn lookahead agents, both myopic and aggressive by design.

`duel-search` is the study's agent: the whole-turn search of `turn` (main 1, combat minimax,
main 2, scored at the end of the turn). It plays the turn it planned and re-plans when the game
leaves the plan (a block it did not predict leads to a fresh second main phase).

`duel-search-split` is the cheaper planner the rollouts of `duel-lookahead` use: the first main
phase is scored right after the combat it leads to, and the second main phase is searched only
when it comes, so a follow-up in main 2 cannot motivate an attack."""

from __future__ import annotations

import random
from typing import Any

from partida.bots.base import Agent, AgentSpec, Turn
from partida.bots.duel.evaluation import evaluation as named_evaluation
from partida.bots.duel.mulligan import MulliganPolicy
from partida.bots.duel.plan import (
    MAX_ATTACK_SETS,
    MAX_BLOCK_SETS,
    MAX_MAIN_NODES,
    Evaluator,
    best_attack,
    best_orders,
    defender_value,
    discard_choice,
    line_value,
    main_lines,
    state_key,
)
from partida.bots.duel.turn import TurnPlan, TurnSearch
from partida.games.duel.state import DuelState


class Planner:
    """One-turn decisions on a full state, with a given evaluation function: the split planner
    (main 1 scored after combat, main 2 searched when it comes)."""

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


class SplitSearchAgent(Agent):
    """The split one-turn planner as an agent; mulligan and scry by the mulligan policy."""

    name = "duel-search-split"

    def __init__(self, seed: int | None = None, evaluation: str = "reference", weights: str | None = None) -> None:
        self.rng = random.Random(seed)
        self.policy = MulliganPolicy()
        self.planner = Planner(named_evaluation(evaluation, weights), self.rng)

    def act(self, turn: Turn) -> Any:
        routine = routine_answer(self.policy, turn)
        if routine is not None:
            return routine
        name = turn.prompt.name
        state = turn.state(self.rng)
        return self.planner.decide(state, name, turn.seat)


def routine_answer(policy: MulliganPolicy, turn: Turn) -> Any:
    """What needs no search: mulligans and scries by the mulligan policy, and a forced answer.
    None when the decision is the planner's."""
    if turn.prompt.name in ("mulligan", "scry"):
        return policy.answer(turn)
    return single_answer(turn)


def plan_key(state: DuelState) -> tuple[Any, ...]:
    return (state.turn, state.active, *state_key(state))


class SearchAgent(Agent):
    """The study's search agent: whole-turn search with R(s) (or another evaluation); mulligan and
    scry by the mulligan policy."""

    name = "duel-search"

    def __init__(
        self,
        seed: int | None = None,
        evaluation: str = "reference",
        weights: str | None = None,
        main_nodes: int = MAX_MAIN_NODES,
        attack_sets: int = MAX_ATTACK_SETS,
        block_sets: int = MAX_BLOCK_SETS,
    ) -> None:
        self.rng = random.Random(seed)
        self.policy = MulliganPolicy()
        self.evaluate = named_evaluation(evaluation, weights)
        if min(int(main_nodes), int(attack_sets), int(block_sets)) < 1:
            raise ValueError("main_nodes, attack_sets and block_sets must be at least 1")
        self.search = TurnSearch(self.evaluate, self.rng, int(main_nodes), int(attack_sets), int(block_sets))
        self.planned: dict[tuple[Any, ...], Any] = {}  # position -> the planned answer there

    def new_game(self, game: Any, seat: int) -> None:
        self.planned = {}

    def remember(self, state: DuelState, plan: TurnPlan) -> None:
        """Note the answer the plan gives at each position it passes through this turn, so the turn
        is searched once, not once per action."""
        self.planned = {}
        walk = state.clone()
        try:
            if walk.phase == "main1":
                for action in plan.main1:
                    self.planned[plan_key(walk)] = action
                    walk.apply_fast(action)
                    if walk.is_over():
                        return
                self.planned[plan_key(walk)] = "pass"
                walk.apply_fast("pass")
            if walk.phase == "attackers":
                self.planned[plan_key(walk)] = plan.attack
        except (StopIteration, KeyError, ValueError):  # a determinization the plan does not fit
            self.planned = {}

    def act(self, turn: Turn) -> Any:
        routine = routine_answer(self.policy, turn)
        if routine is not None:
            return routine
        name = turn.prompt.name
        state = turn.state(self.rng)
        if state.phase in ("main1", "attackers"):
            known = self.planned.get(plan_key(state))
            if known is not None:
                return known
            plan = self.search.turn(state) if state.phase == "main1" else self.search.from_attackers(state)
            self.remember(state, plan)
            return self.planned.get(plan_key(state), "pass" if state.phase == "main1" else [])
        if name == "main":  # main 2: the best end of the turn from where combat left it
            self.search.cache.clear()
            line = self.search.main2(state)[1]
            return line[0] if line else "pass"
        if name == "blockers":
            return self.search.blocks(state)
        if name == "damage_order":
            return self.search.order(state)
        if name == "discard":
            return discard_choice(state)
        return "top"


AGENTS = [
    AgentSpec(
        "duel-search",
        SearchAgent,
        "Duel: the study's one-turn lookahead (whole-turn search: main 1, combat minimax, main 2; R(s))",
        games=frozenset({"duel"}),
        params={
            "seed": None,
            "evaluation": "reference",
            "weights": None,
            "main_nodes": MAX_MAIN_NODES,
            "attack_sets": MAX_ATTACK_SETS,
            "block_sets": MAX_BLOCK_SETS,
        },
    ),
    AgentSpec(
        "duel-search-split",
        SplitSearchAgent,
        "Duel: one-turn lookahead with main 1 scored after combat and main 2 searched when it comes",
        games=frozenset({"duel"}),
        params={"seed": None, "evaluation": "reference", "weights": None},
    ),
]
