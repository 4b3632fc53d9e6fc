"""Planning machinery shared by the Duel search agents: evaluation functions, a fast combat
simulator, the main-phase breadth-first search and the combat minimax with pruning.

Everything works on a full `DuelState` (a determinization), never on the real game."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from partida.games.duel.state import DuelState, Permanent

Evaluator = Callable[[DuelState, int], float]
WIN = 1000.0
MAX_ATTACK_SETS = 48
MAX_BLOCK_SETS = 160
MAX_MAIN_NODES = 400
MAX_ORDER_PERMUTED = 3


def terminal_value(state: DuelState, me: int) -> float | None:
    if not state.is_over():
        return None
    winner = state.winner()
    return 0.0 if winner is None else (WIN if winner == me else -WIN)


def reference_eval(state: DuelState, me: int) -> float:
    """The spec's R(s): (life diff)/5 + power diff + toughness diff/2 + 1.1 lands + hand size.
    A finished game scores +-WIN (the spec leaves it implicit; no sane search ignores a win)."""
    done = terminal_value(state, me)
    if done is not None:
        return done
    opp = 1 - me
    value = (state.players[me].life - state.players[opp].life) / 5
    for perm in state.battlefield:
        if perm.card.is_creature:
            sign = 1 if perm.owner == me else -1
            value += sign * (perm.power + perm.toughness / 2)
        elif perm.owner == me:
            value += 1.1
    return value + len(state.players[me].hand)


def creature_value(perm: Permanent) -> float:
    value = perm.power + perm.toughness / 2 + 0.5
    if perm.has("flying"):
        value += 0.5 * perm.power + 0.3
    if perm.has("double strike"):
        value += 0.8 * perm.power
    elif perm.has("first strike"):
        value += 0.3 * perm.power
    if perm.has("vigilance"):
        value += 0.2 * perm.power
    if perm.has("reach"):
        value += 0.3
    return value


def life_value(life: int) -> float:
    """Life is worth more when it runs low: the last points decide the game."""
    return 0.3 * life + 0.5 * max(0, 8 - life) * -1 + (-2.0 if life <= 3 else 0.0)


def strong_eval(state: DuelState, me: int) -> float:
    """The stronger agent's evaluation: creature quality with keywords, nonlinear life, lands with
    diminishing returns, cards in hand by use, and the threat of the opponent's board."""
    done = terminal_value(state, me)
    if done is not None:
        return done
    value = 0.0
    lands = [0, 0]
    power = [0, 0]
    for perm in state.battlefield:
        if perm.card.is_creature:
            sign = 1 if perm.owner == me else -1
            value += sign * creature_value(perm)
            power[perm.owner] += perm.power
        else:
            lands[perm.owner] += 1
    for seat in (0, 1):
        sign = 1 if seat == me else -1
        p = state.players[seat]
        value += sign * life_value(p.life)
        value += sign * (1.1 * min(lands[seat], 6) + 0.2 * max(0, lands[seat] - 6))
        hand_lands = sum(1 for _, c in p.hand if c.is_land)
        value += sign * ((len(p.hand) - hand_lands) * 1.0 + hand_lands * (0.5 if lands[seat] < 6 else 0.1))
        if power[1 - seat] >= p.life:
            value -= sign * 3.0  # within one swing of dying
    return value


# ----- main phase -----


def state_key(state: DuelState) -> tuple[Any, ...]:
    return (
        state.phase,
        tuple(sorted(c.name for _, c in state.players[state.active].hand)),
        tuple(sorted((p.card.name, p.owner, p.tapped, p.damage, p.counters, p.sick) for p in state.battlefield)),
        state.players[0].life,
        state.players[1].life,
        state.players[state.active].land_played,
    )


@dataclass
class Line:
    """A sequence of main-phase actions and the state it reaches (before the final pass)."""

    actions: list[Any]
    state: DuelState


def main_lines(state: DuelState, limit: int = MAX_MAIN_NODES) -> list[Line]:
    """Every distinct main-phase position reachable before passing (breadth first, positions
    deduplicated, so the order of independent plays does not multiply the work)."""
    start = Line([], state)
    seen = {state_key(state)}
    lines = [start]
    frontier = [start]
    while frontier and len(lines) < limit:
        nxt = []
        for line in frontier:
            for action in line.state.main_actions():
                if action == "pass":
                    continue
                child = line.state.clone()
                child.apply_fast(action)
                if child.phase not in ("main1", "main2"):
                    lines.append(Line([*line.actions, action], child))  # the game ended
                    continue
                key = state_key(child)
                if key in seen:
                    continue
                seen.add(key)
                new = Line([*line.actions, action], child)
                lines.append(new)
                nxt.append(new)
        frontier = nxt
    return lines


# ----- combat -----


def simulate_combat(
    state: DuelState, attackers: list[Permanent], blocks: dict[str, list[Permanent]]
) -> tuple[int, set[str]]:
    """Damage to the defending player and the ids of the creatures that die, for attackers with
    their (ordered) blockers."""
    to_player, hp = combat_hit_points(attackers, blocks)
    return to_player, {pid for pid, h in hp.items() if h <= 0}


