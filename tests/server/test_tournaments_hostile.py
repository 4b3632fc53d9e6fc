"""Tournaments against clients that want the server to hold or send too much: the options cap,
the caps on live tournaments per account and per address, `tournament_list` a page at a time
without options, look-alike names, and the scheduler's one line (not a traceback a second)
while the database cannot be read."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import msgpack
import pytest
from websockets.asyncio.client import connect as ws_connect

from partida.client import Client, ServerError
from partida.server.app import Server

CLOCK = {"initial": 60.0, "increment": 0.0}


async def account(server: Server, name: str) -> Client:
    await server.store.create_user(name, "a long password")
    return await Client.connect(server.url, name=name, password="a long password")


async def names(client: Client) -> list[str]:
    return [t["name"] for t in await client.tournament_list()]


async def refused(call: Any) -> ServerError:
    with pytest.raises(ServerError) as caught:
        await call
    return caught.value


@pytest.mark.slow
async def test_live_tournaments_are_capped_per_account_and_per_address(limited: Any) -> None:
    server = await limited(tournaments_per_account=2, tournaments_per_address=3)
    ann, bob = await account(server, "ann"), await account(server, "bob")
    for name in ("a1", "a2"):
        await ann.tournament_create(name, "tictactoe", "swiss", CLOCK, starts_in=3600)
    mine = await refused(ann.tournament_create("a3", "tictactoe", "swiss", CLOCK, starts_in=3600))
    assert mine.code == "too_many_tournaments" and "at most 2" in mine.message
    await bob.tournament_create("b1", "tictactoe", "swiss", CLOCK, starts_in=3600)
    # bob has one of his two, but his address (the same loopback) holds three: refused
    here = await refused(bob.tournament_create("b2", "tictactoe", "swiss", CLOCK, starts_in=3600))
    assert here.code == "too_many_tournaments" and "your address" in here.message
    assert sorted(await names(ann)) == ["a1", "a2", "b1"]  # nothing else changed
    assert await server.tournaments.store.get("a3") is None
    # a finished tournament is held no more: its place is free again
    a1 = await server.tournaments.store.require("a1")
    await server.tournaments.store.set_state(a1.id, status="finished")
    await ann.tournament_create("a3", "tictactoe", "swiss", CLOCK, starts_in=3600)
    await ann.close()
    await bob.close()


async def test_options_over_the_rooms_cap_are_refused_before_the_game_reads_them(server: Server) -> None:
    ann = await account(server, "ann")
    # "[" * 5000 would be refused by the game for its nesting: "bytes" says the size came first
    unread = await refused(
        ann.tournament_create(
            "big", "duel", "swiss", CLOCK, options={"custom_decks": True, "decklist0": "[" * 5000}, starts_in=3600
        )
    )
    assert unread.code == "bad_options" and "bytes" in unread.message
    big = await refused(ann.tournament_create("big", "duel", "swiss", CLOCK, options={"x": "y" * 60_000}))
    assert big.code == "bad_options" and "bytes" in big.message
    assert await names(ann) == []
    await ann.close()


async def test_paging_walks_every_tournament_once_in_order_and_without_options(server: Server) -> None:
    store = server.tournaments.store
    base = datetime.now(UTC) + timedelta(hours=1)
    made = []
    for i in range(23):
        # several share a start time: the cursor tells them apart by id
        await store.create(f"t{i}", "tictactoe", {}, 2, CLOCK, "swiss", "both", base + timedelta(minutes=i // 4))
        made.append(f"t{i}")
    ann = await account(server, "ann")
    seen: list[dict[str, Any]] = []
    cursor = None
    pages = 0
    while True:
        page = await ann.tournaments_page(cursor=cursor, limit=5)
        pages += 1
        seen += page["tournaments"]
        cursor = page["next"]
        if cursor is None:
            break
    assert pages == 5
    assert [t["name"] for t in seen] == made  # soonest first, each once
    assert all("options" not in t for t in seen)
    first = await ann.tournaments_page()  # no cursor: the first page, as old clients ask
    assert [t["name"] for t in first["tournaments"]] == made and first["next"] is None
    assert (await ann.request("tournament_standings", tournament="t0"))["tournament"]["options"] == {}
    for bad in ({"cursor": "nonsense"}, {"cursor": "9" * 60 + ".1"}, {"limit": 0}, {"limit": 10**6}):
        assert (await refused(ann.request("tournament_list", **bad))).code == "bad_field"
    await ann.close()


@pytest.mark.slow
async def test_a_page_is_built_again_after_a_change(server: Server) -> None:
    ann = await account(server, "ann")
    await ann.tournament_create("first", "tictactoe", "swiss", CLOCK, starts_in=3600)
    assert [t["entrants"] for t in (await ann.tournaments_page())["tournaments"]] == [0]
    await ann.tournament_join("first")
    assert [t["entrants"] for t in (await ann.tournaments_page())["tournaments"]] == [1]
    await ann.tournament_create("second", "tictactoe", "swiss", CLOCK, starts_in=7200)
    assert [t["name"] for t in (await ann.tournaments_page())["tournaments"]] == ["first", "second"]
    await ann.close()


async def test_look_alike_names_are_refused(server: Server) -> None:
    ann = await account(server, "ann")
    await ann.tournament_create("people1", "tictactoe", "swiss", CLOCK, starts_in=3600)
    for twin in ("PEOPLE1", "peop1e1", "PeopIe1", "people1"):
        error = await refused(ann.tournament_create(twin, "tictactoe", "swiss", CLOCK, starts_in=3600))
        assert error.code == "tournament_exists" and "people1" in error.message
    assert await names(ann) == ["people1"]
    await ann.tournament_create("people2", "tictactoe", "swiss", CLOCK, starts_in=3600)
    await ann.close()


@pytest.mark.realtime
async def test_an_unreadable_database_is_one_log_line_not_a_traceback_a_second(
    server: Server, db_url: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from partida.server.competition import scheduler

    monkeypatch.setattr(scheduler, "TICK", 0.1)  # tries again ten times a second
    ann = await account(server, "ann")
    await ann.tournament_create("soon", "tictactoe", "swiss", CLOCK, starts_in=3600)
    path = db_url.split("///", 1)[1]
    with sqlite3.connect(path) as db:
        db.execute("ALTER TABLE tournaments RENAME TO tournaments_away")
    caplog.set_level(logging.INFO, logger="partida.server.competition.tournament_director")
    server.tournament_director.now = lambda: time.time() + 3660  # "soon" is due: the scheduler reads it, and fails
    server.tournament_director.wake()
    await asyncio.sleep(1)  # several tries, a tenth of a second apart
    mine = [r for r in caplog.records if r.name == "partida.server.competition.tournament_director"]
    assert [r.levelname for r in mine] == ["WARNING"], [r.getMessage() for r in mine]
    assert "cannot be read" in mine[0].getMessage() and mine[0].exc_info is None
    with sqlite3.connect(path) as db:
        db.execute("ALTER TABLE tournaments_away RENAME TO tournaments")
    async with asyncio.timeout(30):
        while (await server.tournaments.store.require("soon")).status == "registering":
            await asyncio.sleep(0.2)  # then started (and, with no entrants, over at once)

    def messages() -> list[str]:
        return [r.getMessage() for r in caplog.records if r.name == "partida.server.competition.tournament_director"]

    async with asyncio.timeout(30):  # told at the end of the pass that started it
        while not any("works again" in m for m in messages()):
            await asyncio.sleep(0.05)
    assert not any(r.exc_info for r in caplog.records if r.name == "partida.server.competition.tournament_director")
    await ann.close()


@pytest.mark.slow
async def test_a_connection_that_does_not_read_is_listed_nothing_more(server: Server) -> None:
    """Pages queue up unread past 256 KiB: further `tournament_list` requests are refused
    (`rate_limited`) instead of built and queued, and the connection stays open."""
    store = server.tournaments.store
    base = datetime.now(UTC) + timedelta(hours=1)
    for i in range(200):
        await store.create(f"cup{i}", "tictactoe", {}, 2, CLOCK, "swiss", "both", base)
    await server.store.create_user("ann", "a long password")
    ws = await ws_connect(server.url, max_size=None)
    await ws.send(msgpack.packb({"type": "hello", "version": 2, "name": "ann", "password": "a long password"}))
    assert msgpack.unpackb(await ws.recv())["type"] == "welcome"
    ws.transport.pause_reading()  # type: ignore[attr-defined]
    session = next(s for s in server.sessions if s.name == "ann")
    sent = 0
    while session.outbox_bytes <= 256 * 1024 and sent < 2000:
        await ws.send(msgpack.packb({"type": "tournament_list", "id": sent, "limit": 200}))
        sent += 1
        await asyncio.sleep(0.005)
    await ws.send(msgpack.packb({"type": "tournament_list", "id": "late", "limit": 200}))
    ws.transport.resume_reading()  # type: ignore[attr-defined]
    async with asyncio.timeout(30):
        while True:
            reply = msgpack.unpackb(await ws.recv())
            if reply.get("id") == "late":
                break
    assert reply["type"] == "error" and reply["code"] == "rate_limited", reply
    assert not session.closed
    await ws.close()


@pytest.mark.slow
async def test_the_cap_holds_against_creations_at_the_same_moment(limited: Any) -> None:
    server = await limited(tournaments_per_account=2)
    await server.store.create_user("cat", "a long password")
    clients = [await Client.connect(server.url, name="cat", password="a long password") for _ in range(6)]
    results = await asyncio.gather(
        *(c.tournament_create(f"race{i}", "tictactoe", "swiss", CLOCK, starts_in=3600) for i, c in enumerate(clients)),
        return_exceptions=True,
    )
    refused_codes = [r.code for r in results if isinstance(r, ServerError)]
    assert len(results) - len(refused_codes) == 2 and refused_codes == ["too_many_tournaments"] * 4
    assert len(await names(clients[0])) == 2
    for client in clients:
        await client.close()
