"""Group commit: many concurrent single-row inserts, written in few transactions.

The server stores every accepted action before it answers, and a busy server has hundreds of
rooms doing so at once. One transaction per action makes the database sync its log once per
action (a few milliseconds each on SQLite with synchronous=FULL), which caps the whole server at a
few hundred actions per second. Here the appends that arrive while a transaction is being written
wait and go together in the next one: each caller still returns only after its row is committed,
so durability is unchanged, and under load the cost of a sync is shared by the whole batch.

If a batch breaks a constraint (say one row repeats an index), it was rolled back whole, and its
rows are retried one per transaction so that only the offending caller gets the error. Any other
failure (the database is unreachable) goes to every caller of the batch.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql import Executable

from partida.storage.database import Database

MAX_BATCH = 256


class BatchWriter:
    """Runs `statement` (a Core INSERT) for the parameters given to `write`, batching concurrent
    calls into one executemany per transaction."""

    def __init__(self, db: Database, statement: Executable, max_batch: int = MAX_BATCH) -> None:
        self.db = db
        self.statement = statement
        self.max_batch = max_batch
        self._pending: list[tuple[dict[str, Any], asyncio.Future[None]]] = []
        self._wakeup: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing = False

    async def write(self, params: dict[str, Any]) -> None:
        """Insert one row; returns once it is committed, or raises the database's error."""
        loop = asyncio.get_running_loop()
        self._start(loop)
        assert self._wakeup is not None
        future: asyncio.Future[None] = loop.create_future()
        self._pending.append((params, future))
        self._wakeup.set()
        await future

    def _start(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._closing:
            raise RuntimeError("the database is closed")
        if self._task is not None and not self._task.done() and self._loop is loop:
            return
        self._loop = loop
        self._wakeup = asyncio.Event()
        self._task = loop.create_task(self._run(), name="partida-storage-batch-writer")

    async def _run(self) -> None:
        assert self._wakeup is not None
        try:
            while True:
                await self._wakeup.wait()
                self._wakeup.clear()
                while self._pending:
                    batch = self._pending[: self.max_batch]
                    del self._pending[: self.max_batch]
                    await self._commit(batch)
                if self._closing:
                    return
        finally:
            for _, future in self._pending:
                if not future.done():
                    future.set_exception(RuntimeError("the database closed before this write was committed"))
            self._pending.clear()

    async def _commit(self, batch: list[tuple[dict[str, Any], asyncio.Future[None]]]) -> None:
        live = [(params, future) for params, future in batch if not future.done()]
        if not live:
            return
        try:
            async with self.db.write() as conn:
                await conn.execute(self.statement, [params for params, _ in live])
        except IntegrityError as exc:
            if len(live) == 1:
                _fail(live, exc)
                return
            for item in live:
                await self._commit([item])
            return
        except Exception as exc:
            # The database itself failed (unreachable, locked too long): retrying row by row would
            # only multiply the wait, so every caller of the batch gets the error.
            _fail(live, exc)
            return
        for _, future in live:
            if not future.done():
                future.set_result(None)

    async def close(self) -> None:
        """Commit what is queued, then stop the writer task."""
        self._closing = True
        task = self._task
        if task is None or task.done():
            return
        if self._loop is not asyncio.get_running_loop():
            task.cancel()
            return
        assert self._wakeup is not None
        self._wakeup.set()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def _fail(items: list[tuple[dict[str, Any], asyncio.Future[None]]], exc: BaseException) -> None:
    for _, future in items:
        if not future.done():
            future.set_exception(exc)
