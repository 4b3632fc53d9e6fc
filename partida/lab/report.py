"""The summary of a run (specs/metrics.md, "What a lab run reports"), and its table."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from partida.lab.metrics import ABOVE_ZERO, METRICS


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    if not values:
        return 0.0, 0.0
    mean = sum(values) / len(values)
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


def summarize(results: Sequence[dict[str, Any]], metrics: Sequence[dict[str, float]], seats: int) -> dict[str, Any]:
    """Win share per seat (sole first places), draw share (shared first places), the study's win
    share (`wins_earliest_seat`: a shared first place is credited to its earliest seat, so there are
    no draws and the shares sum to 1), each seat's first-place credit (`shares`: 1 for a sole
    first place, 1/k for one shared by k; its mean is what comparing agents needs) with the
    half-width of its 95% interval (`shares_ci95`, normal approximation), and the metrics:
    for drama and lead change, how many matches score above 0 and the mean and standard deviation
    over those;
    for the others, mean and standard deviation over all matches (population std)."""
    n = len(results)
    wins = [0] * seats
    earliest = [0] * seats
    draws = 0
    credit = [[0.0] * n for _ in range(seats)]
    for m, result in enumerate(results):
        first = [s for s, r in enumerate(result["ranks"]) if r == 1]
        for s in first:
            credit[s][m] = 1.0 / len(first)
        if first:
            earliest[first[0]] += 1
        if len(first) == 1:
            wins[first[0]] += 1
        else:
            draws += 1
    summary: dict[str, Any] = {
        "matches": n,
        "wins": [w / n if n else 0.0 for w in wins],
        "draws": draws / n if n else 0.0,
        "wins_earliest_seat": [w / n if n else 0.0 for w in earliest],
        "shares": [],
        "shares_ci95": [],
        "metrics": {},
    }
    for values in credit:
        mean, std = _mean_std(values)
        summary["shares"].append(mean)
        summary["shares_ci95"].append(1.96 * std / math.sqrt(n - 1) if n > 1 else 0.0)
    for name in METRICS:
        values = [m[name] for m in metrics]
        if name in ABOVE_ZERO:
            positive = [v for v in values if v > 0]
            mean, std = _mean_std(positive)
            summary["metrics"][name] = {"above_zero": len(positive), "mean": mean, "std": std}
        else:
            mean, std = _mean_std(values)
            summary["metrics"][name] = {"mean": mean, "std": std}
    return summary


def report_table(report: dict[str, Any]) -> Any:
    """A rich table of a report (the run's facts, then one line per metric)."""
    from rich.table import Table

    summary = report["summary"]
    title = f"{report['game']} {report['options']} — {report['n']} matches, seed {report['seed']}"
    table = Table(title=title)
    table.add_column("metric")
    table.add_column("matches > 0", justify="right")
    table.add_column("mean", justify="right")
    table.add_column("std", justify="right")
    for name, values in summary["metrics"].items():
        table.add_row(name, str(values.get("above_zero", "")), f"{values['mean']:.4f}", f"{values['std']:.4f}")
    wins = ", ".join(f"{w:.3f}" for w in summary["wins"])
    caption = f"wins per seat: {wins}; draws: {summary['draws']:.3f}"
    if "wins_earliest_seat" in summary:  # runs stored before it was reported lack it
        study = ", ".join(f"{w:.3f}" for w in summary["wins_earliest_seat"])
        caption += f"; ties to the earliest seat (the study's count): {study}"
    if "shares" in summary:
        shares = ", ".join(f"{w:.3f}±{h:.3f}" for w, h in zip(summary["shares"], summary["shares_ci95"], strict=True))
        caption += f"; first-place shares (ties split, 95% interval): {shares}"
    table.caption = f"{caption}; {report.get('seconds', 0):.1f} s"
    return table
