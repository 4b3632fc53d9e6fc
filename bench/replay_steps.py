"""What `game` with `steps: true` costs: for random games of each built-in kind, the size of the
steps (MessagePack and JSON, as a client receives them) and the time the server spends re-running
the game to build them. One JSON line per game:

    {"game": ..., "moves": ..., "msgpack_bytes": ..., "json_bytes": ..., "bytes_per_step": ..., "build_ms": ...}

    python bench/replay_steps.py --games 5
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

import msgpack

from partida.games.registry import default_registry
from partida.room.record import steps as replay_steps

GAMES = {"tictactoe": 2, "othello": 2, "duel": 2, "agram": 4, "hearts": 4}


def random_game(name: str, seats: int, seed: int) -> list[tuple[int, object]]:
    game = default_registry().get(name)
    rng = random.Random(seed)
    state = game.create({}, seed=seed, seats=seats)
    actions: list[tuple[int, object]] = []
    while not state.is_over():
        decision = state.pending()[0]
        action = decision.prompt.random_answer(rng)
        state.apply(decision.seat, action)
        actions.append((decision.seat, action))
    return actions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=5, help="random games of each kind (medians are printed)")
    args = parser.parse_args()
    registry = default_registry()
    for name, seats in GAMES.items():
        game = registry.get(name)
        rows = []
        for seed in range(1, args.games + 1):
            actions = random_game(name, seats, seed)
            start = time.perf_counter()
            steps = replay_steps(game, {}, seed, seats, actions)
            elapsed = time.perf_counter() - start
            packed = len(msgpack.packb(steps))
            rows.append((len(actions), packed, len(json.dumps(steps)), elapsed))
        moves, packed, as_json, elapsed = (statistics.median(column) for column in zip(*rows, strict=True))
        print(
            json.dumps(
                {
                    "game": name,
                    "moves": moves,
                    "msgpack_bytes": int(packed),
                    "json_bytes": int(as_json),
                    "bytes_per_step": int(packed / (moves + 1)),
                    "build_ms": round(elapsed * 1000, 2),
                }
            )
        )


if __name__ == "__main__":
    main()
