"""A room whose write of an action failed converges on the stored log, the truth a restart resumes
from: a write that landed after all stands, and a log ahead of the room (whatever put the rows
there) is adopted, with fresh views for everyone and `stale_decision` for the player whose action
is not in it; a start that landed stands; a resignation or a draw whose write failed can be asked
again. The rows "behind the server's back" are written by another connection to the same
SQLite file, as the server writes them (the format is read from one of the server's own rows)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sqlite3
from collections.abc import AsyncIterator, Coroutine
from typing import Any

import asyncpg
import pytest

from partida.client import Client, ServerError
from partida.room.record import judge
from partida.server.app import Server, ServerConfig
from partida.storage.sqlite_process_writer import SqliteProcessWriter
from tests.fixtures.programs import Postgres, free_port
from tests.fixtures.storage import create_pg_database
from tests.helpers import sqlite_path, store_behind_the_back, two_players, update_at

EMPTY = -1


async def store_behind_the_back_on_postgres(
    url: str, game_id: int, index: int, seat: int, action: Any, clock: list[float] | None = None
) -> None:
    """`store_behind_the_back` on PostgreSQL: the row's timestamp copied from the server's last row."""
    conn = await asyncpg.connect(url)
    try:
        inserted = await conn.execute(
            'INSERT INTO actions (game_id, "index", seat, action, clock, created_at) '
            "SELECT $1, $2, $3, $4::json, $5::json, created_at FROM actions "
            'WHERE game_id = $1 ORDER BY "index" DESC LIMIT 1',
            game_id,
            index,
            seat,
            json.dumps(action),
            None if clock is None else json.dumps(clock),
        )
        assert inserted == "INSERT 0 1", "the server has stored no action of this game yet"
    finally:
        await conn.close()


@pytest.fixture
async def started(db_url: str) -> AsyncIterator[Server]:
    server = Server(ServerConfig(port=0, db_url=db_url))
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


async def sent_to_a_stopped_writer(
    server: Server, request: Coroutine[Any, Any, dict[str, Any]]
) -> tuple[SqliteProcessWriter, int, asyncio.Future[dict[str, Any]]]:
    """Stop the SQLite writer's process (SIGSTOP), send `request` (a move), and wait until its
    write is in the process's pipe. Returns the writer, the stopped process's pid (to kill) and
    the request under way."""
    backend = server.store._writer._backend
    assert isinstance(backend, SqliteProcessWriter) and backend._child is not None
    pid = backend._child.process.pid
    os.kill(pid, signal.SIGSTOP)
    acting = asyncio.ensure_future(request)
    for _ in range(500):
        if backend._sent:
            break
        await asyncio.sleep(0.01)
    if not backend._sent:
        os.kill(pid, signal.SIGKILL)
        raise AssertionError("the move never reached the writer's pipe")
    return backend, pid, acting


async def test_a_stored_log_ahead_of_the_room_is_adopted_and_the_late_answer_told_so(
    started: Server, db_url: str
) -> None:
    clock = {"initial": 100, "increment": 0}
    alice, bob, code = await two_players(started, clock)
    carol = await Client.connect(started.url, name="carol")
    await carol.watch(code)
    room = started.rooms[code]
    store_behind_the_back(db_url, room.core.game_id, 1, 1, 4, clock=[77.0, 55.0])

    with pytest.raises(ServerError) as refused:
        await bob.act(code, 2, seq=1)  # not the stored move: Bob's answer came too late
    assert refused.value.code == "stale_decision"
    board = [EMPTY, EMPTY, EMPTY, 0, 1, EMPTY, EMPTY, EMPTY, EMPTY]
    for client, decision in ((alice, True), (bob, False), (carol, False)):
        update = await update_at(client, code, 2)
        assert update["view"]["board"] == board
        assert (update["decision"] is not None) is decision
        assert update["last"]["seat"] == 1 and update["last"]["action"] == 4
        remaining = update["clock"]["remaining"]
        assert remaining[1] == 55.0  # the stored snapshot; Bob's clock is not running
        assert 50.0 < remaining[0] <= 77.0  # Alice's runs again from what the snapshot left her

    await alice.act(code, 5, seq=2)  # the game goes on from the stored log
    assert room.core.seq == 3
    stored = await started.store.load_game(room.core.game_id)
    assert stored is not None and stored.actions == [(0, 3), (1, 4), (0, 5)]
    for client in (alice, bob, carol):
        await client.close()


@pytest.mark.realtime
async def test_a_restart_after_adopting_the_stored_log_resumes_the_same_game(db_url: str) -> None:
    first = Server(ServerConfig(port=0, db_url=db_url))
    await first.start()
    alice, bob, code = await two_players(first)
    game_id = first.rooms[code].core.game_id
    store_behind_the_back(db_url, game_id, 1, 1, 0)
    with pytest.raises(ServerError) as refused:
        await bob.act(code, 8)
    assert refused.value.code == "stale_decision"
    await alice.close()
    await bob.close()
    board = first.rooms[code].core.state.view(None)["board"]
    await first.stop()

    second = Server(ServerConfig(port=0, db_url=db_url))
    await second.start()
    try:
        assert second.rooms[code].core.seq == 2
        assert second.rooms[code].core.state.view(None)["board"] == board == [1, EMPTY, EMPTY, 0] + [EMPTY] * 5
    finally:
        await second.stop()


async def winning_move_stored_behind_the_back(started: Server, db_url: str) -> tuple[Client, Client, str]:
    """Alice's winning move (X completes the middle row 3-4-5 at move 4) stored behind the
    server's back, without its result, before she sends anything."""
    alice, bob, code = await two_players(started)  # X on 3
    await bob.act(code, 0)
    await alice.act(code, 4)
    await bob.act(code, 1)
    store_behind_the_back(db_url, started.rooms[code].core.game_id, 4, 0, 5)
    return alice, bob, code


