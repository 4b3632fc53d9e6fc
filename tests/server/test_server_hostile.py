"""A hostile client against a running server: no seat can be taken, no frame can silence other
clients, no input costs a traceback, and a slow reader cannot grow the server without bound."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import msgpack
import pytest
from websockets.asyncio.client import connect as ws_connect

from partida.client import Client, ServerError
from partida.server.app import Server, ServerConfig


class Text:
    """A bare websocket speaking JSON, to send what the SDK never would."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws

    @classmethod
    async def open(cls, url: str, **hello: Any) -> Text:
        raw = cls(await ws_connect(url, max_size=None))
        await raw.ws.send(json.dumps({"type": "hello", "version": 1, "id": 0, **hello}))
        return raw

    async def send_text(self, text: str) -> None:
        await self.ws.send(text)

    async def recv(self) -> dict[str, Any]:
        frame = await asyncio.wait_for(self.ws.recv(), 5)
        return json.loads(frame) if isinstance(frame, str) else msgpack.unpackb(frame)

    async def reply(self, request_id: Any) -> dict[str, Any]:
        while True:
            message = await self.recv()
            if message.get("id") == request_id:
                return message


# 1. Seat tokens belong to whoever holds the seat.


async def test_a_token_kept_from_an_earlier_seating_does_not_take_the_seat(connect, server) -> None:
    mallory, friend = await connect(name="mallory"), await connect(name="friend")
    created = await mallory.create_room("tictactoe", public=False, auto_start=False)
    code = created["room"]
    old = (await mallory.join(code, seat=1))["token"]
    await mallory.leave(code)
    await mallory.join(code, seat=0)
    friends = (await friend.join(code, seat=1))["token"]
    assert friends != old
    await mallory.start(code)
    with pytest.raises(ServerError) as refused:
        await mallory.join(code, seat=1, token=old)
    assert refused.value.code == "auth_failed"
    room = server.rooms[code]
    assert room.core.seats[1].name == "friend" and room.core.seats[1].session is not None
    # the friend's own token still reclaims the seat from another connection
    again = await connect(name="friend")
    assert (await again.join(code, seat=1, token=friends))["seat"] == 1


async def test_a_seat_token_survives_a_restart(db_url: str) -> None:
    first = Server(ServerConfig(port=0, db_url=db_url))
    await first.start()
    alice = await Client.connect(first.url, name="alice")
    bob = await Client.connect(first.url, name="bob")
    created = await alice.create_room("tictactoe", seat=0, public=False)
    code, token = created["room"], created["token"]
    await bob.join(code)
    await alice.close()
    await bob.close()
    await first.stop()
    second = Server(ServerConfig(port=0, db_url=db_url))
    await second.start()
    try:
        mallory = await Client.connect(second.url, name="mallory")
        with pytest.raises(ServerError):
            await mallory.join(code, seat=1, token=token)  # alice's token is for seat 0 only
        back = await Client.connect(second.url, name="alice")
        assert (await back.join(code, seat=0, token=token))["seat"] == 0
        with pytest.raises(ServerError) as bad:
            await mallory.join(code, seat=0, token="é" * 24)
        assert bad.value.code == "auth_failed"
        await mallory.close()
        await back.close()
    finally:
        await second.stop()


# 2. What cannot be encoded is refused where it enters.


async def test_a_name_that_msgpack_cannot_encode_is_refused_and_others_carry_on(server, connect) -> None:
    watcher = await connect(name="watcher")
    code = (await watcher.create_room("tictactoe", auto_start=False))["room"]
    evil = await Text.open(server.url, name="x\ud800y")
    answer = await evil.recv()
    assert answer["type"] == "error" and answer["code"] == "bad_frame"
    nul = await Text.open(server.url, name="a\u0000b")
    assert (await nul.recv())["code"] == "bad_frame"
    # a text frame with the same lone surrogate inside a request, after a good hello
    ok = await Text.open(server.url, name="fine")
    assert (await ok.recv())["type"] == "welcome"
    await ok.send_text('{"type":"join","id":5,"room":"' + code + '","seat":1,"token":"\\udc00"}')
    assert (await ok.reply(5))["code"] == "bad_frame"
    assert len(await watcher.list_rooms()) == 1


