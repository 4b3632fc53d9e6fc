"""The study's whole-turn search (its section 4.2.6): the first main phase breadth first, then
combat as minimax (the active player's attacks max, the defender's blocks min, the active player's
damage orders max), then the second main phase breadth first, every line scored at the end of the
turn. The scored state is the real position after main 2, with the damage combat marked on the
survivors, so a line may plan to finish off in main 2 a creature that combat only damaged (attack
Nest Robber into a Siege Mastodon block, then Volcanic Hammer the Mastodon): a search that scores
right after combat cannot see that, since R(s) ignores marked damage.

The search is exact within four caps, each where its space explodes (module constants, shared with
the split planner of `plan`): a main phase stops after `MAX_MAIN_NODES` distinct positions
(breadth first, so the short lines are all there); at most `MAX_ATTACK_SETS` attack subsets (all of
them up to five candidates); at most `MAX_BLOCK_SETS` block assignments (all when fewer, else no
block, every single block and a seeded sample); the blockers of one attacker are permuted up to
`MAX_ORDER_PERMUTED` of them (more: weakest first or strongest first). Alpha-beta cut-offs (a
defender stops at the first block that holds the attacker to the best line found so far) and a
cache of second-main-phase values keyed by position keep it exact and affordable."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from typing import Any

from partida.bots.duel.plan import (
    MAX_ATTACK_SETS,
    MAX_BLOCK_SETS,
    MAX_MAIN_NODES,
    MAX_ORDER_PERMUTED,
    Evaluator,
    attack_sets,
    block_sets,
    combat_hit_points,
    main_lines,
    state_key,
)
from partida.games.duel.state import DuelState, Permanent

Blocks = dict[str, list[Permanent]]


@dataclass
class TurnPlan:
    """The best line of a turn: its value for the active player at the end of the turn, the
    actions of the first main phase, the attack, the blocks the search expects and the second main
    phase it plans after them."""

    value: float
    main1: list[Any] = field(default_factory=list)
    attack: list[str] = field(default_factory=list)
    blocks: list[list[str]] = field(default_factory=list)  # [blocker, attacker]
    main2: list[Any] = field(default_factory=list)


def after_combat(state: DuelState, attackers: list[Permanent], blocks: Blocks) -> DuelState:
    """The position in the second main phase after this combat: attackers tapped (unless
    vigilant), damage marked on the survivors, the dead in their graveyards, the defender's life
    paid (the game over if it is gone)."""
    to_player, hp = combat_hit_points(attackers, blocks)
    after = state.clone()
    attacking = {p.id for p in attackers}
    for perm in list(after.battlefield):
        if perm.id in attacking and not perm.has("vigilance"):
            perm.tapped = True
        left = hp.get(perm.id)
        if left is None:
            continue
        if left <= 0:
            after._to_graveyard(perm)
        else:
            perm.damage = perm.toughness - left
    after.attackers, after.blocks, after.orders, after.order_queue = [], [], {}, []
    defender = after.players[1 - after.active]
    defender.life -= to_player
    if defender.life <= 0:
        defender.lost = True
        after.phase = "over"
    else:
        after.phase = "main2"
    return after


def order_options(blockers: list[Permanent]) -> list[list[Permanent]]:
    if len(blockers) < 2:
        return [blockers]
    if len(blockers) <= MAX_ORDER_PERMUTED:
        return [list(p) for p in itertools.permutations(blockers)]
    weakest = sorted(blockers, key=lambda p: p.toughness - p.damage)
    return [weakest, weakest[::-1]]


class TurnSearch:
    """Whole-turn decisions for the active player on a full state (a determinization). Values are
    always the active player's evaluation at the end of the turn; the defender minimizes them."""

    def __init__(
        self,
        evaluate: Evaluator,
        rng: random.Random,
        main_limit: int = MAX_MAIN_NODES,
        attack_limit: int = MAX_ATTACK_SETS,
        block_limit: int = MAX_BLOCK_SETS,
    ) -> None:
        self.evaluate = evaluate
        self.rng = rng
        self.main_limit = main_limit
        self.attack_limit = attack_limit
        self.block_limit = block_limit
        self.cache: dict[tuple[Any, ...], tuple[float, list[Any]]] = {}
        self.scored = 0  # end-of-turn positions evaluated (nodes, for the benchmark)

    # ----- second main phase -----

    def main2(self, state: DuelState) -> tuple[float, list[Any]]:
        """The best second main phase from `state` (in main 2, or over) and its value."""
        me = state.active
        if state.is_over():
            self.scored += 1
            return self.evaluate(state, me), []
        key = state_key(state)
        known = self.cache.get(key)
        if known is not None:
            return known
        best_value, best = float("-inf"), []
        for line in main_lines(state, self.main_limit):
            self.scored += 1
            value = self.evaluate(line.state, me)
            if value > best_value + 1e-9:
                best_value, best = value, line.actions
        self.cache[key] = (best_value, best)
        return best_value, best

    # ----- combat -----

    def ordered(self, state: DuelState, attackers: list[Permanent], blocks: Blocks) -> tuple[float, Blocks, list[Any]]:
        """The attacker's best damage orders for these blocks (every combination of each
        multiply-blocked attacker's orders), with the second main phase each leads to."""
        ids = list(blocks)
        best_value, best_blocks, best_main2 = float("-inf"), blocks, []
        for combo in itertools.product(*(order_options(blocks[a]) for a in ids)):
            trial = dict(zip(ids, combo, strict=True))
            value, main2 = self.main2(after_combat(state, attackers, trial))
            if value > best_value:
                best_value, best_blocks, best_main2 = value, trial, main2
        return best_value, best_blocks, best_main2

    def defended(
        self, state: DuelState, attackers: list[Permanent], bound: float | None
    ) -> tuple[float, Blocks, list[Any]]:
        """The defender's best blocks against this attack (minimizing the attacker's end-of-turn
        value); stops at the first one at or below `bound` (the attacker has better already)."""
        worst, chosen, main2 = float("inf"), {}, []
        for blocks in block_sets(state, attackers, self.rng, self.block_limit):
            value, ordered, line = self.ordered(state, attackers, blocks)
            if value < worst:
                worst, chosen, main2 = value, ordered, line
                if bound is not None and worst <= bound:
                    break
        return worst, chosen, main2

    def combat(self, state: DuelState, bound: float = float("-inf")) -> TurnPlan:
        """The best attack from the declare-attackers step (attacks max, blocks min, orders max,
        then main 2). Lines not better than `bound` may be cut short (their value is then only an
        upper bound, and below `bound`)."""
        quiet = state.clone()
        quiet.phase = "main2"
        value, main2 = self.main2(quiet)
        best = TurnPlan(value, main2=main2)
        for attack in attack_sets(state, self.attack_limit):
            if not attack:
                continue
            value, blocks, main2 = self.defended(state, attack, max(best.value, bound))
            if value > best.value:
                pairs = [[b.id, aid] for aid, bs in blocks.items() for b in bs]
                best = TurnPlan(value, attack=[p.id for p in attack], blocks=pairs, main2=main2)
        return best

    def after_main1(self, state: DuelState, bound: float) -> TurnPlan:
        """The rest of the turn once the first main phase passes from `state`."""
        after = state.clone()
        after.apply_fast("pass")
        if after.phase == "attackers":
            return self.combat(after, bound)
        value, main2 = self.main2(after)
        return TurnPlan(value, main2=main2)

    # ----- the whole turn -----

    def turn(self, state: DuelState) -> TurnPlan:
        """The best whole turn from a first main phase."""
        self.cache.clear()
        me = state.active
        best = TurnPlan(float("-inf"))
        for line in main_lines(state, self.main_limit):
            if line.state.is_over():
                self.scored += 1
                plan = TurnPlan(self.evaluate(line.state, me))
                if line.state.winner() == me:  # win now rather than in main 2, as equal as it scores
                    plan.main1 = line.actions
                    return plan
            else:
                plan = self.after_main1(line.state, best.value)
            if plan.value > best.value + 1e-9:
                plan.main1 = line.actions
                best = plan
        return best

    def from_attackers(self, state: DuelState) -> TurnPlan:
        self.cache.clear()
        return self.combat(state)

    def blocks(self, state: DuelState) -> list[list[str]]:
        """The defender's blocks by the same minimax (over the attacker's damage orders and second
        main phase in this determinization)."""
        self.cache.clear()
        attackers = [p for p in (state.permanent(a) for a in state.attackers) if p is not None]
        _, blocks, _ = self.defended(state, attackers, None)
        return [[b.id, aid] for aid, bs in blocks.items() for b in bs]

    def order(self, state: DuelState) -> list[str]:
        """The order of the first attacker waiting for one (the others' orders are chosen with it
        and asked for next)."""
        self.cache.clear()
        attackers = [p for p in (state.permanent(a) for a in state.attackers) if p is not None]
        blocks: Blocks = {}
        for a in state.attackers:
            if a in state.orders:
                blocks[a] = [p for p in (state.permanent(b) for b in state.orders[a]) if p is not None]
            elif state.blockers_of(a):
                blocks[a] = [p for p in (state.permanent(b) for b in state.blockers_of(a)) if p is not None]
        # the orders already given are fixed: keep them out of the enumeration
        fixed = {a: bs for a, bs in blocks.items() if a in state.orders}
        free = {a: bs for a, bs in blocks.items() if a not in state.orders}
        best_value, best = float("-inf"), free
        for combo in itertools.product(*(order_options(free[a]) for a in free)):
            trial = dict(zip(free, combo, strict=True))
            value, _ = self.main2(after_combat(state, attackers, {**fixed, **trial}))
            if value > best_value:
                best_value, best = value, trial
        return [p.id for p in best[state.order_queue[0]]]
