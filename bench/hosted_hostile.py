"""The server beside hostile hosted programs: does a bystander game slow down while the sandbox
contains them?

The server runs as its own process (`partida serve --no-bots`, SQLite in a temp dir); two
players play tic-tac-toe back to back on it (abuse.py's bystanders) and every move's round trip
is timed. Each phase runs one hostile program of tests/data/hostile/hostile.py in a process of
its own, as the hosted bots' runner would: a HostedAgent under the default limits asked for
decisions, the program started again each time it fails, for --seconds. Each phase follows a
baseline phase of as many seconds with no hostile program (the load of a shared machine
drifts), and one JSON line gives both:

    {"hostile": ..., "p50_ms": ..., "p95_ms": ..., "baseline_p50_ms": ..., "baseline_p95_ms": ...,
     "moves": ..., "server_alive": ..., "outcome": {"programs": N, "verdicts": {VERDICT: count}, "answers": N}}

    python bench/hosted_hostile.py --seconds 6
    python bench/hosted_hostile.py --hostile fork_bomb,alloc_touch --seconds 6
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from abuse import Bystanders, percentile  # bench/abuse.py, beside this script
from server_process import served

HOSTILE = Path(__file__).resolve().parent.parent / "tests" / "data" / "hostile" / "hostile.py"
OPPONENT_SECONDS = 0.2  # the other seat's thinking: a program's background work runs meanwhile
MODES = [
    "fork_bomb",
    "alloc_8g",
    "alloc_touch",
    "fill_tmp",
    "flood_line",
    "flood_stderr",
    "spin",
    "spin_children",
    "sleep",
    "kill_parent",
]


def run_hostile(mode: str, seconds: float) -> dict[str, Any]:
    """The runner's side (`--run-hostile MODE`): programs of MODE started one after another."""
    from partida.bots.base import Forfeit, Turn
    from partida.games.registry import default_registry
    from partida.hosting.agent import HostedAgent
    from partida.hosting.limits import Limits

    game = default_registry().get("tictactoe")
    limits = Limits(decision_seconds=2.0, cpu_seconds=2.0)
    verdicts: collections.Counter[str] = collections.Counter()
    programs = answers = 0
    with tempfile.TemporaryDirectory(prefix="partida-hostile-") as folder:
        bundle = Path(folder)
        bundle.chmod(0o755)
        shutil.copy(HOSTILE, bundle / "hostile.py")
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            agent = HostedAgent(bundle, f"python3 hostile.py {mode}", limits, mode)
            programs += 1
            state = game.create(seed=programs)
            agent.new_game(game, 0)
            try:
                while not state.is_over() and time.monotonic() < end:
                    decision = state.pending()[0]
                    if decision.seat == 0:
                        action = agent.act(Turn(game, 0, decision.prompt, state.view(0)))
                        answers += 1
                    else:
                        action = decision.prompt.options[0]  # type: ignore[attr-defined]
                        time.sleep(OPPONENT_SECONDS)
                    state.apply(decision.seat, action)
            except Forfeit:
                assert agent.failure is not None
                verdicts[agent.failure.verdict] += 1
            finally:
                agent.close()
    return {"programs": programs, "verdicts": dict(verdicts), "answers": answers}


def off_cpu(server_cpu: int | None) -> Any:
    """As `partida serve --cpu N --host-bots` runs them: a hosted program on every CPU but the
    server's (None: anywhere)."""
    if server_cpu is None:
        return None
    others = os.sched_getaffinity(0) - {server_cpu}
    return lambda: os.sched_setaffinity(0, others)


async def phase(name: str, server: Any, players: Bystanders, seconds: float, server_cpu: int | None) -> dict[str, Any]:
    players.take()
    outcome: dict[str, Any] = {}
    if name == "baseline":
        await asyncio.sleep(seconds)
    else:
        runner = await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--run-hostile",
            name,
            "--seconds",
            str(seconds),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            preexec_fn=off_cpu(server_cpu),
        )
        try:
            stdout, _ = await asyncio.wait_for(runner.communicate(), seconds * 3 + 30)
        except TimeoutError:
            runner.kill()
            stdout = b""
            outcome = {"runner": "killed after the time bound"}
        if stdout.strip():
            outcome = json.loads(stdout.decode().strip().splitlines()[-1])
    latencies, refused = players.take()
    return {
        "hostile": name,
        "p50_ms": percentile(latencies, 50),
        "p95_ms": percentile(latencies, 95),
        "moves": len(latencies),
        "bystander_errors": len(refused),
        "server_alive": server.process.poll() is None,
        "outcome": outcome,
    }


async def phases(server: Any, modes: list[str], seconds: float, server_cpu: int | None) -> None:
    players = Bystanders(server.url)
    await players.start()
    await asyncio.sleep(1.0)  # warm up
    for mode in modes:  # each beside a baseline just before it: a shared machine's load drifts
        before = await phase("baseline", server, players, seconds, server_cpu)
        line = await phase(mode, server, players, seconds, server_cpu)
        line["baseline_p50_ms"], line["baseline_p95_ms"] = before["p50_ms"], before["p95_ms"]
        print(json.dumps(line), flush=True)
    await asyncio.wait_for(players.stop(), 15)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=6.0, help="seconds per phase (default: %(default)s)")
    parser.add_argument("--hostile", default=",".join(MODES), help="the programs, comma-separated (default: all)")
    parser.add_argument(
        "--server-cpu",
        type=int,
        default=None,
        help="pin the server to this CPU (`serve --cpu`) and the hostile programs to the others "
        "(as `serve --cpu N --host-bots` runs them)",
    )
    parser.add_argument("--run-hostile", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run_hostile:
        print(json.dumps(run_hostile(args.run_hostile, args.seconds)), flush=True)
        return
    from partida.hosting.sandbox import sandbox_missing

    why = sandbox_missing()
    if why is not None:
        raise SystemExit(why)
    modes = [m for m in args.hostile.split(",") if m]
    unknown = set(modes) - set(MODES)
    if unknown:
        raise SystemExit(f"unknown hostile programs: {sorted(unknown)} (known: {', '.join(MODES)})")
    with tempfile.TemporaryDirectory() as tmp:
        db = f"sqlite+aiosqlite:///{tmp}/hostile.db"
        pinned = [] if args.server_cpu is None else ["--cpu", str(args.server_cpu)]
        with served(db, "--no-bots", *pinned, stderr=subprocess.DEVNULL) as server:
            asyncio.run(phases(server, modes, args.seconds, args.server_cpu))


if __name__ == "__main__":
    main()
