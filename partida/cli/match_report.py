"""What a paired match shows while it runs and prints at its end, wherever its games are played
(in-process with `--local`, or in rooms on a server): the progress line with W/D/L, Elo and the
LLR, and the summary (text, or JSON with `--json`). No `register`: play.py owns `match`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from partida.cli import CliError
from partida.cli.common import print_json
from partida.cli.stats import elo_text, report, summary_lines
from partida.match.paired import Tally
from partida.stats.elo import Pentanomial, estimate
from partida.stats.sprt import SprtSpec, decide, llr, parse_spec


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
    """A rich progress line on stderr, shown only on a terminal (stdout stays the results)."""
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
        disable=not console.is_terminal,
    )


def progress_text(tally: Tally, spec: SprtSpec | None, seats: int) -> tuple[str, str | None]:
    """The progress line's text after a set, and the SPRT's verdict (None: go on)."""
    line = elo_text(estimate(tally.trinomial))
    verdict = None
    if spec is not None:
        value = llr(spec, _pairs(tally, seats) or tally.trinomial)
        line += f"  LLR {value:.2f} ({spec.lower:.2f}, {spec.upper:.2f})"
        verdict = decide(spec, value)
    return f"W {tally.wins} D {tally.draws} L {tally.losses}  {line}", verdict


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
        + (f", stopped by the SPRT ({verdict} accepted)" if verdict else "")
    )
    spec = sprt_spec(args, len(agents)) or SprtSpec(model=args.model)
    pentanomial = _pairs(tally, len(agents))
    lines = summary_lines(report(spec, tally.trinomial, pentanomial), tally.trinomial, pentanomial)
    for line in lines if args.sprt is not None else lines[:-1]:
        print(line)
    for note in notes or []:
        print(note)
    sys.stdout.flush()
