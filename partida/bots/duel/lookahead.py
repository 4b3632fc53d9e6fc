"""A stronger Duel agent: multi-turn lookahead over determinizations.

The one-turn search is myopic: it cannot see the opponent's reply (the crack-back after an
all-out attack, a burn spell at a low life total, a flyer it left no blocker for). This agent
keeps the one-turn search as a candidate generator and adds what it misses:

1. Candidates. From its own turn it takes the best few main-phase lines, each with its best few
   attack choices (main-phase BFS and the pruned combat minimax of `plan`), ranked by its
   evaluation: by default the one fitted to game outcomes (`evaluation`), the log-odds of winning.
2. Determinization. It samples the opponent's hand and both libraries from the unseen cards
   (`Game.determinize`), several times within the time budget.
3. Rollout. Each candidate is played out in each sample: the rest of its own turn, the
   opponent's whole reply and its own next turn are played by the one-turn planner for both
   sides, and the position at the start of the turn after is scored. The candidate with the best
   mean wins.

Plans are kept for the rest of the turn (the later actions of the chosen line, the chosen attack)
and dropped when the game diverges from them. Blocks are searched the same way; damage orders and
discards use the one-turn planner. The budget is per decision (default 1 second); a decision with
one legal answer costs nothing.
"""

from __future__ import annotations

import random
import time
from typing import Any

from partida.bots.base import Agent, AgentSpec, Turn
from partida.bots.duel.evaluation import evaluation as named_evaluation
from partida.bots.duel.mulligan import MulliganPolicy
from partida.bots.duel.plan import (
    best_orders,
    block_sets,
    line_value,
    main_lines,
    ranked_attacks,
)
from partida.bots.duel.search import Planner, single_answer
from partida.bots.duel.turn import TurnSearch
from partida.games.duel.state import DuelState
from partida.games.prompts import freeze

PHASE_PROMPT = {
    "main1": "main",
    "main2": "main",
    "attackers": "attackers",
    "blockers": "blockers",
    "order": "damage_order",
    "discard": "discard",
}
TOP_LINES = 4
TOP_ATTACKS = 3
TOP_BLOCKS = 4
ROLLOUT_ATTACKS = 12
RANK_ATTACKS = 24
RANK_BLOCKS = 60
ROLLOUT_BLOCKS = 30
MAX_SAMPLES = 30
FIRST_CUT = 2  # worlds every candidate gets before the weaker half may be dropped
HORIZON = 3  # turns played out after the decision's turn begins (3: own, opponent's, own)
MAX_ROLLOUT_STEPS = 200


class Candidate:
    """A plan for the rest of this phase: main-phase actions, then (in main 1) an attack."""

    def __init__(self, actions: list[Any], attack: list[str] | None, answer: Any = None) -> None:
        self.actions = actions
        self.attack = attack
        self.answer = answer  # a whole answer (blocks)
        self.total = 0.0
        self.samples = 0

    @property
    def mean(self) -> float:
        return self.total / self.samples if self.samples else float("-inf")