def combat_hit_points(attackers: list[Permanent], blocks: dict[str, list[Permanent]]) -> tuple[int, dict[str, int]]:
    """Damage to the defending player and each fighter's toughness left after the combat (0 or
    less: it dies). The same rules as the engine, without copying the state (and read from the
    cards' fields directly: the searches run this hundreds of thousands of times)."""
    hp: dict[str, int] = {}
    power: dict[str, int] = {}
    early: set[str] = set()  # first or double strike: deals damage in the first step
    double: set[str] = set()
    for perm in itertools.chain(attackers, *blocks.values()):
        card = perm.card
        pid = perm.id
        hp[pid] = card.toughness + perm.counters - perm.damage
        power[pid] = card.power + perm.counters
        keywords = card.keywords
        if "double strike" in keywords:
            early.add(pid)
            double.add(pid)
        elif "first strike" in keywords:
            early.add(pid)
    # each step: who deals damage in it (None: everyone, when nobody strikes first)
    steps: tuple[set[str] | None, ...] = (early, (hp.keys() - early) | double) if early else (None,)
    to_player = 0
    for dealers in steps:
        marks: list[tuple[str, int]] = []
        for attacker in attackers:
            aid = attacker.id
            if hp[aid] <= 0:
                continue
            blockers = blocks.get(aid)
            if dealers is None or aid in dealers:
                if not blockers:
                    to_player += power[aid]
                else:
                    alive = [b for b in blockers if hp[b.id] > 0]
                    remaining = power[aid]
                    last = len(alive) - 1
                    for i, b in enumerate(alive):
                        if remaining <= 0:
                            break
                        amount = remaining if i == last else min(remaining, max(0, hp[b.id]))
                        marks.append((b.id, amount))
                        remaining -= amount
            for b in blockers or ():
                bid = b.id
                if hp[bid] > 0 and (dealers is None or bid in dealers):
                    marks.append((aid, power[bid]))
        for pid, amount in marks:
            hp[pid] -= amount
    return to_player, hp


def combat_value(
    state: DuelState,
    attackers: list[Permanent],
    blocks: dict[str, list[Permanent]],
    me: int,
    evaluate: Evaluator,
) -> float:
    """Evaluate the position after this combat from `me`'s side. The evaluations look only at
    life, the creatures in play, lands and hand sizes, so the state is changed in place for the
    evaluation and restored (no copy: this runs hundreds of thousands of times per game)."""
    to_player, dead = simulate_combat(state, attackers, blocks)
    defender = state.players[1 - state.active]
    saved = (state.battlefield, defender.life, defender.lost, state.phase)
    try:
        if dead:
            state.battlefield = [p for p in state.battlefield if p.id not in dead]
        defender.life -= to_player
        if defender.life <= 0:
            defender.lost = True
            state.phase = "over"
        return evaluate(state, me)
    finally:
        state.battlefield, defender.life, defender.lost, state.phase = saved


def best_orders(
    state: DuelState,
    attackers: list[Permanent],
    blocks: dict[str, list[Permanent]],
    me: int,
    evaluate: Evaluator,
) -> tuple[float, dict[str, list[Permanent]]]:
    """The attacking player orders each multiply-blocked attacker's blockers to its advantage
    (coordinate-wise, attacker by attacker)."""
    attacker_seat = state.active
    sign = 1 if me == attacker_seat else -1
    current = dict(blocks)
    best = combat_value(state, attackers, current, me, evaluate)
    for aid, bs in blocks.items():
        if len(bs) < 2:
            continue
        if len(bs) <= MAX_ORDER_PERMUTED:
            orders: Any = itertools.permutations(bs)
        else:  # big gang blocks: weakest first (kill the most) or strongest first
            weakest = sorted(bs, key=lambda p: p.toughness - p.damage)
            orders = [weakest, weakest[::-1]]
        for perm in orders:
            trial = dict(current)
            trial[aid] = list(perm)
            v = combat_value(state, attackers, trial, me, evaluate)
            if sign * v > sign * best:
                best, current = v, trial
    return best, current


def block_sets(
    state: DuelState, attackers: list[Permanent], rng: random.Random, limit: int = MAX_BLOCK_SETS
) -> list[dict[str, list[Permanent]]]:
    """Block assignments for the defender: all of them when few, else a sample that always
    includes no block and each blocker alone on each attacker it can block."""
    defenders = [p for p in state.creatures(1 - state.active) if not p.tapped]
    options = [[None] + [a for a in attackers if state.can_block(d, a)] for d in defenders]
    total = 1
    for o in options:
        total *= len(o)
    if total <= limit:
        combos = list(itertools.product(*options))
    else:
        combos = [tuple([None] * len(defenders))]
        for i, o in enumerate(options):
            for a in o[1:]:
                combo: list[Any] = [None] * len(defenders)
                combo[i] = a
                combos.append(tuple(combo))
        while len(combos) < limit:
            combos.append(tuple(rng.choice(o) for o in options))
    result = []
    for combo in combos:
        blocks: dict[str, list[Permanent]] = {}
        for d, a in zip(defenders, combo, strict=True):
            if a is not None:
                blocks.setdefault(a.id, []).append(d)
        result.append(blocks)
    return result


