"""CSV files of a stored run, for people who analyse elsewhere (R, a spreadsheet).

The separator is ';' as in the study's files. Players and rounds are 1-based, as printed there.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from partida.lab.metrics import METRICS


def write_scores(path: Path, matches: Sequence[dict[str, Any]], single: bool) -> None:
    """Per-round scores: `round;player;score` for one match (the study's format), with a leading
    `match` column (the match's index in the run) when the file holds several."""
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle, delimiter=";")
        writer.writerow(["round", "player", "score"] if single else ["match", "round", "player", "score"])
        for match in matches:
            for r, scores in enumerate(match["rounds"], start=1):
                for p, score in enumerate(scores, start=1):
                    row = [r, p, _number(score)]
                    writer.writerow(row if single else [match["index"], *row])


def write_metrics(path: Path, matches: Sequence[dict[str, Any]]) -> None:
    """One line per match: its index, seed, ranks and the six metrics."""
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle, delimiter=";")
        writer.writerow(["match", "seed", "ranks", *METRICS])
        for match in matches:
            ranks = " ".join(str(r) for r in match["result"].get("ranks", ()))
            writer.writerow([match["index"], match["seed"], ranks, *(repr(match["metrics"][m]) for m in METRICS)])


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value
