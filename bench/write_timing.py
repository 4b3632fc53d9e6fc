"""Runs `partida` with the SQLite writer's timings recorded, for `cpu_per_move.py --write-timing`.

At M = 10 each move waits for its own commit, so how long a batch takes from the event loop's
hand-over to the callback that tells its writers, and where that goes (the transaction in the
writer's thread, its CPU, the COMMIT with its sync), is what bounds moves per second. The
writer's methods are wrapped here, in the server's own process, and a JSON summary is written
to OUT when it exits; figures a build does not have (an older writer) are left out. It times
the thread writer (`PARTIDA_SQLITE_WRITER=thread`): the writer process's work happens in
another process, out of these wrappers' reach.

    python bench/write_timing.py OUT.json serve --db sqlite:///p.db ...
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from partida.storage import sqlite_process, sqlite_writer


def percentiles(values: list[float]) -> dict[str, float] | None:
    """p50 and p90 in milliseconds."""
    if not values:
        return None
    ordered = sorted(values)
    pick = lambda q: round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)  # noqa: E731
    return {"p50": pick(0.5), "p90": pick(0.9), "n": len(ordered)}


def record(out: str) -> None:
    writer = sqlite_writer.SqliteWriter
    handed: list[float] = []
    runs: list[float] = []
    run_cpu: list[float] = []
    writes: list[int] = []
    commits: list[float] = []
    alone = [0]

    # The hand-over: `enqueue` (a build whose writer holds its runner), else `_queue_job`.
    name = "enqueue" if hasattr(writer, "enqueue") else "_queue_job" if hasattr(writer, "_queue_job") else None
    if name is not None:
        queue_job = getattr(writer, name)

        def timed_queue_job(self: Any, batch: Any, done: Callable[[Any, Any], None]) -> None:
            start = time.perf_counter()

            def timed_done(result: Any, exc: Any) -> None:
                handed.append(time.perf_counter() - start)
                done(result, exc)

            queue_job(self, batch, timed_done)

        setattr(writer, name, timed_queue_job)

    # The transactions: the runner the writer holds (`sqlite_process.Batches`), else its own.
    runner: Any = sqlite_process.Batches if hasattr(sqlite_process, "Batches") else writer
    run = runner.run

    def timed_run(self: Any, jobs: list[Any]) -> Any:
        start, cpu = time.perf_counter(), time.thread_time()
        try:
            return run(self, jobs)
        finally:
            runs.append(time.perf_counter() - start)
            run_cpu.append(time.thread_time() - cpu)
            writes.append(sum(job.count for job in jobs))

    runner.run = timed_run

    # The driver's calls: the writer's own (an older writer), else those of the runner it shares
    # with the writer's process, `sqlite_process.Batches`.
    owner: Any = writer if hasattr(writer, "_call") else sqlite_process
    call = owner._call
    sql_at = 0 if owner is sqlite_process else 1  # (sql, function, ...) or (conn, sql, function, ...)

    def timed_call(*args: Any) -> Any:
        if args[sql_at] != "COMMIT":
            return call(*args)
        start = time.perf_counter()
        try:
            return call(*args)
        finally:
            commits.append(time.perf_counter() - start)

    if owner is sqlite_process:
        sqlite_process._call = timed_call  # type: ignore[attr-defined]
    else:
        writer._call = staticmethod(timed_call)  # type: ignore[method-assign]

    counts_alone = hasattr(runner, "_autocommit")
    if counts_alone:
        autocommit = runner._autocommit

        def counted_autocommit(self: Any, *args: Any) -> None:
            alone[0] += 1
            autocommit(self, *args)

        runner._autocommit = counted_autocommit

    def report() -> None:
        figures = {
            "handed_over_to_told_ms": percentiles(handed),
            "transaction_ms": percentiles(runs),
            "transaction_cpu_ms": percentiles(run_cpu),
            "commit_ms": percentiles(commits),
            "writes_per_transaction": round(sum(writes) / len(writes), 2) if writes else None,
            "transactions_without_begin": alone[0] if counts_alone else None,
        }
        with open(out, "w") as file:
            json.dump(figures, file)

    atexit.register(report)


def main() -> None:
    out = sys.argv[1]
    sys.argv = ["partida", *sys.argv[2:]]
    os.environ["PARTIDA_SQLITE_WRITER"] = "thread"
    record(out)
    from partida.cli import main as partida

    sys.exit(partida())


if __name__ == "__main__":
    main()