async def assert_alice_won(started: Server, code: str, *clients: Client) -> None:
    """Each of `clients` saw the game end at move 5 with Alice (seat 0) the winner, and so says
    the stored game."""
    for client in clients:
        update = await update_at(client, code, 5)
        assert update["status"] == "finished" and update["result"]["winners"] == [0]
    stored = await started.store.load_game(started.rooms[code].core.game_id)
    assert stored is not None and stored.status == "finished" and stored.result["winners"] == [0]


async def test_a_stored_action_that_ends_the_game_ends_it_for_everyone(started: Server, db_url: str) -> None:
    alice, bob, code = await winning_move_stored_behind_the_back(started, db_url)
    with pytest.raises(ServerError) as refused:
        await alice.act(code, 8)
    assert refused.value.code == "stale_decision"
    await assert_alice_won(started, code, alice, bob)
    await alice.close()
    await bob.close()


async def test_a_stored_ending_action_that_stands_is_recorded_with_its_result(started: Server, db_url: str) -> None:
    """A row that landed without its result (written behind the server's back: the server itself
    stores both in one transaction) still ends the stored game once the room accepts the action."""
    alice, bob, code = await winning_move_stored_behind_the_back(started, db_url)
    assert (await alice.act(code, 5, seq=4))["seq"] == 5
    await assert_alice_won(started, code, bob)
    await alice.close()
    await bob.close()


async def test_a_write_that_fails_as_a_duplicate_of_the_same_action_stands(started: Server, db_url: str) -> None:
    alice, bob, code = await two_players(started)
    room = started.rooms[code]
    store_behind_the_back(db_url, room.core.game_id, 1, 1, 4)
    reply = await bob.act(code, 4, seq=1)  # the stored action: accepted
    assert reply["seq"] == 2
    assert (await update_at(alice, code, 2))["decision"] is not None
    await alice.act(code, 5, seq=2)
    stored = await started.store.load_game(room.core.game_id)
    assert stored is not None and stored.actions == [(0, 3), (1, 4), (0, 5)]
    await alice.close()
    await bob.close()


async def test_a_move_committed_by_a_writer_process_that_died_before_answering_stands(
    started: Server, db_url: str
) -> None:
    """The ambiguous failure itself: the writer's process dies holding the move, whose row is in
    the file (written here by another connection while the process is stopped, where the process
    would have committed it). The write fails as any dead writer's does; the move still stands."""
    alice, bob, code = await two_players(started)
    room = started.rooms[code]
    backend, pid, acting = await sent_to_a_stopped_writer(started, bob.act(code, 4, seq=1))
    try:
        store_behind_the_back(db_url, room.core.game_id, 1, 1, 4)
    finally:
        os.kill(pid, signal.SIGKILL)
    reply = await acting
    assert reply["seq"] == 2
    update = await update_at(alice, code, 2)
    assert update["view"]["board"][4] == 1 and update["decision"] is not None
    await alice.act(code, 5, seq=2)  # a new writer process stores the next move
    assert backend._child is not None and backend._child.process.pid != pid
    stored = await started.store.load_game(room.core.game_id)
    assert stored is not None and stored.actions == [(0, 3), (1, 4), (0, 5)]
    await alice.close()
    await bob.close()


