"""`partida lab`: simulate matches in-process and measure them (docs/lab.md).

- `lab run GAME [--option k=v] [--agent NAME] -n N [--seed S] [--workers W] [--db URL] [--json]`
- `lab report RUN_ID [--json]`
- `lab plot RUN_ID... -o FILE.png [--kind distributions|rounds|drama3d]`
- `lab match GAME --seed S [--plot FILE.png]`, `lab export RUN_ID --scores FILE --metrics FILE`
"""

from __future__ import annotations

import argparse
import os
import random
from pathlib import Path
from typing import Any

from partida.cli import CliError
from partida.cli.common import (
    add_db_flag,
    add_json_flag,
    image_file,
    missing_sqlite_file,
    output_file,
    parse_option_pairs,
    print_json,
)


def _add_match_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", help="game name (see `partida rules`)")
    parser.add_argument("--option", action="append", metavar="KEY=VALUE", help="a game option (repeatable)")
    parser.add_argument(
        "--agent",
        action="extend",
        nargs="+",
        metavar="NAME",
        help="agent per seat, in seat order (one name is used for every seat; default random); "
        "parameters as NAME:k=v,k=v, e.g. ismcts:iterations=200",
    )
    parser.add_argument("--seats", type=int, default=None, help="number of players (default: the game's minimum)")
    parser.add_argument("--game-file", action="append", type=Path, default=[], help="load a game description file")


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    lab = subparsers.add_parser("lab", help="simulate many matches of a game and measure drama and uncertainty")
    sub = lab.add_subparsers(dest="lab_command", metavar="LAB_COMMAND", required=True)

    run = sub.add_parser("run", help="simulate N matches, store them with their metrics, print the report")
    _add_match_args(run)
    run.add_argument("-n", type=int, default=1000, help="number of matches (default: %(default)s)")
    run.add_argument("--seed", type=int, default=None, help="run seed (default: random, printed in the report)")
    run.add_argument("--workers", type=int, default=1, help="processes to use; 0 means every core (default: 1)")
    run.add_argument("--no-store", action="store_true", help="do not write the run to the database")
    add_db_flag(run)
    add_json_flag(run)
    run.set_defaults(func=run_lab)

    report = sub.add_parser("report", help="print the summary of a stored run")
    report.add_argument("run_id", type=int)
    add_db_flag(report)
    add_json_flag(report)
    report.set_defaults(func=run_report)

    plot = sub.add_parser("plot", help="draw the metric distributions of one or more runs (one curve per run)")
    plot.add_argument("run_ids", type=int, nargs="+", metavar="RUN_ID")
    plot.add_argument("-o", "--output", type=image_file, required=True, help="PNG file to write")
    plot.add_argument(
        "--kind",
        choices=("distributions", "rounds", "drama3d"),
        default="distributions",
        help="distributions: each metric's histogram and density, one curve per run (default); rounds: "
        "mean drama against the runs' ROUNDS option; drama3d: the three drama means of each run in 3-D",
    )
    add_db_flag(plot)
    plot.set_defaults(func=run_plot)

    match = sub.add_parser("match", help="play one match and print each round's scores and ranks and its six metrics")
    _add_match_args(match)
    match.add_argument("--seed", type=int, required=True, help="the match's seed")
    match.add_argument("--plot", type=image_file, help="also draw score and position per round to this PNG file")
    add_json_flag(match)
    match.set_defaults(func=run_match)

    export = sub.add_parser("export", help="write a stored run's per-round scores and per-match metrics as CSV")
    export.add_argument("run_id", type=int)
    export.add_argument("--scores", type=output_file, help="CSV of per-round scores (round;player;score)")
    export.add_argument("--metrics", type=output_file, help="CSV of the six metrics per match")
    export.add_argument("--match", type=int, help="only this match (its index in the run, from 0)")
    add_db_flag(export)
    export.set_defaults(func=run_export)


def _spec(args: argparse.Namespace, n: int, seed: int) -> tuple[Any, Any]:
    """The run's spec and its game, every name and option checked before anything is played."""
    from partida.bots.registry import UnknownAgent, make_agent
    from partida.games.base import BadOptions
    from partida.games.registry import GameLoadError, UnknownGame
    from partida.lab.simulate import RunSpec, load_game, parse_agent

    agents = args.agent or ["random"]
    spec = RunSpec(
        game=args.game,
        options=parse_option_pairs(args.option),
        agents=agents,
        seats=0,
        seed=seed,
        n=n,
        game_files=[str(p) for p in args.game_file],
    )
    try:
        game = load_game(spec)
        spec.options = game.resolve_options(spec.options)
        seats = args.seats or (len(agents) if len(agents) > 1 else game.min_seats)
        spec.seats = game.check_seats(seats)
        if len(agents) == 1:
            spec.agents = agents * spec.seats
        if len(spec.agents) != spec.seats:
            raise CliError(f"give one --agent, or one per seat ({spec.seats}), not {len(spec.agents)}")
        for text in set(spec.agents):
            name, params = parse_agent(text)
            make_agent(name, game, **params)
    except (UnknownGame, UnknownAgent, BadOptions, GameLoadError) as exc:
        raise CliError(str(exc).strip("'\"")) from None
    return spec, game


