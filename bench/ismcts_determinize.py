"""What sampling deals consistent with the table buys ISMCTS: the current agent (voids and known
cards kept, `Game.determinize`) against the same agent sampling with counts only (the view's
`voids` and `known` removed before it determinizes), in four-seat RECYCLE games, two of each.
Games come in pairs with the same seed and the two agents' seats swapped, so deals even out; a
pair scores the share of first places the consistent agents took over its two games (ties split),
0.5 when neither is better. One JSON line per game, then a summary line:

    {"game": ..., "pairs": ..., "iterations": ..., "share": ..., "ci95": [low, high], "seconds": ...}

    python bench/ismcts_determinize.py --game agram --pairs 40 --iterations 60
    python bench/ismcts_determinize.py --game hearts --option target=1 --pairs 10 --iterations 30
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from typing import Any

from partida.bots.base import Turn
from partida.bots.ismcts import IsmctsAgent
from partida.bots.local import play_local
from partida.games.base import Action, BadOptions, View
from partida.games.registry import UnknownGame, default_registry


class CountsOnlyIsmcts(IsmctsAgent):
    """ISMCTS that does not know what the table has shown: it samples with counts alone."""

    def act(self, turn: Turn) -> Action:
        view: View = {key: value for key, value in turn.view.items() if key != "known"}
        view["locations"] = [{k: v for k, v in loc.items() if k != "voids"} for loc in view["locations"]]
        return super().act(Turn(turn.game, turn.seat, turn.prompt, view))


def options_from(pairs: list[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        options[name] = int(value) if value.lstrip("-").isdigit() else value
    return options


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="agram", help="a four-seat RECYCLE game (agram, hearts)")
    parser.add_argument("--pairs", type=int, default=40, help="pairs of games (seats swapped)")
    parser.add_argument("--iterations", type=int, default=60, help="ISMCTS iterations per decision")
    parser.add_argument("--option", action="append", default=[], help="a game option NAME=VALUE")
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    args = parser.parse_args()
    try:
        game = default_registry().get(args.game)
        options = options_from(args.option)
        game.create(options, seed=0, seats=4)
    except (UnknownGame, BadOptions) as exc:
        parser.error(str(exc))
    shares: list[float] = []
    started = time.perf_counter()
    for pair in range(args.pairs):
        seed = args.seed + pair
        pair_share = 0.0
        for swapped in (False, True):
            consistent = [1, 3] if swapped else [0, 2]
            agents = [
                IsmctsAgent(iterations=args.iterations, seed=seed * 4 + s)
                if s in consistent
                else CountsOnlyIsmcts(iterations=args.iterations, seed=seed * 4 + s)
                for s in range(4)
            ]
            winners = play_local(game, agents, options, seed=seed).state.result().winners
            share = sum(1 for w in winners if w in consistent) / len(winners)
            pair_share += share / 2
            print(json.dumps({"seed": seed, "consistent_seats": consistent, "winners": winners}), flush=True)
        shares.append(pair_share)
    mean = statistics.fmean(shares)
    half = 1.96 * statistics.stdev(shares) / math.sqrt(len(shares)) if len(shares) > 1 else float("nan")
    print(
        json.dumps(
            {
                "game": args.game,
                "options": options,
                "pairs": len(shares),
                "iterations": args.iterations,
                "share": round(mean, 3),
                "ci95": [round(mean - half, 3), round(mean + half, 3)],
                "seconds": round(time.perf_counter() - started, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