async def test_a_move_a_dead_writer_process_did_not_store_is_undone(started: Server) -> None:
    """The other side of the read: nothing landed, so the move is refused and can be made again."""
    alice, bob, code = await two_players(started)
    room = started.rooms[code]
    _, pid, acting = await sent_to_a_stopped_writer(started, bob.act(code, 4, seq=1))
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(ServerError) as refused:
        await acting
    assert refused.value.code == "storage_unavailable"
    assert room.core.seq == 1
    await bob.act(code, 4, seq=1)
    stored = await started.store.load_game(room.core.game_id)
    assert stored is not None and stored.actions == [(0, 3), (1, 4)]
    await alice.close()
    await bob.close()


async def test_on_postgresql_the_room_adopts_a_log_ahead_and_accepts_a_stored_action(postgres: Postgres) -> None:
    """The deployment database: the same reads, and actions compared as PostgreSQL's JSON gives
    them back."""
    url = create_pg_database(postgres)
    server = Server(ServerConfig(port=0, db_url=url))
    await server.start()
    try:
        alice, bob, code = await two_players(server, {"initial": 100, "increment": 0})
        room = server.rooms[code]
        await store_behind_the_back_on_postgres(url, room.core.game_id, 1, 1, 4, clock=[77.0, 55.0])
        with pytest.raises(ServerError) as refused:
            await bob.act(code, 2, seq=1)
        assert refused.value.code == "stale_decision"
        update = await update_at(alice, code, 2)
        assert update["view"]["board"][4] == 1 and update["decision"] is not None
        assert update["clock"]["remaining"][1] == 55.0
        await store_behind_the_back_on_postgres(url, room.core.game_id, 2, 0, 5)
        assert (await alice.act(code, 5, seq=2))["seq"] == 3  # the stored action: it stands
        await bob.act(code, 8, seq=3)
        stored = await server.store.load_game(room.core.game_id)
        assert stored is not None and stored.actions == [(0, 3), (1, 4), (0, 5), (1, 8)]
        await alice.close()
        await bob.close()
    finally:
        await server.stop()


async def test_a_fenced_node_undoes_a_refused_move_without_adopting_the_log(postgres: Postgres) -> None:
    """A node cut off from its lease writes nothing, and another node may be playing its games:
    a move refused at the fence was never sent, so the room undoes it and takes nothing from the
    log (here a row as the node taking over would have written it)."""
    url = create_pg_database(postgres)
    port = free_port()
    config = ServerConfig(port=port, db_url=url, node="a", public_url=f"ws://127.0.0.1:{port}", lease=1.5)
    server = Server(config)
    await server.start()
    try:
        alice, bob, code = await two_players(server)
        room = server.rooms[code]
        cluster = server.cluster
        assert cluster is not None and cluster._task is not None
        cluster._task.cancel()  # its renewals stop, as when the database is out of its reach
        await asyncio.gather(cluster._task, return_exceptions=True)
        cluster._task = None
        cluster.fence.valid_until = 0.0
        await store_behind_the_back_on_postgres(url, room.core.game_id, 1, 1, 4)
        with pytest.raises(ServerError) as refused:
            await bob.act(code, 2, seq=1)
        assert refused.value.code == "storage_unavailable"
        assert room.core.seq == 1 and room.core.state.view(None)["board"][4] == EMPTY
        await alice.close()
        await bob.close()
    finally:
        await server.stop()


def start_behind_the_back(db_url: str, room: Any) -> None:
    """Store the room's start as the server would (its seats with their tokens, the status), from
    another connection to the SQLite file; the start time is the game's creation time, in the
    format the server wrote that."""
    with contextlib.closing(sqlite3.connect(sqlite_path(db_url), timeout=10)) as conn:
        for index, seat in enumerate(room.core.seats):
            conn.execute(
                "INSERT INTO seats (game_id, seat, account_id, name, token) VALUES (?, ?, ?, ?, ?)",
                (room.core.game_id, index, seat.account_id, seat.name, seat.token),
            )
        changed = conn.execute(
            "UPDATE games SET status = 'playing', started_at = created_at WHERE id = ? AND status = 'waiting'",
            (room.core.game_id,),
        ).rowcount
        assert changed == 1
        conn.commit()


async def waiting_room(server: Server) -> tuple[Client, Client, str]:
    """Alice's room of tic-tac-toe that starts when she says, Bob seated: every seat taken, and
    the room's row stored (the writer's process idle)."""
    alice = await Client.connect(server.url, name="alice")
    bob = await Client.connect(server.url, name="bob")
    code = (await alice.create_room("tictactoe", seat=0, public=False, auto_start=False))["room"]
    await bob.join(code)
    backend = server.store._writer._backend
    assert isinstance(backend, SqliteProcessWriter)
    for _ in range(500):
        if backend._child is not None and not backend._sent:
            break
        await asyncio.sleep(0.01)
    return alice, bob, code


