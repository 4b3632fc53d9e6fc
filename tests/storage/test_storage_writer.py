"""The group writer on SQLite and PostgreSQL: a batch that holds every kind of write gives each
caller its own result, a bad write fails alone, an UPDATE of a missing row raises `MissingRow`,
a hook shares the batch's transaction, and on PostgreSQL the writer and the name lookups outlive
their connections."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import resource
import signal
import threading
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError
from sqlalchemy.util import has_compiled_ext

from partida.storage import sqlite_process_writer
from partida.storage.batching import GroupWriter, MissingRow, Step
from partida.storage.database import Database, StorageError
from partida.storage.models import ActionRecord, GameRecord, utcnow
from partida.storage.sqlite_process_writer import SqliteProcessWriter
from partida.storage.sqlite_writer import SqliteWriter, _take_now
from partida.storage.store import DuplicateAction, NoSuchGame, Store
from tests.fixtures.programs import Postgres
from tests.fixtures.storage import create_pg_database, new_game


async def test_a_batch_of_every_kind_of_write_gives_each_caller_its_own_result(store: Store) -> None:
    waiting, playing, ending = [await new_game(store, room_code=f"OLD{i}") for i in range(3)]
    await store.start_game(playing)
    await store.start_game(ending)
    outcomes = await asyncio.gather(
        *(new_game(store, room_code=f"NEW{i}") for i in range(4)),
        store.start_game(waiting, [(0, None, "ann"), (1, None, "bob")]),
        store.append_action(playing, 0, 0, "first"),
        store.append_action(ending, 0, 0, "last", result={"ranks": [1, 2]}),
    )
    created = outcomes[:4]
    assert len(set(created)) == 4 and outcomes[4:] == [None, None, None]
    for i, game_id in enumerate(created):  # each caller got the id of its own row
        stored = await store.load_game(game_id)
        assert stored is not None and (stored.room_code, stored.status) == (f"NEW{i}", "waiting")
    stored = await store.load_game(waiting)
    assert stored is not None and stored.status == "playing"
    assert stored.seat_list == [(0, None, "ann"), (1, None, "bob")]
    stored = await store.load_game(playing)
    assert stored is not None and stored.actions == [(0, "first")]
    stored = await store.load_game(ending)
    assert stored is not None and (stored.status, stored.result, stored.actions) == (
        "finished",
        {"ranks": [1, 2]},
        [(0, "last")],
    )


async def test_actions_of_every_json_shape_come_back_as_they_were_stored(store: Store) -> None:
    # The writer turns an integer into JSON text itself (not through the JSON encoder); a bool
    # is no integer there, and everything else still goes through the encoder.
    game = await new_game(store)
    await store.start_game(game)
    actions: list[Any] = [7, -3, 2**63 - 1, -(2**63), 0, True, False, None, "e4", {"card": 3}, [1, [2]], 1.5]
    await asyncio.gather(*(store.append_action(game, i, 0, action) for i, action in enumerate(actions)))
    stored = await store.load_game(game)
    assert stored is not None
    assert [(type(a), a) for _, a in stored.actions] == [(type(a), a) for a in actions]


async def test_a_bad_write_in_a_mixed_batch_fails_alone(store: Store) -> None:
    games = [await new_game(store, room_code=f"R{i}") for i in range(4)]
    await store.append_action(games[0], 0, 0, "already there")
    outcomes = await asyncio.gather(
        new_game(store, room_code="NEW"),
        store.append_action(games[0], 0, 1, "again"),  # a repeated index
        store.append_action(games[1], 0, 0, "fine"),
        store.finish_game(404, {"ranks": [1, 2]}),  # no such game
        store.start_game(games[2]),
        store.finish_game(games[3], None, "aborted"),
        store.append_action(405, 0, 0, "nowhere"),  # no such game
        return_exceptions=True,
    )
    assert [type(o).__name__ for o in outcomes] == [
        "int",
        "DuplicateAction",
        "NoneType",
        "NoSuchGame",
        "NoneType",
        "list",
        "NoSuchGame",
    ]
    assert isinstance(outcomes[1], DuplicateAction) and isinstance(outcomes[3], NoSuchGame)
    first, second, third, fourth = [await store.load_game(g) for g in games]
    assert first is not None and first.actions == [(0, "already there")]
    assert second is not None and second.actions == [(0, "fine")]
    assert third is not None and third.status == "playing"
    assert fourth is not None and fourth.status == "aborted"
    new = await store.load_game(int(outcomes[0]))  # type: ignore[call-overload]
    assert new is not None and new.room_code == "NEW"


def _rename(writer: GroupWriter) -> Any:
    return writer.statement(
        "rename",
        update(GameRecord).where(GameRecord.id == bindparam("b_game")).values(room_code=bindparam("b_code")),
        must_change=True,
    )


async def test_an_update_of_a_missing_row_raises_missing_row_for_its_caller_only(db: Database) -> None:
    store = Store(db)
    games = [await new_game(store, room_code=f"R{i}") for i in range(3)]
    writer = GroupWriter(db)
    rename = _rename(writer)
    with pytest.raises(MissingRow):
        await writer.write(Step(rename, {"b_game": 404, "b_code": "GONE"}))
    outcomes = await asyncio.gather(
        *(writer.write(Step(rename, {"b_game": g, "b_code": f"NEW{g}"})) for g in games),
        writer.write(Step(rename, {"b_game": 404, "b_code": "GONE"})),
        return_exceptions=True,
    )
    assert outcomes[:3] == [None, None, None] and isinstance(outcomes[3], MissingRow)
    for game_id in games:
        stored = await store.load_game(game_id)
        assert stored is not None and stored.room_code == f"NEW{game_id}"


async def test_a_hook_runs_in_the_batch_transaction(db: Database) -> None:
    store = Store(db)
    game_id = await new_game(store)
    writer = GroupWriter(db)
    action = writer.statement("action", insert(ActionRecord))
    rename = _rename(writer)
    seen: list[list[dict[str, Any]]] = []

    def hook(conn: Connection, rows: list[dict[str, Any]]) -> list[Any]:
        seen.append(rows)
        conn.execute(update(GameRecord).where(GameRecord.id == game_id).values(room_code="HOOKED"))
        if any(row["fail"] for row in rows):
            raise ValueError("the hook failed")
        return [f"done {row['n']}" for row in rows]

    check = writer.hook("check", hook)

    def row(index: int) -> dict[str, Any]:
        return {"game_id": game_id, "index": index, "seat": 0, "action": index, "clock": None, "created_at": utcnow()}

    results = await asyncio.gather(
        writer.write(Step(action, row(0)), Step(check, {"n": 0, "fail": False})),
        writer.write(Step(action, row(1))),
        writer.write(Step(check, {"n": 2, "fail": False})),
    )
    assert results == ["done 0", None, "done 2"] and [len(rows) for rows in seen] == [2]
    with pytest.raises(ValueError, match="the hook failed"):
        lost = {"b_game": game_id, "b_code": "LOST"}
        await writer.write(Step(action, row(2)), Step(rename, lost), Step(check, {"n": 3, "fail": True}))
    stored = await store.load_game(game_id)  # the failed write left nothing behind
    assert stored is not None and stored.room_code == "HOOKED" and stored.actions == [(0, 0), (0, 1)]


async def test_a_guarded_hook_is_called_only_for_a_batch_where_its_query_finds_a_row(db: Database) -> None:
    """The writers ask a hook's guard on the driver and call the hook only where it finds a
    row, with every step of the batch; a batch where it finds none leaves the hook uncalled."""
    store = Store(db)
    games = [await new_game(store, room_code=f"G{i}") for i in range(3)]
    writer = GroupWriter(db)
    rename = _rename(writer)
    calls: list[list[int]] = []

    def hook(conn: Connection, rows: list[dict[str, Any]]) -> list[Any]:
        calls.append([row["game"] for row in rows])
        return [f"seen {row['game']}" for row in rows]

    guard = select(GameRecord.id).where(GameRecord.id == bindparam("game"), GameRecord.room_code == "MARKED")
    check = writer.hook("check", hook, when=guard)

    def write(game: int, code: str) -> Any:
        return writer.write(Step(rename, {"b_game": game, "b_code": code}), Step(check, {"game": game}))

    assert await asyncio.gather(write(games[0], "PLAIN"), write(games[1], "PLAIN")) == [None, None]
    assert calls == []
    assert await asyncio.gather(write(games[0], "PLAIN"), write(games[2], "MARKED")) == [
        "seen " + str(games[0]),
        f"seen {games[2]}",
    ]
    assert calls == [[games[0], games[2]]]


def _through_sqlalchemy(writer: GroupWriter) -> tuple[Any, Any]:
    """Two statements the writers cannot send to the driver themselves: an action without its
    `created_at` (a default of Python's) and an UPDATE whose value a Python function gives."""
    action = writer.statement("action without its time", insert(ActionRecord))
    when = bindparam("b_when", callable_=utcnow)
    started = update(GameRecord).where(GameRecord.id == bindparam("b_game")).values(started_at=when)
    return action, writer.statement("stamp", started, must_change=True)


def _action_row(game_id: int, index: int) -> dict[str, Any]:
    return {"game_id": game_id, "index": index, "seat": 0, "action": index}


async def test_statements_only_sqlalchemy_completes_run_in_the_batch_and_fail_alone(db: Database) -> None:
    store = Store(db)
    games = [await new_game(store, room_code=f"R{i}") for i in range(2)]
    writer = GroupWriter(db)
    action, stamp = _through_sqlalchemy(writer)
    rename = _rename(writer)
    outcomes = await asyncio.gather(
        writer.write(Step(action, _action_row(games[0], 0)), Step(stamp, {"b_game": games[0]})),
        writer.write(Step(action, _action_row(games[0], 0))),  # a repeated index
        writer.write(Step(stamp, {"b_game": 404})),  # no such game
        writer.write(Step(action, _action_row(games[1], 0)), Step(rename, {"b_game": games[1], "b_code": "NEW"})),
        return_exceptions=True,
    )
    assert outcomes[0] is None and outcomes[3] is None
    assert isinstance(outcomes[1], IntegrityError) and isinstance(outcomes[2], MissingRow)
    first, second = [await store.load_game(g) for g in games]
    assert first is not None and first.actions == [(0, 0)] and first.started_at is not None
    assert second is not None and second.actions == [(0, 0)] and second.room_code == "NEW"


# SQLite only.


@dataclass
class Started:
    """A started game on a SQLite file, and the file's writer."""

    db: Database
    store: Store
    game_id: int
    backend: SqliteWriter


@pytest.fixture
async def started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Started]:
    """A SQLite file whose writer is the thread writer (the process writer's own tests are
    below)."""
    monkeypatch.setenv(sqlite_process_writer.ENV_VAR, "thread")
    db = await Database.open(f"sqlite:///{tmp_path / 'p.db'}")
    try:
        store = Store(db)
        game_id = await new_game(store)
        await store.start_game(game_id)
        backend = store._writer._backend  # the SQLite file's writer
        assert isinstance(backend, SqliteWriter) and db.write_lock is not None
        yield Started(db, store, game_id, backend)
    finally:
        await db.close()