async def test_an_id_outside_the_msgpack_range_is_refused(server) -> None:
    raw = await Text.open(server.url)
    assert (await raw.recv())["type"] == "welcome"
    await raw.send_text('{"type":"ping","id":18446744073709551616}')
    error = await raw.recv()
    assert error["type"] == "error" and error["code"] == "bad_frame" and "id" not in error
    await raw.send_text('{"type":"ping","id":3}')
    assert await raw.recv() == {"type": "pong", "id": 3}


async def test_a_message_that_cannot_be_encoded_closes_only_its_connection(server, connect, caplog) -> None:
    """Should anything unencodable reach a writer anyway, the connection closes with a reason in
    the log instead of going silent."""
    client = await connect(name="client")
    session = next(s for s in server.sessions if s.name == "client")
    with caplog.at_level(logging.WARNING):
        session.send({"type": "room", "room": {"code": "x\ud800"}})
        await asyncio.wait_for(client.closed.wait(), 5)
    assert "cannot be encoded" in caplog.text
    other = await connect(name="other")
    assert await other.list_rooms() == []


async def test_a_failed_start_leaves_the_room_waiting(server, connect) -> None:
    """The stored status must follow the room: if the start cannot be stored, the room has not
    started."""
    alice, bob = await connect(name="alice"), await connect(name="bob")
    code = (await alice.create_room("tictactoe", seat=0, auto_start=False))["room"]
    await bob.join(code)
    real = server.store.start_game

    async def broken(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk full")

    server.store.start_game = broken  # type: ignore[method-assign]
    with pytest.raises(ServerError) as failed:
        await alice.start(code)
    assert failed.value.code == "storage_unavailable"
    assert server.rooms[code].core.status == "waiting" and server.rooms[code].core.state is None
    server.store.start_game = real  # type: ignore[method-assign]
    await alice.start(code)
    assert server.rooms[code].core.status == "playing"


# 3. A slow reader is disconnected before its outbox grows without bound.


@pytest.mark.realtime
async def test_a_client_that_never_reads_is_disconnected_when_its_outbox_is_full(db_url: str) -> None:
    server = Server(ServerConfig(port=0, db_url=db_url, outbox_bytes=64 * 1024))
    await server.start()
    try:
        maker = await Client.connect(server.url, name="maker")
        for _ in range(40):
            await maker.create_room("tictactoe", options={}, auto_start=False)
        ws = await ws_connect(server.url, max_size=None, max_queue=1)
        await ws.send(msgpack.packb({"type": "hello", "version": 1}))
        session = None
        for _ in range(100):
            await asyncio.sleep(0.01)
            session = next((s for s in server.sessions if s.greeted and s.name.startswith("guest")), None)
            if session is not None:
                break
        assert session is not None
        ws.transport.pause_reading()  # type: ignore[attr-defined]
        for i in range(3000):
            await ws.send(msgpack.packb({"type": "list_rooms", "id": i}))
            if session.closed:
                break
        for _ in range(500):
            if session.closed:
                break
            await asyncio.sleep(0.01)
        assert session.closed
        assert session.outbox_bytes <= 64 * 1024 + 16 * 1024
        assert len(await maker.list_rooms()) == 40
        await maker.close()
        ws.transport.abort()  # type: ignore[attr-defined]
    finally:
        await server.stop()


@pytest.mark.realtime
async def test_big_and_small_messages_arrive_whole_in_order(server, connect) -> None:
    """Frames of every header size, written in one turn and over several, reach a client whole
    and in order (a listing of many rooms is tens of KB; a move's update is tens of bytes)."""
    maker = await connect(name="maker")
    for _ in range(20):
        await maker.create_room("tictactoe", options={}, auto_start=False)
    watcher = await connect(name="watcher")
    listings = await asyncio.gather(*(watcher.list_rooms() for _ in range(5)))
    assert all(len(rooms) == 20 for rooms in listings)
    raw = await Text.open(server.url)
    await raw.reply(0)
    for i in range(1, 30):
        await raw.send_text(json.dumps({"type": "list_rooms", "id": i}))
    for i in range(1, 30):
        reply = await raw.reply(i)
        assert reply["type"] == "rooms" and len(reply["rooms"]) == 20


# 4. Deep nesting is a bad frame, never an internal error or a traceback.


async def test_deep_nesting_is_a_bad_frame_without_a_traceback(server, connect, caplog) -> None:
    raw = await ws_connect(server.url, max_size=None)
    with caplog.at_level(logging.ERROR):
        await raw.send("[" * 1000 + "]" * 1000)
        first = json.loads(await asyncio.wait_for(raw.recv(), 5))
        assert first["code"] == "bad_frame"
        await raw.send('{"type":"hello","version":1,"name":' + "[" * 100 + "1" + "]" * 100 + "}")
        assert json.loads(await asyncio.wait_for(raw.recv(), 5))["code"] == "bad_frame"
        alice, bob = await connect(name="alice"), await connect(name="bob")
        code = (await alice.create_room("tictactoe", seat=0, public=False))["room"]
        await bob.join(code)
        deep: Any = 4
        for _ in range(500):
            deep = [deep]
        with pytest.raises(ServerError) as refused:
            await alice.act(code, deep)
        assert refused.value.code == "bad_frame"
        with pytest.raises(ServerError) as binary:
            await alice.act(code, b"\x04")  # MessagePack bin: nothing a JSON client or the database takes
        assert binary.value.code == "bad_frame"
        await alice.act(code, 4)
    assert "Traceback" not in caplog.text and not [r for r in caplog.records if r.exc_info]


# 8. Leftovers.


async def test_booleans_and_floats_are_not_squares(server, connect) -> None:
    alice, bob = await connect(name="alice"), await connect(name="bob")
    code = (await alice.create_room("tictactoe", seat=0, public=False))["room"]
    await bob.join(code)
    for answer in (True, 5.0):
        with pytest.raises(ServerError) as refused:
            await alice.act(code, answer)
        assert refused.value.code == "illegal_action"
    await alice.act(code, 5)
    stored = await server.store.load_game(server.rooms[code].core.game_id)
    assert stored is not None and stored.actions == [(0, 5)]


@pytest.mark.parametrize("name", ["\x1b[31mred", "abc\u202edcba", "a\u200bb", "line\nbreak", "tab\there"])
async def test_guest_names_hold_only_printable_characters(server, name: str) -> None:
    raw = await Text.open(server.url, name=name)
    answer = await raw.recv()
    assert answer["type"] == "error" and answer["code"] == "bad_field"
    await raw.send_text('{"type":"hello","version":1,"name":"plain name"}')
    assert (await raw.recv())["you"]["name"] == "plain name"


async def test_account_names_have_no_case_twins_and_passwords_a_minimum_length(server) -> None:
    from partida.storage.store import NameTaken, StorageError

    await server.store.create_user("Ada", "long enough")
    with pytest.raises(NameTaken):
        await server.store.create_user("ada", "long enough")
    with pytest.raises(NameTaken):
        await server.store.create_bot("ADA")
    await server.store.create_user("Émile", "long enough")
    with pytest.raises(NameTaken):
        await server.store.create_user("émile", "long enough")
    assert await server.store.reserved_name("ÉMILE") == "Émile"
    with pytest.raises(StorageError):
        await server.store.create_user("bob", "x")


@pytest.mark.parametrize(
    "twin",
    ["\u0410lice", "Alic\u0435", "\uff21\uff4c\uff49\uff43\uff45", "AL\u0130CE", "AIice", "alice"],
    ids=["cyrillic-A", "cyrillic-e", "full-width", "dotted-I", "capital-i-for-l", "case"],
)
@pytest.mark.slow
async def test_an_account_name_has_no_twin_that_looks_the_same(server, db_url: str, twin: str, capsys) -> None:
    from partida.cli import main

    await server.store.create_user("Alice", "long enough")
    assert await server.store.reserved_name(twin) == "Alice"
    # `partida db create-user` refuses the twin with one line
    code = await asyncio.to_thread(main, ["db", "create-user", twin, "--db", db_url, "--password", "long enough"])
    err = capsys.readouterr().err
    assert code != 0 and "too like the account 'Alice'" in err and "Traceback" not in err
    # a guest cannot sit down as the twin
    raw = await Text.open(server.url, name=twin)
    answer = await raw.recv()
    assert answer["type"] == "error" and answer["code"] == "name_reserved"
    # a name that only shares letters is fine
    assert await server.store.reserved_name("Alicia") is None


async def test_a_full_database_answers_storage_unavailable(db_url: str, caplog, monkeypatch) -> None:
    # The database is made full for the connections of this process (a per-connection setting),
    # so the SQLite writer is the thread one here: the writer process keeps its own connection.
    monkeypatch.setenv("PARTIDA_SQLITE_WRITER", "thread")

    from partida.server.limits import Limits

    unlimited = Limits(waiting_rooms_per_address=10**6, rooms_created_burst=10**6, request_burst=10**6)
    server = Server(ServerConfig(port=0, db_url=db_url, limits=unlimited))
    await server.start()
    try:
        await _fill_the_database(server, caplog)
    finally:
        await server.stop()


async def _fill_the_database(server: Server, caplog: Any) -> None:
    from sqlalchemy import event

    def full(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA page_count")
        pages = cursor.fetchone()[0]
        cursor.execute(f"PRAGMA max_page_count={pages}")
        cursor.close()

    client = await Client.connect(server.url, name="client")
    await client.create_room("tictactoe")  # the writer is open
    # every engine that writes: the async one, and the group writer's own thread on SQLite
    writer = getattr(getattr(server.store, "_writer", None), "_backend", None)
    engines = [server.db.engine.sync_engine] + ([writer.engine] if writer is not None else [])

    async def reconnect() -> None:
        await server.db.engine.dispose()
        if writer is not None:
            await writer.reconnect()

    for engine in engines:
        event.listen(engine, "connect", full)
    await reconnect()
    with caplog.at_level(logging.ERROR), pytest.raises(ServerError) as refused:
        for _ in range(500):
            await client.create_room("tictactoe", options={}, public=False)
    assert refused.value.code == "storage_unavailable"
    assert not [r for r in caplog.records if r.exc_info]
    for engine in engines:
        event.remove(engine, "connect", full)
    await reconnect()
    await client.create_room("tictactoe")
    await client.close()


async def test_a_read_only_database_is_refused_at_start(tmp_path) -> None:
    from partida.storage.database import Database, StorageError

    path = tmp_path / "ro.db"
    db = await Database.open(f"sqlite+aiosqlite:///{path}")
    await db.close()
    server = Server(ServerConfig(port=0, db_url=f"sqlite+aiosqlite:///file:{path}?mode=ro&uri=true"))
    with pytest.raises(StorageError) as refused:
        await server.start()
    assert "does not accept writes" in str(refused.value)


def test_a_malformed_postgresql_url_is_one_line(capsys) -> None:
    from partida.cli import main

    assert main(["db", "upgrade", "--db", "postgresql://u:secret@host:notaport/db"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("partida: error: ") and "Traceback" not in err and "secret" not in err


async def test_replay_fails_on_a_seed_or_result_that_does_not_match(server, connect, db_url: str) -> None:

    from sqlalchemy import update

    from partida.cli import main
    from partida.storage.models import GameRecord

    finals = await _a_finished_game(connect, seed=5)
    game_id = finals[0]["game_id"]

    def replay() -> int:
        return main(["replay", str(game_id), "--db", db_url, "--json"])

    assert await asyncio.to_thread(replay) == 0
    async with server.db.write() as conn:
        await conn.execute(update(GameRecord).where(GameRecord.id == game_id).values(result={"scores": [9, 9]}))
    assert await asyncio.to_thread(replay) == 1
    async with server.db.write() as conn:
        await conn.execute(
            update(GameRecord).where(GameRecord.id == game_id).values(result=finals[0]["result"], seed_hash="0" * 64)
        )
    assert await asyncio.to_thread(replay) == 1


async def _a_finished_game(connect: Any, seed: int) -> list[dict[str, Any]]:
    """Two guests play a private tic-tac-toe game at random to its end: both final updates."""
    import random

    alice, bob = await connect(name="alice"), await connect(name="bob")
    code = (await alice.create_room("tictactoe", seat=0, public=False))["room"]
    await bob.join(code)
    rng = random.Random(seed)
    return list(
        await asyncio.gather(
            alice.play(code, lambda u, p: p.random_answer(rng)), bob.play(code, lambda u, p: p.random_answer(rng))
        )
    )


async def test_replay_fails_when_the_last_action_of_a_finished_game_is_gone(
    server, connect, db_url: str, capsys
) -> None:

    from sqlalchemy import delete, func, select

    from partida.cli import main
    from partida.storage.models import ActionRecord

    game_id = (await _a_finished_game(connect, seed=7))[0]["game_id"]
    async with server.db.write() as conn:
        last = await conn.scalar(select(func.max(ActionRecord.index)).where(ActionRecord.game_id == game_id))
        await conn.execute(delete(ActionRecord).where(ActionRecord.game_id == game_id, ActionRecord.index == last))
    capsys.readouterr()
    assert await asyncio.to_thread(main, ["replay", str(game_id), "--db", db_url]) == 1
    out = capsys.readouterr().out
    assert "DO NOT END THE GAME" in out and "Ended (normal)" not in out
    assert await asyncio.to_thread(main, ["replay", str(game_id), "--db", db_url, "--json"]) == 1


# 5. HTTP: input pipelined behind a request.


async def _exchange(server: Server, data: bytes) -> bytes:
    reader, writer = await asyncio.open_connection(server.config.host, server.config.port)
    writer.write(data)  # one write: one segment on loopback
    try:
        return await asyncio.wait_for(reader.read(), 5)
    finally:
        writer.close()


async def test_pipelined_http_requests_get_the_first_answered_without_a_traceback(server, caplog) -> None:
    """websockets reads what follows a request as frames before answering it: a second GET in
    the same segment made it send EOF twice ("unexpected internal error", a traceback each)."""
    request = f"GET / HTTP/1.1\r\nHost: {server.config.host}\r\n\r\n".encode()
    with caplog.at_level(logging.INFO):
        answers = [await _exchange(server, request * 2) for _ in range(10)]
        answers += [await _exchange(server, request + b"\x81\x85garbage after the request")]
    assert all(a.startswith(b"HTTP/1.1 200 OK\r\n") and b"<html" in a for a in answers)
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


async def test_a_frame_sent_before_the_handshake_is_answered_is_read_after_it(server) -> None:
    """A client that does not wait for the 101 before its first frame is still heard."""
    upgrade = (
        f"GET / HTTP/1.1\r\nHost: {server.config.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    ).encode()
    hello = json.dumps({"type": "hello", "version": 2, "name": "eager"}).encode()
    mask = b"\x01\x02\x03\x04"
    frame = bytes([0x81, 0x80 | len(hello)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(hello))
    reader, writer = await asyncio.open_connection(server.config.host, server.config.port)
    writer.write(upgrade + frame)
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    assert head.startswith(b"HTTP/1.1 101")
    first = await asyncio.wait_for(reader.readexactly(2), 5)
    assert first[0] == 0x81
    length = first[1] & 0x7F
    if length == 126:
        length = int.from_bytes(await reader.readexactly(2), "big")
    welcome = json.loads(await asyncio.wait_for(reader.readexactly(length), 5))
    assert welcome["type"] == "welcome" and welcome["you"]["name"] == "eager"
    writer.close()