async def test_a_start_committed_by_a_writer_process_that_died_before_answering_stands(
    started: Server, db_url: str
) -> None:
    alice, bob, code = await waiting_room(started)
    room = started.rooms[code]
    _, pid, starting = await sent_to_a_stopped_writer(started, alice.start(code))
    try:
        start_behind_the_back(db_url, room)
    finally:
        os.kill(pid, signal.SIGKILL)
    await starting
    assert room.core.status == "playing"
    assert (await update_at(alice, code, 0))["decision"] is not None
    await alice.act(code, 4, seq=0)  # a new writer process stores the first move
    stored = await started.store.load_game(room.core.game_id)
    assert stored is not None and stored.status == "playing" and stored.actions == [(0, 4)]
    await alice.close()
    await bob.close()


async def test_a_start_stored_already_stands_where_every_retry_failed_on_its_seats(
    started: Server, db_url: str
) -> None:
    """Without asking the stored game, a start that had landed could never be stored again: its
    seats are new rows, so every retry failed as a duplicate seat."""
    alice, bob, code = await waiting_room(started)
    room = started.rooms[code]
    start_behind_the_back(db_url, room)
    await alice.start(code)
    assert room.core.status == "playing"
    await alice.act(code, 4, seq=0)
    assert (await update_at(bob, code, 1))["decision"] is not None
    await alice.close()
    await bob.close()


@pytest.mark.parametrize("ending", ["resign", "accept_draw"])
async def test_an_ending_request_whose_write_failed_can_be_asked_again(started: Server, ending: str) -> None:
    """The writer's process dies holding the end of the game: the request fails, and the room
    forgets it (the database never had it), so asking again ends the game."""
    alice, bob, code = await two_players(started)
    if ending == "accept_draw":
        await alice.offer_draw(code)
    request = getattr(bob, ending)
    _, pid, asking = await sent_to_a_stopped_writer(started, request(code))
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(ServerError) as refused:
        await asking
    assert refused.value.code == "storage_unavailable"
    assert started.rooms[code].core.result is None
    await request(code)  # not `already_resigned`, not `no_draw_offer`
    stored = await started.store.load_game(started.rooms[code].core.game_id)
    assert stored is not None and stored.status == "finished"
    assert stored.result["reason"] == ("resign" if ending == "resign" else "draw_agreed")
    await alice.close()
    await bob.close()


@pytest.mark.realtime
async def test_a_loss_on_time_whose_write_failed_is_stored_on_a_retry(started: Server) -> None:
    """Bob's time runs out while the writer's process holds the loss's write and dies: the room
    tries again a moment later (a new process), and the game ends for everyone, where it used
    to wait for someone to act, which Bob, gone silent, may never do."""
    alice, bob, code = await two_players(started, clock={"initial": 1.5})
    backend = started.store._writer._backend
    assert isinstance(backend, SqliteProcessWriter) and backend._child is not None
    pid = backend._child.process.pid
    os.kill(pid, signal.SIGSTOP)
    for _ in range(500):  # Bob's deadline passes: the room's write of his loss waits in the pipe
        if backend._sent:
            break
        await asyncio.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    assert backend._sent, "the loss on time never reached the writer's pipe"
    while (final := await alice.next_update(code, timeout=10))["status"] != "finished":
        pass
    assert final["result"]["reason"] == "time" and final["result"]["winners"] == [0]
    stored = await started.store.load_game(started.rooms[code].core.game_id)
    assert stored is not None and stored.status == "finished" and stored.result["reason"] == "time"
    await alice.close()
    await bob.close()


def test_judge_compares_actions_as_the_log_stores_them() -> None:
    held = [(0, {"cell": 1}), (1, (2, 3))]
    verdict = judge(held, [(0, {"cell": 1}), (1, [2, 3]), (0, [4])], 0, (4,))
    assert verdict.stored and not verdict.differs
    assert not judge(held, [(0, {"cell": 1}), (1, [2, 3])], 0, 4).differs  # nothing landed
    ahead = judge(held, [(0, {"cell": 1}), (1, [2, 3]), (0, 5)], 0, 4)
    assert not ahead.stored and ahead.differs
    further = judge(held, [(0, {"cell": 1}), (1, [2, 3]), (0, 4), (1, 6)], 0, 4)
    assert further.stored and further.differs
    other_past = judge(held, [(0, {"cell": 2}), (1, [2, 3]), (0, 4)], 0, 4)
    assert not other_past.stored and other_past.differs
