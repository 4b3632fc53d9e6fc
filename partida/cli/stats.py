"""`partida stats sprt`: the SPRT verdict, Elo and its interval from counts alone, so a match
played elsewhere (fastchess, OpenBench, another machine) can be checked with the same formulas
`partida match --sprt` uses."""

from __future__ import annotations

import argparse
import math
from typing import Any

from partida.cli import CliError
from partida.cli.common import add_json_flag, print_json
from partida.stats.elo import Counts, Estimate, Pentanomial, Trinomial, estimate
from partida.stats.sprt import MODELS, SprtSpec, decide, llr


def register(sub: argparse._SubParsersAction) -> None:
    stats = sub.add_parser("stats", help="match statistics from counts: Elo, interval, SPRT")
    inner = stats.add_subparsers(dest="stats_command", metavar="COMMAND", required=True)
    s = inner.add_parser(
        "sprt",
        help="SPRT log-likelihood ratio, Elo with a 95%% interval and LOS from W/D/L or pair counts",
        description="Compute the sequential probability ratio test and Elo estimates of the first agent "
        "from its wins, draws and losses (trinomial) and, with --penta, from game pairs (pentanomial: "
        "the SPRT then uses the pairs, as fastchess does).",
    )
    s.add_argument("--wins", type=int, default=0, metavar="W")
    s.add_argument("--draws", type=int, default=0, metavar="D")
    s.add_argument("--losses", type=int, default=0, metavar="L")
    s.add_argument(
        "--penta",
        default=None,
        metavar="LL,LD,DD+WL,WD,WW",
        help="five counts of game pairs scoring 0, 1/4, 1/2, 3/4 and 1 for the first agent",
    )
    s.add_argument("--elo0", type=float, default=0.0, help="Elo of H0 (default: %(default)s)")
    s.add_argument("--elo1", type=float, default=5.0, help="Elo of H1 (default: %(default)s)")
    s.add_argument("--alpha", type=float, default=0.05, help="false H1 rate (default: %(default)s)")
    s.add_argument("--beta", type=float, default=0.05, help="false H0 rate (default: %(default)s)")
    s.add_argument(
        "--model", choices=MODELS, default="normalized", help="Elo model of the bounds (default: %(default)s)"
    )
    add_json_flag(s)
    s.set_defaults(func=run_sprt)


def parse_penta(text: str) -> Pentanomial:
    parts = text.split(",")
    try:
        values = [int(p) for p in parts]
    except ValueError:
        raise CliError(f"--penta {text!r}: five whole numbers separated by commas (LL,LD,DD+WL,WD,WW)") from None
    if len(values) != 5 or min(values) < 0:
        raise CliError(f"--penta {text!r}: five counts, none negative (LL,LD,DD+WL,WD,WW)")
    return Pentanomial(*values)


def report(spec: SprtSpec, trinomial: Trinomial, pentanomial: Pentanomial | None) -> dict[str, Any]:
    """What `stats sprt` and `match --sprt` print as JSON: the SPRT on the pairs when there are
    any, else on the games, with both estimates."""
    tested: Counts = pentanomial if pentanomial is not None and pentanomial.pairs else trinomial
    value = llr(spec, tested)
    out: dict[str, Any] = {
        "games": trinomial.games,
        "wins": trinomial.wins,
        "draws": trinomial.draws,
        "losses": trinomial.losses,
    }
    if trinomial.games:
        out["trinomial"] = estimate(trinomial).as_dict()
    if pentanomial is not None:
        out["penta"] = list(pentanomial.counts)
        out["pentanomial"] = estimate(pentanomial).as_dict()
    out["sprt"] = {
        "elo0": spec.elo0,
        "elo1": spec.elo1,
        "alpha": spec.alpha,
        "beta": spec.beta,
        "model": spec.model,
        "counts": "pentanomial" if tested is pentanomial else "trinomial",
        "llr": round(value, 4),
        "lower": round(spec.lower, 4),
        "upper": round(spec.upper, 4),
        "accepted": decide(spec, value),
    }
    return out


def elo_text(e: Estimate) -> str:
    def fmt(x: float) -> str:
        return f"{x:+.1f}" if math.isfinite(x) else ("+inf" if x > 0 else "-inf")

    return f"Elo {fmt(e.elo)} [{fmt(e.elo_low)}, {fmt(e.elo_high)}]"


def summary_lines(
    data: dict[str, Any], trinomial: Trinomial, pentanomial: Pentanomial | None, undecided: str = "continue"
) -> list[str]:
    """`undecided`: what the SPRT line says without a verdict (a match that reached its cap has
    nothing to continue)."""
    lines = []
    if trinomial.games:
        tri = estimate(trinomial)
        lines.append(
            f"games {trinomial.games}: W {trinomial.wins} D {trinomial.draws} L {trinomial.losses}"
            f"  {elo_text(tri)}  nElo {tri.nelo:+.1f} ± {tri.nelo_error:.1f}"
            f"  LOS {100 * tri.los:.1f}%  draws {100 * tri.draw_ratio:.1f}%"
        )
    if pentanomial is not None:
        pen = estimate(pentanomial)
        lines.append(
            "pairs {}: penta [{}]  {}  nElo {:+.1f} ± {:.1f}  LOS {:.1f}%  pair draws {:.1f}%".format(
                pentanomial.pairs,
                ", ".join(map(str, pentanomial.counts)),
                elo_text(pen),
                pen.nelo,
                pen.nelo_error,
                100 * pen.los,
                100 * pen.draw_ratio,
            )
        )
    s = data["sprt"]
    verdict = {"H1": "H1 accepted", "H0": "H0 accepted", None: undecided}[s["accepted"]]
    lines.append(
        f"SPRT [{s['elo0']:g}, {s['elo1']:g}] {s['model']} ({s['counts']}): "
        f"LLR {s['llr']:.2f} ({s['lower']:.2f}, {s['upper']:.2f}) {verdict}"
    )
    return lines


def run_sprt(args: argparse.Namespace) -> int:
    try:
        spec = SprtSpec(args.elo0, args.elo1, args.alpha, args.beta, args.model)
        trinomial = Trinomial(args.wins, args.draws, args.losses)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    pentanomial = parse_penta(args.penta) if args.penta is not None else None
    if trinomial.games == 0 and (pentanomial is None or pentanomial.pairs == 0):
        raise CliError("no results: give --wins/--draws/--losses or --penta")
    data = report(spec, trinomial, pentanomial)
    if args.json:
        print_json(data)
    else:
        for line in summary_lines(data, trinomial, pentanomial):
            print(line)
    return 0
