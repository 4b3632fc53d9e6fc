"""Server CPU per move under the peers' Node load generator, for two builds side by side.

Absolute figures on a shared machine move by a factor of two between runs; what survives the
noise is the same load against two builds of the server, alternating. Give each build's `partida`
executable (two checkouts, each with its own venv); for every round, each one in turn is started
(`partida serve --no-bots`, a fresh SQLite file, the abuse limits lifted as docs/speed.md says)
and loaded with the peers' `partida-load/load.js`; one JSON line per run: moves per second,
latency percentiles, and the server's CPU milliseconds per move (its /proc CPU time over moves),
with the same split between the event loop's thread, the others (the SQLite writer's thread if
chosen, asyncio's default executor) and the server's child processes (the SQLite writer's
process), counted over the whole load run, warm-up included.

    python bench/cpu_per_move.py --peers PEERS --m 100 --moves 20000 --rounds 2 \\
        OLD/.venv/bin/partida .venv/bin/partida

PEERS is the directory of the side-by-side harness against boardgame.io (docs/speed.md), kept
outside this repository; its Node load generator is PEERS/partida-load/load.js.

With `--db postgresql://USER:PASSWORD@HOST/DB` the servers store into that PostgreSQL database
instead, emptied before every run (every table its user owns there is dropped, and the server
migrates it afresh), so give it a throwaway database, such as one started as the tests start it.

With `--write-timing` (SQLite) each server runs under `write_timing.py`, with the thread writer
(`PARTIDA_SQLITE_WRITER=thread`), which records how long its writer takes per batch (from the
hand-over to the callback, the transaction, its CPU, the COMMIT), and each line gains those
figures under `sqlite_writes`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import tempfile
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from server_process import Served, served  # bench/server_process.py, beside this script


async def empty_postgres(url: str) -> None:
    """Drop every table the URL's user owns in its database's current schema."""
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        tables = await conn.fetch(
            "SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = current_schema()"
            " AND tableowner = current_user"
        )
        if tables:
            await conn.execute(f"DROP TABLE {', '.join(t[0] for t in tables)} CASCADE")
    finally:
        await conn.close()


def served_build(start: Sequence[str], db: str) -> AbstractContextManager[Served]:
    """A server of the build under test, as `start` runs it (its `partida`, or its Python and a
    bootstrap): without `--log-level`, which it may predate, and knocked at rather than greeted,
    since its protocol may not be the one this checkout's SDK speaks."""
    options = ("--no-bots", "--host", "127.0.0.1")
    return served(db, *options, partida=start, log_level=None, stderr=subprocess.DEVNULL, greet=False)


def peers_load(server: Served, peers: Path, m: int, moves: int) -> subprocess.CompletedProcess[str]:
    """The peers' Node load generator against `server`; it reads the server's CPU from /proc too."""
    env = {**os.environ, "PORT": str(server.port), "M": str(m), "MOVES": str(moves)}
    env |= {"SERVER_PID": str(server.pid), "CLK_TCK": str(os.sysconf("SC_CLK_TCK"))}
    return subprocess.run(["node", "load.js"], cwd=peers / "partida-load", env=env, capture_output=True, text=True)


def one_run(
    partida: str, peers: Path, m: int, moves: int, db: str | None, write_timing: bool = False
) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        timing = Path(tmp) / "writes.json"
        start = [partida]
        if write_timing:  # the same build's Python, with the SQLite writer's timings recorded
            bootstrap = Path(__file__).with_name("write_timing.py")
            start = [str(Path(partida).parent / "python"), str(bootstrap), str(timing)]
        if db is not None:
            asyncio.run(empty_postgres(db))
        with served_build(start, db or f"sqlite:///{tmp}/p.db") as server:
            before, children_before = thread_cpu(server.pid), children_cpu(server.pid)
            done = peers_load(server, peers, m, moves)
            after, children_after = thread_cpu(server.pid), children_cpu(server.pid)
        writes = json.loads(timing.read_text()) if write_timing and timing.exists() else None
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    cpu_seconds = figures["server_cpu_pct_avg"] / 100 * figures["wall_s"]
    loop = after.get(server.pid, 0.0) - before.get(server.pid, 0.0)
    others = sum(spent - before.get(tid, 0.0) for tid, spent in after.items() if tid != server.pid)
    children = sum(spent - children_before.get(pid, 0.0) for pid, spent in children_after.items())
    all_moves = max(1, figures["moves"] + figures["warmup"]["moves"])
    return {
        "partida": partida,
        "db": "postgresql" if db else "sqlite",
        "M": m,
        "moves": figures["moves"],
        "moves_per_s": figures["moves_per_s"],
        "latency_ms": figures["latency_ms"],
        "server_cpu_ms_per_move": round(1000 * cpu_seconds / max(1, figures["moves"]), 3),
        "cpu_ms_per_move_by_thread": {
            "event_loop": round(1000 * loop / all_moves, 3),
            "other_threads": round(1000 * others / all_moves, 3),
            "child_processes": round(1000 * children / all_moves, 3),
        },
        "errors": figures["errors"],
        **({"sqlite_writes": writes} if write_timing else {}),
    }


def thread_cpu(pid: int) -> dict[int, float]:
    """CPU seconds (user and system) spent so far by each thread of process `pid`, from /proc."""
    spent = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        seconds = _cpu_seconds(task / "stat")
        if seconds is not None:  # else the thread ended meanwhile
            spent[int(task.name)] = seconds
    return spent


def children_cpu(pid: int) -> dict[int, float]:
    """CPU seconds spent so far by each live child process of `pid` (the SQLite writer's
    process, whose CPU a move costs as much as the server's own)."""
    spent = {}
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            pids = children.read_text().split()
        except OSError:
            continue
        for child in pids:
            seconds = _cpu_seconds(Path(f"/proc/{child}/stat"))
            if seconds is not None:
                spent[int(child)] = seconds
    return spent


def _cpu_seconds(stat: Path) -> float | None:
    try:
        fields = stat.read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("partida", nargs="+", help="the partida executables to compare, run in turn")
    parser.add_argument("--peers", type=Path, required=True, help="the peers directory (with partida-load/)")
    parser.add_argument("--m", type=int, default=100, help="concurrent matches (default: %(default)s)")
    parser.add_argument("--moves", type=int, default=20000, help="moves per run (default: %(default)s)")
    parser.add_argument(
        "--db", help="a throwaway postgresql:// database, emptied before each run (default: a new SQLite file per run)"
    )
    parser.add_argument("--rounds", type=int, default=2, help="runs of each build (default: %(default)s)")
    parser.add_argument(
        "--write-timing",
        action="store_true",
        help="record the SQLite writer's timings in the server (bench/write_timing.py) and report them",
    )
    args = parser.parse_args()
    if not (args.peers / "partida-load" / "node_modules").is_dir():
        subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=args.peers / "partida-load", check=True)
    for _ in range(args.rounds):
        for partida in args.partida:
            figures = one_run(str(Path(partida).resolve()), args.peers, args.m, args.moves, args.db, args.write_timing)
            print(json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()
