"""The one scheduling loop of the competitions (ladders, tournaments): it sleeps until its director
says something is due or something nudges it (`wake`), then runs one pass of the director's work;
passes never overlap.

With several nodes, a pass runs only on the node holding the director's `SchedulerLock`: the loop
tries to take it before each pass, and `lead` (also called by a request that must know where
scheduling happens) tells a director when this node has just taken it, so it can adopt what the
last holder left. A pass that fails is tried again every `TICK`; a database that cannot be read is
one line in the log when it starts failing, again when the failure changes kind or every
`LOG_AGAIN` seconds, and one when it works again, never a traceback a second.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from sqlalchemy.exc import SQLAlchemyError

from partida.server.scheduler_lock import SchedulerLock
from partida.storage.database import StorageError

log = logging.getLogger(__name__)

TICK = 1.0  # seconds between tries while failing or while another node leads
LOG_AGAIN = 300.0  # seconds before the same failure is logged again


class Scheduler:
    """`run_pass` is the director's work; `due` the seconds until it next has something to do
    (read again after each pass and each nudge); `adopt` what it does when this node has just
    become the one that schedules; `logger` the director's. `settle` seconds at least separate
    two passes, so that a burst of nudges (an arena's games ending) is taken in one pass."""

    def __init__(
        self,
        name: str,
        run_pass: Callable[[], Awaitable[None]],
        due: Callable[[], float],
        *,
        lock: SchedulerLock | None = None,
        adopt: Callable[[], Awaitable[None]] | None = None,
        settle: float = 0.0,
        logger: logging.Logger = log,
    ) -> None:
        self.name = name
        self.log = logger  # the director's: its failures are read under its name
        self.run_pass = run_pass
        self.due = due
        self.lock = lock
        self.adopt = adopt
        self.settle = settle
        self.stopping = False
        self.leading = lock is None
        self.failing: str | None = None  # the kind of failure the last pass met
        self._logged_at = 0.0
        self._wake = asyncio.Event()
        self._leading = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.stopping = False
        self._task = asyncio.get_running_loop().create_task(self._run(), name=self.name)

    async def stop(self, grace: float = 0.0) -> None:
        """Run no more passes: one under way is given `grace` seconds to end whole (a game being
        opened has all its players seated), then cancelled. The lock is let go."""
        self.stopping = True
        self.wake()
        task, self._task = self._task, None
        if task is not None:
            if grace > 0:
                await asyncio.wait([task], timeout=grace)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if self.lock is not None:
            await self.lock.release()
            self.leading = False

    def wake(self) -> None:
        self._wake.set()

    async def lead(self) -> bool:
        """Whether this node schedules, taking the lock if it is free; `adopt` runs once when it
        has just been taken. One at a time: the loop and a request may both find the lock newly
        taken, and adopting twice would count the games in progress twice."""
        if self.lock is None:
            return True
        async with self._leading:
            was = self.lock.held
            try:
                self.leading = await self.lock.try_acquire()
            except Exception as exc:
                self.log.warning("%s: the scheduler lock: %s", self.name, exc)
                self.leading = False
                return False
            if self.leading and not was and self.adopt is not None:
                await self.adopt()
            return self.leading

    def _sleep(self) -> float:
        if self.failing is not None or not self.leading:
            return TICK
        return max(self.due(), 0.0)

    async def _run(self) -> None:
        while not self.stopping:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._sleep()):
                    await self._wake.wait()
            self._wake.clear()
            if self.stopping:
                return
            try:
                if await self.lead():
                    await self.run_pass()
                self._recovered()
            except Exception as exc:
                self._failed(exc)
            if self.settle:
                await asyncio.sleep(self.settle)

    def _failed(self, exc: Exception) -> None:
        storage = isinstance(exc, (StorageError, SQLAlchemyError, OSError))
        kind = f"{'storage' if storage else 'bug'}:{type(exc).__name__}"
        clock = time.monotonic()
        if kind != self.failing or clock - self._logged_at >= LOG_AGAIN:
            self._logged_at = clock
            if storage:
                first = (str(exc).splitlines() or [""])[0][:200]
                self.log.warning(
                    "%s: the database cannot be read (%s: %s); trying again every %g s",
                    self.name,
                    type(exc).__name__,
                    first,
                    TICK,
                )
            else:
                self.log.exception("%s: a round of scheduling failed", self.name)
        self.failing = kind

    def _recovered(self) -> None:
        if self.failing is not None:
            self.log.warning("%s: scheduling works again", self.name)
            self.failing = None