async def batches_while_the_thread_is_busy(started: Started, actions: list[tuple[int, Any]]) -> list[Any]:
    """Append `actions` (index, action), each in a turn of its own, while the writer's thread is
    held, so that they reach it together; their outcomes."""
    appends = [started.store.append_action(started.game_id, index, index % 2, action) for index, action in actions]
    return await writes_while_the_thread_is_busy(started, appends)


async def writes_while_the_thread_is_busy(started: Started, writes: list[Awaitable[Any]]) -> list[Any]:
    """Start `writes`, each in a turn of its own, while the writer's thread is held, so that
    they reach it together; their outcomes."""
    gate = threading.Event()
    held = asyncio.ensure_future(started.backend._in_thread(gate.wait))
    futures = []
    for write in writes:
        futures.append(asyncio.ensure_future(write))
        for _ in range(3):
            await asyncio.sleep(0)
    gate.set()
    await held
    return await asyncio.gather(*futures, return_exceptions=True)


async def stored_actions(started: Started | InProcess) -> list[tuple[int, Any]]:
    stored = await started.store.load_game(started.game_id)
    assert stored is not None
    return stored.actions


async def test_batches_reaching_the_sqlite_writer_together_share_a_transaction_and_fail_alone(
    started: Started,
) -> None:
    await started.store.append_action(started.game_id, 0, 0, "first")
    transactions: list[int] = []
    run = started.backend.runner.run

    def counted(jobs: list[Any]) -> list[list[Any]]:
        transactions.append(len(jobs))
        return run(jobs)

    started.backend.runner.run = counted  # type: ignore[method-assign]
    outcomes = await batches_while_the_thread_is_busy(started, [(1, "second"), (0, "again"), (2, "third")])
    assert outcomes[0] is None and outcomes[2] is None
    assert isinstance(outcomes[1], DuplicateAction)
    # one transaction for the three, then each on its own, and the offending one write by write
    assert transactions[:4] == [3, 1, 1, 1]
    assert await stored_actions(started) == [(0, "first"), (1, "second"), (0, "third")]


