"""Duel search speed: how much work the search agents get done per second. Prints one JSON object.

The lookahead agent's strength at a fixed time budget is bounded by how many determinized worlds
it can roll out, and a rollout is mostly combat minimax: block sets judged by the combat simulator
and the evaluation. This measures, on positions recorded from seeded games between one-turn
search agents (the same positions every run):
- fitted evaluations per second;
- combat simulations per second (every attack of each position against no block and every single
  block);
- lookahead rollouts per second (three turns played by the one-turn planner, from the start of a
  turn), the unit the lookahead spends its budget in, and the same with `rollout=turn` (the
  whole-turn search plays them);
- whole-turn searches per second (`duel-search`'s search from the start of a first main phase:
  main 1, combat minimax, main 2) and the end-of-turn positions they score per second (nodes);
- playouts per second to the end of the game from the same turn starts, the unit Magarena's MCTS
  reports (its published 55-190 playouts a second, printed alongside): by the lookahead's
  rollout policy (the one-turn planner for both sides, narrow combat search) and by uniformly
  random answers.

    .venv/bin/python bench/duel_search_speed.py --games 6 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import time
from typing import Any

from partida.bots.duel.evaluation import fitted_eval
from partida.bots.duel.lookahead import LookaheadAgent
from partida.bots.duel.plan import attack_sets, block_sets, reference_eval, simulate_combat
from partida.bots.duel.search import SearchAgent
from partida.bots.duel.turn import TurnSearch
from partida.bots.local import play_local
from partida.games.duel import GAMES
from partida.games.duel.state import DuelState


def recorded_positions(games: int) -> list[DuelState]:
    """Every position of `games` seeded games between one-turn search agents."""
    positions: list[DuelState] = []

    def record(state: Any, seat: int, action: Any) -> None:
        if not state.is_over():
            positions.append(state.clone())

    for i in range(games):
        decks = {"deck0": "white", "deck1": "red"} if i % 2 == 0 else {"deck0": "red", "deck1": "white"}
        agents = [SearchAgent(seed=2 * i), SearchAgent(seed=2 * i + 1)]
        play_local(GAMES[0], agents, options=decks, seed=1000 + i, on_action=record)
    return positions


GAME_TURNS = 1000  # a playout runs to the end of the game (decking ends every game)
GAME_STEPS = 10_000


def rate(count: int, seconds: float) -> float:
    return round(count / seconds, 1) if seconds > 0 else float("inf")


def best_of(repeat: int, work: Any) -> tuple[int, float]:
    """The fastest of `repeat` runs of `work` (which returns how many units it did)."""
    best = float("inf")
    count = 0
    for _ in range(repeat):
        start = time.perf_counter()
        count = work()
        best = min(best, time.perf_counter() - start)
    return count, best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=6, help="games whose positions are measured (default 6)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each measurement; the fastest counts")
    args = parser.parse_args(argv)
    positions = recorded_positions(args.games)

    def evaluations() -> int:
        for state in positions:
            fitted_eval(state, 0)
            fitted_eval(state, 1)
        return 2 * len(positions)

    combats_of = []
    for state in positions:
        if state.phase != "attackers":
            continue
        for attack in attack_sets(state):
            if attack:
                combats_of.extend((state, attack, blocks) for blocks in block_sets(state, attack, random.Random(0), 30))

    def combats() -> int:
        for state, attack, blocks in combats_of:
            simulate_combat(state, attack, blocks)
        return len(combats_of)

    starts = [s for s in positions if s.phase == "main1" and not s.players[s.active].land_played][:40]

    def rollouts(policy: str = "split") -> int:
        agent = LookaheadAgent(seed=0, rollout=policy)
        for state in starts:
            agent.rollout(state.clone(), state.active, turns=agent.horizon)
        return len(starts)

    scored = [0]

    def turn_searches() -> int:
        search = TurnSearch(reference_eval, random.Random(0))
        for state in starts:
            search.turn(state)
        scored[0] = search.scored
        return len(starts)

    playout_turns = [0, 0]

    def planner_playouts() -> int:
        agent = LookaheadAgent(seed=0)
        playout_turns[0] = 0
        for state in starts:
            trial = state.clone()
            agent.rollout(trial, trial.active, turns=GAME_TURNS, steps=GAME_STEPS)
            playout_turns[0] += trial.turn - state.turn
        return len(starts)

    def random_playouts() -> int:
        rng = random.Random(0)
        playout_turns[1] = 0
        for state in starts:
            trial = state.clone()
            while not trial.is_over():
                trial.apply_fast(trial.prompt().random_answer(rng))
            playout_turns[1] += trial.turn - state.turn
        return len(starts)

    n_eval, s_eval = best_of(args.repeat, evaluations)
    n_combat, s_combat = best_of(args.repeat, combats)
    n_roll, s_roll = best_of(args.repeat, rollouts)
    n_troll, s_troll = best_of(args.repeat, lambda: rollouts("turn"))
    n_turn, s_turn = best_of(args.repeat, turn_searches)
    n_play, s_play = best_of(args.repeat, planner_playouts)
    n_rand, s_rand = best_of(args.repeat, random_playouts)
    print(
        json.dumps(
            {
                "benchmark": "duel_search_speed",
                "python": platform.python_version(),
                "positions": len(positions),
                "evaluations_per_second": rate(n_eval, s_eval),
                "combats_per_second": rate(n_combat, s_combat),
                "combats_measured": n_combat,
                "rollouts_per_second": rate(n_roll, s_roll),
                "rollouts_measured": n_roll,
                "turn_rollouts_per_second": rate(n_troll, s_troll),
                "turn_searches_per_second": rate(n_turn, s_turn),
                "turn_search_nodes_per_second": rate(scored[0], s_turn),
                "turn_searches_measured": n_turn,
                "playouts_per_second": rate(n_play, s_play),
                "playout_turns_mean": round(playout_turns[0] / max(1, n_play), 1),
                "random_playouts_per_second": rate(n_rand, s_rand),
                "random_playout_turns_mean": round(playout_turns[1] / max(1, n_rand), 1),
                "playouts_measured": n_play,
                "magarena_playouts_per_second": [55, 190],
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
