"""How long each `partida` command takes from launch to exit, for commands that do little work:
what a person waits for before anything happens, and what every bot process pays at start.

Each command runs `--repeat` times in a fresh interpreter (`python -m partida ...`) against a
database made once by `partida db upgrade`; prints JSON: per command, the median and the minimum
wall time in seconds. On a shared machine compare runs as ratios, not absolute figures.

    python bench/startup.py --repeat 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def commands(db: str) -> dict[str, list[str]]:
    return {
        "--help": ["--help"],
        "rules": ["rules", "--json"],
        "agents": ["agents", "--json"],
        "games --json": ["games", "--json", "--db", db],
        "ladder list": ["ladder", "list", "--json", "--db", db],
        "bot --help": ["bot", "--help"],
        "play --help": ["play", "--help"],
        "serve --help": ["serve", "--help"],
    }


def run(argv: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "partida", *argv], capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"partida {' '.join(argv)} failed: {done.stderr.strip().splitlines()[-1:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per command (default: %(default)s)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="partida-startup-") as folder:
        db = str(Path(folder) / "partida.db")
        run(["db", "upgrade", "--db", db])
        report: dict[str, dict[str, float]] = {}
        for name, argv in commands(db).items():
            times = [run(argv) for _ in range(args.repeat)]
            report[name] = {"median_s": round(statistics.median(times), 3), "min_s": round(min(times), 3)}
    print(json.dumps({"python": sys.version.split()[0], "repeat": args.repeat, "commands": report}))


if __name__ == "__main__":
    main()
