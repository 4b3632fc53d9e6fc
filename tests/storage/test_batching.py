"""The group writer (`storage/batching.py`) on a stand-in backend, for both ways a backend takes
batches (as they come, at the end of each turn of the event loop, or one at a time from the
writer's task): the writes of one turn share a batch, each caller gets its own result, a
constraint failure is retried write by write so only its writer fails, any other failure fails
the whole batch, the fence stops writes before they are queued, and a close commits what waits."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from sqlalchemy.exc import IntegrityError

from partida.storage import batching
from partida.storage.batching import GroupWriter, Statement, Step
from partida.storage.database import NotWritten
from partida.storage.fencing import Fence

ADD = Statement("add", None, 0)


class FakeBackend:
    """Runs a batch at once: each write's result is its step's `id`; a step with `broken` set
    fails the batch with a constraint error, one with `down` as if the database were gone."""

    def __init__(self, as_they_come: bool) -> None:
        self.takes_batches_as_they_come = as_they_come
        self.batches: list[list[Any]] = []
        self.untold: list[tuple[Any, tuple[Any, BaseException | None]]] = []
        self.closed = False

    def _run(self, writes: Sequence[Sequence[Step]]) -> list[Any]:
        ids = [steps[0].params["id"] for steps in writes]
        self.batches.append(ids)
        params = [steps[0].params for steps in writes]
        if any(p.get("down") for p in params):
            raise OSError("the database is unreachable")
        if any(p.get("broken") for p in params):
            raise IntegrityError("INSERT", {}, Exception("UNIQUE constraint failed"))
        return ids

    def hand_over(self, writes: Sequence[Sequence[Step]], done: Any) -> bool:
        try:
            outcome = (self._run(writes), None)
        except Exception as exc:
            outcome = (None, exc)
        self.untold.append((done, outcome))
        asyncio.get_running_loop().call_soon(self._tell)  # its writers are told on a later turn
        return True

    def _tell(self) -> None:
        while self.untold:
            done, (results, exc) = self.untold.pop(0)
            done(results, exc)

    async def transaction(self, writes: Sequence[Sequence[Step]]) -> list[Any]:
        return self._run(writes)

    async def close(self) -> None:
        self._tell()  # what was handed over is committed and told before the backend closes
        self.closed = True


class FakeDatabase:
    def on_close(self, callback: Any) -> None:
        pass


@pytest.fixture(params=[True, False], ids=["as-they-come", "one-at-a-time"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> FakeBackend:
    fake = FakeBackend(request.param)
    monkeypatch.setattr(batching, "open_backend", lambda db, next_needs_transaction: fake)
    return fake


def writer(**kwargs: Any) -> GroupWriter:
    return GroupWriter(FakeDatabase(), **kwargs)  # type: ignore[arg-type]


def add(write_id: int, **flags: bool) -> Step:
    return Step(ADD, {"id": write_id, **flags})


async def test_the_writes_of_one_turn_share_a_batch_and_each_caller_gets_its_own_result(backend: FakeBackend) -> None:
    group = writer()
    assert await asyncio.gather(*(group.write(add(i)) for i in range(5))) == [0, 1, 2, 3, 4]
    assert backend.batches == [[0, 1, 2, 3, 4]]
    await group.close()


async def test_a_batch_holds_at_most_max_batch_writes(backend: FakeBackend) -> None:
    group = writer(max_batch=2)
    assert await asyncio.gather(*(group.write(add(i)) for i in range(5))) == [0, 1, 2, 3, 4]
    assert backend.batches == [[0, 1], [2, 3], [4]]
    await group.close()


async def test_a_constraint_failure_is_retried_write_by_write_and_fails_only_its_writer(backend: FakeBackend) -> None:
    group = writer()
    results = await asyncio.gather(group.write(add(1)), group.write(add(2, broken=True)), group.write(add(3)),
                                   return_exceptions=True)  # fmt: skip
    assert results[0] == 1 and results[2] == 3 and isinstance(results[1], IntegrityError)
    assert backend.batches == [[1, 2, 3], [1], [2], [3]]
    await group.close()


async def test_any_other_failure_goes_to_every_caller_of_the_batch_without_a_retry(backend: FakeBackend) -> None:
    group = writer()
    results = await asyncio.gather(group.write(add(1)), group.write(add(2, down=True)), return_exceptions=True)
    assert all(isinstance(r, OSError) for r in results)
    assert backend.batches == [[1, 2]]
    await group.close()


async def test_past_the_fence_nothing_is_queued(backend: FakeBackend) -> None:
    fence = Fence(lease=30.0)  # never renewed
    group = writer(fence=fence)
    with pytest.raises(NotWritten):
        group.submit(add(1))
    fence.renewed(asyncio.get_running_loop().time())
    assert await group.write(add(2)) == 2
    assert backend.batches == [[2]]
    await group.close()


async def test_a_close_commits_what_waits_then_refuses_more(backend: FakeBackend) -> None:
    group = writer()
    waiting = group.submit(add(7))
    await group.close()
    assert waiting.done() and waiting.result() == 7 and backend.closed
    with pytest.raises(RuntimeError):
        group.submit(add(8))
