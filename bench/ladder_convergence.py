"""How fast a ladder's standings find the true order: the scheduler's pairing rule against random
pairing, in the same run, through a real server and real bot processes.

Five Othello bots of known order (random < othello-reference at depth 2 < othello-engine at depth
1 < depth 2 < depth 4; checked by a round robin, `--check`) join two ladders that differ only in
their pairing rule, each bot with one account per ladder. After the run, the standings after each
rated game are rebuilt from the stored rating history and compared with the known order by
Kendall's tau. Prints JSON: per ladder, the games until tau first reached 1, the games from which
it stayed 1, and the final tau; `--plot` draws tau against games played.

    python bench/ladder_convergence.py --games 150 --repeat 3 --plot docs/img/ladder-convergence.png
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from partida.competition.ladder_report import kendall_tau, standings_after
from partida.server.app import Server, ServerConfig

# name -> (agent, extra flags), weakest first: the known order
BOTS: dict[str, tuple[str, list[str]]] = {
    "random": ("random", []),
    "reference-d2": ("othello-reference", ["--depth", "2"]),
    "engine-d1": ("othello-engine", ["--depth", "1"]),
    "engine-d2": ("othello-engine", ["--depth", "2"]),
    "engine-d4": ("othello-engine", ["--depth", "4"]),
}
TRUTH = list(reversed(BOTS))  # best first, as standings are
PAIRINGS = ("rating", "random")
CLOCK = {"per_move": 10.0}


def check_order(games_per_pair: int) -> dict[str, float]:
    """Round robin in-process (no server): each pair's score share for the stronger bot."""
    from partida.bots.local import play_local
    from partida.bots.registry import make_agent
    from partida.games.registry import default_registry

    othello = default_registry().get("othello")

    def agent(name: str, seed: int) -> Any:
        kind, flags = BOTS[name]
        params = {"depth": int(flags[1])} if flags else {}
        return make_agent(kind, othello, seed=seed, **params)

    shares = {}
    for weak, strong in itertools.combinations(BOTS, 2):
        score = 0.0
        for n in range(games_per_pair):
            names = (strong, weak) if n % 2 == 0 else (weak, strong)
            result = play_local(othello, [agent(x, n) for x in names], seed=n).state.result()
            mine = result.scores[names.index(strong)]
            theirs = result.scores[1 - names.index(strong)]
            score += 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0
        shares[f"{strong} > {weak}"] = score / games_per_pair
    return shares


async def one_run(games: int, concurrency: int, progress: Any) -> dict[str, list[tuple[int, float]]]:
    """Both ladders played to `games` rated games each; returns tau after each rated game."""
    folder = tempfile.mkdtemp(prefix="partida-ladder-bench-")
    server = Server(ServerConfig(host="127.0.0.1", port=0, db_url=f"sqlite+aiosqlite:///{folder}/partida.db"))
    await server.start()
    processes = []
    try:
        ladders = {}
        for pairing in PAIRINGS:
            ladders[pairing] = await server.store.ladders.create(
                f"by-{pairing}", "othello", {}, 2, CLOCK, concurrency, pairing
            )
            for name, (agent, flags) in BOTS.items():
                _, token = await server.store.create_bot(f"{pairing}-{name}")
                processes.append(
                    await asyncio.create_subprocess_exec(
                        *[sys.executable, "-m", "partida", "bot", agent, *flags, "--server", server.url],
                        *["--ladder", f"by-{pairing}", "--log-level", "error"],
                        env=dict(os.environ, PARTIDA_BOT_TOKEN=token),
                    )
                )
        task = progress.add_task("rated games (both ladders)", total=games * len(PAIRINGS))
        while True:
            done = [min(games, (await server.store.ladders.require(f"by-{p}")).rated_games) for p in PAIRINGS]
            progress.update(task, completed=sum(done))
            if all(d >= games for d in done):
                break
            if any(p.returncode is not None for p in processes):
                raise RuntimeError("a bot process exited")
            await asyncio.sleep(0.5)
        progress.remove_task(task)
        curves: dict[str, list[tuple[int, float]]] = {}
        for pairing, ladder in ladders.items():
            history = await server.store.ladders.history(ladder.id)
            prefix = f"{pairing}-"
            changes = [(c.seq, c.name.removeprefix(prefix), c.after) for c in history if c.seq <= games]
            curves[pairing] = [(seq, kendall_tau(order, TRUTH)) for seq, order in standings_after(changes, BOTS)]
        return curves
    finally:
        for process in processes:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
        for process in processes:
            await process.wait()
        await server.stop()


