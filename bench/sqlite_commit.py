"""How long a small SQLite write takes in a thread while another thread of the process keeps the
GIL busy, as the server's event loop does beside its SQLite writer.

Every call into the driver lets go of the GIL and has to take it back from the busy thread, so
a transaction written as BEGIN, INSERT, COMMIT pays three such waits where one INSERT in the
driver's autocommit mode (SQLite commits a lone statement by itself) pays one. Same settings
as the server (WAL, synchronous=FULL), a fresh file in a temporary directory; one JSON line per
way of writing, with percentiles in milliseconds.

    python bench/sqlite_commit.py --writes 1500 --rows 3
"""

from __future__ import annotations

import argparse
import json
import socket
import sqlite3
import tempfile
import threading
import time
from pathlib import Path


def busy(stop: threading.Event, work: int) -> None:
    """Python work with a system call every `work` steps, like an event loop's turns."""
    left, right = socket.socketpair()
    total = 0
    while not stop.is_set():
        for i in range(work):
            total += i * i
        left.send(b"x")
        right.recv(16)


def timed_writes(path: Path, autocommit: bool, writes: int, rows: int) -> list[float]:
    conn = sqlite3.connect(path, isolation_level=None if autocommit else "", check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("CREATE TABLE actions (game INTEGER, idx INTEGER, seat INTEGER, action TEXT, clock TEXT, at TEXT)")
    sql = "INSERT INTO actions VALUES " + ", ".join(["(?, ?, ?, ?, ?, ?)"] * rows)
    spent = []
    for n in range(writes):
        values = tuple(v for i in range(rows) for v in (n, i, i % 2, "4", None, "2026-11-23 17:00:00.000000"))
        start = time.perf_counter()
        conn.execute(sql, values)
        if not autocommit:
            conn.commit()
        spent.append(time.perf_counter() - start)
        time.sleep(0.0005)  # the writer's thread waits for the next batch
    conn.close()
    return spent


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writes", type=int, default=1500, help="transactions per way (default: %(default)s)")
    parser.add_argument("--rows", type=int, default=3, help="rows per transaction (default: %(default)s)")
    parser.add_argument("--work", type=int, default=300, help="busy thread's steps between system calls")
    args = parser.parse_args()
    for busy_thread in (False, True):
        for autocommit in (False, True):
            stop = threading.Event()
            other = threading.Thread(target=busy, args=(stop, args.work), daemon=True)
            if busy_thread:
                other.start()
            try:
                with tempfile.TemporaryDirectory() as tmp:
                    spent = timed_writes(Path(tmp) / "p.db", autocommit, args.writes, args.rows)
            finally:
                stop.set()
                if busy_thread:
                    other.join()
            figures = {
                "write": "INSERT alone (autocommit)" if autocommit else "BEGIN, INSERT, COMMIT",
                "busy_thread": busy_thread,
                "writes": args.writes,
                "rows": args.rows,
                "ms_p50": percentile(spent, 0.5),
                "ms_p90": percentile(spent, 0.9),
                "ms_p99": percentile(spent, 0.99),
            }
            print(json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()