async def test_batches_the_sqlite_writer_runs_partly_through_sqlalchemy_share_a_transaction_and_fail_alone(
    started: Started,
) -> None:
    """The thread runs a statement only SQLAlchemy completes in the transaction of the batches
    merged with it, and after a constraint's failure runs each batch again alone."""
    writer = started.store._writer  # the group writer whose batches the thread runs
    action, stamp = _through_sqlalchemy(writer)
    before = await started.store.load_game(started.game_id)
    assert before is not None and before.started_at is not None
    transactions: list[int] = []
    run = started.backend.runner.run
    started.backend.runner.run = lambda jobs: transactions.append(len(jobs)) or run(jobs)  # type: ignore[method-assign]
    steps = [
        Step(action, _action_row(started.game_id, 0)),
        Step(stamp, {"b_game": 404}),  # no such game
        Step(action, _action_row(started.game_id, 0)),  # a repeated index
        Step(stamp, {"b_game": started.game_id}),
    ]
    outcomes = await writes_while_the_thread_is_busy(started, [writer.write(step) for step in steps])
    assert outcomes[0] is None and outcomes[3] is None
    assert isinstance(outcomes[1], MissingRow) and isinstance(outcomes[2], IntegrityError)
    assert transactions == [4, 1, 1, 1, 1]
    stored = await started.store.load_game(started.game_id)
    assert stored is not None and stored.actions == [(0, 0)] and stored.started_at != before.started_at


async def test_actions_alone_go_as_one_statement_without_begin_and_commit(started: Started) -> None:
    """A batch of nothing but action rows is one INSERT that SQLite commits by itself (fewer
    trips through the GIL); anything more still gets its BEGIN and COMMIT."""
    store, backend = started.store, started.backend
    await store.append_action(started.game_id, 0, 0, "first")
    traced: list[str] = []

    def trace() -> None:
        assert backend.runner._conn is not None
        backend.runner._conn.connection.dbapi_connection.set_trace_callback(traced.append)  # type: ignore[union-attr]

    await backend._in_thread(trace)
    assert await batches_while_the_thread_is_busy(started, [(1, 1), (2, 2), (3, 3)]) == [None, None, None]
    assert [sql.split()[0] for sql in traced] == ["INSERT"]
    other = await new_game(store)
    traced.clear()
    await asyncio.gather(store.start_game(other), store.append_action(started.game_id, 4, 0, 4))
    assert traced[0] == "BEGIN " and traced[-1] == "COMMIT"
    assert [action for _, action in await stored_actions(started)] == ["first", 1, 2, 3, 4]


async def test_a_batch_waits_while_another_writer_of_the_process_holds_the_sqlite_write_lock(
    started: Started,
) -> None:
    lock = started.db.write_lock
    assert lock is not None
    await lock.acquire()  # say, an account being created through SQLAlchemy
    write = asyncio.ensure_future(started.store.append_action(started.game_id, 0, 0, "first"))
    for _ in range(20):
        await asyncio.sleep(0)
    assert not write.done()  # not handed over behind the other writer's back
    lock.release()
    await write
    assert await stored_actions(started) == [(0, "first")]


