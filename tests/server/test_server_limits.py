"""Rate and resource limits against a running server: each limit refuses with `rate_limited` (or
closes) once passed, and stays out of the way of normal play."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import math
import random
import types
from typing import Any

import msgpack
import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from partida.bots.runner import BotRunner
from partida.client import Client, ConnectionLost, ServerError, patiently
from partida.server.app import Server, ServerConfig
from partida.server.limits import Limits, TokenBucket, retry
from partida.server.rooms import table as rooms_table
from partida.server.shell import Shell


async def pings(ws: Any, n: int) -> list[dict[str, Any]]:
    for i in range(n):
        await ws.send(msgpack.packb({"type": "ping", "id": i}))
    return [msgpack.unpackb(await asyncio.wait_for(ws.recv(), 5)) for _ in range(n)]


async def test_requests_past_the_rate_are_refused_then_the_connection_is_closed(limited) -> None:
    server = await limited(requests_per_second=1, request_burst=5)
    ws = await ws_connect(server.url)
    await ws.send(msgpack.packb({"type": "hello", "version": 1}))
    await ws.recv()
    answers = await pings(ws, 8)
    assert [a["type"] for a in answers[:4]] == ["pong"] * 4
    assert [a.get("code") for a in answers[4:]] == ["rate_limited"] * 4
    assert answers[4]["id"] == 4
    with pytest.raises(ConnectionClosed):
        for _ in range(20):
            await ws.send(msgpack.packb({"type": "ping"}))
            await asyncio.wait_for(ws.recv(), 5)
    assert ws.close_code == 1008


async def test_a_large_frame_costs_a_request_per_kib_it_carries(limited) -> None:
    """Forty pings fit in the burst; two frames of 20 KB take it all, and the third is refused."""
    server = await limited(requests_per_second=0.1, request_burst=40)
    ws = await ws_connect(server.url)
    await ws.send(msgpack.packb({"type": "hello", "version": 1}))
    await ws.recv()
    for i in range(3):
        await ws.send(msgpack.packb({"type": "ping", "id": i, "pad": "x" * 20_000}))
    answers = [msgpack.unpackb(await asyncio.wait_for(ws.recv(), 5)) for _ in range(3)]
    assert [a.get("code") == "rate_limited" for a in answers] == [False, False, True]
    assert answers[2]["retry_after"] > 20  # the bytes left the bucket in debt; at 0.1 a second
    await ws.close()


@pytest.mark.slow
async def test_a_refused_frame_is_not_kept_alive_by_its_refusal(limited) -> None:
    """The limiter's refusal is raised once the frame is decoded (its answer names the id); once
    answered, nothing of it stays. The server collects cycles rarely, so a cycle through the
    refusal would keep every refused frame's bytes long after (130 MiB after 5 s of 60 KB
    frames)."""
    server = await limited(requests_per_second=0.1, request_burst=40)
    ws = await ws_connect(server.url)
    await ws.send(msgpack.packb({"type": "hello", "version": 1}))
    await ws.recv()
    gc.collect()
    gc.disable()  # as rare as the server's own collections: only what is freed at once is freed
    try:
        for i in range(4):
            await ws.send(msgpack.packb({"type": "ping", "id": i, "pad": "x" * 20_000}))
        answers = [msgpack.unpackb(await asyncio.wait_for(ws.recv(), 5)) for _ in range(4)]
        assert [a.get("code") for a in answers[2:]] == ["rate_limited", "rate_limited"]
        handling = Shell.handle_frame.__code__
        kept = [f for f in gc.get_objects() if isinstance(f, types.FrameType) and f.f_code is handling]
        assert kept == []
    finally:
        gc.enable()
    await ws.close()


@pytest.mark.realtime
async def test_a_refusal_says_when_the_same_request_will_be_let_through(limited) -> None:
    server = await limited(requests_per_second=2, request_burst=3)
    ws = await ws_connect(server.url)
    await ws.send(msgpack.packb({"type": "hello", "version": 1}))
    await ws.recv()
    answers = await pings(ws, 3)
    assert [a["type"] for a in answers] == ["pong", "pong", "error"]
    wait = answers[2]["retry_after"]
    assert answers[2]["code"] == "rate_limited" and 0 < wait <= 1.01  # a token and the refusal's debt, at 2 a second
    await asyncio.sleep(wait)
    assert (await pings(ws, 1))[0]["type"] == "pong"
    await ws.close()


@pytest.mark.realtime
async def test_the_sdk_waits_as_long_as_it_is_told_instead_of_hammering(limited) -> None:
    """Requests past the rate through `patiently` all get their answer, and the connection stays
    open: a client that retried at once would run into a whole burst of debt and be closed."""
    server = await limited(requests_per_second=20, request_burst=2)  # a refusal's wait: a few hundredths
    client = await Client.connect(server.url, name="patient")
    calls = 0

    async def ping() -> dict[str, Any]:
        nonlocal calls
        calls += 1
        return await client.request("ping")

    for _ in range(10):
        assert (await patiently(ping))["type"] == "pong"
    assert calls > 10 and not client.closed.is_set()  # some were refused, and asked again later
    with pytest.raises(ServerError) as gone:  # a refusal that waiting does not cure is raised at once
        await patiently(lambda: client.join("ABCDEF"))
    assert gone.value.code == "no_such_room" and gone.value.retry_after is None
    await client.close()


@pytest.mark.realtime
async def test_a_connection_refused_for_now_says_when_and_the_sdk_comes_back_then(limited) -> None:
    server = await limited(connection_burst=2, connections_per_address=2, connections_per_second=2)
    refused = None
    for _ in range(10):
        try:
            await (await Client.connect(server.url)).close()
        except ConnectionLost as lost:
            refused = lost
            break
    assert refused is not None and refused.retry_after == 1  # the 429's Retry-After: a connection back in 1 s
    client = await patiently(lambda: Client.connect(server.url))
    assert client.welcome["you"]["name"]
    await client.close()


async def test_a_bot_account_is_not_rate_limited(limited) -> None:
    server = await limited(requests_per_second=1, request_burst=5)
    _, token = await server.store.create_bot("ladder-bot")
    bot = await Client.connect(server.url, token=token)
    for _ in range(30):
        await bot.request("ping")
    await bot.close()


async def test_connections_per_address_are_bounded(limited) -> None:
    server = await limited(connections_per_address=2)
    first, second = await Client.connect(server.url), await Client.connect(server.url)
    third = await ws_connect(server.url)
    with pytest.raises(ConnectionClosed):
        await asyncio.wait_for(third.recv(), 5)
    assert third.close_code == 1008
    assert len(server.sessions) == 2  # the third was never one
    await first.close()
    for _ in range(200):  # the server lets go of a session and of its address's count in one step
        if len(server.sessions) == 1:
            break
        await asyncio.sleep(0.02)
    fourth = await Client.connect(server.url)
    await fourth.request("ping")
    await second.close()
    await fourth.close()


@pytest.mark.realtime
async def test_a_connection_that_never_says_hello_is_closed(limited) -> None:
    server = await limited(hello_timeout=0.2, idle_timeout=0.3)
    silent = await ws_connect(server.url)
    with pytest.raises(ConnectionClosed):
        await asyncio.wait_for(silent.recv(), 5)
    idle = await Client.connect(server.url, name="idle")
    player = await Client.connect(server.url, name="player")
    _, token = await server.store.create_bot("waiting-bot")
    bot = await Client.connect(server.url, token=token, agent="random")
    await player.create_room("tictactoe", seat=0)
    await asyncio.wait_for(idle.closed.wait(), 5)
    # quiet since after the others' last words: once its time is up, theirs was looked at first
    later = await Client.connect(server.url, name="later")
    await asyncio.wait_for(later.closed.wait(), 5)
    await player.request("ping")  # a connection closed at that look would raise here
    await bot.request("ping")
    assert not player.closed.is_set()  # holding a seat, it may stay as quiet as it likes
    assert not bot.closed.is_set()  # a bot waits for games in silence
    await player.close()
    await bot.close()


@pytest.mark.slow
async def test_failed_logins_back_off_and_are_logged(limited, caplog) -> None:
    server = await limited(login_failures_allowed=2, login_backoff_max=60)
    await server.store.create_user("ada", "correct horse")
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            with pytest.raises(ServerError) as wrong:
                await Client.connect(server.url, name="ada", password="guess")
            assert wrong.value.code == "auth_failed"
    assert caplog.text.count("failed login for 'ada'") == 3
    with pytest.raises(ServerError) as waiting:
        await Client.connect(server.url, name="ada", password="correct horse")
    assert waiting.value.code == "rate_limited"
    assert waiting.value.retry_after is not None and 0 < waiting.value.retry_after <= 1  # what is left of 1 s


async def test_rooms_created_and_watched_are_bounded(limited) -> None:
    server = await limited(waiting_rooms_per_address=3, rooms_watched=2)
    maker = await Client.connect(server.url, name="maker")
    codes = [(await maker.create_room("tictactoe", auto_start=False))["room"] for _ in range(3)]
    with pytest.raises(ServerError) as created:
        await maker.create_room("tictactoe")
    assert created.value.code == "rate_limited"
    watcher = await Client.connect(server.url, name="watcher")
    await watcher.watch(codes[0])
    await watcher.watch(codes[1])
    with pytest.raises(ServerError) as watched:
        await watcher.watch(codes[2])
    assert watched.value.code == "rate_limited"
    assert created.value.retry_after is None and watched.value.retry_after is None  # waiting cures neither
    await watcher.leave(codes[0])
    await watcher.watch(codes[2])
    await maker.close()
    await watcher.close()


async def test_rooms_that_started_never_count_toward_the_waiting_limit(limited) -> None:
    """The waiting rooms of an address are counted from a set swept now and then, not at every
    room created: rooms that started in between never count toward the limit, and the limit
    still holds exactly."""
    server = await limited(waiting_rooms_per_address=3)
    ann, bea = await Client.connect(server.url, name="ann"), await Client.connect(server.url, name="bea")
    for _ in range(30):  # each starts at once: far more rooms than the limit, none waiting long
        code = (await ann.create_room("tictactoe", seat=0, public=False))["room"]
        await bea.join(code)
    waiting = [(await ann.create_room("tictactoe", auto_start=False))["room"] for _ in range(3)]
    with pytest.raises(ServerError) as refused:
        await ann.create_room("tictactoe")
    assert refused.value.code == "rate_limited" and "3 rooms" in refused.value.message
    await bea.join(waiting[0], seat=0)
    await ann.join(waiting[0], seat=1)
    await ann.request("start", room=waiting[0])
    await ann.create_room("tictactoe", auto_start=False)  # one started: room for one more
    with pytest.raises(ServerError) as again:
        await ann.create_room("tictactoe")
    assert again.value.code == "rate_limited"
    await ann.close()
    await bea.close()


async def test_guessing_room_codes_is_rate_limited(limited) -> None:
    server = await limited(guess_burst=5, guesses_per_second=0.1)
    owner = await Client.connect(server.url, name="owner")
    code = (await owner.create_room("tictactoe", public=False, seat=0))["room"]
    assert len(code) >= 12
    guesser = await Client.connect(server.url, name="guesser")
    for _ in range(5):
        with pytest.raises(ServerError) as miss:
            await guesser.join("ABCDEF")
        assert miss.value.code == "no_such_room"
    with pytest.raises(ServerError) as limited_guess:
        await guesser.watch(code)  # even the right code: the guesser must wait
    assert limited_guess.value.code == "rate_limited"
    assert 5 < (limited_guess.value.retry_after or 0) <= 10.01  # a guess back at 0.1 a second
    await owner.close()
    await guesser.close()


async def test_private_room_codes_are_never_published(server) -> None:
    subscription = server.bus.subscribe("partida/#")
    alice, bob = await Client.connect(server.url, name="alice"), await Client.connect(server.url, name="bob")
    code = (await alice.create_room("tictactoe", seat=0, public=False))["room"]
    await bob.join(code)
    await alice.act(code, 4)
    seen: list[str] = []
    while subscription.pending():
        event = await subscription.__anext__()
        seen.append(event.topic + json.dumps(event.payload))
    assert len(seen) >= 3 and not any(code in text for text in seen)
    await alice.close()
    await bob.close()


async def test_rooms_that_never_start_are_closed(limited) -> None:
    server = await limited(waiting_room_ttl=0.2)
    maker = await Client.connect(server.url, name="maker")
    created = await maker.create_room("tictactoe", seat=0)
    code = created["room"]
    for _ in range(100):
        if code not in server.rooms:
            break
        await asyncio.sleep(0.05)
    assert code not in server.rooms
    stored = await server.store.load_game(created["summary"]["game_id"])
    assert stored is not None and stored.status == "aborted"
    await maker.close()


async def test_options_are_bounded_and_only_the_owner_adds_bots(server, bots) -> None:
    await bots("random")
    maker = await Client.connect(server.url, name="maker")
    with pytest.raises(ServerError) as big:
        await maker.create_room("duel", options={"decklist": ["x" * 100] * 600})
    assert big.value.code == "bad_options"
    # the size is checked before the game reads the options (which may parse text in them)
    with pytest.raises(ServerError) as unread:
        await maker.create_room("duel", options={"custom_decks": True, "decklist0": "[" * 5000})
    assert unread.value.code == "bad_options" and "bytes" in unread.value.message
    code = (await maker.create_room("tictactoe", seat=0, auto_start=False))["room"]
    other = await Client.connect(server.url, name="other")
    with pytest.raises(ServerError) as not_owner:
        await other.add_bot(code, "random")
    assert not_owner.value.code == "not_owner"
    await maker.add_bot(code, "random")
    await maker.close()
    await other.close()


@pytest.mark.realtime
async def test_a_bot_reconnects_after_a_restart_and_takes_its_seat_back(db_url: str) -> None:
    first = Server(ServerConfig(port=0, db_url=db_url))
    await first.start()
    port = first.config.port
    _, bot_token = await first.store.create_bot("a-bot")
    runner = BotRunner(first.url, "random", name="a-bot", token=bot_token)
    errors: list[str] = []
    task = asyncio.create_task(runner.run(reconnect=True, max_delay=0.2))
    human = await Client.connect(first.url, name="human")
    for _ in range(100):
        if first.bot_sessions():
            break
        await asyncio.sleep(0.02)
    created = await human.create_room("tictactoe", seat=0, bots={1: "random"})
    code, token = created["room"], created["token"]
    update = await human.next_update(code)
    while update.get("decision") is None:
        update = await human.next_update(code)
    await human.act(code, update["decision"]["choices"][0] if "choices" in update["decision"] else 0)
    while (await human.next_update(code))["seq"] < 2:  # the bot's answer: it played before the stop
        pass
    await human.close()
    await first.stop()
    second = Server(ServerConfig(port=port, db_url=db_url))
    await second.start()
    try:
        human = await Client.connect(second.url, name="human")
        await human.join(code, seat=0, token=token)
        rng = random.Random(1)
        final = await asyncio.wait_for(
            human.play(code, lambda u, p: p.random_answer(rng), on_error=lambda e: errors.append(e.code)), 20
        )
        assert final["status"] == "finished" and not errors
        assert second.rooms[code].core.seats[1].name == "a-bot"
        await human.close()
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await second.stop()


@pytest.mark.slow
async def test_password_checks_run_one_at_a_time_and_the_queue_is_bounded(limited) -> None:
    server = await limited(hashing_at_once=1, hashing_queue=1, login_failures_allowed=100)
    await server.store.create_user("ada", "correct horse")
    results = await asyncio.gather(
        *(Client.connect(server.url, name="ada", password="correct horse") for _ in range(4)),
        return_exceptions=True,
    )
    refused = [r for r in results if isinstance(r, ServerError)]
    assert refused and all(r.code == "rate_limited" for r in refused)
    assert any(isinstance(r, Client) for r in results)
    for r in results:
        if isinstance(r, Client):
            await r.close()


async def test_a_finished_room_leaves_its_players_connections_when_it_is_reaped(limited, monkeypatch) -> None:
    """Connections that stay (a bot playing game after game) do not hold every room they ever
    sat in: once a finished room leaves the server, its players' connections forget it."""
    monkeypatch.setattr(rooms_table, "FINISHED_ROOM_TTL", 0.1)
    server = await limited(waiting_room_ttl=0.2)  # the reaper looks every 0.1 s
    ann, bea = await Client.connect(server.url, name="ann"), await Client.connect(server.url, name="bea")
    code = (await ann.create_room("tictactoe", seat=0, public=False))["room"]
    await bea.join(code)
    room = server.rooms[code]
    assert all(room in s.rooms for s in server.sessions)
    for cell, client in zip((0, 3, 1, 4, 2), (ann, bea, ann, bea, ann), strict=True):
        await client.act(code, cell)
    assert room.core.status == "finished"
    for _ in range(100):
        if code not in server.rooms:
            break
        await asyncio.sleep(0.05)
    assert code not in server.rooms
    assert len(server.sessions) == 2 and not any(room in s.rooms for s in server.sessions)
    await ann.close()
    await bea.close()


def test_a_bucket_says_how_long_until_it_holds_enough_and_a_spend_refused_costs_nothing() -> None:
    bucket = TokenBucket(rate=2, burst=4)
    assert bucket.spend(3) and not bucket.spend(3)
    assert 0 < bucket.wait(3) <= 1.0  # one token left, two more a second: no debt from the refusal
    assert bucket.wait(5) == math.inf and TokenBucket(rate=0, burst=4).wait(5) == math.inf
    assert not bucket.take(3)  # `take` goes into debt, and the wait grows with it
    assert 1.0 < bucket.wait(3) <= 2.5
    assert retry(0.421) == {"retry_after": 0.43} and retry(0) == {"retry_after": 0.01} and retry(math.inf) is None


def test_a_renamed_limit_says_what_it_is_called_now() -> None:
    with pytest.raises(ValueError, match="http_pages_per_second"):
        Limits().with_settings(["http_requests_per_second=50"])
    assert Limits().with_settings(["http_pages_per_second=2"]).http_pages_per_second == 2
