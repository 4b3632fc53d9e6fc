"""Lab simulation throughput: matches per second with random agents, on one core and on all cores.

Usage: python bench/lab_throughput.py [-n N] [--seed S]; prints one JSON object.
Measured: DicePoints 50 rounds d6 and Agram, with workers=1 and workers=os.cpu_count(), through
the same `simulate` the `partida lab run` command uses (play, per-round scores and metrics; no
database writes).
"""

from __future__ import annotations

import argparse
import json
import os
import platform

from partida.lab.simulate import RunSpec, simulate

CASES = [("dicepoints", {"rounds": 50, "ndice": 1, "sides": 6}, 1.0), ("agram", {}, 4.0)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", type=int, default=1000, help="matches per measure (Agram plays 4x as many)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    results = []
    for game, options, scale in CASES:
        n = int(args.n * scale)
        for workers in sorted({1, cores}):
            spec = RunSpec(game, options, ["random"] * 4, 4, args.seed, n)
            records, seconds = simulate(spec, workers)
            assert len(records) == n
            results.append(
                {
                    "game": game,
                    "options": options,
                    "agents": "random",
                    "workers": workers,
                    "matches": n,
                    "seconds": round(seconds, 3),
                    "matches_per_second": round(n / seconds, 1),
                }
            )
    print(json.dumps({"cpu_count": cores, "python": platform.python_version(), "results": results}, indent=1))


if __name__ == "__main__":
    main()
