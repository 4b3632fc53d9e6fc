"""Protocol version 2: `room` is a room's code in every message and a summary travels as
`summary`; a client that says version 1 still gets the summaries under `room`, as before."""

from __future__ import annotations

from websockets.asyncio.client import connect as ws_connect

from partida.server.app import Server
from tests.helpers import Raw


async def _play_a_game(server: Server, version: int) -> tuple[Raw, Raw]:
    a = Raw(await ws_connect(server.url))
    b = Raw(await ws_connect(server.url))
    for raw, name in ((a, "ann"), (b, "bea")):
        welcome = await raw.request("hello", version=version, name=name)
        assert welcome["type"] == "welcome" and welcome["version"] == version
    created = await a.request("create_room", game="tictactoe", seat=0, public=False)
    code = created["room"] if version == 2 else created["room"]["code"]
    await b.request("join", room=code)
    seats = {0: a, 1: b}
    while True:
        update = await seats[0].next()
        if update["type"] != "update":
            continue
        if update["status"] == "finished":
            break
        if update["decision"]:
            await a.request("act", room=code, action=update["decision"]["options"][0], seq=update["seq"])
        seats = {0: b, 1: a} if seats[0] is a else {0: a, 1: b}
        a, b = seats[0], seats[1]
    for raw in (a, b):  # read what is left (game_over, the last room push): all of it comes before a pong
        assert (await raw.request("ping"))["type"] == "pong"
    return a, b


async def test_version_2_names_a_room_by_its_code_everywhere(server: Server) -> None:
    a, b = await _play_a_game(server, 2)
    seen = a.seen + b.seen
    with_room = [m for m in seen if "room" in m]
    kinds = {m["type"] for m in with_room}
    assert {"room_created", "joined", "room", "update", "acted", "game_over"} <= kinds
    assert all(isinstance(m["room"], str) for m in with_room), [m for m in with_room if not isinstance(m["room"], str)]
    summaries = [m for m in seen if m["type"] in ("room_created", "joined", "room")]
    assert summaries and all(m["summary"]["code"] == m["room"] for m in summaries)


async def test_version_1_still_gets_summaries_under_room(server: Server) -> None:
    a, b = await _play_a_game(server, 1)
    seen = a.seen + b.seen
    for message in seen:
        assert "summary" not in message
        if message["type"] in ("room_created", "joined", "room"):
            assert isinstance(message["room"], dict) and message["room"]["code"]
        elif "room" in message:
            assert isinstance(message["room"], str)
