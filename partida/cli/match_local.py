"""`partida match --local`: paired games in-process, with Elo, its interval and the SPRT shown
as the match runs (see docs/engine-testing.md). No `register`: play.py owns the `match` command."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from partida.cli import CliError
from partida.cli.common import game_registry, known_game, parse_option_pairs, print_json
from partida.cli.stats import elo_text, report, summary_lines
from partida.stats.elo import estimate
from partida.stats.sprt import SprtSpec, decide, llr, parse_spec


def _check_agents(game: Any, agents: list[str]) -> None:
    from partida.bots.registry import UnknownAgent, make_agent, parse_agent

    for text in agents:
        try:
            name, params = parse_agent(text)
            make_agent(name, game, **params)
        except (UnknownAgent, ValueError, TypeError) as exc:
            raise CliError(f"--seat {text}: {exc}") from None


def run_local_match(args: argparse.Namespace) -> int:
    from partida.games.base import BadOptions
    from partida.match.paired import Tally, deals, run_sets

    game = known_game(game_registry(args), args.game)
    options = parse_option_pairs(args.option)
    try:
        game.create(options, seed=args.seed, seats=len(args.seat))
    except BadOptions as exc:
        raise CliError(str(exc)) from None
    _check_agents(game, args.seat)
    spec: SprtSpec | None = None
    if args.sprt is not None:
        if len(args.seat) != 2:
            raise CliError("--sprt compares two agents: give two --seat")
        try:
            spec = parse_spec(args.sprt, args.model)
        except ValueError as exc:
            raise CliError(f"--sprt: {exc}") from None
    parallel = args.parallel or os.cpu_count() or 1
    book = [] if args.no_book or "opening" in options else game.openings()
    sets = -(-args.games // len(args.seat))  # every rotation of a deal is played: whole sets
    tally = Tally()
    verdict = None
    started = time.perf_counter()
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    progress = Progress(
        TextColumn("{task.completed}/{task.total} games"),
        BarColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    )
    with progress:
        task = progress.add_task("", total=sets * len(args.seat))
        for result in run_sets(game.name, args.seat, options, deals(sets, args.seed, book), parallel):
            tally.add(result)
            if args.json:
                for record in result.games:
                    print(json.dumps(record, separators=(",", ":")), flush=True)
            line = elo_text(estimate(tally.trinomial))
            if spec is not None:
                value = llr(spec, tally.pentanomial if len(args.seat) == 2 else tally.trinomial)
                line += f"  LLR {value:.2f} ({spec.lower:.2f}, {spec.upper:.2f})"
                verdict = decide(spec, value)
            progress.update(
                task,
                advance=len(result.games),
                description=f"W {tally.wins} D {tally.draws} L {tally.losses}  {line}",
            )
            if verdict is not None:
                break
    seconds = time.perf_counter() - started
    spec = spec or SprtSpec(model=args.model)
    pentanomial = tally.pentanomial if len(args.seat) == 2 else None
    data = report(spec, tally.trinomial, pentanomial)
    data.update(
        agents=args.seat,
        stopped_by_sprt=verdict is not None,
        seconds=round(seconds, 2),
        games_per_second=round(tally.trinomial.games / seconds, 2) if seconds else None,
    )
    if args.sprt is None:
        data.pop("sprt")
    if args.json:
        print_json({"summary": data})
        return 0
    print(
        f"{args.seat[0]} against {', '.join(args.seat[1:])}: {data['games']} games in {seconds:.1f} s"
        + (f", stopped by the SPRT ({verdict} accepted)" if verdict else "")
    )
    lines = summary_lines(report(spec, tally.trinomial, pentanomial), tally.trinomial, pentanomial)
    for line in lines if args.sprt is not None else lines[:-1]:
        print(line)
    sys.stdout.flush()
    return 0
