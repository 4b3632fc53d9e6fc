"""`partida ladder plot`: each bot's rating over its games, with its uncertainty band (matplotlib,
Agg, so it draws on a server with no display)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from partida.competition.ladder_report import Point
from partida.competition.ratings import CONFIDENCE


def plot_ratings(series: Mapping[str, Sequence[Point]], path: Path, title: str) -> None:
    """One line per bot: mu over the bot's own games, shaded mu +- 3 sigma (the band the
    displayed rating `mu - 3 sigma` is the bottom of), drawn in standings order so the legend
    reads as the table does."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 6))
    for name, points in series.items():
        games = [p.games for p in points]
        mu = [p.mu for p in points]
        low = [p.mu - CONFIDENCE * p.sigma for p in points]
        high = [p.mu + CONFIDENCE * p.sigma for p in points]
        (line,) = ax.plot(games, mu, label=f"{name} ({points[-1].display:.1f})", linewidth=1.6)
        ax.fill_between(games, low, high, color=line.get_color(), alpha=0.12, linewidth=0)
    ax.set_title(title)
    ax.set_xlabel("games played by the bot")
    ax.set_ylabel(f"rating mu (band: mu ± {CONFIDENCE:g} sigma; legend: mu - {CONFIDENCE:g} sigma)")
    ax.grid(alpha=0.3)
    if series:
        ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
