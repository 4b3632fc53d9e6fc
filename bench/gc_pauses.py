"""What the cyclic garbage collector costs a serving `partida serve` under the peers' load: its
collections per generation, their total and longest time, and the server's moves per second.

    python bench/gc_pauses.py --peers PEERS --m 500 --moves 20000 --rounds 2 \\
        --young 700 --young 0

Each `--young N` is one setting to run, in turn, every round: N is the youngest generation's
threshold (net new container objects between its collections) set after the server's own tuning,
0 keeps the server's own. The server runs with this checkout's Python and the load generator of
`bench/cpu_per_move.py`; the collector is timed by `gc.callbacks` from the moment the server has
started serving (its start-up's collections are not counted). One JSON line per run.
"""

from __future__ import annotations

import argparse
import json
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

from cpu_per_move import one_run  # type: ignore[import-not-found]  # beside this file

SERVER = """
import atexit, gc, json, sys, time
import partida.cli.serve as serve

young = int(sys.argv.pop(1))
report = sys.argv.pop(1)
stats = {"collections": [0, 0, 0], "ms": [0.0, 0.0, 0.0], "longest_ms": 0.0}
began = [0.0]
counting = [False]

def timed(phase, info):
    if not counting[0]:
        return
    if phase == "start":
        began[0] = time.perf_counter()
        return
    spent = 1000 * (time.perf_counter() - began[0])
    generation = info["generation"]
    stats["collections"][generation] += 1
    stats["ms"][generation] += spent
    stats["longest_ms"] = max(stats["longest_ms"], spent)

tune = serve._tune_collector

def tune_then_count():
    tune()
    if young:
        _, middle, full = gc.get_threshold()
        gc.set_threshold(young, middle, full)
    counting[0] = True

serve._tune_collector = tune_then_count
gc.callbacks.append(timed)

def write():
    stats["ms"] = [round(ms, 1) for ms in stats["ms"]]
    stats["longest_ms"] = round(stats["longest_ms"], 1)
    stats["thresholds"] = list(gc.get_threshold())
    with open(report, "w") as out:
        json.dump(stats, out)

atexit.register(write)
from partida.cli import main
sys.exit(main())
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peers", type=Path, required=True, help="the peers directory (with partida-load/)")
    parser.add_argument("--m", type=int, default=500, help="concurrent matches (default: %(default)s)")
    parser.add_argument("--moves", type=int, default=20000, help="moves per run (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each setting (default: %(default)s)")
    parser.add_argument(
        "--young", type=int, action="append", help="youngest generation's threshold to run, 0: the server's own"
    )
    args = parser.parse_args()
    if not (args.peers / "partida-load" / "node_modules").is_dir():
        subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=args.peers / "partida-load", check=True)
    with tempfile.TemporaryDirectory() as tmp:
        server = Path(tmp) / "server.py"
        server.write_text(SERVER)
        for _ in range(args.rounds):
            for young in args.young or [0]:
                report = Path(tmp) / f"gc-{young}.json"
                wrapper = Path(tmp) / f"partida-{young}"
                wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{server}" {young} "{report}" "$@"\n')
                wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
                figures = one_run(str(wrapper), args.peers, args.m, args.moves, None)
                collector = json.loads(report.read_text()) if report.exists() else None
                print(
                    json.dumps(
                        {
                            "young": young or "server's own",
                            "M": args.m,
                            "moves_per_s": figures["moves_per_s"],
                            "latency_ms": figures["latency_ms"],
                            "cpu_ms_per_move_by_thread": figures["cpu_ms_per_move_by_thread"],
                            "gc": collector,
                        }
                    ),
                    flush=True,
                )


if __name__ == "__main__":
    main()
