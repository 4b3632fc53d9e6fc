"""The SQLite writer's own process: it commits the group writer's batches on a SQLite file, on a
GIL of its own.

Why a process: in a thread of the server, each call into SQLite (a statement, the COMMIT's sync)
lets go of the GIL and must take it back from the event loop, which holds it most of the time;
at ten concurrent matches that wait is half the writer's busy time. Here the server plans each
batch (the rows as the driver takes them, `writes.Planner`) and sends it down a pipe; this
process runs the statements, commits, and sends back each batch's results or error. It imports
only the standard library (SQLAlchemy only if a ladder's rating hook must run here), so it
starts in a few hundredths of a second.

The protocol on the pipes is frames of a 4-byte length and a body (`frame`). Down: a `Job` (and
`(RESET, id)`, to open a new connection). Up: a list of `(job id, results, error)`; an error is
`("db", sql, the driver's exception)`, `("missing", op index)` (an UPDATE that must change a row
changed none) or `("other", exception)`. Everything in a frame comes from the server that
started this process, never from a client.

Each transaction takes every batch that arrived while the one before it was committing (up to
`MERGED_WRITES` writes), so one sync serves them all; after a constraint's failure each of its
batches runs again on its own, so that only the offending one gets the error. `Batches` does that
(with a lone INSERT committed without BEGIN and COMMIT, and multi-row INSERTs), here and in the
thread writer (`sqlite_writer`), which hands it batches in the same form, on a connection
SQLAlchemy opened.
It ignores SIGINT and SIGTERM (a Ctrl-C reaches the whole process group): the server decides when
it stops, by closing the pipe, after which it commits what it was given and exits. If the server
dies, the closed pipe stops it the same way.
"""

from __future__ import annotations

import functools
import importlib
import marshal
import os
import pickle
import select
import signal
import sqlite3
import struct
import sys
from collections.abc import Callable
from typing import Any, NamedTuple

from partida.storage.sqlite_settings import SQLITE_BUSY_TIMEOUT_MS, apply_pragmas

INSERT_ROWS = 128  # rows per multi-row INSERT on SQLite (6 columns: far below its 32,766 parameters)
MERGED_WRITES = 512  # at most this many writes in one transaction of merged batches
RESET = "reset"  # a control job: drop the connection, open a new one for the next batch
_HEADER = struct.Struct("<I")
# Bytes asked of a pipe per read: its capacity (64 KiB on Linux), more is never there at once.
# Asking 1 MiB cost three system calls a read: `os.read` allocates the whole size first, which
# above malloc's 128 KiB threshold is an mmap, shrunk by a mremap, freed by a munmap.
PIPE_READ = 1 << 16


class WireOp(NamedTuple):
    """One statement's rows in a planned batch, as the driver takes them. `kind`: "insert" (a
    plain INSERT, whose rows may go in one statement), "many" (an executemany), "returning" (one
    value per row, the new id), "must_change" (each row must change one), "hook" (a function of
    the server's, called with a SQLAlchemy connection and `params`, if `when_sql` finds a row for
    one of `when_rows`; down the pipe, named "module:qualified name", see `hook_name`)."""

    kind: str
    sql: str
    rows: list[tuple[Any, ...]]
    positions: list[int]  # each row's write in its batch
    hook: Callable[..., Any] | str | None = None
    params: list[dict[str, Any]] | None = None
    when_sql: str | None = None
    when_rows: list[tuple[Any, ...]] | None = None


class Job(NamedTuple):
    id: int
    ops: list[WireOp]
    count: int  # writes in the batch

    @classmethod
    def received(cls, message: tuple[Any, ...]) -> Job:
        """A job from its frame, where it and its ops are plain tuples (for `marshal`)."""
        job_id, ops, count = message
        return cls(job_id, [WireOp(*op) for op in ops], count)


Outcome = tuple[int, "list[Any] | None", "tuple[Any, ...] | None"]


def frame(message: Any) -> bytes:
    """`message` as a frame: marshalled when it is only built-in values (a batch's rows and
    hooks' names, its results), a few times faster than pickling; pickled when it holds more (an
    error)."""
    try:
        body = b"m" + marshal.dumps(message)
    except ValueError:
        body = b"p" + pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(body)) + body