def summary(curve: list[tuple[int, float]]) -> dict[str, Any]:
    first = next((seq for seq, tau in curve if tau == 1.0), None)
    stable = None
    for seq, tau in reversed(curve):
        if tau != 1.0:
            break
        stable = seq
    return {"first_correct": first, "correct_from": stable, "final_tau": curve[-1][1] if curve else None}


def tau_at(curve: list[tuple[int, float]], games: int) -> list[float]:
    """Tau after each of games 1..`games` (a step function: unchanged until the next rating)."""
    taus, value, points = [], 0.0, iter(curve)
    upcoming = next(points, None)
    for game in range(1, games + 1):
        while upcoming is not None and upcoming[0] <= game:
            value = upcoming[1]
            upcoming = next(points, None)
        taus.append(value)
    return taus


def plot(runs: list[dict[str, list[tuple[int, float]]]], path: Path, games: int) -> None:
    """Each run thin, the mean over runs thick."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5))
    colours = {"rating": "tab:blue", "random": "tab:orange"}
    xs = list(range(1, games + 1))
    for pairing in PAIRINGS:
        curves = [tau_at(run[pairing], games) for run in runs]
        for curve in curves:
            ax.step(xs, curve, where="post", color=colours[pairing], alpha=0.2, linewidth=0.8)
        mean = [statistics.fmean(values) for values in zip(*curves, strict=True)]
        ax.step(xs, mean, where="post", color=colours[pairing], linewidth=2.2, label=f"{pairing} pairing (mean)")
    ax.set_xlim(0, games)
    ax.set_ylim(-1.05, 1.05)
    ax.set_xlabel("rated games in the ladder")
    ax.set_ylabel("Kendall tau, standings vs known order")
    ax.set_title(f"Othello ladder of 5 bots: standings vs known order ({len(runs)} runs each)")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    from rich.progress import Progress

    runs = []
    with Progress(transient=True) as progress:
        for _ in range(args.repeat):
            runs.append(await one_run(args.games, args.concurrency, progress))
    report: dict[str, Any] = {"games": args.games, "repeat": args.repeat, "bots": TRUTH, "ladders": {}}
    for pairing in PAIRINGS:
        runs_summary = [summary(run[pairing]) for run in runs]
        stable = [r["correct_from"] for r in runs_summary]
        curves = [tau_at(run[pairing], args.games) for run in runs]
        report["ladders"][pairing] = {
            "runs": runs_summary,
            "mean_tau_after": {
                str(n): round(statistics.fmean(c[n - 1] for c in curves), 3)
                for n in (5, 10, 20, 40, 60, args.games)
                if n <= args.games
            },
            "median_correct_from": statistics.median(s if s is not None else float("inf") for s in stable),
            "mean_final_tau": statistics.fmean(r["final_tau"] for r in runs_summary),
        }
    if args.plot:
        plot(runs, args.plot, args.games)
        report["plot"] = str(args.plot)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=150, help="rated games per ladder and run (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=1, help="runs, each with fresh ladders (default: %(default)s)")
    parser.add_argument("--concurrency", type=int, default=2, help="games at once per ladder (default: %(default)s)")
    parser.add_argument("--plot", type=Path, default=None, help="draw tau against games played to this file")
    parser.add_argument("--check", type=int, default=0, metavar="N", help="first, N in-process games per pair")
    args = parser.parse_args()
    report: dict[str, Any] = {}
    if args.check:
        report["known_order_check"] = check_order(args.check)
    report.update(asyncio.run(main_async(args)))
    print(json.dumps(report, default=lambda x: None if x == float("inf") else x))


if __name__ == "__main__":
    main()
