"""partida/client/connection.py over a fake websocket: replies find their requests, pushes find
their queues, a lost node fails what waited on it, a room let go is taken back before the next
request about it, and URLs outside the deployment are not followed."""

from __future__ import annotations

import asyncio

import pytest

from partida.client import ConnectionLost, ServerError
from tests.client.fake_socket import FakeSocket, Message, client_on, ok

ROOM = "ABCD"


def silent(message: Message) -> list[Message]:
    return []


async def test_replies_find_their_requests_in_any_order() -> None:
    socket = FakeSocket(silent)
    client = client_on(socket)
    first = asyncio.create_task(client.request("ping", n=1))
    second = asyncio.create_task(client.request("ping", n=2))
    a, b = await socket.next_sent(), await socket.next_sent()
    assert a["id"] != b["id"] and (a["n"], b["n"]) == (1, 2)
    socket.push({"type": "pong", "id": b["id"], "n": 2})
    socket.push({"type": "pong", "id": a["id"], "n": 1})
    assert (await first)["n"] == 1 and (await second)["n"] == 2
    assert not client._waiting  # nothing left waiting for a reply that came
    await client.close()


async def test_an_error_reply_raises_its_refusal() -> None:
    def refuse(message: Message) -> list[Message]:
        return [{"type": "error", "id": message["id"], "code": "rate_limited", "message": "m", "retry_after": 1.5}]

    client = client_on(FakeSocket(refuse))
    with pytest.raises(ServerError) as refused:
        await client.request("list_games")
    assert (refused.value.code, refused.value.retry_after) == ("rate_limited", 1.5)
    assert not client._waiting
    await client.close()


async def test_pushes_reach_their_queues() -> None:
    socket = FakeSocket()
    client = client_on(socket)
    pushes = [
        {"type": "update", "room": ROOM, "seat": 0, "seq": 1, "status": "playing", "decision": None},
        {"type": "seated", "room": "EFGH", "seat": 1, "token": "seat-token"},
        {"type": "challenge", "challenge": "c1"},
        {"type": "lobby", "rooms": []},
        {"type": "tournament_game", "room": "IJKL", "seat": 0, "token": "t-token"},
        {"type": "seek_paired", "room": "MNOP", "seat": 1, "token": "s-token"},
        {"type": "ladder_game", "room": "QRST"},
        {"type": "error", "code": "internal", "message": "pushed, answering no request"},
        {"type": "error", "id": 999, "code": "late", "message": "a reply nobody waits for"},
    ]
    for push in pushes:
        socket.push(push)
    assert await client.next_message(ROOM) == pushes[0]
    assert await client.seated.get() == pushes[1]
    assert await client.challenges.get() == pushes[2]
    assert await client.lobby_events.get() == pushes[3]
    assert await client.tournament_events.get() == pushes[4]
    assert await client.seek_events.get() == pushes[5]
    assert await client.ladder_events.get() == pushes[6]
    assert [await client.errors.get(), await client.errors.get()] == pushes[7:]
    # the seats granted by a push are kept, to take them back on another node
    assert client._seats == {"EFGH": {1: "seat-token"}, "IJKL": {0: "t-token"}, "MNOP": {1: "s-token"}}
    await client.close()


async def test_a_lost_connection_fails_what_waited_on_it() -> None:
    socket = FakeSocket(silent)
    client = client_on(socket)
    socket.push({"type": "update", "room": ROOM, "seat": 0, "seq": 1, "status": "playing", "decision": None})
    await client.next_message(ROOM)
    waiting = asyncio.create_task(client.request("ping"))
    await socket.next_sent()
    socket.drop()
    with pytest.raises(ConnectionLost):
        await waiting
    await client.closed.wait()
    with pytest.raises(ConnectionLost):
        await client.next_message(ROOM)  # the room's queue hears of it too
    with pytest.raises(ConnectionLost):
        await client.request("ping")  # and nothing more is sent
    assert socket.kinds() == ["ping"]
    await client.close()


def a_node(message: Message) -> list[Message]:
    """Grants a seat on `join` (with the token it was given, or a new one), takes the rest."""
    if message["type"] == "join":
        token = message.get("token", "granted")
        summary = {"code": message["room"]}
        return [{"type": "joined", "id": message["id"], "summary": summary, "seat": 1, "token": token}]
    return ok(message)


async def test_a_room_let_go_is_taken_back_before_the_next_request_about_it() -> None:
    socket = FakeSocket(a_node)
    client = client_on(socket)
    await client.join(ROOM, seat=1)
    # the node let the room go (another node took it over): the play loop hears of it...
    socket.push({"type": "error", "code": "moved", "room": ROOM})
    with pytest.raises(ConnectionLost):
        await client.next_message(ROOM)
    assert not client.closed.is_set()
    # ...and the next request about the room takes the seat back (with its token) first
    await client.act(ROOM, 4, seq=7, seat=1)
    assert socket.sent[1:] == [
        {"type": "join", "id": socket.sent[1]["id"], "room": ROOM, "seat": 1, "token": "granted"},
        {"type": "act", "id": socket.sent[2]["id"], "room": ROOM, "action": 4, "seq": 7, "seat": 1},
    ]
    await client.act(ROOM, 5, seq=8, seat=1)  # back in: no second join
    assert socket.kinds() == ["join", "join", "act", "act"]
    await client.close()


async def test_a_moved_answer_to_a_host_outside_the_deployment_is_not_followed() -> None:
    def moved(message: Message) -> list[Message]:
        return [
            {"type": "error", "id": message["id"], "code": "moved", "room": ROOM, "url": "ws://elsewhere.example:1"}
        ]

    socket = FakeSocket(moved)
    client = client_on(socket)
    with pytest.raises(ServerError) as refused:
        await client.join(ROOM)
    assert refused.value.code == "untrusted_url"
    assert socket.kinds() == ["join"]  # asked once, and nothing opened elsewhere
    await client.close()


async def test_a_summon_outside_the_deployment_is_an_error_not_a_connection() -> None:
    socket = FakeSocket()
    client = client_on(socket)
    socket.push({"type": "summon", "url": "ws://elsewhere.example:1"})
    error = await client.errors.get()
    assert error["code"] == "untrusted_url" and "elsewhere.example" in error["message"]
    assert client._links == [client._home]
    await client.close()


async def test_the_deployment_is_its_hosts() -> None:
    client = client_on(FakeSocket(), "ws://Node-A.example:8765")
    assert client.trusts("wss://node-a.example:9999/")  # the host, any port
    assert not client.trusts("ws://node-b.example:8765")
    assert not client.trusts("http://node-a.example:8765")  # no websocket URL
    client.trust("ws://node-b.example:1", "not a url")
    assert client.trusts("ws://node-b.example:8765")
    await client.close()
