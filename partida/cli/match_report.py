"""What a paired match shows while it runs and prints at its end, wherever its games are played
(in-process with `--local`, or in rooms on a server): the progress line with W/D/L, Elo and the
LLR, and the summary (text, or JSON with `--json`). No `register`: play.py owns `match`."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from partida.cli import CliError
from partida.cli.common import print_json
from partida.cli.stats import report, summary_lines
from partida.match.paired import Tally
from partida.stats.elo import Estimate, Pentanomial, estimate
from partida.stats.sprt import SprtSpec, Verdict, decide, llr, parse_spec


def sprt_spec(args: argparse.Namespace, seats: int) -> SprtSpec | None:
    """`--sprt`, checked: it compares two agents."""
    if args.sprt is None:
        return None
    if seats != 2:
        raise CliError("--sprt compares two agents: give two --seat")
    try:
        return parse_spec(args.sprt, args.model)
    except ValueError as exc:
        raise CliError(f"--sprt: {exc}") from None


def progress_bar() -> Any:
    """A rich progress line on stderr, shown only on a terminal. stdout stays the results: it
    goes through the live line only when it is that terminal too (redirected, it would else
    be printed on the terminal instead of the file)."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    return Progress(
        TextColumn("{task.completed}/{task.total} games"),
        BarColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        redirect_stdout=sys.stdout.isatty(),
        disable=not console.is_terminal,
    )


def progress_text(tally: Tally, spec: SprtSpec | None, seats: int) -> tuple[str, Verdict | None]:
    """The progress line's text after a set, and the SPRT's verdict (None: go on). Elo is from
    the pairs when there are pairs, as the LLR is."""
    counted = _pairs(tally, seats) or tally.trinomial
    line = f"W {tally.wins} D {tally.draws} L {tally.losses}  {elo_plus_minus(estimate(counted))}"
    verdict = None
    if spec is not None:
        value = llr(spec, counted)
        line += f"  LLR {value:.2f} [{spec.lower:.2f}, {spec.upper:.2f}]"
        verdict = decide(spec, value)
    return line, verdict


def elo_plus_minus(e: Estimate) -> str:
    """`Elo +45.2 ± 30.1`: the half width of the 95% interval, as engine testers print it."""
    if not math.isfinite(e.elo):  # a clean sweep so far: a score of 1 (or 0) has no finite Elo
        return f"Elo {'+' if e.elo > 0 else '-'}inf"
    return f"Elo {e.elo:+.1f} ± {(e.elo_high - e.elo_low) / 2:.1f}"


# `partida match --sprt` tells scripts its verdict by its exit status (2 stays an error: a bad
# flag, or a match stopped by a failing bot).
EXIT_STATUS: dict[Verdict | None, int] = {"H1": 0, "H0": 3, None: 4}


def verdict_text(verdict: Verdict | None, games: int, cap: int) -> str:
    """`games`: those counted; fewer than the cap without a verdict is a match a bot stopped."""
    if verdict is not None:
        return f"{verdict} accepted"
    return f"no verdict within the cap of {cap} games" if games >= cap else "no verdict"


def exit_status(args: argparse.Namespace, verdict: Verdict | None) -> int:
    """0 without --sprt; with it, the verdict's status (EXIT_STATUS)."""
    return 0 if args.sprt is None else EXIT_STATUS[verdict]


def _pairs(tally: Tally, seats: int) -> Pentanomial | None:
    """The pair counts, when the match has two agents and played pairs."""
    return tally.pentanomial if seats == 2 and tally.pentanomial.pairs else None


def summary(
    args: argparse.Namespace, agents: list[str], tally: Tally, verdict: str | None, seconds: float
) -> dict[str, Any]:
    spec = sprt_spec(args, len(agents)) or SprtSpec(model=args.model)
    pentanomial = _pairs(tally, len(agents))
    data = report(spec, tally.trinomial, pentanomial)
    data.update(
        agents=agents,
        stopped_by_sprt=verdict is not None,
        verdict=verdict_text(verdict, tally.trinomial.games, args.games) if args.sprt is not None else None,
        seconds=round(seconds, 2),
        games_per_second=round(tally.trinomial.games / seconds, 2) if seconds else None,
    )
    if args.sprt is None:
        data.pop("sprt")
    return data


def print_summary(
    args: argparse.Namespace,
    agents: list[str],
    tally: Tally,
    verdict: str | None,
    seconds: float,
    extra: dict[str, Any] | None = None,
    notes: list[str] | None = None,
) -> None:
    """The end of a match: `{"summary": ...}` with --json, else the figures as lines. `extra`
    joins the JSON summary; `notes` are printed after the text lines."""
    data = summary(args, agents, tally, verdict, seconds)
    data.update(extra or {})
    if args.json:
        print_json({"summary": data})
        return
    print(
        f"{agents[0]} against {', '.join(agents[1:])}: {data['games']} games in {seconds:.1f} s"
        + (f", stopped by the SPRT ({data['verdict']})" if verdict else "")
    )
    spec = sprt_spec(args, len(agents)) or SprtSpec(model=args.model)
    pentanomial = _pairs(tally, len(agents))
    undecided = verdict_text(None, tally.trinomial.games, args.games)
    lines = summary_lines(report(spec, tally.trinomial, pentanomial), tally.trinomial, pentanomial, undecided)
    for line in lines if args.sprt is not None else lines[:-1]:
        print(line)
    for note in notes or []:
        print(note)
    sys.stdout.flush()