@pytest.mark.slow
async def test_a_value_its_column_cannot_take_fails_only_its_own_write(started: Started) -> None:
    """The three writes are made in one turn, so they are one batch, planned together."""
    appends = [(0, 0, "first"), (1, 1, {1, 2}), (2, 0, "third")]
    writes = [asyncio.ensure_future(started.store.append_action(started.game_id, *a)) for a in appends]
    outcomes = await asyncio.gather(*writes, return_exceptions=True)
    assert outcomes[0] is None and outcomes[2] is None
    assert isinstance(outcomes[1], TypeError)  # a set is not JSON
    assert await stored_actions(started) == [(0, "first"), (0, "third")]


async def test_a_writer_thread_that_cannot_start_fails_its_writes_and_gives_the_lock_back(started: Started) -> None:
    store, backend, lock = started.store, started.backend, started.db.write_lock
    assert lock is not None
    await backend.close()  # its thread stops; the next batch has to start one

    def cannot_start() -> None:
        raise RuntimeError("can't start new thread")

    backend._start = cannot_start  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="start new thread"):
        await store.append_action(started.game_id, 0, 0, "handed over")
    await lock.acquire()  # the next batch waits for its turn: `transaction`
    waiting = asyncio.ensure_future(store.append_action(started.game_id, 0, 0, "waited"))
    for _ in range(5):
        await asyncio.sleep(0)
    assert store._writer._committing  # waiting for the lock
    lock.release()
    with pytest.raises(RuntimeError, match="start new thread"):
        await waiting
    assert backend.share.users == 0 and not lock.locked()


async def test_taking_the_write_lock_without_waiting_leaves_a_waiting_writer_first() -> None:
    lock = asyncio.Lock()
    assert _take_now(lock) and lock.locked()
    assert not _take_now(lock)  # held
    waiter = asyncio.ensure_future(lock.acquire())
    await asyncio.sleep(0)
    lock.release()  # free, but a writer waits for it: its turn comes first
    assert not _take_now(lock)
    assert await waiter and lock.locked()
    lock.release()
    assert _take_now(lock)


# PostgreSQL only.


# The SQLite writer's process.


@dataclass
class InProcess:
    """A started game on a SQLite file whose writer is a process."""

    db: Database
    store: Store
    game_id: int
    backend: SqliteProcessWriter

    @property
    def pid(self) -> int:
        assert self.backend._child is not None
        return self.backend._child.process.pid


@contextlib.asynccontextmanager
async def started_in_process(path: Path) -> AsyncIterator[InProcess]:
    """A started game on the SQLite file `path`, its writer a process (not pinned to the thread:
    the caller clears the environment's choice)."""
    db = await Database.open(f"sqlite:///{path}")
    try:
        store = Store(db)
        game_id = await new_game(store)
        await store.start_game(game_id)
        backend = store._writer._backend
        assert isinstance(backend, SqliteProcessWriter) and backend._child is not None
        yield InProcess(db, store, game_id, backend)
    finally:
        await db.close()


@pytest.fixture
async def in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[InProcess]:
    monkeypatch.delenv(sqlite_process_writer.ENV_VAR, raising=False)  # the default
    async with started_in_process(tmp_path / "p.db") as started:
        yield started


async def appended_while_stopped(started: InProcess, actions: list[tuple[int, Any]]) -> list[asyncio.Future[Any]]:
    """Append `actions` (index, action), each in a turn of its own, while the writer's process is
    stopped (SIGSTOP), so that they wait in its pipe; it is left stopped."""
    os.kill(started.pid, signal.SIGSTOP)
    writes = []
    for index, action in actions:
        append = started.store.append_action(started.game_id, index, index % 2, action)
        writes.append(asyncio.ensure_future(append))
        for _ in range(3):
            await asyncio.sleep(0)
    return writes


async def test_batches_reaching_the_writer_process_together_fail_alone(in_process: InProcess) -> None:
    await in_process.store.append_action(in_process.game_id, 0, 0, "first")
    writes = await appended_while_stopped(in_process, [(1, "second"), (0, "again"), (2, {"third": [3]})])
    assert len(in_process.backend._sent) == 3  # three batches in the pipe, read together
    os.kill(in_process.pid, signal.SIGCONT)
    outcomes = await asyncio.gather(*writes, return_exceptions=True)
    assert outcomes[0] is None and outcomes[2] is None
    assert isinstance(outcomes[1], DuplicateAction)
    assert await stored_actions(in_process) == [(0, "first"), (1, "second"), (0, {"third": [3]})]


async def test_a_moves_batch_reaches_the_writer_process_as_plain_values(in_process: InProcess) -> None:
    """Timestamps are converted as SQLAlchemy converts them (SQLite's text) where the batch is
    planned, so that a move's batch, its timestamps included, goes down the pipe by `marshal`:
    a `datetime` left for the sqlite3 module's adapter made every batch pickled and unpickled,
    a quarter of the writer process's time. A game's last batch holds the ladders' rating hook,
    which goes by name."""
    child = in_process.backend._child
    assert child is not None
    sent: list[bytes] = []
    send = child.send

    def recorded(data: bytes) -> None:
        sent.append(data)
        send(data)

    child.send = recorded  # type: ignore[method-assign]
    await in_process.store.append_action(in_process.game_id, 0, 0, {"to": [1, 2]}, clock=[59.5, 60.0])
    await in_process.store.append_action(in_process.game_id, 1, 1, 7, {"winner": 1}, clock=[59.5, 58.25])
    assert len(sent) == 2 and all(frame[4:5] == b"m" for frame in sent)  # the last with the rating hook
    async with in_process.db.engine.connect() as conn:
        stamps = (await conn.exec_driver_sql('SELECT created_at FROM actions ORDER BY "index"')).scalars().all()
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}", stamp) for stamp in stamps), stamps


