"""The SPRT's error rates, measured: many simulated SPRTs between agents whose true Elo difference
is exactly elo0 (a verdict of H1 is a false positive, to be at most about alpha) or exactly elo1
(a verdict of H0 is a false negative, about beta), for each Elo model and for single games
(trinomial) and pairs (pentanomial). Wald's bounds are conservative and the LLR is looked at every
few games, so measured rates come out somewhat under alpha and beta.

Prints one JSON object per model and counting, then a summary line.

    nice -n 10 .venv/bin/python bench/sprt_error_rates.py --runs 2000 --elo1 20
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time

from partida.stats.simulation import logistic_for_nelo, simulate
from partida.stats.sprt import MODELS, SprtSpec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=500, help="SPRTs at each hypothesis (default: %(default)s)")
    parser.add_argument("--elo0", type=float, default=0.0)
    parser.add_argument("--elo1", type=float, default=20.0)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--beta", type=float, default=0.05)
    parser.add_argument("--draws", type=float, default=0.3, help="draw ratio of a game (default: %(default)s)")
    parser.add_argument("--check-every", type=int, default=8, help="games or pairs between looks at the LLR")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--models", default=",".join(MODELS))
    args = parser.parse_args()
    rng = random.Random(args.seed)
    rows = []
    for model in args.models.split(","):
        spec = SprtSpec(args.elo0, args.elo1, args.alpha, args.beta, model)  # type: ignore[arg-type]
        if model == "logistic":
            at = (args.elo0, args.elo1)
        else:
            at = (logistic_for_nelo(args.elo0, args.draws), logistic_for_nelo(args.elo1, args.draws))
        for paired in (False, True):
            started = time.perf_counter()
            under_h0 = [simulate(spec, at[0], args.draws, rng, paired, args.check_every) for _ in range(args.runs)]
            under_h1 = [simulate(spec, at[1], args.draws, rng, paired, args.check_every) for _ in range(args.runs)]
            false_h1 = sum(r.verdict == "H1" for r in under_h0) / args.runs
            false_h0 = sum(r.verdict == "H0" for r in under_h1) / args.runs
            row = {
                "model": model,
                "counts": "pentanomial" if paired else "trinomial",
                "elo0": args.elo0,
                "elo1": args.elo1,
                "true_logistic_elo": [round(x, 3) for x in at],
                "draw_ratio": args.draws,
                "runs_per_hypothesis": args.runs,
                "alpha": args.alpha,
                "measured_alpha": false_h1,
                "alpha_95": round(1.96 * math.sqrt(false_h1 * (1 - false_h1) / args.runs), 4),
                "beta": args.beta,
                "measured_beta": false_h0,
                "beta_95": round(1.96 * math.sqrt(false_h0 * (1 - false_h0) / args.runs), 4),
                "mean_games_h0": round(sum(r.games for r in under_h0) / args.runs, 1),
                "mean_games_h1": round(sum(r.games for r in under_h1) / args.runs, 1),
                "seconds": round(time.perf_counter() - started, 1),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(json.dumps({"summary": [[r["model"], r["counts"], r["measured_alpha"], r["measured_beta"]] for r in rows]}))


if __name__ == "__main__":
    main()
