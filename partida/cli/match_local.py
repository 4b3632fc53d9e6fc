"""`partida match --local`: paired games in-process, with Elo, its interval and the SPRT shown
as the match runs (see docs/engine-testing.md). No `register`: play.py owns the `match` command."""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

from partida.cli import CliError
from partida.cli.common import game_registry, known_game, parse_option_pairs
from partida.cli.match_report import exit_status, print_summary, progress_bar, progress_text, sprt_spec


def _check_agents(game: Any, agents: list[str]) -> None:
    from partida.bots.registry import UnknownAgent, make_agent, parse_agent

    for text in agents:
        try:
            name, params = parse_agent(text)
            make_agent(name, game, **params)
        except (UnknownAgent, ValueError, TypeError) as exc:
            raise CliError(f"--seat {text}: {exc}") from None


def run_local_match(args: argparse.Namespace) -> int:
    from concurrent.futures.process import BrokenProcessPool

    from partida.games.base import BadOptions
    from partida.match.paired import AgentFailed, GameSources, Tally, deals, run_sets

    game = known_game(game_registry(args), args.game)
    options = parse_option_pairs(args.option)
    try:
        game.create(options, seed=args.seed, seats=len(args.seat))
    except BadOptions as exc:
        raise CliError(str(exc)) from None
    _check_agents(game, args.seat)
    spec = sprt_spec(args, len(args.seat))
    parallel = args.parallel or os.cpu_count() or 1
    book = [] if args.no_book or "opening" in options else game.openings()
    sets = -(-args.games // len(args.seat))  # every rotation of a deal is played: whole sets
    sources = GameSources(tuple(map(str, args.game_file)), tuple(map(str, args.games_dir)))
    tally = Tally()
    verdict = None
    failure = None
    started = time.perf_counter()
    with progress_bar() as progress:
        task = progress.add_task("", total=sets * len(args.seat))
        try:
            for result in run_sets(game.name, args.seat, options, deals(sets, args.seed, book), parallel, sources):
                tally.add(result)
                if args.json:
                    for record in result.games:
                        print(json.dumps(record, separators=(",", ":")), flush=True)
                line, verdict = progress_text(tally, spec, len(args.seat))
                progress.update(task, advance=len(result.games), description=line)
                if verdict is not None:
                    break
        except AgentFailed as exc:
            failure = str(exc)
        except BrokenProcessPool:
            failure = "a worker process died while playing (an agent ended its process)"
    print_summary(args, args.seat, tally, verdict, time.perf_counter() - started)
    if failure is not None:
        raise CliError(f"the match stopped after {tally.trinomial.games} games: {failure}")
    return exit_status(args, verdict)
