"""The group writer's batches on a SQLite file, committed by a process of their own
(`sqlite_process`), as the server sees it.

It keeps the thread writer's contract (`SqliteWriter`: `hand_over` without waiting, one callback
per batch on the event loop, SQLite's in-process write lock shared by the batches in flight) and
changes where a batch runs: the server plans it here, on the event loop (a move's one row costs a
few microseconds to plan), and writes it down a pipe (in the form `sqlite_writer.wire_ops` gives
both writers); the process commits it on a GIL of its own, with the runner the thread writer uses
too (`sqlite_process.Batches`), and writes back the outcome, which `_readable` hands to the
batch's callback when the event loop next turns. A batch the process cannot run (a statement only
SQLAlchemy can complete, a hook no module names) goes to the thread writer it holds;
SQLite's busy timeout lets the two take turns on the file. The process starts with the first
batch and again after it died: the batches it held then fail with an OperationalError (players
get `storage_unavailable` and may retry); after `DEATHS_BEFORE_THREAD` deaths in a row, every
batch goes to the thread.

`PARTIDA_SQLITE_WRITER=thread` keeps every batch in the thread (to compare the two, or on a
system that cannot start a process).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import pickle
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy.exc import DBAPIError

from partida.storage.backend import Outcome
from partida.storage.database import StorageError
from partida.storage.sqlite_process import PIPE_READ, RESET, Frames, frame
from partida.storage.sqlite_writer import SqliteWriter, wire_ops
from partida.storage.writes import Op, Step, plan_alone

ENV_VAR = "PARTIDA_SQLITE_WRITER"
# Deaths of the writer's process in a row, each holding writes it never answered, after which
# the server writes in its own thread: a process that cannot live would otherwise fail every
# write of every game from then on.
DEATHS_BEFORE_THREAD = 3

log = logging.getLogger(__name__)


def wanted() -> bool:
    """Whether SQLite files get a writer process (the default) rather than the thread writer."""
    choice = os.environ.get(ENV_VAR, "process").strip().lower()
    if choice not in ("process", "thread"):
        raise StorageError(f"{ENV_VAR} is 'process' or 'thread', not {choice!r}")
    return choice == "process"


class SqliteProcessWriter:
    """See the module's docstring."""

    takes_batches_as_they_come = True

    def __init__(self, url: str, write_lock: asyncio.Lock, cpus: frozenset[int] | None = None) -> None:
        # The batches the process cannot take, and every batch after `DEATHS_BEFORE_THREAD`
        # deaths; it shares this backend's write lock, planner and errors.
        self.thread = SqliteWriter(url, write_lock)
        self.share = self.thread.share
        self.planner = self.thread.planner
        self.path = self.thread.path
        self.cpus = cpus  # where the process runs (`Database.open`'s `writer_cpus`)
        self._child: _Child | None = None
        self._sent: dict[int, tuple[list[Op], Outcome]] = {}  # batches the process holds
        self._ids = itertools.count()
        self._drained: asyncio.Event | None = None  # set when the process holds nothing
        self._deaths = 0  # in a row, each with writes unanswered (`DEATHS_BEFORE_THREAD`)

    def hand_over(self, writes: Sequence[Sequence[Step]], done: Outcome) -> bool:
        """As `SqliteWriter.hand_over`, the batch sent to the process."""
        return self.share.hand_over(self.enqueue, writes, done)

    async def transaction(self, writes: Sequence[Sequence[Step]]) -> list[Any]:
        """As `SqliteWriter.transaction`, the batch sent to the process."""
        return await self.share.transaction(self.enqueue, writes)

    def enqueue(self, writes: Sequence[Sequence[Step]], done: Outcome) -> None:
        """Plan `writes` and send them to the process (or the thread, if it cannot take them),
        under a share of the write lock taken by the caller."""
        loop = asyncio.get_running_loop()
        try:
            ops = plan_alone(self.planner, writes)
        except Exception as exc:  # a value its column cannot take: this batch alone fails
            loop.call_soon(done, None, exc)
            return
        job_id = next(self._ids)
        message = None if self._deaths >= DEATHS_BEFORE_THREAD else _message(job_id, ops, len(writes))
        if message is None:
            self.thread.enqueue(writes, done)  # the thread, which has SQLAlchemy
            return
        child = self._child if self._child is not None else self._start_child(loop)
        self._sent[job_id] = (ops, done)
        child.send(message)

    def _start_child(self, loop: asyncio.AbstractEventLoop) -> _Child:
        self._child = _Child(self.path, self.cpus, loop, self._outcomes, self._exited)
        return self._child

    def _outcomes(self, outcomes: list[tuple[int, Any, tuple[Any, ...] | None]]) -> None:
        self._deaths = 0
        for job_id, results, error in outcomes:
            ops, finished = self._sent.pop(job_id)
            finished(results, None if error is None else self.thread.error(error, ops))
        if not self._sent and self._drained is not None:
            self._drained.set()

    def _exited(self, child: _Child) -> None:
        """The process closed its pipe: it exited (it only does so once told to, or if it died).
        What it held failed, as far as the server can tell: its commit may have happened or not."""
        if self._child is child:
            self._child = None
        code = child.process.poll()
        held, self._sent = self._sent, {}
        if held:
            self._deaths += 1
            if self._deaths == DEATHS_BEFORE_THREAD:
                log.error(
                    "the SQLite writer's process died %d times in a row before it answered (exit code %s); "
                    "the server writes in its own thread from now on",
                    self._deaths,
                    code,
                )
        failure = sqlite3.OperationalError(f"the SQLite writer's process exited (code {code}) before it answered")
        for _ops, finished in held.values():
            finished(None, DBAPIError.instance(None, None, failure, sqlite3.Error, dialect=self.thread.engine.dialect))
        if self._drained is not None:
            self._drained.set()

    async def reconnect(self) -> None:
        child = self._child
        if child is not None:
            loop = asyncio.get_running_loop()
            done: asyncio.Future[None] = loop.create_future()
            job_id = next(self._ids)
            self._sent[job_id] = ([], lambda _result, exc: done.done() or _settle(done, exc))
            child.send(frame((RESET, job_id)))
            await done
        await self.thread.reconnect()

    async def close(self) -> None:
        """Wait for the batches the process holds (and the retries their failures hand over),
        then close its pipe: it commits what it was given and exits."""
        while self._sent:
            self._drained = asyncio.Event()
            await self._drained.wait()
        child, self._child = self._child, None
        if child is not None:
            await child.stop()
        await self.thread.close()


