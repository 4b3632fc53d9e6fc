"""Distributions of the six metrics, one curve per run, on a 2x3 grid (matplotlib, Agg)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from partida.lab.metrics import METRICS

BINS = 40


def label_of(report: dict) -> str:
    options = ",".join(f"{k}={v}" for k, v in report["options"].items())
    return f"#{report.get('run_id', '?')} {report['game']}" + (f" ({options})" if options else "")


def plot_runs(runs: Sequence[tuple[dict, list[dict]]], path: Path) -> None:
    """Histogram outlines (share of matches per bin, values in [0, 1]) so curves overlay."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(13, 7))
    edges = [i / BINS for i in range(BINS + 1)]
    for ax, name in zip(axes.flat, METRICS, strict=True):
        for report, metrics in runs:
            values = [m[name] for m in metrics]
            if not values:
                continue
            weights = [1 / len(values)] * len(values)
            ax.hist(values, bins=edges, weights=weights, histtype="step", label=label_of(report))
        ax.set_title(name.replace("_", " "))
        ax.set_xlim(0, 1)
        ax.set_xlabel("value")
        ax.set_ylabel("share of matches")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(3, max(1, len(labels))), fontsize="small")
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(path, dpi=80)
    plt.close(fig)