def attack_sets(state: DuelState, limit: int = MAX_ATTACK_SETS) -> list[list[Permanent]]:
    """Attack subsets: all when few, else none, all, singles, all-but-one and the strongest
    creatures in growing groups (sensible pruning of a 2^N space)."""
    cands = [state.permanent(pid) for pid in state.attack_candidates()]
    cands = [c for c in cands if c is not None]
    if 2 ** len(cands) <= limit:
        return [
            [c for c, bit in zip(cands, bits, strict=True) if bit]
            for bits in itertools.product((0, 1), repeat=len(cands))
        ]
    ordered = sorted(cands, key=lambda p: -p.power)
    sets = [[], list(cands)]
    sets += [[c] for c in cands]
    sets += [[c for c in cands if c is not skip] for skip in cands]
    sets += [ordered[:k] for k in range(2, len(ordered))]
    evasive = [c for c in cands if c.has("flying")]
    if evasive:
        sets.append(evasive)
    unique: dict[tuple[str, ...], list[Permanent]] = {}
    for s in sets:
        unique.setdefault(tuple(sorted(p.id for p in s)), s)
    return list(unique.values())[:limit]


def defender_value(
    state: DuelState,
    attackers: list[Permanent],
    me: int,
    evaluate: Evaluator,
    rng: random.Random,
    bound: float | None,
    block_limit: int = MAX_BLOCK_SETS,
) -> tuple[float, dict[str, list[Permanent]]]:
    """The defender's best reply (minimizing the attacker's value); stops early below `bound`."""
    attacker_seat = state.active
    worst = float("inf")
    chosen: dict[str, list[Permanent]] = {}
    for blocks in block_sets(state, attackers, rng, block_limit):
        v, ordered = best_orders(state, attackers, blocks, attacker_seat, evaluate)
        if v < worst:
            worst, chosen = v, ordered
            if bound is not None and worst <= bound:
                break
    value = worst if me == attacker_seat else -worst
    return value, chosen


def best_attack(
    state: DuelState,
    evaluate: Evaluator,
    rng: random.Random,
    attack_limit: int = MAX_ATTACK_SETS,
    block_limit: int = MAX_BLOCK_SETS,
) -> tuple[float, list[Permanent]]:
    """Minimax over attack subsets (max) and the defender's blocks (min), with a cut-off."""
    me = state.active
    best_value = evaluate(state, me) if state.phase == "attackers" else combat_value(state, [], {}, me, evaluate)
    best: list[Permanent] = []
    for attack in attack_sets(state, attack_limit):
        if not attack:
            continue
        v, _ = defender_value(state, attack, me, evaluate, rng, best_value, block_limit)
        if v > best_value:
            best_value, best = v, attack
    return best_value, best


def ranked_attacks(
    state: DuelState,
    evaluate: Evaluator,
    rng: random.Random,
    k: int,
    attack_limit: int = MAX_ATTACK_SETS,
    block_limit: int = MAX_BLOCK_SETS,
) -> list[tuple[float, list[Permanent]]]:
    """The k best attack subsets by minimax value (no cut-off, so the values compare)."""
    me = state.active
    scored = []
    for attack in attack_sets(state, attack_limit):
        if not attack:
            scored.append((combat_value(state, [], {}, me, evaluate), attack))
        else:
            scored.append((defender_value(state, attack, me, evaluate, rng, None, block_limit)[0], attack))
    scored.sort(key=lambda t: -t[0])
    return scored[:k]


def line_value(
    line: Line,
    evaluate: Evaluator,
    rng: random.Random,
    attack_limit: int = MAX_ATTACK_SETS,
    block_limit: int = MAX_BLOCK_SETS,
) -> float:
    """A first-main-phase line scored after the combat it leads to (the minimax value)."""
    state = line.state
    me = state.active
    if state.is_over():
        return evaluate(state, me)
    after = state.clone()
    after.apply_fast("pass")
    if after.phase == "attackers":
        return best_attack(after, evaluate, rng, attack_limit, block_limit)[0]
    return evaluate(after, me)


def discard_choice(state: DuelState) -> list[str]:
    """Discard the cards least likely to matter: extra lands when there are plenty, else the most
    expensive spells."""
    seat = state.active
    n = state.discard_count()
    lands = sum(1 for p in state.battlefield if p.owner == seat and p.card.is_land)

    def keep_score(item: tuple[str, Any]) -> float:
        card = item[1]
        if card.is_land:
            return 5.0 if lands < 6 else 0.0
        return 10.0 - card.mana_value

    ordered = sorted(state.players[seat].hand, key=keep_score)
    return [cid for cid, _ in ordered[:n]]
