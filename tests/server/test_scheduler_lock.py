"""Who runs a scheduler (`server/scheduler_lock.py`) over a stand-in database whose advisory
locks live and die with the connection that took them, as PostgreSQL's do, on a clock moved by
hand: one node holds a lock, a held lock is looked at again after a second, and a node that
loses its connection loses the lock to the next that tries."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from partida.server.scheduler_lock import APPLICATION, LOCK_KEY, SchedulerLock
from tests.fakes import FakeClock


class FakePostgres:
    """Advisory locks by key, each held by the connection that took it until it closes."""

    def __init__(self) -> None:
        self.locks: dict[int, FakeConnection] = {}
        self.statements: list[str] = []
        self.engine = SimpleNamespace(connect=self.connect)

    async def connect(self) -> FakeConnection:
        return FakeConnection(self)


class FakeConnection:
    def __init__(self, server: FakePostgres) -> None:
        self.server = server
        self.name = ""
        self.broken = False
        self.open = True

    def _sent(self, statement: Any) -> str:
        if self.broken or not self.open:
            raise ConnectionError("the connection is gone")
        sql = str(statement)
        self.server.statements.append(sql)
        return sql

    async def execute(self, statement: Any, params: dict[str, Any]) -> None:
        if "application_name" in self._sent(statement):
            self.name = params["name"]

    async def scalar(self, statement: Any, params: dict[str, Any] | None = None) -> Any:
        sql = self._sent(statement)
        if "pg_try_advisory_lock" in sql:
            holder = self.server.locks.setdefault(params["key"], self)  # type: ignore[index]
            return holder is self
        return 1

    async def commit(self) -> None:
        self._sent("COMMIT")

    async def invalidate(self) -> None:
        self.close_now()

    async def close(self) -> None:
        self.close_now()

    def close_now(self) -> None:
        self.open = False
        for key, holder in list(self.server.locks.items()):
            if holder is self:
                del self.server.locks[key]


def locks(db: FakePostgres, clock: FakeClock, *nodes: str) -> list[SchedulerLock]:
    return [SchedulerLock(db, node, clock=clock) for node in nodes]  # type: ignore[arg-type]


async def test_one_node_holds_the_lock_on_a_connection_named_after_it() -> None:
    db, clock = FakePostgres(), FakeClock()
    a, b = locks(db, clock, "a", "b")
    assert await a.try_acquire() and a.held
    assert not await b.try_acquire() and not b.held
    assert db.locks[LOCK_KEY].name == APPLICATION + "a"
    other_key = SchedulerLock(db, "b", key=LOCK_KEY + 1, clock=clock)  # type: ignore[arg-type]
    assert await other_key.try_acquire()  # the tournaments' lock is another lock


async def test_a_held_lock_is_taken_as_held_for_a_second_then_its_connection_is_looked_at() -> None:
    db, clock = FakePostgres(), FakeClock()
    (a,) = locks(db, clock, "a")
    await a.try_acquire()
    sent = len(db.statements)
    clock.advance(0.9)
    assert await a.try_acquire()
    assert len(db.statements) == sent  # nothing asked of the database
    clock.advance(0.2)
    assert await a.try_acquire()
    assert "SELECT 1" in db.statements[sent:]


async def test_a_node_that_loses_its_connection_loses_the_lock_to_the_next_that_tries() -> None:
    db, clock = FakePostgres(), FakeClock()
    a, b = locks(db, clock, "a", "b")
    await a.try_acquire()
    connection = db.locks[LOCK_KEY]
    connection.broken = True
    connection.close_now()  # as the server does when the connection drops
    assert await a.try_acquire()  # not looked at within the second: a node learns at its next look
    clock.advance(1.0)
    assert not await a.try_acquire() and not a.held
    assert await b.try_acquire()
    assert db.locks[LOCK_KEY].name == APPLICATION + "b"


async def test_a_release_closes_the_connection_for_good_and_frees_the_lock() -> None:
    db, clock = FakePostgres(), FakeClock()
    a, b = locks(db, clock, "a", "b")
    await a.try_acquire()
    taken_on = db.locks[LOCK_KEY]
    await a.release()
    assert not a.held and not taken_on.open
    assert await b.try_acquire()
    assert not await a.try_acquire()  # a new connection of its own, refused while b holds it


async def test_a_failure_while_taking_the_lock_lets_go_of_the_connection_and_is_raised() -> None:
    db, clock = FakePostgres(), FakeClock()
    (a,) = locks(db, clock, "a")

    async def broken() -> FakeConnection:
        connection = FakeConnection(db)
        connection.broken = True
        return connection

    db.engine.connect = broken
    with pytest.raises(ConnectionError):
        await a.try_acquire()
    assert not a.held
    db.engine.connect = db.connect
    assert await a.try_acquire()
