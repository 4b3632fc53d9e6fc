"""What the sandbox costs a hosted bot: the same program (examples/bots/, the Python tic-tac-toe
bot and, with --program js, the JavaScript one) behind the stdin/stdout bridge, run directly
(StdioAgent) and under the hosted bots' sandbox and default limits (HostedAgent: bwrap,
prlimit, a cgroup where the machine has them).

One JSON line per way: `decisions_per_s`, decisions one warm program answers in a row (the
same position, the bridge validating each answer), and `start_ms_median`/`start_ms_p90`, from
a new agent's first decision to its answer (the program's start: bwrap's namespaces and mounts,
the runtime's own start, its first answer), over --starts programs. The two ways run
interleaved, a block of decisions or one start each in turn. A last line gives the ratios.
A hosted program runs at niceness 10: on a busy machine it gets less CPU than the direct one
(the server's games come first); --same-nice runs the direct program at niceness 10 as well, to
measure the sandbox alone.

    python bench/sandbox_cost.py --decisions 2000 --starts 20
    python bench/sandbox_cost.py --program js --same-nice
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import time
from pathlib import Path

from partida.bots.base import Agent, Turn
from partida.bots.engines.stdio import StdioAgent
from partida.games.registry import default_registry
from partida.hosting.agent import HostedAgent
from partida.hosting.limits import Limits
from partida.hosting.sandbox import NICE, PATH, sandbox_missing

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "bots"
PROGRAMS = {"py": ("python3", "tictactoe.py"), "js": ("node", "corners.js")}
GAME = {"py": "tictactoe", "js": "tictactoe"}
WAYS = ("direct", "sandboxed")


def make(way: str, program: str, same_nice: bool = False) -> Agent:
    runtime, script = PROGRAMS[program]
    if way == "direct":  # the runtime the sandbox would find, by its path
        nice = f"nice -n {NICE} " if same_nice else ""
        return StdioAgent(f"{nice}{shutil.which(runtime, path=PATH)} {EXAMPLES / script}", move_timeout=10)
    return HostedAgent(EXAMPLES, f"{runtime} {script}", Limits(decision_seconds=10), "bench")


def first_turn(game_name: str) -> Turn:
    game = default_registry().get(game_name)
    state = game.create(seed=0)
    decision = state.pending()[0]
    return Turn(game, decision.seat, decision.prompt, state.view(decision.seat))


def measure(
    program: str, decisions: int, starts: int, same_nice: bool = False, block: int = 100
) -> dict[str, dict[str, object]]:
    """Both ways, interleaved (a block of decisions, or one start, of each in turn), so that the
    load of a shared machine falls on both alike."""
    turn = first_turn(GAME[program])
    warm = {way: make(way, program, same_nice) for way in WAYS}
    for agent in warm.values():
        agent.new_game(turn.game, turn.seat)
        agent.act(turn)  # started and warm
    spent = dict.fromkeys(WAYS, 0.0)
    for _ in range(max(1, decisions // block)):
        for way, agent in warm.items():
            began = time.perf_counter()
            for _ in range(block):
                agent.act(turn)
            spent[way] += time.perf_counter() - began
    for agent in warm.values():
        agent.close()
    times: dict[str, list[float]] = {way: [] for way in WAYS}
    for _ in range(starts):
        for way in WAYS:
            agent = make(way, program, same_nice)
            agent.new_game(turn.game, turn.seat)
            began = time.perf_counter()
            agent.act(turn)
            times[way].append(time.perf_counter() - began)
            agent.close()
    done = max(1, decisions // block) * block
    figures = {}
    for way in WAYS:
        ordered = sorted(times[way])
        figures[way] = {
            "way": way,
            "program": program,
            "nice": NICE if way == "sandboxed" or same_nice else 0,
            "decisions": done,
            "decisions_per_s": round(done / spent[way], 1),
            "starts": starts,
            "start_ms_median": round(1000 * statistics.median(ordered), 2),
            "start_ms_p90": round(1000 * ordered[int(0.9 * (len(ordered) - 1))], 2),
        }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--decisions", type=int, default=2000, help="decisions per way (default: %(default)s)")
    parser.add_argument("--starts", type=int, default=20, help="programs started (default: %(default)s)")
    parser.add_argument("--program", choices=sorted(PROGRAMS), default="py", help="which example bot")
    parser.add_argument(
        "--same-nice",
        action="store_true",
        help="run the direct program at the sandbox's niceness too: the sandbox's own cost, without "
        "the lower priority a hosted program gets on a busy machine",
    )
    args = parser.parse_args()
    why = sandbox_missing()
    if why is not None:
        raise SystemExit(why)
    figures = measure(args.program, args.decisions, args.starts, args.same_nice)
    direct, sandboxed = figures["direct"], figures["sandboxed"]
    print(json.dumps(direct), flush=True)
    print(json.dumps(sandboxed), flush=True)
    ratios = {
        "program": args.program,
        "decisions_per_s_ratio": round(float(sandboxed["decisions_per_s"]) / float(direct["decisions_per_s"]), 3),
        "start_ms_extra_median": round(float(sandboxed["start_ms_median"]) - float(direct["start_ms_median"]), 2),
    }
    print(json.dumps(ratios), flush=True)


if __name__ == "__main__":
    main()