class Frames:
    """Splits bytes read from a pipe into messages."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[Any]:
        """The messages `data` completes (a list, so that a caller failing on one of them
        leaves the buffer as it should be)."""
        buffer = self._buffer
        buffer += data
        messages = []
        start = 0
        while len(buffer) - start >= _HEADER.size:
            (size,) = _HEADER.unpack_from(buffer, start)
            end = start + _HEADER.size + size
            if len(buffer) < end:
                break
            body = bytes(buffer[start + _HEADER.size + 1 : end])
            messages.append(marshal.loads(body) if buffer[start + _HEADER.size] == ord("m") else pickle.loads(body))
            start = end
        del buffer[:start]
        return messages


class Failed(Exception):
    """A statement's failure, with what the server needs to raise it as SQLAlchemy would: `error`
    as the protocol carries it (`("db", sql, the driver's exception)` or `("missing", op index)`)."""

    def __init__(self, error: tuple[Any, ...]) -> None:
        super().__init__(error)
        self.error = error


class _Unprepared(Exception):
    """A hook must run before its runner has a SQLAlchemy connection."""


def hook_name(hook: Callable[..., Any]) -> str | None:
    """How a hook goes down the pipe: "module:qualified name", a string `marshal` takes where
    the function needed a pickle, and which the process imports only when the hook runs. None
    for a function no module names (a local one): the thread writer runs that."""
    module, qualname = getattr(hook, "__module__", None), getattr(hook, "__qualname__", None)
    if not module or not qualname or "<locals>" in qualname:
        return None
    name = f"{module}:{qualname}"
    try:
        return name if resolve_hook(name) is hook else None
    except (ImportError, AttributeError):
        return None


def resolve_hook(name: str) -> Callable[..., Any]:
    module, _, qualname = name.partition(":")
    found: Any = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


_resolved = functools.lru_cache(maxsize=64)(resolve_hook)  # the server's few hooks, each imported once


def _constraint(exc: BaseException) -> bool:
    """A failure that rolled back the batch and leaves the connection fine: a constraint's (the
    driver's, or SQLAlchemy's in a hook, which keeps the driver's as `orig`), or an UPDATE that
    changed no row."""
    if isinstance(exc, Failed):
        return exc.error[0] == "missing" or isinstance(exc.error[-1], sqlite3.IntegrityError)
    return isinstance(getattr(exc, "orig", None), sqlite3.IntegrityError)


def _error(exc: Exception) -> tuple[Any, ...]:
    return exc.error if isinstance(exc, Failed) else ("other", exc)


class Batches:
    """Runs batches on one connection to `path`, kept open between them: this process's runner,
    and the thread writer's (`sqlite_writer.SqliteWriter` holds one, which opens the connection
    through SQLAlchemy and sends the statements only SQLAlchemy completes as hooks)."""

    def __init__(self, path: str, connect: Callable[[], tuple[sqlite3.Connection, Any]] | None = None) -> None:
        """`connect`: opens the connection to run batches on, and a SQLAlchemy connection on it
        for the hooks (or None, made when a hook first runs); by default, the driver's own
        connection with every SQLite connection's settings."""
        self.path = path
        self._open = connect or self._connect
        self._driver: sqlite3.Connection | None = None
        self._conn: Any = None  # a SQLAlchemy connection on `_driver`, for hooks
        self._inserts: dict[str, tuple[str | None, str | None]] = {}

    def reset(self) -> None:
        driver, self._driver = self._driver, None
        if self._conn is not None:
            self._conn.close()
            self._conn.engine.dispose()
            self._conn = None
        if driver is not None:
            driver.close()

    def run_jobs(self, jobs: list[Job]) -> list[Outcome]:
        """Run `jobs` in one transaction; after a constraint's failure, each again on its own."""
        try:
            return [(job.id, results, None) for job, results in zip(jobs, self.run(jobs), strict=True)]
        except Exception as exc:
            if len(jobs) == 1 or not _constraint(exc):
                return [(job.id, None, _error(exc)) for job in jobs]
        outcomes: list[Outcome] = []
        for job in jobs:
            try:
                outcomes.append((job.id, self.run([job])[0], None))
            except Exception as alone:
                outcomes.append((job.id, None, _error(alone)))
        return outcomes

    def run(self, jobs: list[Job]) -> list[list[Any]]:
        """One transaction for `jobs`; for each, the value each write's returning step gave
        (None for the others). The transaction is the driver's own (begun by its first
        statement), committed here; a hook's SQLAlchemy connection shares it."""
        if self._driver is None:
            self._driver, self._conn = self._open()
        conn = self._driver
        every: list[list[Any]] = []
        try:
            alone = self._one_statement(jobs)
            if alone is not None and not conn.in_transaction:
                self._autocommit(conn, *alone)
                return [[None] * job.count for job in jobs]
            cursor = conn.cursor()
            try:
                for job in jobs:
                    results: list[Any] = [None] * job.count
                    for index, op in enumerate(job.ops):
                        self._run_op(cursor, index, op, results)
                    every.append(results)
            finally:
                cursor.close()
            if self._conn is not None and self._conn.in_transaction():
                self._conn.commit()
            else:
                _call("COMMIT", conn.commit)
            return every
        except _Unprepared:
            # A hook must run, and SQLAlchemy, whose first use of a connection ends with a
            # rollback, is not set up on this connection yet: once per connection (in practice, once
            # in the process's life), the batch runs again.
            self._rollback()
            self._hook_connection()
            return self.run(jobs)
        except BaseException as exc:
            if _constraint(exc):
                self._rollback()
            else:
                # A failure of the file or the driver (or a hook's): the next batch gets a new connection.
                self._drop()
            raise

    def _run_op(self, cursor: sqlite3.Cursor, index: int, op: WireOp, results: list[Any]) -> None:
        kind, sql, rows = op.kind, op.sql, op.rows
        if kind == "hook":
            if op.when_sql is not None and not self._found(cursor, op.when_sql, op.when_rows or []):
                return  # nothing for the hook to do in this batch
            assert op.hook is not None and op.params is not None
            if self._conn is None:
                raise _Unprepared
            hook = op.hook if callable(op.hook) else _resolved(op.hook)
            values = hook(self._conn, op.params)
            for position, value in zip(op.positions, values, strict=True):
                if value is not None:
                    results[position] = value
        elif kind == "returning":
            for position, row in zip(op.positions, rows, strict=True):
                results[position] = _call(sql, cursor.execute, sql, row).fetchone()[0]
        elif kind == "insert" and len(rows) > 1:
            for many_sql, values in self._many(sql, rows):
                _call(many_sql, cursor.execute, many_sql, values)
        else:
            _call(sql, cursor.executemany, sql, rows)
            if kind == "must_change" and cursor.rowcount != len(rows):
                raise Failed(("missing", index))

    def _found(self, cursor: sqlite3.Cursor, sql: str, rows: list[tuple[Any, ...]]) -> bool:
        return any(_call(sql, cursor.execute, sql, row).fetchone() is not None for row in rows)

    def _hook_connection(self) -> Any:
        """A SQLAlchemy connection on this runner's connection, in its transaction (SQLAlchemy
        leaves beginning to the driver on SQLite). Made only when a hook runs: the rating hook's
        guard finds a row only for a ladder's game, and SQLAlchemy and the hook's module are
        most of this process's memory (28 of its 43 MB at M = 500)."""
        if self._conn is None:
            from sqlalchemy import create_engine
            from sqlalchemy.pool import StaticPool

            driver = self._driver
            engine = create_engine("sqlite://", creator=lambda: driver, poolclass=StaticPool)
            self._conn = engine.connect()
        return self._conn

    def _rollback(self) -> None:
        if self._conn is not None and self._conn.in_transaction():
            self._conn.rollback()
        elif self._driver is not None:
            _call("ROLLBACK", self._driver.rollback)

    def _drop(self) -> None:
        try:
            self.reset()
        except Exception:
            self._driver, self._conn = None, None

    def _connect(self) -> tuple[sqlite3.Connection, Any]:
        """The connection to run batches on, with every SQLite connection's settings."""
        conn = sqlite3.connect(self.path, timeout=SQLITE_BUSY_TIMEOUT_MS / 1000)
        cursor = conn.cursor()
        try:
            apply_pragmas(cursor)
        finally:
            cursor.close()
        return conn, None

    def _one_statement(self, jobs: list[Job]) -> tuple[str, tuple[Any, ...]] | None:
        """The batches of `jobs` as one statement, when they are nothing but rows of one plain
        INSERT (say, actions from several rooms), few enough for one statement; else None."""
        rows: list[tuple[Any, ...]] = []
        sql = None
        for job in jobs:
            if len(job.ops) != 1 or job.ops[0].kind != "insert":
                return None
            op = job.ops[0]
            if sql is None:
                sql = op.sql
            elif op.sql != sql:
                return None
            rows += op.rows
        if sql is None or len(rows) > INSERT_ROWS:
            return None
        if len(rows) == 1:
            return sql, rows[0]
        statements = self._many(sql, rows)
        return statements[0] if len(statements) == 1 else None  # an INSERT it could not widen

    def _autocommit(self, conn: sqlite3.Connection, sql: str, values: tuple[Any, ...]) -> None:
        """One statement committed by itself (SQLite makes a lone statement its own transaction):
        one step of the driver where BEGIN, the statement and COMMIT were three."""
        saved = conn.isolation_level
        conn.isolation_level = None  # the driver's autocommit: no implicit BEGIN
        try:
            _call(sql, conn.execute, sql, values)
        finally:
            conn.isolation_level = saved

    def _many(self, sql: str, rows: list[tuple[Any, ...]]) -> list[tuple[str, tuple[Any, ...]]]:
        return multi_row(self._inserts, sql, rows)


