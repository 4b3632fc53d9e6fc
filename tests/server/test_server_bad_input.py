"""Every kind of bad input gets an error with a stable code; the game does not change; other rooms
and connections carry on."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import msgpack
import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from partida.client import Client, ServerError
from partida.protocol import MAX_MESSAGE_BYTES


class Raw:
    """A bare websocket speaking MessagePack, to send what the SDK never would."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws

    @classmethod
    async def open(cls, url: str, hello: bool = True) -> Raw:
        raw = cls(await ws_connect(url, max_size=None))
        if hello:
            await raw.send({"type": "hello", "version": 1, "id": 0})
            assert (await raw.recv())["type"] == "welcome"
        return raw

    async def send(self, message: Any) -> None:
        await self.ws.send(msgpack.packb(message))

    async def recv(self) -> dict[str, Any]:
        frame = await asyncio.wait_for(self.ws.recv(), 5)
        return json.loads(frame) if isinstance(frame, str) else msgpack.unpackb(frame)

    async def error(self) -> dict[str, Any]:
        while True:
            message = await self.recv()
            if message["type"] == "error":
                return message


async def started_room(connect) -> tuple[Client, Client, str]:  # type: ignore[no-untyped-def]
    alice, bob = await connect(name="alice"), await connect(name="bob")
    code = (await alice.create_room("tictactoe", seat=0, public=False))["room"]
    await bob.join(code)
    update = await alice.next_update(code)
    assert update["decision"] is not None
    return alice, bob, code


async def board(server, code: str) -> list[int]:  # type: ignore[no-untyped-def]
    return list(server.rooms[code].core.state.view(None)["board"])


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        (b"\xc1\xc1\xc1", "bad_frame"),  # 0xc1 is never used in MessagePack
        (msgpack.packb([1, 2, 3]), "bad_message"),
        (msgpack.packb({"no": "type"}), "bad_message"),
        (msgpack.packb({"type": "fly_to_the_moon"}), "unknown_type"),
        (msgpack.packb({"type": "join", "room": 42}), "bad_field"),
        (msgpack.packb({"type": "join"}), "bad_field"),
        (msgpack.packb({"type": "join", "room": "X", "extra": 1}), "bad_field"),
        (msgpack.packb({"type": "act", "room": "X", "action": 1, "seq": "one"}), "bad_field"),
    ],
)
async def test_malformed_frames_get_an_error_and_the_connection_stays(server, frame: bytes, code: str) -> None:
    raw = await Raw.open(server.url)
    await raw.ws.send(frame)
    error = await raw.error()
    assert error["code"] == code and error["message"]
    await raw.send({"type": "ping", "id": 7})
    assert (await raw.recv()) == {"type": "pong", "id": 7}


async def test_malformed_json_text_frame(server) -> None:
    raw = await Raw.open(server.url, hello=False)
    await raw.ws.send("{not json")
    assert (await raw.error())["code"] == "bad_frame"


async def test_oversized_frame_is_refused_and_closes(server) -> None:
    raw = await Raw.open(server.url)
    await raw.send({"type": "ping", "pad": "x" * (MAX_MESSAGE_BYTES + 10)})
    error = await raw.error()
    assert error["code"] == "frame_too_large"
    with pytest.raises(ConnectionClosed):
        await raw.recv()


async def test_requests_before_hello_are_refused(server) -> None:
    raw = await Raw.open(server.url, hello=False)
    await raw.send({"type": "list_rooms", "id": 1})
    error = await raw.error()
    assert error == {"type": "error", "id": 1, "code": "hello_required", "message": error["message"]}


async def test_unsupported_version_closes(server) -> None:
    raw = await Raw.open(server.url, hello=False)
    await raw.send({"type": "hello", "version": 99})
    assert (await raw.error())["code"] == "unsupported_version"
    with pytest.raises(ConnectionClosed):
        await raw.recv()