def _settle(future: asyncio.Future[None], exc: BaseException | None) -> None:
    if exc is None:
        future.set_result(None)
    else:
        future.set_exception(exc)


def _message(job_id: int, ops: list[Op], count: int) -> bytes | None:
    """A planned batch as a frame for the process, or None if it cannot go there."""
    wire = wire_ops(ops, to_process=True)
    if wire is None:
        return None  # only SQLAlchemy can complete it, or a hook is no module's function
    try:
        return frame((job_id, wire, count))
    except (pickle.PicklingError, AttributeError, TypeError):
        return None  # parameters only the thread can take


class _Child:
    """The writer's process and its two pipes, read and written without blocking the loop."""

    def __init__(
        self,
        path: str,
        cpus: frozenset[int] | None,
        loop: asyncio.AbstractEventLoop,
        on_outcomes: Callable[[Any], None],
        on_exit: Callable[[_Child], None],
    ) -> None:
        down_read, down_write = os.pipe()
        up_read, up_write = os.pipe()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "partida.storage.sqlite_process", path, str(down_read), str(up_write)],
                pass_fds=(down_read, up_write),
                stdin=subprocess.DEVNULL,
            )
        except BaseException:
            for fd in (down_read, down_write, up_read, up_write):
                os.close(fd)
            raise
        os.close(down_read)
        os.close(up_write)
        if cpus:
            with contextlib.suppress(OSError):  # it may have died already
                os.sched_setaffinity(self.process.pid, cpus)
        os.set_blocking(down_write, False)
        os.set_blocking(up_read, False)
        self.down: int | None = down_write
        self.up: int | None = up_read
        self.loop = loop
        self._on_outcomes = on_outcomes
        self._on_exit = on_exit
        self._out = bytearray()  # what the pipe could not take yet
        self._frames = Frames()
        self._stopping = False
        self.exited: asyncio.Future[None] = loop.create_future()
        loop.add_reader(up_read, self._readable)

    def send(self, data: bytes) -> None:
        if self.down is None:
            return  # gone: `_exited` fails what was sent
        if not self._out:
            try:
                written = os.write(self.down, data)
            except BlockingIOError:
                written = 0
            except OSError:
                return  # the process died; its closed pipe tells `_readable`
            if written == len(data):
                return
            self.loop.add_writer(self.down, self._writable)
            data = data[written:]
        self._out += data

    def _writable(self) -> None:
        assert self.down is not None
        try:
            written = os.write(self.down, self._out)
        except BlockingIOError:
            return
        except OSError:
            written = len(self._out)
        del self._out[:written]
        if not self._out:
            self.loop.remove_writer(self.down)
            if self._stopping:
                self._close_down()

    def _readable(self) -> None:
        assert self.up is not None
        try:
            data = os.read(self.up, PIPE_READ)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._gone()
            return
        for outcomes in self._frames.feed(data):
            self._on_outcomes(outcomes)

    def _close_down(self) -> None:
        if self.down is not None:
            with contextlib.suppress(Exception):
                self.loop.remove_writer(self.down)
            os.close(self.down)
            self.down = None

    def _gone(self) -> None:
        assert self.up is not None
        self.loop.remove_reader(self.up)
        os.close(self.up)
        self.up = None
        self._close_down()
        self._on_exit(self)
        if not self.exited.done():
            self.exited.set_result(None)

    async def stop(self) -> None:
        """No more batches: the process commits what it holds, closes its pipe and exits."""
        self._stopping = True
        if not self._out:
            self._close_down()
        await self.exited
        await asyncio.to_thread(self.process.wait)