async def test_the_writer_process_takes_pipes_numbered_past_1024(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server with thousands of connections opens the writer's pipes at numbers past 1024,
    which the process keeps (`pass_fds`): it used to look for more batches with `select`, which
    takes no such number, and died on its first batch, failing every write after it."""
    monkeypatch.delenv(sqlite_process_writer.ENV_VAR, raising=False)  # the default: a process
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"the open-file limit ({hard}) is below what a busy server needs")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    taken: list[int] = []  # the low numbers, as a server's connections would hold them
    try:
        while not taken or taken[-1] < 1100:
            taken.append(os.open(os.devnull, os.O_RDONLY))
        async with started_in_process(tmp_path / "p.db") as started:
            assert started.backend._child is not None and started.backend._child.down is not None
            assert started.backend._child.down > 1024
            await asyncio.gather(*(started.store.append_action(started.game_id, i, i % 2, i) for i in range(20)))
            assert await stored_actions(started) == [(i % 2, i) for i in range(20)]
    finally:
        for fd in taken:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


async def test_a_writer_process_that_dies_fails_what_it_held_and_the_next_write_starts_another(
    in_process: InProcess,
) -> None:
    first = in_process.pid
    [write] = await appended_while_stopped(in_process, [(0, "lost")])
    os.kill(first, signal.SIGKILL)
    with pytest.raises(StorageError, match="writer's process exited"):
        await write
    assert in_process.backend.share.users == 0 and in_process.db.write_lock is not None
    assert not in_process.db.write_lock.locked()
    await in_process.store.append_action(in_process.game_id, 0, 0, "stored")
    assert in_process.pid != first
    assert await stored_actions(in_process) == [(0, "stored")]


async def test_after_three_deaths_in_a_row_the_writes_go_to_the_thread(in_process: InProcess) -> None:
    """A writer's process that keeps dying before it answers would fail every write of every game:
    after three deaths in a row, the server writes in its own thread."""
    backend = in_process.backend
    for _ in range(sqlite_process_writer.DEATHS_BEFORE_THREAD):
        if backend._child is None:
            backend._start_child(asyncio.get_running_loop())  # as the next write would, with no answer between
        [write] = await appended_while_stopped(in_process, [(0, "lost")])
        os.kill(in_process.pid, signal.SIGKILL)
        with pytest.raises(StorageError, match="writer's process exited"):
            await write
    await in_process.store.append_action(in_process.game_id, 0, 0, "stored")
    assert backend._child is None and backend.thread._thread is not None
    assert await stored_actions(in_process) == [(0, "stored")]


async def test_the_writer_process_outlives_a_ctrl_c_and_a_sigterm(in_process: InProcess) -> None:
    """A Ctrl-C reaches the whole process group; the server, not the signal, ends the writer."""
    pid = in_process.pid
    os.kill(pid, signal.SIGINT)
    os.kill(pid, signal.SIGTERM)
    await in_process.store.append_action(in_process.game_id, 0, 0, "after the signals")
    assert in_process.pid == pid
    assert await stored_actions(in_process) == [(0, "after the signals")]


async def test_closing_commits_what_the_writer_process_holds(in_process: InProcess, tmp_path: Path) -> None:
    writes = await appended_while_stopped(in_process, [(0, "a"), (1, "b")])
    process = in_process.backend._child
    assert process is not None
    closing = asyncio.ensure_future(in_process.db.close())
    for _ in range(5):
        await asyncio.sleep(0)
    assert not closing.done()
    os.kill(process.process.pid, signal.SIGCONT)
    await closing
    assert await asyncio.gather(*writes) == [None, None]
    assert process.process.returncode == 0
    reopened = await Database.open(f"sqlite:///{tmp_path / 'p.db'}")
    try:
        stored = await Store(reopened).load_game(in_process.game_id)
        assert stored is not None and stored.actions == [(0, "a"), (1, "b")]
    finally:
        await reopened.close()


def _game_ids(conn: Connection, params: list[dict[str, Any]]) -> list[Any]:
    return [conn.execute(select(GameRecord.id).where(GameRecord.id == p["id"])).scalar_one() for p in params]


def _sqlalchemy_loaded(pid: int) -> bool:
    """Whether process `pid` has imported SQLAlchemy (its compiled modules are mapped)."""
    return any("sqlalchemy" in line for line in Path(f"/proc/{pid}/maps").read_text().splitlines())


@pytest.mark.realtime
async def test_the_writer_process_takes_up_sqlalchemy_only_when_a_hook_runs(in_process: InProcess) -> None:
    """A game's last batch carries the ladders' rating hook, whose guard finds a row only for a
    ladder's game: the process imports SQLAlchemy and the hook's module (most of its memory)
    only once a hook runs, and then runs that batch again, once, with SQLAlchemy set up."""
    if not has_compiled_ext():
        pytest.skip("SQLAlchemy without its compiled modules leaves no trace in /proc/PID/maps")
    store, game_id = in_process.store, in_process.game_id
    await store.append_action(game_id, 0, 0, 4, {"winner": 0})  # the game ends: its rating hook's guard finds nothing
    assert not _sqlalchemy_loaded(in_process.pid)
    writer = store._writer
    action, hook = writer.statement("action", insert(ActionRecord)), writer.hook("ids", _game_ids)
    row = {"game_id": game_id, "index": 1, "seat": 1, "action": 5, "clock": None, "created_at": utcnow()}
    assert await writer.write(Step(action, row), Step(hook, {"id": game_id})) == game_id
    assert _sqlalchemy_loaded(in_process.pid)
    assert await stored_actions(in_process) == [(0, 4), (1, 5)]  # the batch that ran twice, stored once


class _UnhashableHook:
    """A hook that is a callable object, and unhashable (it defines equality only): no module's
    function, and no key for the cache of hooks' names either."""

    def __init__(self, calls: list[list[dict[str, Any]]]) -> None:
        self.calls = calls

    def __eq__(self, other: object) -> bool:
        return self is other

    __hash__ = None  # type: ignore[assignment]

    def __call__(self, conn: Connection, params: list[dict[str, Any]]) -> list[Any]:
        self.calls.append(params)
        return [conn.execute(select(GameRecord.id).where(GameRecord.id == p["id"])).scalar_one() for p in params]


@pytest.mark.parametrize("kind", ["local function", "unhashable object"])
async def test_a_hook_that_is_no_modules_function_runs_in_the_thread(in_process: InProcess, kind: str) -> None:
    """Its batch cannot go down the pipe by name: the thread writer runs it (its calls are seen
    here, in the server's process)."""
    calls: list[list[dict[str, Any]]] = []

    def local_hook(conn: Connection, params: list[dict[str, Any]]) -> list[Any]:
        calls.append(params)
        return [conn.execute(select(GameRecord.id).where(GameRecord.id == p["id"])).scalar_one() for p in params]

    writer = GroupWriter(in_process.db)
    hook = writer.hook("local", local_hook if kind == "local function" else _UnhashableHook(calls))
    try:
        assert await writer.write(Step(hook, {"id": in_process.game_id})) == in_process.game_id
    finally:
        await writer.close()
    assert calls == [[{"id": in_process.game_id}]]


def test_a_writer_choice_that_is_neither_says_what_it_takes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(sqlite_process_writer.ENV_VAR, "fork")
    with pytest.raises(StorageError, match="PARTIDA_SQLITE_WRITER is 'process' or 'thread', not 'fork'"):
        sqlite_process_writer.wanted()


async def _end_other_connections(url: str) -> int:
    """End every other connection of the URL's user to its database, as an administrator (or a
    server restart) would, and wait until they are gone."""
    conn = await asyncpg.connect(url)
    try:
        others = "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        pids = [row[0] for row in await conn.fetch(others)]
        for pid in pids:
            await conn.execute("SELECT pg_terminate_backend($1)", pid)
        for _ in range(500):
            if not await conn.fetch(others):
                break
            await asyncio.sleep(0.01)
        return len(pids)
    finally:
        await conn.close()


async def test_the_postgres_writer_survives_its_connection_being_ended(pg_cluster: Postgres) -> None:
    url = create_pg_database(pg_cluster)
    db = await Database.open(url)
    try:
        store = Store(db)
        game_id = await new_game(store)
        await store.append_action(game_id, 0, 0, "before")
        assert await _end_other_connections(url) >= 1
        await store.append_action(game_id, 1, 1, "after")
        await store.finish_game(game_id, {"ranks": [1, 2]})
        assert await _end_other_connections(url) >= 1
        assert await new_game(store, room_code="NEXT") > game_id
        stored = await store.load_game(game_id)
        assert stored is not None and stored.actions == [(0, "before"), (1, "after")]
        assert stored.status == "finished"
    finally:
        await db.close()


async def test_closing_after_the_postgres_writer_lost_its_connection_does_not_fail(pg_cluster: Postgres) -> None:
    url = create_pg_database(pg_cluster)
    db = await Database.open(url)
    store = Store(db)
    game_id = await new_game(store)
    assert await _end_other_connections(url) >= 1
    await db.close()  # the writer's connection is dead: it is dropped, not closed with an error
    again = await Database.open(url)
    try:
        stored = await Store(again).load_game(game_id)
        assert stored is not None and stored.status == "waiting"
    finally:
        await again.close()


async def test_a_write_the_postgres_server_does_not_answer_fails_in_time_and_the_next_one_works(
    pg_shared: str,
) -> None:
    """A table locked by hand (as a frozen database server would) makes the action's write fail
    with a storage error once the statement timeout has passed, rather than hang its room."""
    db = await Database.open(pg_shared, statement_timeout=1.0)
    blocker = await asyncpg.connect(pg_shared)
    try:
        store = Store(db)
        game_id = await new_game(store)
        await store.start_game(game_id)
        transaction = blocker.transaction()
        await transaction.start()
        await blocker.execute("LOCK TABLE actions IN ACCESS EXCLUSIVE MODE")
        with pytest.raises(StorageError, match="could not store action 0"):
            await asyncio.wait_for(store.append_action(game_id, 0, 0, "stuck"), 10)
        await transaction.rollback()
        await store.append_action(game_id, 0, 0, "through")
        stored = await store.load_game(game_id)
        assert stored is not None and stored.actions == [(0, "through")]
    finally:
        await blocker.close()
        await db.close()


async def test_name_lookups_outlive_their_connection_being_ended(pg_cluster: Postgres) -> None:
    url = create_pg_database(pg_cluster)
    db = await Database.open(url)
    try:
        store = Store(db)
        await store.create_user("Émile", "a long enough password")
        assert await store.reserved_name("ÉMILE") == "Émile"
        assert await _end_other_connections(url) >= 1
        assert await store.reserved_name("émile") == "Émile"
        assert await store.reserved_name("emil") is None
    finally:
        await db.close()


async def _batch_under_way(store: Store) -> None:
    """Wait until the group writer has taken the write just asked for (by a task that has not
    run yet) into a transaction."""
    for _ in range(1000):
        await asyncio.sleep(0)
        if store._writer._pending:
            break
    for _ in range(1000):
        await asyncio.sleep(0)
        if not store._writer._pending:
            return
    raise AssertionError("the writer took no batch")


def _writer_driver(store: Store) -> asyncpg.Connection:
    driver = store._writer._backend.kept._driver  # type: ignore[union-attr]
    assert driver is not None  # opened by a write before
    return driver


async def _started_games(store: Store, count: int) -> list[int]:
    games = [await new_game(store, room_code=f"G{i}") for i in range(count)]
    for game in games:
        await store.start_game(game)
    return games


async def _finish_with_one_cancelled_behind(store: Store, first: int, cancelled_game: int) -> None:
    """Abort `first` while aborting `cancelled_game` is queued behind it and then cancelled:
    the COMMIT before it has brought a BEGIN for a batch that never comes."""
    finishing = asyncio.ensure_future(store.finish_game(first, None, "aborted"))
    await _batch_under_way(store)
    cancelled = asyncio.ensure_future(store.finish_game(cancelled_game, None, "aborted"))
    await asyncio.sleep(0)  # queued: the COMMIT before it brings its BEGIN
    cancelled.cancel()
    await finishing
    for _ in range(250):  # until the writer has taken up the BEGIN that came back with the COMMIT
        if _writer_driver(store).is_in_transaction():
            break
        await asyncio.sleep(0.02)


async def test_the_next_batch_begins_with_the_commit_before_it(pg_shared: str) -> None:
    """A batch that needs a transaction (finishing a game: an UPDATE to count, the ladder's
    guard) queued while another commits has its BEGIN sent with that COMMIT: both commit."""
    db = await Database.open(pg_shared)
    try:
        store = Store(db)
        first, second = await _started_games(store, 2)
        sent: list[str] = []
        _writer_driver(store).add_query_logger(lambda record: sent.append(record.query))
        finishing = asyncio.ensure_future(store.finish_game(first, {"ranks": [1, 2]}))
        await _batch_under_way(store)
        await store.finish_game(second, {"ranks": [2, 1]})  # queued while the first commits
        assert await finishing == []
        await asyncio.sleep(0)  # the query logger's calls
        assert [q for q in sent if "BEGIN" in q or "COMMIT" in q] == ["BEGIN", "COMMIT; BEGIN", "COMMIT"]
        assert not _writer_driver(store).is_in_transaction()
        for game in (first, second):
            stored = await store.load_game(game)  # read on another connection: committed
            assert stored is not None and stored.status == "finished"
    finally:
        await db.close()


async def test_a_transaction_begun_for_writes_that_were_cancelled_serves_the_next_batch_or_is_rolled_back(
    pg_shared: str,
) -> None:
    db = await Database.open(pg_shared)
    try:
        store = Store(db)
        games = await _started_games(store, 5)
        await _finish_with_one_cancelled_behind(store, games[0], games[1])
        assert _writer_driver(store).is_in_transaction()  # begun for a batch that never came
        await store.append_action(games[2], 0, 0, "alone")  # one plain INSERT, in that transaction
        assert not _writer_driver(store).is_in_transaction()
        stored = await store.load_game(games[2])
        assert stored is not None and stored.actions == [(0, "alone")]
        await _finish_with_one_cancelled_behind(store, games[3], games[4])
        assert _writer_driver(store).is_in_transaction()
    finally:
        await db.close()  # rolls the begun transaction back, without an error
    again = await Database.open(pg_shared)
    try:
        statuses = [(await Store(again).load_game(g)).status for g in games]  # type: ignore[union-attr]
        assert statuses == ["aborted", "playing", "playing", "aborted", "playing"]
    finally:
        await again.close()


async def test_a_bad_write_in_a_batch_begun_with_the_commit_before_it_fails_alone(pg_shared: str) -> None:
    db = await Database.open(pg_shared)
    try:
        store = Store(db)
        games = await _started_games(store, 4)
        await store.append_action(games[1], 0, 0, "already there")
        sent: list[str] = []
        _writer_driver(store).add_query_logger(lambda record: sent.append(record.query))
        finishing = asyncio.ensure_future(store.finish_game(games[0], None, "aborted"))
        await _batch_under_way(store)
        outcomes = await asyncio.gather(
            store.append_action(games[1], 0, 1, "again"),  # a repeated index
            store.append_action(games[2], 0, 0, "fine"),
            store.finish_game(games[3], {"ranks": [1, 2]}),
            return_exceptions=True,
        )
        await finishing
        assert isinstance(outcomes[0], DuplicateAction) and outcomes[1:] == [None, []]
        await asyncio.sleep(0)  # the query logger's calls
        control = [q for q in sent if q.split()[0] in ("BEGIN", "COMMIT", "COMMIT;", "ROLLBACK")]
        assert control[:3] == ["BEGIN", "COMMIT; BEGIN", "ROLLBACK"]  # then each write on its own
        assert not _writer_driver(store).is_in_transaction()
        second, third, fourth = [await store.load_game(g) for g in games[1:]]
        assert second is not None and second.actions == [(0, "already there")]
        assert third is not None and third.actions == [(0, "fine")]
        assert fourth is not None and fourth.status == "finished"
    finally:
        await db.close()


async def test_a_games_start_and_its_end_are_one_statement_each(pg_shared: str) -> None:
    """On PostgreSQL a game's start writes its seats in the start's own statement, and the
    action that ends a game is written by the finish's, which also asks the ladder's guard for a
    game that is no ladder's: one round trip each besides BEGIN and COMMIT (a ladder game's end
    is still rated: tests/storage/test_ladder_storage)."""
    db = await Database.open(pg_shared)
    try:
        store = Store(db)
        await store.start_game(await new_game(store), [(0, None, "ann")])  # asyncpg reads the array types
        game, other, missing = await new_game(store), await new_game(store), 10**6
        sent: list[str] = []
        _writer_driver(store).add_query_logger(lambda record: sent.append(record.query))
        await store.start_game(game, [(0, None, "ann"), (1, None, "bob")], {0: "secret0", 1: "secret1"})
        await store.append_action(game, 0, 0, "first", clock=[9.0, 10.0])
        await store.append_action(game, 1, 1, "last", result={"ranks": [1, 2]}, clock=[9.0, 8.5])
        await asyncio.sleep(0)  # the query logger's calls
        control = ("BEGIN", "COMMIT", "COMMIT;", "ROLLBACK")
        assert [q.split()[0] for q in sent if q.split()[0] not in control] == ["WITH", "INSERT", "WITH"]
        stored = await store.load_game(game)
        assert stored is not None and (stored.status, stored.result) == ("finished", {"ranks": [1, 2]})
        assert stored.actions == [(0, "first"), (1, "last")] and stored.clock_state == [9.0, 8.5]
        assert stored.seat_list == [(0, None, "ann"), (1, None, "bob")]
        assert stored.seat_tokens == {0: "secret0", 1: "secret1"}
        # The ending action's errors are the action's own; the game is left as it was.
        third = await new_game(store)
        for started in (other, third):
            await store.start_game(started)
            await store.append_action(started, 0, 0, "first")
        again, ended = await asyncio.gather(  # one batch, then each write alone
            store.append_action(other, 0, 1, "again", result={"ranks": [2, 1]}),
            store.append_action(third, 1, 1, "last", result={"ranks": [2, 1]}),
            return_exceptions=True,
        )
        assert isinstance(again, DuplicateAction) and ended is None
        with pytest.raises(NoSuchGame):
            await store.append_action(missing, 0, 0, "last", result={"ranks": [1, 2]})
        stored = await store.load_game(other)
        assert stored is not None and (stored.status, stored.result, stored.actions) == (
            "playing",
            None,
            [(0, "first")],
        )
        with pytest.raises(NoSuchGame):
            await store.start_game(missing, [(0, None, "ann")])  # the seats' foreign key
        with pytest.raises(NoSuchGame):
            await store.start_game(missing)  # no seats: the UPDATE changed no row
        with pytest.raises(StorageError, match="unique"):
            await store.start_game(game, [(0, None, "again")])  # a seat stored already
    finally:
        await db.close()


async def test_a_ladder_game_ended_by_its_last_action_is_rated_without_the_guards_query(pg_shared: str) -> None:
    """On PostgreSQL the finish that writes a game's last action answers the ladder's guard, as
    `finish_game`'s does: in a batch of both, and a casual game's end, the guard's query is not
    sent, and the ladder games are rated in the batch's transaction."""
    db = await Database.open(pg_shared)
    try:
        store = Store(db)
        ladder = await store.ladders.create("last-action", "tictactoe", {}, 2, {"per_move": 1.0}, 2)
        names = [f"last-action-{i}" for i in range(4)]
        players = [((await store.create_bot(name))[0].id, name) for name in names]
        games = []
        for pair in (players[0:2], players[2:4]):
            game_id = await new_game(store, room_code="LADDER")
            await store.ladders.add_game(ladder.id, game_id)
            await store.start_game(game_id, [(seat, a, name) for seat, (a, name) in enumerate(pair)])
            games.append(game_id)
        casual = await new_game(store)
        await store.start_game(casual)
        sent: list[str] = []
        _writer_driver(store).add_query_logger(lambda record: sent.append(record.query))
        result = {"scores": [1.0, 0.0], "ranks": [1, 2]}
        await asyncio.gather(  # one batch of the group writer
            store.append_action(games[0], 0, 0, 4, result),
            store.finish_game(games[1], result),
            store.append_action(casual, 0, 0, 4, result),
        )
        await asyncio.sleep(0)  # the query logger's calls
        planned = store._writer._backend.planner.prepared_row(  # type: ignore[union-attr]
            store._rate.when,  # type: ignore[arg-type]
            {"game_id": casual, "result": result, "status": "finished"},
        )
        assert planned is not None and planned[0] not in sent  # the guard's query
        assert not [q for q in sent if q.startswith("INSERT INTO actions")]
        rated = [await store.ladders.game_ratings(g) for g in games]
        assert [[(c.seat, c.rank) for c in changes] for changes in rated] == [[(0, 1), (1, 2)]] * 2
        assert (await store.ladders.require("last-action")).rated_games == 2
        for game_id in (games[0], casual):
            stored = await store.load_game(game_id)
            assert stored is not None and (stored.status, stored.actions) == ("finished", [(0, 4)])
    finally:
        await db.close()
