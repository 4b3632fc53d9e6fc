"""The lab's figures (matplotlib, Agg): metric distributions of runs, one match round by round,
mean drama against the number of rounds, and the three drama means of each run in 3-D."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from partida.lab.metrics import METRICS

BINS = 40
DRAMAS = ("drama_points", "drama_position", "drama_path")


def label_of(report: dict) -> str:
    options = ",".join(f"{k}={v}" for k, v in report["options"].items())
    return f"#{report.get('run_id', '?')} {report['game']}" + (f" ({options})" if options else "")


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: Path, rect: tuple[float, float, float, float] = (0, 0, 1, 1)) -> None:
    """Lay out, write and let go of a figure (pyplot keeps every open figure alive)."""
    fig.tight_layout(rect=rect)
    fig.savefig(path, dpi=80)
    _pyplot().close(fig)


def _density(values: Sequence[float]) -> tuple[list[float], list[float]] | None:
    """A Gaussian kernel density of `values` (scipy, Scott's bandwidth) on [0, 1], scaled to a
    share of matches per histogram bin so it lies on the histogram it smooths. None when the
    values cannot carry a density (fewer than two distinct values)."""
    if len(set(values)) < 2:
        return None
    from scipy.stats import gaussian_kde

    kde = gaussian_kde(list(values))
    xs = [i / 400 for i in range(401)]
    return xs, [float(y) / BINS for y in kde(xs)]


def plot_runs(runs: Sequence[tuple[dict, list[dict]]], path: Path) -> None:
    """Histogram outlines (share of matches per bin, values in [0, 1]) so curves overlay, each
    with its kernel density curve dashed in the same colour."""
    plt = _pyplot()
    fig, axes = plt.subplots(2, 3, figsize=(13, 7))
    edges = [i / BINS for i in range(BINS + 1)]
    for ax, name in zip(axes.flat, METRICS, strict=True):
        for report, metrics in runs:
            values = [m[name] for m in metrics]
            if not values:
                continue
            weights = [1 / len(values)] * len(values)
            _, _, patches = ax.hist(values, bins=edges, weights=weights, histtype="step", label=label_of(report))
            curve = _density(values)
            if curve is not None:
                ax.plot(*curve, linestyle="--", linewidth=1, color=patches[0].get_edgecolor())
        ax.set_title(name.replace("_", " "))
        ax.set_xlim(0, 1)
        ax.set_xlabel("value")
        ax.set_ylabel("share of matches")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(3, max(1, len(labels))), fontsize="small")
    _save(fig, path, rect=(0, 0.08, 1, 1))


def plot_match(rounds: Sequence[dict[str, Any]], title: str, path: Path) -> None:
    """One match: each player's score and position (rank, 1 on top) after every round."""
    plt = _pyplot()
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    xs = [row["round"] for row in rounds]
    players = len(rounds[0]["scores"]) if rounds else 0
    for p in range(players):
        top.plot(xs, [row["scores"][p] for row in rounds], marker="o", label=f"player {p + 1}")
        bottom.plot(xs, [row["ranks"][p] for row in rounds], marker="o", label=f"player {p + 1}")
    top.set_ylabel("score")
    top.set_title(title)
    top.legend(fontsize="small")
    bottom.set_ylabel("position")
    bottom.set_xlabel("round")
    bottom.set_yticks(range(1, players + 1))
    bottom.invert_yaxis()
    _save(fig, path)


def rounds_of(report: dict) -> int | None:
    """A run's number of rounds: its `rounds` option (as the study's variants set it)."""
    for key, value in report["options"].items():
        if key.lower() == "rounds" and isinstance(value, int):
            return value
    return None


def plot_drama_rounds(runs: Sequence[dict], path: Path) -> None:
    """Mean drama (over the matches above 0) against the number of rounds, one line per drama
    measure and game, variants sorted by rounds. Runs without a `rounds` option are left out."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    by_game: dict[str, list[tuple[int, dict]]] = {}
    for report in runs:
        n = rounds_of(report)
        if n is not None:
            by_game.setdefault(report["game"], []).append((n, report))
    for game, points in sorted(by_game.items()):
        points.sort(key=lambda p: p[0])
        for name in DRAMAS:
            ys = [r["summary"]["metrics"][name]["mean"] for _, r in points]
            ax.plot([n for n, _ in points], ys, marker="o", label=f"{game}: {name.replace('_', ' ')}")
    ax.set_xlabel("rounds")
    ax.set_ylabel("mean drama (matches above 0)")
    ax.legend(fontsize="small")
    _save(fig, path)


def plot_drama_3d(runs: Sequence[dict], path: Path) -> None:
    """Each run as one point: its mean drama by points, by position and by path."""
    plt = _pyplot()
    fig = plt.figure(figsize=(8, 7))
    ax = fig.add_subplot(projection="3d")
    for report in runs:
        x, y, z = (report["summary"]["metrics"][name]["mean"] for name in DRAMAS)
        ax.scatter([x], [y], [z], label=label_of(report))
    ax.set_xlabel("drama by points")
    ax.set_ylabel("drama by position")
    ax.set_zlabel("drama by path")
    ax.legend(fontsize="small")
    _save(fig, path)