class LookaheadAgent(Agent):
    name = "duel-lookahead"

    def __init__(
        self,
        seconds: float = 1.0,
        seed: int | None = None,
        evaluation: str = "fitted",
        samples: int = MAX_SAMPLES,
        lines: int = TOP_LINES,
        attacks: int = TOP_ATTACKS,
        horizon: int = HORIZON,
        weights: str | None = None,
        whole_turn: int = 0,
        rollout: str = "split",
    ) -> None:
        self.whole_turn = bool(int(whole_turn))
        if rollout not in ("split", "turn"):
            raise ValueError("rollout must be split or turn")
        self.rollout_policy = rollout
        self.samples, self.lines, self.attacks, self.horizon = int(samples), int(lines), int(attacks), int(horizon)
        if min(self.samples, self.lines, self.attacks, self.horizon) < 1:
            raise ValueError("samples, lines, attacks and horizon must be at least 1")
        self.evaluate = named_evaluation(evaluation, weights)
        self.seconds = float(seconds)
        self.rng = random.Random(seed)
        self.policy = MulliganPolicy()
        self.planner = Planner(self.evaluate, self.rng)
        # Rollouts run the planner many times: a narrower combat search keeps them cheap.
        self.fast = Planner(self.evaluate, self.rng, ROLLOUT_ATTACKS, ROLLOUT_BLOCKS)
        self.turn_search = TurnSearch(self.evaluate, self.rng, attack_limit=ROLLOUT_ATTACKS, block_limit=ROLLOUT_BLOCKS)
        self.clock = time.perf_counter  # the budget's clock (a test may drive it by hand)
        self.plan: list[Any] | None = None  # None: no plan; []: the plan passes now
        self.planned_attack: list[str] | None = None

    def new_game(self, game: Any, seat: int) -> None:
        self.plan, self.planned_attack = None, None

    # ----- rollouts -----

    def _play_main(self, state: DuelState) -> None:
        """Play a whole main phase by the one-turn planner (one BFS, not one per action)."""
        for action in self.fast.main_line(state):
            state.apply_fast(action)
            if state.is_over():
                return
        state.apply_fast("pass")

    def _play_turn_search(self, state: DuelState) -> None:
        """Play the open phase as `duel-search` would (on this full state): a first main phase and
        the attack by the whole-turn search, blocks and damage orders by its combat minimax, a
        second main phase by its end-of-turn search."""
        search = self.turn_search
        if state.phase == "main1":
            plan = search.turn(state)
            for action in plan.main1:
                state.apply_fast(action)
                if state.is_over():
                    return
            state.apply_fast("pass")
            if state.phase == "attackers":
                state.apply_fast(plan.attack)
            return
        if state.phase == "attackers":
            state.apply_fast(search.from_attackers(state).attack)
        elif state.phase == "blockers":
            state.apply_fast(search.blocks(state))
        elif state.phase == "order":
            state.apply_fast(search.order(state))
        elif state.phase == "main2":
            search.cache.clear()
            for action in search.main2(state)[1]:
                state.apply_fast(action)
                if state.is_over():
                    return
            state.apply_fast("pass")
        else:
            seat = state.deciding_seat()
            assert seat is not None
            state.apply_fast(self.fast.decide(state, PHASE_PROMPT[state.phase], seat))

    def rollout(self, state: DuelState, me: int, turns: int = 1, steps: int = MAX_ROLLOUT_STEPS) -> float:
        """Play on until the start of the turn `turns` turns after this one (or the end of the
        game, or `steps` decisions) and score that position for `me`."""
        stop = state.turn + turns
        for _ in range(steps):
            if state.is_over() or (state.turn >= stop and state.phase == "main1"):
                break
            if self.rollout_policy == "turn":
                self._play_turn_search(state)
                continue
            if state.phase in ("main1", "main2"):
                self._play_main(state)
                continue
            seat = state.deciding_seat()
            assert seat is not None
            state.apply_fast(self.fast.decide(state, PHASE_PROMPT[state.phase], seat))
        return self.evaluate(state, me)

    def run_candidate(self, state: DuelState, cand: Candidate, me: int) -> float:
        for action in cand.actions:
            state.apply_fast(action)
            if state.is_over():
                return self.evaluate(state, me)
        state.apply_fast("pass")
        if state.phase == "attackers" and cand.attack is not None:
            state.apply_fast(cand.attack)
        return self.rollout(state, me, turns=self.horizon)

    # ----- candidates -----

    def candidates(self, state: DuelState) -> list[Candidate]:
        lines = main_lines(state)
        if state.phase == "main1":
            scored = sorted(lines, key=lambda ln: -line_value(ln, self.evaluate, self.rng))[: self.lines]
            cands = []
            for line in scored:
                after = line.state.clone()
                if after.is_over():
                    cands.append(Candidate(line.actions, None))
                    continue
                after.apply_fast("pass")
                if after.phase != "attackers":
                    cands.append(Candidate(line.actions, None))
                    continue
                ranked = ranked_attacks(after, self.evaluate, self.rng, self.attacks, RANK_ATTACKS, RANK_BLOCKS)
                cands.extend(Candidate(line.actions, [p.id for p in attack]) for _, attack in ranked)
            if self.whole_turn:
                self._add_whole_turn(state, cands)
            return cands
        me = state.active
        scored = sorted(lines, key=lambda ln: -self.evaluate(ln.state, me))[: self.lines]
        return [Candidate(line.actions, None) for line in scored]

    def _add_whole_turn(self, state: DuelState, cands: list[Candidate]) -> None:
        """Add the whole-turn search's plan (main 1 and the attack it makes for the sake of
        main 2), which the split ranking above cannot see, unless it is there already."""
        plan = TurnSearch(self.evaluate, self.rng, attack_limit=RANK_ATTACKS, block_limit=RANK_BLOCKS).turn(state)
        attack = sorted(plan.attack)
        for cand in cands:
            if freeze(cand.actions) == freeze(plan.main1) and sorted(cand.attack or []) == attack:
                return
        after = state.clone()
        for action in plan.main1:
            after.apply_fast(action)
        if not after.is_over():
            after.apply_fast("pass")
        cands.append(Candidate(plan.main1, plan.attack if after.phase == "attackers" else None))

    def attack_candidates(self, state: DuelState) -> list[Candidate]:
        return [
            Candidate([], [p.id for p in a])
            for _, a in ranked_attacks(state, self.evaluate, self.rng, self.attacks + 2, RANK_ATTACKS, RANK_BLOCKS)
        ]

    def block_candidates(self, state: DuelState) -> list[Candidate]:
        attackers = [p for p in (state.permanent(a) for a in state.attackers) if p is not None]
        scored = []
        for blocks in block_sets(state, attackers, self.rng):
            value, ordered = best_orders(state, attackers, blocks, state.active, self.evaluate)
            scored.append((value, [[b.id, aid] for aid, bs in ordered.items() for b in bs]))
        scored.sort(key=lambda t: t[0])  # the attacker's value: lowest first
        return [Candidate([], None, answer) for _, answer in scored[:TOP_BLOCKS]]

    def search(self, turn: Turn, cands: list[Candidate], mode: str) -> Candidate:
        """Spread the budget over determinizations: every live candidate is rolled out in each
        sampled world (the same worlds for all, so they are compared on the same luck).

        When the budget cannot give every candidate its `samples` worlds, the weaker half is
        dropped after 2, 4, 8 ... worlds (sequential halving), so a decision with a dozen
        candidates spends its second on the few that matter instead of a few worlds each."""
        start = self.clock()
        deadline = start + self.seconds
        alive = list(cands)
        next_cut = FIRST_CUT
        for done in range(self.samples):
            if self.clock() > deadline:
                break
            world = turn.state(self.rng)
            for cand in alive:
                if self.clock() > deadline:
                    break
                trial = world.clone()
                if mode == "attack":
                    trial.apply_fast(cand.attack or [])
                    value = self.rollout(trial, turn.seat, turns=self.horizon)
                elif mode == "block":
                    trial.apply_fast(cand.answer)
                    value = self.rollout(trial, turn.seat, turns=self.horizon)
                else:
                    value = self.run_candidate(trial, cand, turn.seat)
                cand.total += value
                cand.samples += 1
            worlds = done + 1
            if worlds == next_cut and len(alive) > 2 and alive[-1].samples == worlds:
                now = self.clock()
                per_world = (now - start) / worlds
                if now + per_world * (self.samples - worlds) > deadline:  # the budget is short
                    alive.sort(key=lambda c: -c.mean)
                    alive = alive[: max(2, (len(alive) + 1) // 2)]
                next_cut *= 2
        tried = [c for c in alive if c.samples]
        if len(tried) < 2:
            return cands[0]  # out of time before any comparison: trust the one-turn ranking
        fewest = min(c.samples for c in tried)
        # compare on equal footing: candidates that got an extra sample are not favoured
        return max(tried, key=lambda c: c.mean if c.samples >= fewest else float("-inf"))

    # ----- decisions -----

    def act(self, turn: Turn) -> Any:
        name = turn.prompt.name
        if name in ("mulligan", "scry"):
            return self.policy.answer(turn)
        only = single_answer(turn)
        if only is not None:
            if name == "main":
                self.plan = None  # a forced pass ends the phase
            return only
        if name == "main":
            return self.main(turn)
        if name == "attackers":
            return self.attackers(turn)
        if name == "blockers":
            state = turn.state(self.rng)
            cands = self.block_candidates(state)
            if len(cands) == 1:
                return cands[0].answer
            return self.search(turn, cands, mode="block").answer
        state = turn.state(self.rng)
        return self.planner.decide(state, name, turn.seat)

    def main(self, turn: Turn) -> Any:
        options = {freeze(o) for o in turn.prompt.options}  # type: ignore[attr-defined]
        if self.plan is not None:
            if not self.plan:
                self.plan = None
                return "pass"
            action = self.plan.pop(0)
            if freeze(action) in options:
                return action
            self.plan, self.planned_attack = None, None
        state = turn.state(self.rng)
        cands = self.candidates(state)
        if len(cands) == 1 and not cands[0].actions:
            best = cands[0]
        else:
            best = self.search(turn, cands, mode="main")
        self.planned_attack = best.attack
        if not best.actions or freeze(best.actions[0]) not in options:
            self.plan = None
            return "pass"
        self.plan = list(best.actions[1:])
        return best.actions[0]

    def attackers(self, turn: Turn) -> Any:
        legal = set(turn.prompt.candidates)  # type: ignore[attr-defined]
        if self.planned_attack is not None and set(self.planned_attack) <= legal:
            attack, self.planned_attack = self.planned_attack, None
            return attack
        self.planned_attack = None
        state = turn.state(self.rng)
        cands = self.attack_candidates(state)
        if len(cands) == 1:
            return cands[0].attack
        return self.search(turn, cands, mode="attack").attack


AGENTS = [
    AgentSpec(
        "duel-lookahead",
        LookaheadAgent,
        "Duel: lookahead over determinizations (own candidates, the opponent's reply and the next turn "
        "rolled out; evaluation fitted to game outcomes)",
        games=frozenset({"duel"}),
        params={
            "seconds": 1.0,
            "seed": None,
            "evaluation": "fitted",
            "samples": MAX_SAMPLES,
            "lines": TOP_LINES,
            "attacks": TOP_ATTACKS,
            "horizon": HORIZON,
            "weights": None,
            "whole_turn": 0,
            "rollout": "split",
        },
    )
]
