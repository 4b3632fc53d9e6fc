"""Rated or casual, chosen when a room is created: a rated room needs an account and a clock,
refuses guests at its seats, says so in its summary, and stays rated across a restart and a
rematch; a refused request creates nothing."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select
from websockets.asyncio.client import connect as ws_connect

from partida.client import Client, ServerError
from partida.server.app import Server, ServerConfig
from partida.storage.models import GameRecord
from tests.helpers import Raw

BLITZ = {"initial": 180, "increment": 2}


async def games_stored(server: Server) -> int:
    async with server.db.session() as session:
        return int(await session.scalar(select(func.count()).select_from(GameRecord)) or 0)


async def accounts(server: Server, *names: str) -> list[Client]:
    clients = []
    for name in names:
        await server.store.create_user(name, f"{name} horse battery")
        clients.append(await Client.connect(server.url, name=name, password=f"{name} horse battery"))
    return clients


async def test_a_guest_cannot_create_a_rated_room(server: Server, connect) -> None:
    guest = await connect(name="gus")
    with pytest.raises(ServerError) as refused:
        await guest.create_room("tictactoe", seat=0, clock=BLITZ, rated=True)
    assert refused.value.code == "rated_needs_account"
    assert await games_stored(server) == 0


async def test_a_rated_room_needs_a_clock(server: Server) -> None:
    (ada,) = await accounts(server, "ada")
    with pytest.raises(ServerError) as refused:
        await ada.create_room("tictactoe", seat=0, rated=True)
    assert refused.value.code == "rated_needs_clock"
    assert await games_stored(server) == 0
    await ada.close()


@pytest.mark.slow
async def test_a_rated_room_seats_accounts_and_refuses_guests(server: Server, connect) -> None:
    ada, bob = await accounts(server, "ada", "bob")
    created = await ada.create_room("tictactoe", seat=0, public=True, clock=BLITZ, rated=True)
    code = created["room"]
    assert created["summary"]["rated"] is True
    guest = await connect(name="gus")
    with pytest.raises(ServerError) as refused:
        await guest.join(code)
    assert refused.value.code == "rated_needs_account"
    assert server.rooms[code].core.seats[1] is None  # the refusal changed nothing
    joined = await bob.join(code)
    assert joined["summary"]["rated"] is True and joined["summary"]["status"] == "playing"
    async with server.db.session() as session:
        assert await session.scalar(select(GameRecord.rated).where(GameRecord.room_code == code)) is True
    casual = await ada.create_room("tictactoe", seat=0, clock=BLITZ)
    assert casual["summary"]["rated"] is False
    for client in (ada, bob):
        await client.close()


@pytest.mark.parametrize("version", [1, 2])
async def test_both_protocol_versions_take_rated(server: Server, version: int) -> None:
    await server.store.create_user("ada", "ada horse battery")
    raw = Raw(await ws_connect(server.url))
    await raw.request("hello", version=version, name="ada", password="ada horse battery")
    created = await raw.request("create_room", game="tictactoe", seat=0, clock=BLITZ, rated=True)
    summary = created["summary"] if version == 2 else created["room"]
    assert summary["rated"] is True
    refused = await raw.request("create_room", game="tictactoe", rated="yes")
    assert refused["type"] == "error" and refused["code"] == "bad_field"


@pytest.mark.slow
async def test_a_rated_game_is_rated_after_a_restart(db_url: str) -> None:
    first = Server(ServerConfig(port=0, db_url=db_url))
    await first.start()
    ada, bob = await accounts(first, "ada", "bob")
    code = (await ada.create_room("tictactoe", seat=0, public=False, clock=BLITZ, rated=True))["room"]
    await bob.join(code)
    await ada.act(code, 4)
    for client in (ada, bob):
        await client.close()
    await first.stop()

    second = Server(ServerConfig(port=0, db_url=db_url))
    await second.start()
    try:
        room = second.rooms[code]
        assert room.rated and room.summary()["rated"] is True
        guest = await Client.connect(second.url, name="gus")
        with pytest.raises(ServerError) as refused:
            await guest.join(code, seat=1)
        assert refused.value.code == "rated_needs_account"
        await guest.close()
    finally:
        await second.stop()


@pytest.mark.slow
async def test_the_rematch_of_a_rated_game_is_rated(server: Server) -> None:
    ada, bob = await accounts(server, "ada", "bob")
    code = (await ada.create_room("tictactoe", seat=0, public=False, clock=BLITZ, rated=True))["room"]
    await bob.join(code)
    await ada.resign(code)
    await ada.rematch(code)
    offered = await bob.rematch(code)
    assert offered["rematch"]["rated"] is True
    for client in (ada, bob):
        await client.close()


@pytest.mark.slow
async def test_one_account_cannot_take_both_seats_of_a_rated_room(server: Server, bots) -> None:
    """It would play itself: the room said `rated: true` and the game was never rated. The second
    seat is refused, from the same connection or another, and a casual room still allows it."""
    (ada,) = await accounts(server, "ada")
    again = await Client.connect(server.url, name="ada", password="ada horse battery")
    created = await ada.create_room("tictactoe", seat=0, clock=BLITZ, rated=True)
    code = created["room"]
    for client, seat in ((ada, 1), (again, 1), (again, None)):
        with pytest.raises(ServerError) as refused:
            await client.join(code, seat=seat)
        assert refused.value.code == "rated_seat_twice" and "rated" in refused.value.message
    assert server.rooms[code].core.seats[1] is None and server.rooms[code].core.status == "waiting"
    taken_back = await again.join(code, seat=0, token=created["token"])  # its own seat, by its token
    assert taken_back["seat"] == 0 and server.rooms[code].core.seats[1] is None
    casual = (await ada.create_room("tictactoe", seat=0, clock=BLITZ))["room"]
    assert (await again.join(casual, seat=1))["seat"] == 1
    await bots("random")
    bot = server.bot_sessions()[0].name
    stored = await games_stored(server)
    with pytest.raises(ServerError) as twice:
        await ada.create_room("tictactoe", clock=BLITZ, rated=True, bots={0: bot, 1: bot})
    assert twice.value.code == "rated_seat_twice" and await games_stored(server) == stored
    for client in (ada, again):
        await client.close()


@pytest.mark.slow
async def test_each_seat_carries_its_rating_in_the_rooms_game_and_class(server: Server, connect) -> None:
    """Beside each seated account's name, its rating in the room's game and clock class, rated
    room or casual: a newcomer's `1500?`; once rated, the finished room shows the new ones, and so
    does its rematch.
    Guests and rooms without a clock (never rated) carry none."""
    ada, bob = await accounts(server, "ada", "bob")
    code = (await ada.create_room("tictactoe", seat=0, public=False, clock=BLITZ, rated=True))["room"]
    joined = await bob.join(code)
    assert [s["rating"] for s in joined["summary"]["seats"]] == ["1500?", "1500?"]
    await ada.resign(code)
    while (message := await bob.next_message(code, 10))["type"] != "rating_changed":
        pass
    after = {c["name"]: c["after"]["shown"] for c in message["changes"]}
    assert after["bob"] != "1500?" and after["bob"].endswith("?")
    # the finished room's names then carry the new ratings
    while (update := await bob.next_message(code, 10))["type"] != "room":
        pass
    assert [s["rating"] for s in update["summary"]["seats"]] == [after["ada"], after["bob"]]
    await ada.rematch(code)
    offered = await bob.rematch(code)
    seats = offered["rematch"]["seats"]  # one seat on: bob now plays first
    assert [(s["name"], s["rating"]) for s in seats] == [("bob", after["bob"]), ("ada", after["ada"])]

    casual = (await ada.create_room("tictactoe", seat=0, public=False, clock=BLITZ))["room"]
    guest = await connect(name="gus")
    seated = await guest.join(casual)
    # a casual room with a clock shows ratings too (ada's, changed by her loss); a guest has none
    assert [s["rating"] for s in seated["summary"]["seats"]] == [after["ada"], None]
    unclocked = (await ada.create_room("tictactoe", seat=0, public=False))["room"]
    assert [s["rating"] for s in (await bob.join(unclocked))["summary"]["seats"]] == [None, None]
    for client in (ada, bob, guest):
        await client.close()
