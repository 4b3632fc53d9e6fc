"""Keeping lab runs: one `lab_runs` row per run, one `lab_matches` row per match (bulk insert)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from sqlalchemy import insert, select

from partida.lab.simulate import MatchRecord, RunSpec
from partida.storage.database import Database
from partida.storage.models import LabMatch, LabRun

BATCH = 2000


async def _save_run(
    url: str | None, spec: RunSpec, seconds: float, summary: dict, records: Sequence[MatchRecord]
) -> int:
    db = await Database.open(url)
    try:
        async with db.session() as session:
            run = LabRun(
                game=spec.game,
                options=spec.options,
                agents=list(spec.agents),
                seats=spec.seats,
                seed=spec.seed,
                n=spec.n,
                seconds=seconds,
                summary=summary,
            )
            session.add(run)
            await session.flush()
            rows = [
                {
                    "run_id": run.id,
                    "index": r.index,
                    "seed": r.seed,
                    "result": r.result,
                    "rounds": r.rounds,
                    "metrics": r.metrics,
                }
                for r in records
            ]
            for start in range(0, len(rows), BATCH):
                await session.execute(insert(LabMatch), rows[start : start + BATCH])
            await session.commit()
            return run.id
    finally:
        await db.close()


def save_run(url: str | None, spec: RunSpec, seconds: float, summary: dict, records: Sequence[MatchRecord]) -> int:
    """Store a run and its matches; returns the run id."""
    return asyncio.run(_save_run(url, spec, seconds, summary, records))


def open_store(url: str | None) -> None:
    """Open the database (creating and migrating it when new) and close it again: `StorageError`
    if it cannot be, so that a run is refused before its matches are played."""

    async def check() -> None:
        db = await Database.open(url)
        await db.close()

    asyncio.run(check())


def run_report(run: LabRun) -> dict[str, Any]:
    """The report of a stored run, in the shape `lab run --json` prints."""
    return {
        "run_id": run.id,
        "game": run.game,
        "options": run.options,
        "agents": run.agents,
        "seats": run.seats,
        "seed": run.seed,
        "n": run.n,
        "seconds": run.seconds,
        "matches_per_second": run.n / run.seconds if run.seconds else None,
        "summary": run.summary,
    }


async def _load(url: str | None, run_ids: Sequence[int], with_metrics: bool) -> list[tuple[dict, list[dict]]]:
    db = await Database.open(url)
    try:
        out = []
        async with db.session() as session:
            for run_id in run_ids:
                run = await session.get(LabRun, run_id)
                if run is None:
                    raise LookupError(f"there is no lab run {run_id}")
                metrics: list[dict] = []
                if with_metrics:
                    rows = await session.execute(
                        select(LabMatch.metrics).where(LabMatch.run_id == run_id).order_by(LabMatch.index)
                    )
                    metrics = [m for (m,) in rows]
                out.append((run_report(run), metrics))
        return out
    finally:
        await db.close()


def load_runs(url: str | None, run_ids: Sequence[int], with_metrics: bool = False) -> list[tuple[dict, list[dict]]]:
    """Each run's report and (if asked) its matches' metrics; `LookupError` for an unknown id."""
    return asyncio.run(_load(url, run_ids, with_metrics))


async def _load_matches(url: str | None, run_id: int) -> list[dict[str, Any]]:
    db = await Database.open(url)
    try:
        async with db.session() as session:
            if await session.get(LabRun, run_id) is None:
                raise LookupError(f"there is no lab run {run_id}")
            rows = await session.execute(
                select(LabMatch.index, LabMatch.seed, LabMatch.result, LabMatch.rounds, LabMatch.metrics)
                .where(LabMatch.run_id == run_id)
                .order_by(LabMatch.index)
            )
            return [
                {"index": i, "seed": seed, "result": result, "rounds": rounds, "metrics": metrics}
                for i, seed, result, rounds, metrics in rows
            ]
    finally:
        await db.close()


def load_matches(url: str | None, run_id: int) -> list[dict[str, Any]]:
    """Every match of a stored run whole (index, seed, result, per-round scores, metrics)."""
    return asyncio.run(_load_matches(url, run_id))