def run_lab(args: argparse.Namespace) -> int:
    from partida.lab.report import summarize
    from partida.lab.simulate import simulate

    if args.n < 1:
        raise CliError("-n must be at least 1")
    spec, _ = _spec(args, args.n, args.seed if args.seed is not None else random.SystemRandom().getrandbits(31))
    workers = (os.cpu_count() or 1) if args.workers == 0 else max(1, args.workers)
    if not args.no_store:  # a run that cannot be stored is refused before it is played, not after
        from partida.lab.storage import open_store
        from partida.storage.database import StorageError

        try:
            open_store(args.db)
        except StorageError as exc:
            raise CliError(str(exc)) from None

    if args.json:
        records, seconds = simulate(spec, workers)
    else:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        columns = (*Progress.get_default_columns()[:2], MofNCompleteColumn(), BarColumn(), TimeRemainingColumn())
        with Progress(*columns, transient=True) as progress:
            task = progress.add_task(f"{spec.game}", total=spec.n)
            records, seconds = simulate(spec, workers, lambda k: progress.advance(task, k))
    summary = summarize([r.result for r in records], [r.metrics for r in records], spec.seats)
    report: dict[str, Any] = {
        "run_id": None,
        "game": spec.game,
        "options": spec.options,
        "agents": spec.agents,
        "seats": spec.seats,
        "seed": spec.seed,
        "n": spec.n,
        "workers": workers,
        "seconds": seconds,
        "matches_per_second": spec.n / seconds if seconds else None,
        "summary": summary,
    }
    if not args.no_store:
        from partida.lab.storage import save_run
        from partida.storage.database import StorageError

        try:
            report["run_id"] = save_run(args.db, spec, seconds, summary, records)
        except StorageError as exc:
            raise CliError(str(exc)) from None
    _print_report(report, args.json)
    return 0


def _print_report(report: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(report)
        return
    from rich.console import Console

    from partida.lab.report import report_table

    console = Console()
    console.print(report_table(report))
    if report.get("run_id") is not None:
        console.print(f"stored as lab run {report['run_id']}")


def _require_database(db_url: str | None) -> None:
    missing = missing_sqlite_file(db_url)
    if missing is not None:
        raise CliError(
            f"there is no database at {missing} (reading one must not create it): "
            "give --db the database the lab runs were stored in"
        )


def _load(args: argparse.Namespace, ids: list[int], with_metrics: bool) -> list[tuple[dict, list[dict]]]:
    from partida.lab.storage import load_runs
    from partida.storage.database import StorageError

    _require_database(args.db)
    try:
        return load_runs(args.db, ids, with_metrics)
    except (StorageError, LookupError) as exc:
        raise CliError(str(exc).strip("'\"")) from None


def run_report(args: argparse.Namespace) -> int:
    ((report, _),) = _load(args, [args.run_id], False)
    _print_report(report, args.json)
    return 0


def run_plot(args: argparse.Namespace) -> int:
    from partida.lab.plots import plot_drama_3d, plot_drama_rounds, plot_runs, rounds_of

    runs = _load(args, args.run_ids, args.kind == "distributions")
    if args.kind == "distributions":
        plot_runs(runs, args.output)
    elif args.kind == "rounds":
        reports = [report for report, _ in runs]
        if not any(rounds_of(r) is not None for r in reports):
            raise CliError("none of these runs has a rounds option to plot against")
        plot_drama_rounds(reports, args.output)
    else:
        plot_drama_3d([report for report, _ in runs], args.output)
    print(f"wrote {args.output}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    from partida.lab.export import write_metrics, write_scores
    from partida.lab.storage import load_matches
    from partida.storage.database import StorageError

    if args.scores is None and args.metrics is None:
        raise CliError("say what to write: --scores FILE, --metrics FILE or both")
    _require_database(args.db)
    try:
        matches = load_matches(args.db, args.run_id)
    except (StorageError, LookupError) as exc:
        raise CliError(str(exc).strip("'\"")) from None
    if args.match is not None:
        matches = [m for m in matches if m["index"] == args.match]
        if not matches:
            raise CliError(f"lab run {args.run_id} has no match {args.match}")
    for path, write in ((args.scores, write_scores), (args.metrics, write_metrics)):
        if path is not None:
            if write is write_scores:
                write_scores(path, matches, single=args.match is not None)
            else:
                write_metrics(path, matches)
            print(f"wrote {path}")
    return 0


def run_match(args: argparse.Namespace) -> int:
    """One match under the microscope (the study's figures 5.3 and 5.4 come from such a match)."""
    from partida.lab.metrics import ranks
    from partida.lab.simulate import play_match

    spec, game = _spec(args, 1, args.seed)
    record = play_match(game, spec, 0, args.seed)
    rounds = [{"round": m, "scores": s, "ranks": ranks(s)} for m, s in enumerate(record.rounds, start=1)]
    out = {"game": spec.game, "options": spec.options, "agents": spec.agents, "seed": args.seed}
    out |= {"result": record.result, "rounds": rounds, "metrics": record.metrics}
    if args.plot is not None:
        from partida.lab.plots import plot_match

        plot_match(rounds, f"{spec.game} {spec.options}, seed {args.seed}", args.plot)
    if args.json:
        print_json(out)
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{spec.game} {spec.options}, seed {args.seed}")
    table.add_column("round", justify="right")
    for p in range(spec.seats):
        table.add_column(f"player {p + 1}: score (rank)", justify="right")
    for row in rounds:
        table.add_row(str(row["round"]), *(f"{s:g} ({r})" for s, r in zip(row["scores"], row["ranks"], strict=True)))
    console = Console()
    console.print(table)
    for name, value in record.metrics.items():
        console.print(f"{name}: {value:.4f}")
    if args.plot is not None:
        console.print(f"wrote {args.plot}")
    return 0
