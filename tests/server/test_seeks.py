"""Quick pairing through a real server: two compatible seeks make a private room with both
seated and told; a listed seek is taken by id; watchers of the lobby's seeks are pushed them
coming and going; a seek dies with its poster's connection, even one being taken as it leaves;
limits (per owner and per address), paging, bad input and bots. And the buckets the waiting
seeks are kept in (`SeekBook`), with plain values."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import sqlite3
from typing import Any

import msgpack
import pytest
from websockets.asyncio.client import connect as ws_connect

from partida.client import Client, ServerError
from partida.competition.seeks import Party, Seek, SeekBook, first_match
from partida.room.clocks import ClockSpec
from partida.server.app import Server
from partida.server.seek_board import MAX_SEEKS
from tests.helpers import random_decider, rated_results, sqlite_path, wait_for

PASSWORD = "correct horse battery"
BLITZ = {"initial": 300, "increment": 3}


async def _user(server: Server, connect, name: str) -> Client:  # type: ignore[no-untyped-def]
    await server.store.create_user(name, PASSWORD)
    return await connect(name=name, password=PASSWORD)


async def _bot(server: Server, name: str) -> Client:
    _, token = await server.store.create_bot(name)
    return await Client.connect(server.url, token=token, agent="random", games=["tictactoe", "othello"])


async def _seeks_news(client: Client, timeout: float = 5.0) -> dict[str, Any]:
    while True:
        message = await asyncio.wait_for(client.lobby_events.get(), timeout)
        if message["type"] == "lobby_seeks":
            return message


async def _refused(code: str, request: Any) -> ServerError:
    with pytest.raises(ServerError) as refused:
        await request
    assert refused.value.code == code, refused.value.message
    return refused.value


async def test_two_compatible_seeks_are_paired_and_play(server: Server, connect) -> None:
    alice = await _user(server, connect, "alice")
    bob = await connect(name="bob")  # a guest: casual seeks are for everyone
    posted = await alice.seek("othello", clock=BLITZ)
    assert posted["paired"] is False
    seek = posted["seek"]
    assert seek["by"] == {"name": "alice", "kind": "user"} and seek["class"] == "blitz" and not seek["rated"]
    assert [s["id"] for s in await bob.list_seeks()] == [seek["id"]]

    answer = await bob.seek("othello", clock=BLITZ)
    assert answer["paired"] is True
    theirs = await asyncio.wait_for(alice.seek_events.get(), 5)
    mine = await asyncio.wait_for(bob.seek_events.get(), 5)
    assert theirs["seek"] == seek["id"] and mine["seek"] == answer["seek"]["id"]
    assert theirs["room"] == mine["room"] and {theirs["seat"], mine["seat"]} == {0, 1}
    assert theirs["token"] and mine["token"] and theirs["opponent"] == "bob" and mine["opponent"] == "alice"
    room = mine["summary"]
    assert not room["public"] and room["clock"]["initial"] == 300 and room["clock"]["increment"] == 3
    assert await bob.list_seeks() == []  # both seeks are gone
    code = room["code"]
    finals = await asyncio.wait_for(
        asyncio.gather(alice.play(code, random_decider(1)), bob.play(code, random_decider(2))), 30
    )
    assert all(final["status"] == "finished" for final in finals)


@pytest.mark.slow
async def test_rated_seeks_meet_rated_seeks_and_open_a_rated_room(server: Server, connect) -> None:
    jon = await _user(server, connect, "jon")
    kim = await _user(server, connect, "kim")
    casual = (await jon.seek("othello", clock=BLITZ))["seek"]
    rated = await kim.seek("othello", clock=BLITZ, rated=True)
    assert rated["paired"] is False and rated["seek"]["rated"] is True  # casual and rated never meet
    await jon.seek_cancel(casual["id"])
    assert (await jon.seek("othello", clock=BLITZ, rated=True))["paired"] is True
    paired = await asyncio.wait_for(kim.seek_events.get(), 5)
    assert paired["summary"]["rated"] is True and server.rooms[paired["room"]].rated
    guest = await connect(name="guest")
    waiting = (await kim.seek("othello", clock=BLITZ, rated=True))["seek"]
    await _refused("seek_refused", guest.seek_take(waiting["id"]))  # a rated seek is for accounts


@pytest.mark.slow
async def test_a_rating_range_pairs_only_opponents_rated_within_it(server: Server, connect) -> None:
    await rated_results(server.store, [("lee", "max")] * 3, BLITZ)  # lee won thrice, max lost thrice
    lee, max_ = [await connect(name=n, password=f"{n} horse battery") for n in ("lee", "max")]
    ola = await _user(server, connect, "ola")  # a newcomer: 1500
    ratings = {}
    for name in ("lee", "max", "ola"):
        account = await server.store.get_account_by_name(name)
        assert account is not None
        rating = await server.store.person_ratings.rating_of(account.id, "tictactoe", ClockSpec.parse(BLITZ))
        assert rating is not None
        ratings[name] = float(rating.display)
    assert ratings["lee"] > ratings["ola"] == 1500.0 and abs(ratings["max"] - 1500) > 50
    near_newcomers = (1450, 1550)
    seek = (await lee.seek("tictactoe", clock=BLITZ, rated=True, rating_range=near_newcomers))["seek"]
    assert seek["rating"] == ratings["lee"] and seek["range"] == [1450, 1550]
    assert seek["provisional"] is True  # three games: still provisional, shown with `?`
    refused = await _refused("seek_refused", max_.seek_take(seek["id"]))
    assert f"you have a rating of {ratings['max']:.0f} there" in refused.message
    assert (await max_.seek("tictactoe", clock=BLITZ, rated=True))["paired"] is False  # lee's range refuses max
    assert (await ola.seek("tictactoe", clock=BLITZ, rated=True))["paired"] is True  # the oldest that accepts
    paired = await asyncio.wait_for(lee.seek_events.get(), 5)
    assert paired["opponent"] == "ola" and paired["summary"]["rated"] is True
    assert [s["by"]["name"] for s in await ola.list_seeks()] == ["max"]


async def test_the_oldest_compatible_seek_is_paired_first(server: Server, connect) -> None:
    first = await connect(name="first")
    other_clock = await connect(name="slow")
    second = await connect(name="second")
    newcomer = await connect(name="newcomer")
    one = (await first.seek("tictactoe", clock=BLITZ))["seek"]
    await other_clock.seek("tictactoe", clock={"initial": 600, "increment": 0})  # not compatible
    # second's seek is paired with first's at once: the oldest compatible one
    assert (await second.seek("tictactoe", clock=BLITZ))["paired"] is True
    paired = await asyncio.wait_for(first.seek_events.get(), 5)
    assert paired["seek"] == one["id"] and paired["opponent"] == "second"
    left = await newcomer.list_seeks("tictactoe")
    assert [s["by"]["name"] for s in left] == ["slow"]
    await newcomer.seek("tictactoe", clock=BLITZ)
    assert [s["by"]["name"] for s in await newcomer.list_seeks("tictactoe")] == ["slow", "newcomer"]


@pytest.mark.slow
async def test_a_listed_seek_is_taken_by_id_and_watchers_see_seeks_come_and_go(server: Server, connect) -> None:
    watcher = await connect(name="watcher")
    assert await watcher.list_seeks(watch=True) == []
    carol = await _user(server, connect, "carol")
    dave = await _user(server, connect, "dave")
    seek = (await carol.seek("tictactoe", clock={"per_move": 30}))["seek"]
    news = await _seeks_news(watcher)
    assert [s["id"] for s in news["added"]] == [seek["id"]] and news["removed"] == []

    taken = await dave.seek_take(seek["id"])
    assert taken["seek"] == seek["id"] and taken["token"] and taken["summary"]["code"] == taken["room"]
    pushed = await asyncio.wait_for(carol.seek_events.get(), 5)
    assert pushed["room"] == taken["room"] and {pushed["seat"], taken["seat"]} == {0, 1}
    news = await _seeks_news(watcher)
    assert news == {"type": "lobby_seeks", "added": [], "removed": [seek["id"]]}
    await _refused("no_such_seek", dave.seek_take(seek["id"]))  # taken once only
    code = taken["room"]
    finals = await asyncio.wait_for(
        asyncio.gather(carol.play(code, random_decider(3)), dave.play(code, random_decider(4))), 30
    )
    assert all(final["status"] == "finished" for final in finals)

    # a watcher of one game hears nothing of another's
    await watcher.list_seeks("othello", watch=True)
    await carol.seek("tictactoe")
    seek = (await carol.seek("othello"))["seek"]
    news = await _seeks_news(watcher)
    assert [s["id"] for s in news["added"]] == [seek["id"]]


async def test_a_seek_dies_with_its_posters_connection_and_can_be_cancelled(server: Server, connect) -> None:
    watcher = await connect(name="watcher")
    await watcher.list_seeks(watch=True)
    erin = await connect(name="erin")
    kept = (await erin.seek("othello"))["seek"]
    gone = (await erin.seek("tictactoe"))["seek"]
    assert [s["id"] for s in (await _seeks_news(watcher))["added"]] == [kept["id"], gone["id"]]
    await _refused("no_such_seek", watcher.seek_cancel(kept["id"]))  # not the watcher's
    assert (await erin.seek_cancel(gone["id"]))["seek"] == gone["id"]
    assert (await _seeks_news(watcher))["removed"] == [gone["id"]]
    await erin.close()
    assert (await _seeks_news(watcher))["removed"] == [kept["id"]]
    assert await watcher.list_seeks() == []


async def test_limits_and_bad_seeks_get_stable_codes_and_change_nothing(server: Server, connect) -> None:
    frank = await _user(server, connect, "frank")
    guest = await connect(name="guest")
    for game in ("othello", "tictactoe", "duel")[:MAX_SEEKS]:
        await frank.seek(game)
    before = await guest.list_seeks()
    await _refused("too_many_seeks", frank.seek("othello", clock=BLITZ))
    await _refused("rated_needs_account", guest.seek("othello", clock=BLITZ, rated=True))
    await _refused("rated_needs_clock", frank.seek("othello", rated=True))
    await _refused("bad_seek", guest.seek("crazyeights", seats=3))
    await _refused("bad_seek", guest.seek("othello", rating_range=(1600, 1400)))
    await _refused("bad_seek", guest.request("seek", game="othello", range=[1]))
    await _refused("unknown_game", guest.seek("no-such-game"))
    await _refused("bad_options", guest.seek("othello", {"no_such_option": 1}))
    oversized = await _refused("bad_options", guest.seek("duel", {"custom_decks": True, "decklist0": " " * 5000}))
    assert "at most 4096" in oversized.message  # the rooms' options cap
    await _refused("bad_clock", guest.seek("othello", clock={"initial": -1}))
    await _refused("bad_field", guest.request("seek", game="othello", rated="yes"))
    await _refused("no_such_seek", guest.seek_take(10**9))
    await _refused("no_such_seek", guest.seek_cancel(before[0]["id"]))
    await _refused("seek_refused", frank.seek_take(before[0]["id"]))  # one's own
    assert await guest.list_seeks() == before
    # a guest's limit is its connection's
    for game in ("othello", "tictactoe", "duel"):
        await guest.seek(game, clock={"per_move": 60})
    await _refused("too_many_seeks", guest.seek("othello", clock={"per_move": 60}))


async def test_bots_answer_only_seeks_that_allow_bots(server: Server, connect) -> None:
    gina = await _user(server, connect, "gina")
    bot = await _bot(server, "seeker-bot")
    closed = (await gina.seek("tictactoe", clock={"per_move": 30}))["seek"]
    await _refused("seek_refused", bot.seek_take(closed["id"]))
    await _refused("bot_declines", bot.seek("duel", allow_bots=True))  # not a game it declared
    duel = (await gina.seek("duel", allow_bots=True))["seek"]
    await _refused("bot_declines", bot.seek_take(duel["id"]))
    await gina.seek_cancel(duel["id"])
    posted = await bot.seek("tictactoe", clock={"per_move": 30})  # a bot's own seek does not meet gina's
    assert posted["paired"] is False
    await gina.seek_cancel(closed["id"])
    await bot.seek_cancel(posted["seek"]["id"])

    open_to_bots = (await gina.seek("tictactoe", clock={"per_move": 30}, allow_bots=True))["seek"]
    assert open_to_bots["allow_bots"] is True
    taken = await bot.seek_take(open_to_bots["id"])
    assert taken["token"] is None  # a bot is seated as a bot: `seated` tells it
    seated = await asyncio.wait_for(bot.seated.get(), 5)
    pushed = await asyncio.wait_for(gina.seek_events.get(), 5)
    assert seated["room"] == pushed["room"] == taken["room"] and pushed["opponent"] == "seeker-bot"
    seats = server.rooms[taken["room"]].core.seats
    assert (seats[seated["seat"]].kind, seats[pushed["seat"]].name) == ("bot", "gina")
    code = taken["room"]
    finals = await asyncio.wait_for(
        asyncio.gather(gina.play(code, random_decider(5)), bot.play(code, random_decider(6))), 30
    )
    assert all(final["status"] == "finished" for final in finals)
    await bot.close()


async def test_a_bot_runner_answering_seeks_takes_those_that_allow_bots(server: Server, connect, runners) -> None:
    hal = await _user(server, connect, "hal")
    ida = await connect(name="ida")
    kept = (await ida.seek("tictactoe", clock={"per_move": 60}))["seek"]  # no bots: left alone
    await runners("answering-bot", "random", answer_seeks=True)
    posted = (await hal.seek("tictactoe", clock={"per_move": 30}, allow_bots=True))["seek"]
    paired = await asyncio.wait_for(hal.seek_events.get(), 15)
    assert paired["seek"] == posted["id"] and paired["opponent"] == "answering-bot"
    final = await asyncio.wait_for(hal.play(paired["room"], random_decider(8)), 30)
    assert final["status"] == "finished"
    assert [s["id"] for s in await hal.list_seeks()] == [kept["id"]]


# --- the buckets, with plain values ---------------------------------------------------------------

BLITZ_SPEC = ClockSpec.parse(BLITZ)
RAPID_SPEC = ClockSpec.parse({"initial": 600, "increment": 5})


def _seek(seek_id: int, owner: str, rng: random.Random | None = None, **terms: Any) -> Seek:
    if rng is not None:
        rating = rng.uniform(0, 20)
        terms = {
            "game": rng.choice(["othello", "tictactoe"]),
            "options": rng.choice([{}, {"size": 6}, {"size": 8}]),
            "clock": rng.choice([BLITZ_SPEC, RAPID_SPEC, None]),
            "rating_range": rng.choice([None, (rating - 5, rating + 5)]),
            "allow_bots": rng.random() < 0.5,
            **terms,
        }
        party = Party(owner, rating=rating, is_bot=rng.random() < 0.1)
    else:
        party = Party(owner, rating=10.0)
    return Seek(seek_id, float(seek_id), party, **{"game": "othello", "clock": BLITZ_SPEC, **terms})


def test_the_book_pairs_the_oldest_compatible_seek_of_the_same_terms_only() -> None:
    book = SeekBook()
    for seek in [
        _seek(1, "ann", clock=RAPID_SPEC),  # other terms: another bucket
        _seek(2, "bea", rating_range=(15.0, 20.0)),  # same terms, but refuses a rating of 10
        _seek(3, "cid"),
        _seek(4, "dot"),
        _seek(5, "eve", options={"size": 6}),
    ]:
        book.add(seek)
    new = _seek(9, "fay")
    assert book.bucket_size(new) == 3  # the seeks it reads: its own terms' only
    assert book.match(new).id == 3  # type: ignore[union-attr]
    assert book.match(_seek(9, "cid")).id == 4  # type: ignore[union-attr]  # never one's own
    assert book.match(_seek(9, "fay", game="duel")) is None
    cid = book.remove(3)
    assert cid is not None and book.match(new).id == 4  # type: ignore[union-attr]
    book.add(cid)  # put back after a pairing that failed: it is the oldest again
    assert book.match(new).id == 3 and len(book) == 5  # type: ignore[union-attr]
    for seek_id in (1, 2, 3, 4, 5):
        assert book.remove(seek_id) is not None
    assert len(book) == 0 and book.bucket_size(new) == 0 and book.remove(3) is None


def test_the_book_matches_as_reading_every_waiting_seek_would() -> None:
    """`first_match` over every waiting seek is the rule; the buckets must agree with it seek
    for seek, as seeks come, pair and go."""
    rng = random.Random(11)
    book = SeekBook()
    waiting: dict[int, Seek] = {}
    for seek_id in range(1, 1500):
        new = _seek(seek_id, f"p{rng.randrange(40)}", rng)
        expected = first_match(new, waiting.values())
        got = book.match(new)
        assert (got.id if got else None) == (expected.id if expected else None)
        if got is not None:
            del waiting[got.id]
            assert book.remove(got.id) is got
        else:
            waiting[seek_id] = new
            book.add(new)
        if rng.random() < 0.1 and waiting:  # a cancel
            gone = rng.choice(list(waiting))
            del waiting[gone]
            assert book.remove(gone) is not None
    assert sorted(s.id for s in book) == sorted(waiting)


# --- limits per address, paging, the race of a poster leaving ------------------------------------


async def test_an_address_has_its_most_open_seeks_whatever_its_connections(limited) -> None:
    server = await limited(seeks_per_address=4)
    guests = [await Client.connect(server.url, name=f"guest{i}") for i in range(3)]  # one address
    try:
        first = [(await guests[0].seek(game))["seek"] for game in ("othello", "tictactoe", "duel")]
        await guests[1].seek("othello", clock=BLITZ)
        before = await guests[2].list_seeks()
        refused = await _refused("too_many_seeks", guests[2].seek("tictactoe", clock=BLITZ))
        assert "your address" in refused.message
        await _refused("too_many_seeks", guests[1].seek("duel", clock=BLITZ))
        assert await guests[2].list_seeks() == before  # nothing changed
        await guests[0].seek_cancel(first[0]["id"])
        assert (await guests[2].seek("tictactoe", clock=BLITZ))["paired"] is False
        await guests[1].close()  # its seek goes with it, and the address may post again
        await wait_for(lambda: _open_count(server, 3), "the closed guest's seek to go")
        assert (await guests[2].seek("duel", clock=BLITZ))["paired"] is False
    finally:
        for guest in guests:
            await guest.close()


async def _open_count(server: Server, count: int) -> bool:
    return len(server.seeks.open) == count


async def test_pages_walk_every_seek_once_oldest_first_while_seeks_come_and_go(server: Server, connect) -> None:
    posters = [await connect(name=f"poster{i}") for i in range(8)]
    reader = await connect(name="reader")
    posted = []
    for i in range(MAX_SEEKS):
        for n, poster in enumerate(posters):
            clock = {"per_move": 10 + n * 10 + i}  # all different terms: nothing pairs
            posted.append((await poster.seek("othello", {"opening": "f5d6"}, clock=clock))["seek"])
    first = await reader.seeks_page(limit=5)
    assert [s["id"] for s in first["seeks"]] == [s["id"] for s in posted[:5]] and first["next"]
    assert first["seeks"][0] == posted[0]  # everything a client shows and takes by
    assert set(posted[0]) >= {"id", "by", "game", "options", "clock", "class", "rated", "range", "allow_bots"}
    # between pages: a seek already listed goes, one not yet listed goes, a new one comes
    await posters[0].seek_cancel(posted[0]["id"])
    await posters[1].seek_cancel(posted[9]["id"])
    newest = (await posters[0].seek("tictactoe", clock=BLITZ))["seek"]
    seen = [s["id"] for s in first["seeks"]]
    cursor = first["next"]
    while cursor is not None:
        page = await reader.seeks_page(cursor=cursor, limit=5)
        assert len(page["seeks"]) <= 5
        seen += [s["id"] for s in page["seeks"]]
        cursor = page["next"]
    expected = [s["id"] for s in posted[:5]] + [s["id"] for s in posted[5:] if s["id"] != posted[9]["id"]]
    assert seen == [*expected, newest["id"]]  # each exactly once, oldest first
    # a request without a cursor gets the first page; the SDK walks them all
    everything = await reader.list_seeks()
    assert [s["id"] for s in everything] == [s["id"] for s in posted[1:] if s["id"] != posted[9]["id"]] + [newest["id"]]
    assert [s["id"] for s in await reader.list_seeks("tictactoe")] == [newest["id"]]
    nothing = await reader.seeks_page("no-such-game")
    assert nothing["seeks"] == [] and nothing["next"] is None
    await _refused("bad_field", reader.seeks_page(limit=0))
    await _refused("bad_field", reader.seeks_page(limit=10_000))
    await _refused("bad_field", reader.seeks_page(cursor="l5"))
    await _refused("bad_field", reader.seeks_page(cursor="9" * 40))


async def _listings_until_refused(client: Client) -> int:
    for answered in range(1000):
        try:
            await client.seeks_page()
        except ServerError as exc:
            assert exc.code == "rate_limited", exc
            return answered
    raise AssertionError("never refused")


async def test_a_listing_costs_the_asker_by_the_bytes_it_is_sent(limited) -> None:
    """The same page of fat seeks (options near the 4 KiB cap) runs a reader out of requests
    sooner than a page of lean ones; refused, it is sent nothing."""
    server = await limited(requests_per_second=0.01, request_burst=40, rooms_created_burst=100)
    poster = await Client.connect(server.url, name="poster")
    lean, fat = [await Client.connect(server.url, name=n) for n in ("lean", "fat")]
    try:
        for n in range(MAX_SEEKS):
            await poster.seek("tictactoe", clock={"per_move": 10 + n})
        lean_listings = await _listings_until_refused(lean)
        for _ in range(MAX_SEEKS):
            await poster.seek_cancel((await poster.seeks_page())["seeks"][0]["id"])
        pool = server.registry.get("duel").pool  # type: ignore[attr-defined]
        deck = json.dumps(dict(next(iter(pool.decks.values()))))
        options = {"custom_decks": True, "decklist0": deck + " " * (3600 - len(deck))}
        for n in range(MAX_SEEKS):
            await poster.seek("duel", options, clock={"per_move": 10 + n})
        fat_listings = await _listings_until_refused(fat)
        assert 0 < fat_listings * 2 < lean_listings, (fat_listings, lean_listings)
    finally:
        for client in (poster, lean, fat):
            await client.close()


async def test_a_connection_that_does_not_read_is_listed_nothing_more(limited) -> None:
    """Listings pile up unread in a connection's outbox only to 256 KiB: past it, `list_seeks`
    is refused with a few bytes, and the connection is neither closed nor sent more pages."""
    lifted = 10**9
    server = await limited(requests_per_second=lifted, request_burst=lifted, address_request_burst=lifted)
    poster = await Client.connect(server.url, name="poster")
    try:
        pool = server.registry.get("duel").pool  # type: ignore[attr-defined]
        deck = json.dumps(dict(next(iter(pool.decks.values()))))
        options = {"custom_decks": True, "decklist0": deck + " " * (3600 - len(deck))}
        for n in range(MAX_SEEKS):
            await poster.seek("duel", options, clock={"per_move": 10 + n})
        ws = await ws_connect(server.url, max_size=None, max_queue=1)
        await ws.send(msgpack.packb({"type": "hello", "version": 2, "name": "sleeper"}))
        await asyncio.wait_for(ws.recv(), 5)
        (session,) = [s for s in server.connections.sessions if s.name == "sleeper"]
        ws.transport.pause_reading()  # type: ignore[attr-defined]
        for i in range(400):  # about 4.4 MB of pages, past the outbox's bound of 4 MiB
            await ws.send(msgpack.packb({"type": "list_seeks", "id": i}))
        # requests are handled in order: once its seek is open, every listing before it was answered
        await ws.send(msgpack.packb({"type": "seek", "id": "last", "game": "othello"}))
        await wait_for(lambda: _open_count(server, MAX_SEEKS + 1), "the requests to be handled", timeout=30)
        assert not session.closed
        assert session.outbox_bytes < 256 * 1024 + 2 * 11_000 + 400 * 200
        assert len(await poster.list_seeks()) == MAX_SEEKS + 1  # everyone else is listed as before
        ws.transport.abort()  # type: ignore[attr-defined]
    finally:
        await poster.close()


@pytest.mark.parametrize("how", ["take", "seek"])
async def test_a_seek_paired_as_its_poster_leaves_seats_nobody(server: Server, connect, db_url: str, how: str) -> None:
    """The poster leaves while the room of its seek is being stored: the room must not start
    with a seat whose connection is gone. The database is held locked meanwhile, so the room's
    row waits until the poster's departure has been handled."""
    poster = await connect(name="poster")
    other = await connect(name="other")
    seek = (await poster.seek("tictactoe", clock={"per_move": 30}))["seek"]
    session = next(s for s in server.connections.sessions if s.name == "poster")
    lock = sqlite3.connect(sqlite_path(db_url), timeout=10, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")  # the server's writes wait for it
    try:
        if how == "take":
            answer = asyncio.ensure_future(other.seek_take(seek["id"]))
        else:
            answer = asyncio.ensure_future(other.seek("tictactoe", clock={"per_move": 30}))
        # the seek is unlisted once its pairing has begun: the room's row is waiting for the lock
        await wait_for(lambda: _open_count(server, 0), "the pairing to begin", timeout=10)
        await poster.close()
        await wait_for(lambda: _gone(server, session), "the poster's departure to be handled", timeout=10)
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    if how == "take":
        refused = await _refused("no_such_seek", answer)
        assert "its poster left" in refused.message
    else:
        assert (await answer)["paired"] is False  # it waits for another opponent instead
        assert [s["by"]["name"] for s in await other.list_seeks()] == ["other"]
    assert not [room for room in server.rooms.values() if room.core.status == "playing"]
    assert all(room.core.status == "aborted" for room in server.rooms.values())
    assert other.seek_events.empty()


async def _gone(server: Server, session: Any) -> bool:
    return session not in server.connections.sessions


async def test_a_flood_of_seeks_tells_watchers_to_list_again(limited) -> None:
    """More changes than a push carries become one `resync`; a watcher that lists again then
    holds what the server holds."""
    server = await limited(seeks_per_address=100)
    watcher = await Client.connect(server.url, name="watcher")
    await watcher.list_seeks(watch=True)
    posters = [await Client.connect(server.url, name=f"flood{i}") for i in range(20)]

    async def post(n: int, poster: Client) -> None:
        for i in range(MAX_SEEKS):
            await poster.seek("tictactoe", clock={"per_move": 10 + n * 10 + i})

    try:
        await asyncio.gather(*(post(n, p) for n, p in enumerate(posters)))
        shown: dict[int, dict[str, Any]] = {}
        resynced = False
        with contextlib.suppress(TimeoutError):
            while len(shown) < 60 or not resynced:
                news = await _seeks_news(watcher, timeout=2)
                if news.get("resync"):
                    resynced = True
                    shown = {s["id"]: s for s in await watcher.list_seeks()}
                    continue
                shown.update({s["id"]: s for s in news["added"]})
                for gone in news["removed"]:
                    shown.pop(gone, None)
        assert sorted(shown) == sorted(server.seeks.open) and len(shown) == 60
    finally:
        for client in (watcher, *posters):
            await client.close()
