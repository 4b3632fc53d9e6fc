"""The competitions' scheduling loop (server/competition/scheduler.py) with a director's pass the
test counts and a lock the test holds or gives: it runs a pass on a nudge or when the director says
something is due, one pass at a time, only where the lock is, and logs an unreadable database
once."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import pytest

from partida.server.competition import scheduler as scheduling
from partida.server.competition.scheduler import Scheduler
from partida.storage.database import StorageError


class Lock:
    """A scheduler lock another node may hold (`free` False)."""

    def __init__(self, free: bool) -> None:
        self.free = free
        self.held = False
        self.released = 0

    async def try_acquire(self) -> bool:
        self.held = self.free
        return self.held

    async def release(self) -> None:
        self.held = False
        self.released += 1


class Director:
    def __init__(self, due: float = 600.0) -> None:
        self.passes = 0
        self.running = 0
        self.most_at_once = 0
        self.due = due
        self.fail: Exception | None = None
        self.gate: asyncio.Event | None = None

    async def run_pass(self) -> None:
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        try:
            if self.gate is not None:
                await self.gate.wait()
            if self.fail is not None:
                raise self.fail
            self.passes += 1
        finally:
            self.running -= 1


async def until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def test_a_nudge_runs_a_pass_though_nothing_is_due() -> None:
    director = Director(due=600.0)
    loop = Scheduler("test", director.run_pass, lambda: director.due)
    loop.start()
    try:
        await asyncio.sleep(0.1)
        assert director.passes == 0  # nothing due for ten minutes
        loop.wake()
        await until(lambda: director.passes == 1)
        loop.wake()
        await until(lambda: director.passes == 2)
    finally:
        await loop.stop()


async def test_what_is_due_runs_a_pass_without_a_nudge() -> None:
    director = Director(due=0.01)
    loop = Scheduler("test", director.run_pass, lambda: director.due)
    loop.start()
    try:
        await until(lambda: director.passes >= 3)
    finally:
        await loop.stop()


async def test_passes_never_overlap_and_nudges_during_one_make_one_more() -> None:
    director = Director()
    director.gate = asyncio.Event()
    loop = Scheduler("test", director.run_pass, lambda: director.due)
    loop.start()
    loop.wake()
    try:
        await until(lambda: director.running == 1)
        for _ in range(5):
            loop.wake()
            await asyncio.sleep(0)
        director.gate.set()
        await until(lambda: director.passes == 2)
        await asyncio.sleep(0.1)
        assert director.passes == 2 and director.most_at_once == 1
    finally:
        await loop.stop()


async def test_only_the_node_holding_the_lock_runs_passes_and_adopts_once() -> None:
    director = Director()
    adopted = 0

    async def adopt() -> None:
        nonlocal adopted
        adopted += 1

    lock = Lock(free=False)
    loop = Scheduler("test", director.run_pass, lambda: director.due, lock=lock, adopt=adopt)  # type: ignore[arg-type]
    assert not await loop.lead()
    loop.start()
    try:
        loop.wake()
        await asyncio.sleep(0.1)
        assert director.passes == 0 and adopted == 0  # another node schedules
        lock.free = True  # it died: the lock is free
        await until(lambda: director.passes >= 1)  # taken at the next tick, without a nudge
        assert await loop.lead() and adopted == 1
        loop.wake()
        await until(lambda: director.passes >= 2)
        assert adopted == 1
    finally:
        await loop.stop()
    assert lock.released == 1 and not lock.held


async def test_an_unreadable_database_is_one_line_until_it_works_again(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scheduling, "TICK", 0.01)  # tries again every hundredth of a second
    logger = logging.getLogger("tests.director")
    caplog.set_level(logging.INFO, logger=logger.name)
    director = Director()
    director.fail = StorageError("disk I/O error\nand a second line")
    tries = 0
    real = director.run_pass

    async def counted() -> None:
        nonlocal tries
        tries += 1
        await real()

    loop = Scheduler("test", counted, lambda: director.due, logger=logger)
    loop.start()
    loop.wake()
    try:
        await until(lambda: tries >= 20)
        lines = [r for r in caplog.records if r.name == logger.name]
        assert [r.levelname for r in lines] == ["WARNING"] and lines[0].exc_info is None
        assert "cannot be read (StorageError: disk I/O error)" in lines[0].getMessage()
        director.fail = None
        await until(lambda: director.passes >= 1)
        await until(lambda: any("works again" in r.getMessage() for r in caplog.records))
    finally:
        await loop.stop()


async def test_a_failing_pass_that_is_a_bug_is_logged_with_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("tests.director")
    caplog.set_level(logging.INFO, logger=logger.name)
    director = Director()
    director.fail = KeyError("oops")
    loop = Scheduler("test", director.run_pass, lambda: director.due, logger=logger)
    loop.start()
    loop.wake()
    try:
        await until(lambda: any(r.name == logger.name for r in caplog.records))
        (line,) = [r for r in caplog.records if r.name == logger.name]
        assert "a round of scheduling failed" in line.getMessage() and line.exc_info is not None
    finally:
        await loop.stop()