@pytest.mark.slow
async def test_wrong_password_and_token_are_refused(server) -> None:
    await server.store.create_user("carol", "correct horse")
    with pytest.raises(ServerError) as exc:
        await Client.connect(server.url, name="carol", password="wrong")
    assert exc.value.code == "auth_failed"
    with pytest.raises(ServerError) as exc:
        await Client.connect(server.url, token="not-a-token")
    assert exc.value.code == "auth_failed"
    good = await Client.connect(server.url, name="carol", password="correct horse")
    assert good.welcome["you"] == {"name": "carol", "kind": "user", "agent": None}
    await good.close()


async def test_unknown_room_game_and_options(connect) -> None:
    alice = await connect()
    for call, code in [
        (alice.join("NOPE99"), "no_such_room"),
        (alice.watch("NOPE99"), "no_such_room"),
        (alice.create_room("chess"), "unknown_game"),
        (alice.create_room("tictactoe", {"size": 4}), "bad_options"),
        (alice.create_room("tictactoe", seats=5), "bad_options"),
        (alice.create_room("tictactoe", bots={1: "nobody"}), "unknown_agent"),
    ]:
        with pytest.raises(ServerError) as exc:
            await call
        assert exc.value.code == code, exc.value


async def test_actions_out_of_turn_illegal_or_for_another_seat(connect, server) -> None:
    alice, bob, code = await started_room(connect)
    before = await board(server, code)
    carol = await connect(name="carol")
    cases = [
        (bob.act(code, 4), "not_your_turn"),
        (bob.act(code, 4, seat=0), "not_seated"),
        (carol.act(code, 4), "not_seated"),
        (alice.act(code, 9), "illegal_action"),
        (alice.act(code, "e4"), "illegal_action"),
        (alice.act(code, [1, 2]), "illegal_action"),
        (alice.act(code, {"x": 1}), "illegal_action"),
        (alice.act(code, 4, seq=3), "stale_decision"),
    ]
    for call, expected in cases:
        with pytest.raises(ServerError) as exc:
            await call
        assert exc.value.code == expected
        assert await board(server, code) == before
    await alice.act(code, 4)
    assert (await board(server, code))[4] == 0
    with pytest.raises(ServerError) as exc:
        await alice.act(code, 0)
    assert exc.value.code == "not_your_turn"


async def test_actions_after_the_end_are_refused(connect, server) -> None:
    alice, bob, code = await started_room(connect)
    for seat, square in [(0, 0), (1, 3), (0, 1), (1, 4), (0, 2)]:
        await (alice if seat == 0 else bob).act(code, square)
    assert server.rooms[code].core.status == "finished"
    with pytest.raises(ServerError) as exc:
        await bob.act(code, 8)
    assert exc.value.code == "game_over"


async def test_a_flood_of_garbage_leaves_other_rooms_playing(connect, server) -> None:
    alice, bob, code = await started_room(connect)
    raw = await Raw.open(server.url)
    garbage = [b"\xc1", msgpack.packb({"type": "act", "room": code, "action": 4}), msgpack.packb(None), b""]
    for frame in garbage * 25:
        await raw.ws.send(frame)
    for seat, square in [(0, 0), (1, 3), (0, 1), (1, 4), (0, 2)]:
        await (alice if seat == 0 else bob).act(code, square)
    assert server.rooms[code].core.state.result().winners == [0]
    await raw.send({"type": "ping", "id": 1})
    while (message := await raw.recv())["type"] != "pong":
        assert message["type"] == "error"


async def test_seat_rules(connect) -> None:
    alice, bob, carol = await connect(name="alice"), await connect(name="bob"), await connect(name="carol")
    code = (await alice.create_room("tictactoe", seat=0, public=False))["room"]
    for call, expected in [(bob.join(code, seat=0), "seat_taken"), (bob.join(code, seat=7), "no_such_seat")]:
        with pytest.raises(ServerError) as exc:
            await call
        assert exc.value.code == expected
    await bob.join(code, seat=1)
    with pytest.raises(ServerError) as exc:
        await carol.join(code)
    assert exc.value.code == "already_started"
