"""The lobby: public rooms a page at a time, filtered, pushed to watchers, and bounded per address."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from websockets.asyncio.client import connect as ws_connect

from partida.client import Client, ServerError
from partida.server.app import Server, ServerConfig
from partida.server.limits import Limits


async def _open_rooms(client: Client, n: int, game: str = "tictactoe") -> list[str]:
    return [(await client.create_room(game, auto_start=False))["room"] for _ in range(n)]


async def test_the_lobby_is_listed_a_page_at_a_time_and_the_pages_join_up(server, connect) -> None:
    server.limiter.limits.public_rooms_per_address = 1000
    maker = await connect(name="maker")
    codes = await _open_rooms(maker, 120)
    private = (await maker.create_room("tictactoe", public=False, auto_start=False))["room"]
    reader = await connect(name="reader")
    first = await reader.rooms_page()
    assert len(first["rooms"]) == 50 and first["next"] is not None  # the default page, not the whole lobby
    assert [r["code"] for r in first["rooms"]] == codes[:50]  # oldest first
    listed = [r["code"] for r in await reader.list_rooms()]  # the SDK follows the cursors
    assert listed == codes and private not in listed
    small = await reader.rooms_page(limit=7, cursor=first["next"])
    assert [r["code"] for r in small["rooms"]] == codes[50:57]


async def test_the_lobby_filters_by_game_and_status(server, connect) -> None:
    maker = await connect(name="maker")
    tictactoe = await _open_rooms(maker, 3)
    othello = await _open_rooms(maker, 2, "othello")
    playing = (await maker.create_room("tictactoe", seat=0))["room"]
    joiner = await connect(name="joiner")
    await joiner.join(playing)  # two seats taken: it starts
    reader = await connect(name="reader")
    assert [r["code"] for r in await reader.list_rooms(game="othello")] == othello
    assert [r["code"] for r in await reader.list_rooms(status="waiting")] == tictactoe + othello
    assert [r["code"] for r in await reader.list_rooms(status="playing")] == [playing]
    assert [r["code"] for r in await reader.list_rooms(game="tictactoe", status="playing")] == [playing]


@pytest.mark.parametrize(
    "fields",
    [{"status": "finished"}, {"limit": 0}, {"limit": 10_000}, {"cursor": "x1"}, {"cursor": "l" + "9" * 40}],
)
async def test_a_bad_page_request_is_a_bad_field(server, connect, fields: dict[str, Any]) -> None:
    reader = await connect(name="reader")
    with pytest.raises(ServerError) as error:
        await reader.request("list_rooms", **fields)
    assert error.value.code == "bad_field"


@pytest.mark.realtime
async def test_a_watcher_is_pushed_rooms_that_open_start_and_go(server, connect) -> None:
    watcher = await connect(name="watcher")
    await watcher.rooms_page(status="waiting", watch=True)
    maker = await connect(name="maker")
    code = (await maker.create_room("tictactoe", seat=0))["room"]
    pushed = await asyncio.wait_for(watcher.lobby_events.get(), 5)
    assert [r["code"] for r in pushed["rooms"]] == [code] and pushed["removed"] == []
    joiner = await connect(name="joiner")
    await joiner.join(code)  # it starts, so it leaves the waiting rooms the watcher watches
    pushed = await asyncio.wait_for(watcher.lobby_events.get(), 5)
    assert pushed["rooms"] == [] and pushed["removed"] == [code]
    await watcher.rooms_page(watch=False)
    still = await connect(name="still")  # watches on: its push shows one went out to every watcher
    await still.rooms_page(status="waiting", watch=True)
    late = (await maker.create_room("tictactoe", seat=0))["room"]
    while late not in [r["code"] for r in (await asyncio.wait_for(still.lobby_events.get(), 5))["rooms"]]:
        pass
    await watcher.request("ping")  # answered after anything that push sent this connection
    assert watcher.lobby_events.empty()


async def test_protocol_version_1_gets_the_first_page(server, connect) -> None:
    maker = await connect(name="maker")
    codes = await _open_rooms(maker, 60)
    async with ws_connect(server.url) as raw:
        await raw.send(json.dumps({"type": "hello", "version": 1, "name": "old"}))
        await raw.recv()
        await raw.send(json.dumps({"type": "list_rooms", "id": 1}))
        reply = json.loads(await raw.recv())
        assert reply["id"] == 1 and [r["code"] for r in reply["rooms"]] == codes[:50]
        await raw.send(json.dumps({"type": "list_rooms", "id": 2, "cursor": reply["next"]}))
        assert [r["code"] for r in json.loads(await raw.recv())["rooms"]] == codes[50:]


async def test_an_address_holds_a_bounded_number_of_public_rooms_open(db_url: str) -> None:
    server = Server(ServerConfig(port=0, db_url=db_url, limits=Limits(public_rooms_per_address=5)))
    await server.start()
    try:
        a = await Client.connect(server.url, name="a")
        b = await Client.connect(server.url, name="b")
        for _ in range(5):  # pairs that start their rooms at once: no room waits, yet each is listed
            code = (await a.create_room("tictactoe", seat=0))["room"]
            await b.join(code)
        with pytest.raises(ServerError) as error:
            await a.create_room("tictactoe", seat=0)
        assert error.value.code == "rate_limited" and "public rooms" in error.value.message
        await a.create_room("tictactoe", seat=0, public=False)  # a private room is not listed: allowed
        assert len(await b.list_rooms()) == 5
        await a.close()
        await b.close()
    finally:
        await server.stop()


async def test_a_page_built_for_its_asker_costs_it_by_its_bytes(limited) -> None:
    """Pages nobody else asked for (each its own size, or a random cursor) are charged by the
    bytes of rooms built, so an asker who keeps making the server build gets few; a page built
    already costs one request, and the refusal says when to ask again."""
    server = await limited(requests_per_second=0.01, request_burst=1000)
    maker = await Client.connect(server.url, name="maker")
    await _open_rooms(maker, 40)
    reader = await Client.connect(server.url, name="reader")
    first = await reader.rooms_page(limit=20)
    for _ in range(10):  # the same page, built already: a request each
        assert (await reader.rooms_page(limit=20))["rooms"] == first["rooms"]
    answered = 0
    with pytest.raises(ServerError) as refused:
        for size in range(21, 41):  # 20 pages of 21 to 40 rooms, each built for this asker
            await reader.rooms_page(limit=size)
            answered += 1
    # a waiting room's summary is some 200 bytes, a page of 21 to 40 of them 40 to 80 requests:
    # the 1,000 of the burst run out about halfway (charged by the rooms asked for, as before, all 20 fit)
    assert 5 <= answered < 20 and refused.value.code == "rate_limited" and refused.value.retry_after
    await maker.close()
    await reader.close()