def _call(sql: str, function: Callable[..., Any], *args: Any) -> Any:
    """`function(*args)` on the driver, its error kept with the statement that raised it."""
    try:
        return function(*args)
    except sqlite3.Error as exc:
        raise Failed(("db", sql, exc)) from exc


def multi_row(
    splits: dict[str, tuple[str | None, str | None]], sql: str, rows: list[tuple[Any, ...]]
) -> list[tuple[str, tuple[Any, ...]]]:
    """A plain INSERT's `rows` as multi-row INSERTs of `INSERT_ROWS` rows: one step of the
    driver (which, in a thread, lets go of the GIL and takes it back once per step) rather than
    one a row. `splits` caches each statement's head and row (`split_insert`)."""
    split = splits.get(sql)
    if split is None:
        split = splits[sql] = split_insert(sql)
    head, one = split
    if head is None or one is None:
        return [(sql, row) for row in rows]
    statements = []
    for start in range(0, len(rows), INSERT_ROWS):
        chunk = rows[start : start + INSERT_ROWS]
        statements.append((f"{head} VALUES {', '.join([one] * len(chunk))}", tuple(v for r in chunk for v in r)))
    return statements


def split_insert(sql: str) -> tuple[str | None, str | None]:
    """ "INSERT INTO t (a, b) VALUES (?, ?)" as its head and its one row, or (None, None)."""
    head, sep, row = sql.rpartition(" VALUES ")
    if not sep or not (row.startswith("(") and row.endswith(")")) or ")" in row[:-1]:
        return None, None
    return head, row


