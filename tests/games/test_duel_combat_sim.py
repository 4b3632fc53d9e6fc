"""The search agents' fast combat simulator predicts exactly what the rules engine does.

The searches judge hundreds of thousands of combats a game with `simulate_combat` instead of
copying the state and running the engine, so the two must agree: on every combat of many random
games (random attacks, blocks and damage orders, first and double strike, gang blocks), the
simulator's damage to the defender and its list of dead creatures are compared with the engine's."""

from __future__ import annotations

import random

from partida.bots.duel.plan import simulate_combat
from partida.games.duel import GAMES
from partida.games.duel.state import DuelState

DUEL = GAMES[0]


def predicted(state: DuelState) -> tuple[int, set[str]]:
    """The simulator's forecast for the combat about to be dealt (blocks and orders all set)."""
    attackers = [state.permanent(a) for a in state.attackers]
    blocks = {a: [state.permanent(b) for b in state.orders[a]] for a in state.attackers if a in state.orders}
    return simulate_combat(state, attackers, blocks)  # type: ignore[arg-type]


def test_the_combat_simulator_agrees_with_the_engine_on_random_combats() -> None:
    rng = random.Random(7)
    combats = gang_blocks = first_strikes = 0
    for game in range(80):
        decks = ("white", "red") if game % 2 else ("red", "white")
        state = DUEL.create({"deck0": decks[0], "deck1": decks[1]}, seed=game)
        while not state.is_over():
            decision = state.pending()[0]
            answer = decision.prompt.random_answer(rng)
            deals_damage_now = state.phase in ("attackers", "blockers", "order")
            if not deals_damage_now:
                state.apply(decision.seat, answer)
                continue
            trial = state.clone()
            trial.apply(decision.seat, answer)
            if trial.phase in ("blockers", "order") or not trial.attackers:
                state.apply(decision.seat, answer)  # combat goes on, or there was none
                continue
            # the answer deals the damage: forecast it from the state with this last choice made
            before = state.clone()
            if state.phase == "attackers":
                before.attackers, before.blocks = list(trial.attackers), []
                before.orders = {}
            elif state.phase == "blockers":
                before.attackers, before.blocks = list(trial.attackers), [list(p) for p in answer]
                before.orders = {a: before.blockers_of(a) for a in before.attackers if before.blockers_of(a)}
            else:
                before.orders = dict(state.orders)
                before.orders[state.order_queue[0]] = list(answer)
            to_player, dead = predicted(before)
            defender = 1 - state.active
            life = state.players[defender].life
            ids = {p.id for p in state.battlefield}
            state.apply(decision.seat, answer)
            combats += 1
            gang_blocks += any(len(v) >= 2 for v in before.orders.values())
            first_strikes += any(
                p.has("first strike") or p.has("double strike")
                for p in map(before.permanent, [*before.attackers, *(b for b, _ in before.blocks)])
                if p is not None
            )
            if state.is_over():  # a player dead after first strike skips the regular step
                assert state.players[defender].life <= 0 and life - to_player <= 0
            else:
                assert life - state.players[defender].life == to_player
                assert ids - {p.id for p in state.battlefield} == dead
    assert combats > 500 and gang_blocks > 20 and first_strikes > 50