def serve(path: str, down: int, up: int) -> None:
    """Read jobs from `down`, run them, write their outcomes to `up`, until `down` closes."""
    batches = Batches(path)
    frames = Frames()
    waiting: list[Any] = []
    open_ = True
    # poll, not select: a server with thousands of connections hands this process pipes whose
    # numbers are past select's limit of 1024 (it died on them, and every write with it).
    incoming = select.poll()
    incoming.register(down, select.POLLIN)
    while open_ or waiting:
        if not waiting:
            data = os.read(down, PIPE_READ)  # blocks until the server sends something
            if not data:
                break
            waiting += frames.feed(data)
            continue
        # Whatever else has arrived joins this transaction.
        while open_ and incoming.poll(0):
            data = os.read(down, PIPE_READ)
            if not data:
                open_ = False
                break
            waiting += frames.feed(data)
        jobs: list[Job] = []
        writes = 0
        while waiting and writes < MERGED_WRITES:
            item = waiting[0]
            if item[0] == RESET:
                if jobs:
                    break
                waiting.pop(0)
                batches.reset()
                _write(up, frame([(item[1], None, None)]))
                continue
            job = Job.received(waiting.pop(0))
            jobs.append(job)
            writes += job.count
        if jobs:
            _write(up, frame(_sendable(batches.run_jobs(jobs))))
    batches.reset()


def _sendable(outcomes: list[Outcome]) -> list[Outcome]:
    """`outcomes` with any error the pickle cannot carry (a hook's exotic exception) as text."""
    for i, (job, results, error) in enumerate(outcomes):
        if error is not None:
            try:
                pickle.dumps(error)
            except Exception:
                outcomes[i] = (job, results, ("other", RuntimeError(repr(error[-1]))))
    return outcomes


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    path, down, up = argv[0], int(argv[1]), int(argv[2])
    try:
        serve(path, down, up)
    except BrokenPipeError:
        pass  # the server went: nobody to tell
    return 0


if __name__ == "__main__":
    # The server's frames name this module's classes by their package path: run that module's
    # code, not this copy of it (`python -m` runs the file as __main__).
    from partida.storage import sqlite_process

    sys.exit(sqlite_process.main(sys.argv[1:]))
