"""Abuse benchmark: hostile clients against a server while two players play a bystander room.

The server runs as its own process (`partida serve --no-bots`, SQLite in a temp dir, default
limits) on loopback. Two SDK players (from 127.0.0.1) play tic-tac-toe games back to back,
random moves, and the round trip of each move (`act` until `acted`, which includes the durable
commit) is timed. Each attack runs in a process of its own from another loopback address
(127.0.0.2, 127.0.0.3, ...: one hostile host per attack), for a bounded time and a bounded number of frames, and
this process samples the server's RSS meanwhile. One JSON line per phase:

    {"attack": ..., "p50_ms": ..., "p95_ms": ..., "moves": ..., "moves_per_s": ..., "rss_before_mib": ...,
     "rss_peak_mib": ..., "server_cpu_share": ..., "log_bytes": ..., "outcome": {...}}

(`server_cpu_share`: the server's CPU seconds over the phase's seconds; 1.0 is one core busy.)

`outcome` is what the attacker achieved (a hijacked seat, a silenced client, guesses a second...).

    python bench/abuse.py --seconds 6
    python bench/abuse.py --attack list_rooms_flood --seconds 6   # one attack only
    python bench/abuse.py --attack idle_arenas --stored-arenas 10000 --seconds 10
    python bench/abuse.py --attack bot_time --seconds 30   # a pool bot's time: a guest in 8 rooms

`page_crowd` is no attack but people: 30 page loads from one address, and 30 more 10 s later;
its outcome is how many got every file of the page.

The tournament attacks log in to accounts the bench creates before the server starts
(`partida db create-user`, the build under test's own), and each phase also reports the
server's RSS after it (`rss_after_mib`). With `idle_arenas` (or `--stored-arenas N`, N week-long empty arenas
written before the server starts) a last line reports the server's CPU over a phase with no
client at all (`idle_cpu_fractions`: of one core, in three windows of `--seconds`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
from server_process import THIS_CHECKOUT, Served, cpu_seconds, rss_mib, served  # bench/server_process.py
from websockets.asyncio.client import connect as ws_connect

from partida.client import Client, ServerError

ATTACKER = ("127.0.0.2", 0)  # set per attack by --address
FRAME_CAP = 20_000  # no attack sends more frames than this


# The attacker's side (run as `abuse.py --run-attack NAME --url URL --seconds T`).


class Raw:
    """A bare websocket from the attacker's address."""

    def __init__(self, ws: Any, text: bool) -> None:
        self.ws = ws
        self.text = text

    @classmethod
    async def open(
        cls, url: str, text: bool = False, hello: dict[str, Any] | None = None, address: tuple[str, int] | None = None
    ) -> Raw:
        raw = cls(await ws_connect(url, max_size=None, local_addr=address or ATTACKER, open_timeout=10), text)
        if hello is not None:
            await raw.send({"type": "hello", "version": 1, "id": 0, **hello})
            await raw.recv()
        return raw

    async def send(self, message: Any) -> None:
        await self.ws.send(json.dumps(message) if self.text else msgpack.packb(message))

    async def recv(self, timeout: float = 5) -> dict[str, Any]:
        frame = await asyncio.wait_for(self.ws.recv(), timeout)
        return json.loads(frame) if isinstance(frame, str) else msgpack.unpackb(frame, strict_map_key=False)

    async def reply(self, request_id: Any, timeout: float = 5) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            message = await self.recv(max(deadline - time.monotonic(), 0.01))
            if message.get("id") == request_id:
                return message


async def attack_seat_hijack(url: str, seconds: float) -> dict[str, Any]:
    """The creator sits in seat 1, keeps its token, leaves; a friend takes seat 1; after the start
    the creator reclaims seat 1 with the old token."""
    mallory = await Raw.open(url, hello={"name": "mallory"})
    friend = await Raw.open(url, hello={"name": "friend"})
    await mallory.send({"type": "create_room", "id": 1, "game": "tictactoe", "public": False, "auto_start": False})
    code = (await mallory.reply(1))["room"]["code"]
    await mallory.send({"type": "join", "id": 2, "room": code, "seat": 1})
    token = (await mallory.reply(2))["token"]
    await mallory.send({"type": "leave", "id": 3, "room": code})
    await mallory.reply(3)
    await mallory.send({"type": "join", "id": 4, "room": code, "seat": 0})
    await mallory.reply(4)
    await friend.send({"type": "join", "id": 5, "room": code, "seat": 1})
    await friend.reply(5)
    await mallory.send({"type": "start", "id": 6, "room": code})
    await mallory.reply(6)
    await mallory.send({"type": "join", "id": 7, "room": code, "seat": 1, "token": token})
    answer = await mallory.reply(7)
    return {"hijacked": answer["type"] == "joined"}


async def _answers(url: str, timeout: float = 3) -> bool:
    """Does a MessagePack client still get an answer to `list_rooms`?"""
    try:
        probe = await Raw.open(url, hello={"name": "probe"})
        await probe.send({"type": "list_rooms", "id": 9})
        await probe.reply(9, timeout)
        return True
    except Exception:
        return False


async def attack_surrogate_name(url: str, seconds: float) -> dict[str, Any]:
    """A JSON guest named with a lone surrogate creates a public room and sits in it: every
    MessagePack client listing rooms receives the name."""
    evil = Raw(await ws_connect(url, max_size=None, local_addr=ATTACKER), text=True)
    await evil.ws.send('{"type":"hello","version":1,"id":0,"name":"x\\ud800"}')
    hello = await evil.recv()
    if hello["type"] == "welcome":
        await evil.ws.send('{"type":"create_room","id":1,"game":"tictactoe","seat":0}')
        await evil.reply(1)
    return {"hello": hello.get("code", hello["type"]), "msgpack_list_rooms_answered": await _answers(url)}


async def attack_big_id(url: str, seconds: float) -> dict[str, Any]:
    """A JSON request id of 2**64, then an ordinary ping on the same connection."""
    raw = await Raw.open(url, text=True, hello={"name": "big"})
    await raw.ws.send('{"type":"ping","id":18446744073709551616}')
    await raw.ws.send('{"type":"ping","id":2}')
    try:
        await raw.reply(2, 3)
        answered = True
    except Exception:
        answered = False
    return {"connection_answers_after": answered}


async def attack_list_rooms_flood(url: str, seconds: float, rooms: int = 1000, requests: int = 1000) -> dict[str, Any]:
    """Open many rooms, then send `list_rooms` over and over without reading the answers."""
    maker = await Raw.open(url, hello={"name": "maker"})
    created = 0
    deadline = time.monotonic() + seconds
    for i in range(rooms):
        await maker.send({"type": "create_room", "id": i, "game": "tictactoe", "auto_start": False})
        answer = await maker.reply(i)
        if answer["type"] == "room_created":
            created += 1
        elif answer.get("code") == "rate_limited":
            break
        if time.monotonic() > deadline:
            break
    reader = await Raw.open(url, hello={"name": "reader"})
    reader.ws.transport.pause_reading()
    sent = 0
    try:
        for i in range(requests):
            await reader.send({"type": "list_rooms", "id": i})
            sent += 1
            if i % 50 == 0:
                await asyncio.sleep(0.01)
    except Exception:
        pass
    await asyncio.sleep(max(deadline - time.monotonic(), 1.0))
    return {"rooms_created": created, "list_rooms_sent": sent}


async def _flood(url: str, seconds: float, frame: str | bytes, hello: dict[str, Any] | None = None) -> dict[str, Any]:
    """Send `frame` as fast as the connection takes it; reconnect when closed."""
    deadline = time.monotonic() + seconds
    sent = closed = 0
    while time.monotonic() < deadline and sent < FRAME_CAP:
        try:
            raw = await Raw.open(url, text=isinstance(frame, str), hello=hello)
            drain = asyncio.create_task(_drain(raw))
            while time.monotonic() < deadline and sent < FRAME_CAP:
                await raw.ws.send(frame)
                sent += 1
                if sent % 100 == 0:
                    await asyncio.sleep(0)
            drain.cancel()
        except Exception:
            closed += 1
            await asyncio.sleep(0.05)
    return {"frames_sent": sent, "closed_by_server": closed}


async def _drain(raw: Raw) -> None:
    async for _ in raw.ws:
        pass


async def attack_deep_json(url: str, seconds: float) -> dict[str, Any]:
    """JSON nested 1,000 deep, before hello, as fast as the server reads it."""
    return await _flood(url, seconds, "[" * 1000 + "]" * 1000)


async def attack_deep_action(url: str, seconds: float) -> dict[str, Any]:
    """A seated player sends actions nested 500 deep."""
    a = await Raw.open(url, hello={"name": "deep-a"})
    b = await Raw.open(url, hello={"name": "deep-b"})
    await a.send({"type": "create_room", "id": 1, "game": "tictactoe", "seat": 0, "public": False})
    code = (await a.reply(1))["room"]["code"]
    await b.send({"type": "join", "id": 2, "room": code})
    await b.reply(2)
    await a.ws.close()
    deep: Any = 4
    for _ in range(500):
        deep = [deep]
    frame = msgpack.packb({"type": "act", "room": code, "action": deep})
    deadline = time.monotonic() + seconds
    sent = 0
    drain = asyncio.create_task(_drain(b))
    try:
        while time.monotonic() < deadline and sent < FRAME_CAP:
            await b.ws.send(frame)
            sent += 1
            if sent % 100 == 0:
                await asyncio.sleep(0)
    except Exception:
        pass
    drain.cancel()
    return {"frames_sent": sent}


async def attack_connection_flood(url: str, seconds: float, count: int = 2000) -> dict[str, Any]:
    """Open connections and never say hello."""
    opened: list[Any] = []
    deadline = time.monotonic() + seconds
    for _ in range(count):
        if time.monotonic() > deadline:
            break
        try:
            opened.append(await ws_connect(f"{url}", local_addr=ATTACKER, open_timeout=2))
        except Exception:
            continue
    await asyncio.sleep(max(deadline - time.monotonic(), 0.5))
    alive = sum(1 for ws in opened if ws.state.name == "OPEN")
    return {"opened": len(opened), "still_open_at_end": alive}


async def attack_login_flood(url: str, seconds: float, parallel: int = 32) -> dict[str, Any]:
    """Password logins for an unknown name, many at a time (argon2: 64 MiB and a core each)."""
    deadline = time.monotonic() + seconds
    counts = {"auth_failed": 0, "rate_limited": 0, "other": 0}

    async def one() -> None:
        while time.monotonic() < deadline:
            try:
                raw = await Raw.open(url)
                await raw.send({"type": "hello", "version": 1, "id": 0, "name": "admin", "password": "guess"})
                answer = await raw.recv(max(deadline - time.monotonic(), 0.1))
                counts[answer.get("code", "other") if answer.get("code") in counts else "other"] += 1
                await raw.ws.close()
            except Exception:
                counts["other"] += 1
                await asyncio.sleep(0.05)

    await asyncio.gather(*(one() for _ in range(parallel)))
    return counts


async def attack_guess_codes(url: str, seconds: float) -> dict[str, Any]:
    """`join` random 6-character codes as fast as answers come back (pipelined)."""
    raw = await Raw.open(url, hello={"name": "guesser"})
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    deadline = time.monotonic() + seconds
    answered = {"no_such_room": 0, "rate_limited": 0, "other": 0}
    sent = 0
    window = 64
    inflight = 0
    start = time.monotonic()
    try:
        while time.monotonic() < deadline and sent < FRAME_CAP:
            while inflight < window and sent < FRAME_CAP:
                code = "".join(random.choice(alphabet) for _ in range(6))
                await raw.send({"type": "join", "id": sent + 1, "room": code})
                sent += 1
                inflight += 1
            message = await raw.recv(max(deadline - time.monotonic(), 0.01))
            if "id" in message:
                inflight -= 1
                code = message.get("code")
                answered[code if code in answered else "other"] += 1
    except Exception:
        pass
    elapsed = time.monotonic() - start
    return {**answered, "no_such_room_per_s": round(answered["no_such_room"] / elapsed, 1)}


async def attack_big_options(url: str, seconds: float, rooms: int = 80) -> dict[str, Any]:
    """Duel rooms whose options carry a 60 KB deck list (a valid deck padded with spaces, which
    JSON allows); then the size of one `list_rooms`."""
    from partida.games.registry import default_registry

    pool = default_registry().get("duel").pool  # type: ignore[attr-defined]
    deck = json.dumps(dict(next(iter(pool.decks.values())))) + " " * 60_000
    options = {"custom_decks": True, "decklist0": deck}
    maker = await Raw.open(url, hello={"name": "decks"})
    created = 0
    refused: dict[str, int] = {}
    for i in range(rooms):
        await maker.send({"type": "create_room", "id": i, "game": "duel", "options": options, "auto_start": False})
        answer = await maker.reply(i)
        if answer["type"] == "room_created":
            created += 1
        else:
            refused[answer.get("code", "?")] = refused.get(answer.get("code", "?"), 0) + 1
    await maker.send({"type": "list_rooms", "id": "size"})
    frame = await asyncio.wait_for(maker.ws.recv(), 30)
    return {"rooms_created": created, "refused": refused, "list_rooms_bytes": len(frame)}


async def _requests(url: str, seconds: float, frames: list[bytes], hello: dict[str, Any]) -> dict[str, Any]:
    """Send `frames` in turn, pipelined as fast as the connection takes them, and count the
    replies by code (or type): an `internal_error` is a traceback in the server's log."""
    raw = await Raw.open(url, hello=hello)
    replies: dict[str, int] = {}

    async def count() -> None:
        async for frame in raw.ws:
            message = msgpack.unpackb(frame, strict_map_key=False) if isinstance(frame, bytes) else json.loads(frame)
            key = message.get("code", message["type"])
            replies[key] = replies.get(key, 0) + 1

    reader = asyncio.create_task(count())
    deadline = time.monotonic() + seconds
    sent = 0
    try:
        while time.monotonic() < deadline and sent < FRAME_CAP:
            await raw.ws.send(frames[sent % len(frames)])
            sent += 1
            if sent % 50 == 0:
                await asyncio.sleep(0.005)
    except Exception:
        pass
    await asyncio.sleep(1.0)  # the last replies
    reader.cancel()
    return {"frames_sent": sent, "replies": replies}


async def attack_deep_decklist(url: str, seconds: float) -> dict[str, Any]:
    """Duel rooms whose custom deck list is JSON text nested 3,000 deep, or holds a 5,000-digit
    count (checked against the 4 KiB options cap only after the game parsed it, once)."""
    frames = [
        msgpack.packb(
            {
                "type": "create_room",
                "id": i,
                "game": "duel",
                "public": False,
                "auto_start": False,
                "options": {"custom_decks": True, "decklist0": text},
            }
        )
        for i, text in enumerate(["[" * 3000, '{"Plains": ' + "6" * 5000 + "}"])
    ]
    return await _requests(url, seconds, frames, {"name": "decks"})


async def attack_huge_game_id(url: str, seconds: float) -> dict[str, Any]:
    """`game` with a game id of 2**63 (past what the database's integer holds)."""
    return await _requests(url, seconds, [msgpack.packb({"type": "game", "id": 1, "game_id": 2**63})], {"name": "ids"})


async def attack_pipelined_get(url: str, seconds: float, parallel: int = 8) -> dict[str, Any]:
    """Two HTTP GETs in one segment, connection after connection, from `parallel` loops."""
    host, port = url.removeprefix("ws://").split(":")
    request = f"GET / HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
    deadline = time.monotonic() + seconds
    counts = {"connections": 0, "answered": 0}

    async def loop() -> None:
        while time.monotonic() < deadline and counts["connections"] < FRAME_CAP:
            try:
                reader, writer = await asyncio.open_connection(host, int(port), local_addr=ATTACKER)
                writer.write(request + request)
                answer = await asyncio.wait_for(reader.read(), 5)
                writer.close()
            except (OSError, TimeoutError):
                await asyncio.sleep(0.05)
                continue
            counts["connections"] += 1
            counts["answered"] += answer.startswith(b"HTTP/1.1 200")

    await asyncio.gather(*(loop() for _ in range(parallel)))
    return counts


def _near(offset: int, host: int = 1) -> tuple[str, int]:
    """Another loopback address of this attacker's (a crowd of hosts), away from the others'."""
    third = int(ATTACKER[0].split(".")[3])
    return (f"127.{offset}.{third}.{host}", 0)


async def attack_lobby_freeze(url: str, seconds: float, makers: int = 4, listers: int = 256) -> dict[str, Any]:
    """Pairs of guests from a few addresses open public rooms and start them at once (so the
    waiting-room cap never applies); then connections that never read ask for `list_rooms` as
    fast as they are let. A newcomer from elsewhere times `list_rooms` meanwhile."""
    deadline = time.monotonic() + seconds
    started = refused = 0
    for m in range(makers):
        a = await Raw.open(url, hello={"name": f"maker{m}a"}, address=_near(40, m + 1))
        b = await Raw.open(url, hello={"name": f"maker{m}b"}, address=_near(40, m + 1))
        for i in range(2000):
            if time.monotonic() > deadline - seconds / 2:
                break
            await a.send({"type": "create_room", "id": i, "game": "tictactoe", "seat": 0})
            answer = await a.reply(i)
            if answer["type"] != "room_created":
                refused += 1
                break
            await b.send({"type": "join", "id": i, "room": answer["room"]})
            await b.reply(i)
            started += 1
    readers = []
    for _ in range(listers):
        try:
            raw = await Raw.open(url, hello={"name": "reader"})
        except Exception:
            break
        raw.ws.transport.pause_reading()
        readers.append(raw)
    newcomer = await Raw.open(url, hello={"name": "newcomer"}, address=_near(50))
    sent = 0
    waits: list[float] = []

    async def flood(raw: Raw) -> None:
        nonlocal sent
        with contextlib.suppress(Exception):
            while time.monotonic() < deadline and sent < FRAME_CAP * 5:
                await asyncio.wait_for(raw.send({"type": "list_rooms", "id": sent}), 1)
                sent += 1
                await asyncio.sleep(0.01)

    async def look() -> None:
        i = 0
        while time.monotonic() < deadline:
            i += 1
            began = time.monotonic()
            with contextlib.suppress(Exception):
                await newcomer.send({"type": "list_rooms", "id": f"n{i}"})
                await newcomer.reply(f"n{i}", timeout=10)
                waits.append((time.monotonic() - began) * 1000)
            await asyncio.sleep(0.2)

    await asyncio.gather(look(), *(flood(raw) for raw in readers))
    return {
        "public_rooms_started": started,
        "refused": refused,
        "readers": len(readers),
        "list_rooms_sent": sent,
        "newcomer_list_p50_ms": percentile(waits, 50),
        "newcomer_list_max_ms": round(max(waits), 1) if waits else None,
    }


async def _answer_at_once(
    raw: Raw, early: list[dict[str, Any]], deadline: float, rng: random.Random, replies: list[float] | None = None
) -> None:
    """Answer every decision at once, the messages that came `early` first; with `replies`, time
    from each answer to the next decision (the bot's thinking, and its wait for a turn to think)."""
    from partida.games.prompts import prompt_from_data

    sent: dict[str, float] = {}
    with contextlib.suppress(Exception):
        while time.monotonic() < deadline:
            message = early.pop(0) if early else await raw.recv(max(deadline - time.monotonic(), 0.01))
            if message.get("type") != "update" or message.get("decision") is None:
                continue
            room = message["room"]
            if replies is not None and room in sent:
                replies.append((time.monotonic() - sent[room]) * 1000)
            answer = prompt_from_data(message["decision"]).random_answer(rng)
            await raw.send({"type": "act", "room": room, "action": answer, "seq": message["seq"]})
            sent[room] = time.monotonic()


async def attack_bot_monopoly(url: str, seconds: float, rooms: int = 40) -> dict[str, Any]:
    """One guest opens many Othello rooms against the pool's alphabeta and answers at once in
    each; another player's game against the same agent times the bot's replies meanwhile."""

    rng = random.Random(3)
    deadline = time.monotonic() + seconds

    early: dict[Raw, list[dict[str, Any]]] = {}  # updates that came before a room's reply

    async def open_rooms(raw: Raw, n: int) -> tuple[int, int]:
        opened = refused = 0
        early[raw] = []
        for i in range(n):
            await raw.send(
                {"type": "create_room", "id": f"c{i}", "game": "othello", "seat": 0, "public": False}
                | {"bots": {"1": "alphabeta"}}
            )
            while (answer := await raw.recv(10)).get("id") != f"c{i}":
                early[raw].append(answer)
            opened += answer["type"] == "room_created"
            refused += answer["type"] != "room_created"
        return opened, refused

    def answer_at_once(raw: Raw, replies: list[float] | None = None) -> Any:
        return _answer_at_once(raw, early[raw], deadline, rng, replies)

    greedy = await Raw.open(url, hello={"name": "greedy"})
    opened, refused = await open_rooms(greedy, rooms)
    other = await Raw.open(url, hello={"name": "other"}, address=_near(60))
    await open_rooms(other, 1)
    replies: list[float] = []
    await asyncio.gather(answer_at_once(greedy), answer_at_once(other, replies))
    return {
        "rooms_opened": opened,
        "refused": refused,
        "other_bot_replies": len(replies),
        "other_reply_p50_ms": percentile(replies, 50),
        "other_reply_max_ms": round(max(replies), 1) if replies else None,
    }


async def attack_bot_time(
    url: str, seconds: float, rooms: int = 8, agent: str = "othello-engine-hard"
) -> dict[str, Any]:
    """One guest opens eight Othello rooms against the pool's othello-engine-hard, each from a
    connection of its own under a new name (one address), and answers at once in each; another
    player, from another address, plays the same bot meanwhile and times its replies: the time
    from each answer to the bot's next decision, its search and its wait for a core."""

    rng = random.Random(5)
    deadline = time.monotonic() + seconds
    guests: list[Raw] = []
    opened = refused = 0
    waiting: dict[Raw, list[dict[str, Any]]] = {}  # updates that came before a room's reply

    async def open_room(raw: Raw) -> bool:
        await raw.send(
            {"type": "create_room", "id": "c", "game": "othello", "seat": 1, "public": False} | {"bots": {"0": agent}}
        )
        waiting[raw] = []
        while (answer := await raw.recv(20)).get("id") != "c":
            waiting[raw].append(answer)
        return answer["type"] == "room_created"

    def answer_at_once(raw: Raw, replies: list[float] | None = None) -> Any:
        return _answer_at_once(raw, waiting[raw], deadline, rng, replies)

    for i in range(rooms):
        raw = await Raw.open(url, hello={"name": f"hog{i}"})
        if await open_room(raw):
            opened += 1
            guests.append(raw)
        else:
            refused += 1
    other = await Raw.open(url, hello={"name": "other"}, address=_near(60))
    await open_room(other)
    replies: list[float] = []
    await asyncio.gather(*(answer_at_once(raw) for raw in guests), answer_at_once(other, replies))
    return {
        "rooms_opened": opened,
        "refused": refused,
        "other_bot_replies": len(replies),
        "other_reply_p50_ms": percentile(replies, 50),
        "other_reply_max_ms": round(max(replies), 1) if replies else None,
    }


async def attack_login_crowd(url: str, seconds: float, hosts: int = 48) -> dict[str, Any]:
    """48 addresses, two connections each, send wrong passwords without pause; a person from a
    clean address logs in now and then (a wrong password too: the time to an answer is the
    time to a check) and times the answer."""
    deadline = time.monotonic() + seconds
    counts: dict[str, int] = {}

    async def guess(address: tuple[str, int]) -> None:
        while time.monotonic() < deadline:
            try:
                raw = await Raw.open(url, address=address)
                await raw.send({"type": "hello", "version": 2, "id": 0, "name": "admin", "password": "guess"})
                code = (await raw.recv(max(deadline - time.monotonic(), 0.1))).get("code", "other")
                counts[code] = counts.get(code, 0) + 1
                await raw.ws.close()
            except Exception:
                counts["other"] = counts.get("other", 0) + 1
                await asyncio.sleep(0.05)

    person: list[tuple[str, float]] = []

    async def log_in() -> None:
        """Each try from a network of its own: a person mistyping once, not a second guesser."""
        await asyncio.sleep(min(2.0, seconds / 3))
        while time.monotonic() < deadline:
            began = time.monotonic()
            try:
                raw = await Raw.open(url, address=_near(70 + len(person)))
                await raw.send({"type": "hello", "version": 2, "id": 0, "name": "ada", "password": "mistyped"})
                code = (await raw.recv(60)).get("code", "other")
                await raw.ws.close()
            except Exception as exc:
                code = type(exc).__name__
            person.append((code, (time.monotonic() - began) * 1000))
            await asyncio.sleep(0.5)

    await asyncio.gather(log_in(), *(guess(_near(20, h + 1)) for h in range(hosts) for _ in range(2)))
    answered = [ms for code, ms in person if code == "auth_failed"]
    return {
        "guesses": counts,
        "person_tries": len(person),
        "person_checked": len(answered),
        "person_refused": sum(1 for code, _ in person if code == "rate_limited"),
        "person_p50_ms": percentile(answered, 50),
    }


async def attack_connect_loop(url: str, seconds: float, parallel: int = 64) -> dict[str, Any]:
    """Connect, say hello, close, again, 64 at a time."""
    deadline = time.monotonic() + seconds
    counts = {"completed": 0, "refused": 0}

    async def loop() -> None:
        while time.monotonic() < deadline and counts["completed"] < FRAME_CAP:
            try:
                raw = await Raw.open(url, hello={"name": "loop"})
                await raw.ws.close()
                counts["completed"] += 1
            except Exception:
                counts["refused"] += 1
                await asyncio.sleep(0.01)

    await asyncio.gather(*(loop() for _ in range(parallel)))
    return counts


async def attack_http_flood(url: str, seconds: float, parallel: int = 8) -> dict[str, Any]:
    """Plain GETs of the browser client's largest script, 8 at a time."""
    host, port = url.removeprefix("ws://").rsplit(":", 1)
    deadline = time.monotonic() + seconds
    statuses: dict[str, int] = {}
    received = 0

    async def loop() -> None:
        nonlocal received
        while time.monotonic() < deadline and sum(statuses.values()) < FRAME_CAP:
            try:
                reader, writer = await asyncio.open_connection(host, int(port), local_addr=ATTACKER)
                writer.write(f"GET /app.js HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
                data = await reader.read()
                writer.close()
                status = data.split(b" ", 2)[1].decode() if data.startswith(b"HTTP/") else "none"
                statuses[status] = statuses.get(status, 0) + 1
                received += len(data)
            except Exception:
                statuses["error"] = statuses.get("error", 0) + 1
                await asyncio.sleep(0.01)

    await asyncio.gather(*(loop() for _ in range(parallel)))
    return {"statuses": statuses, "mb_received": round(received / 1e6, 1)}


TOURNAMENT_ACCOUNTS = ("spammer",)  # created before the server starts, for the tournament attacks
ACCOUNT_PASSWORD = "a long password for the bench"
TOURNAMENT_CLOCK = {"initial": 60.0, "increment": 0.0}


async def _creations(raw: Raw, seconds: float, request: Callable[[int], dict[str, Any]]) -> dict[str, int]:
    """Send `request(i)` one after another for `seconds`; the answers counted by code."""
    answers: dict[str, int] = {}
    deadline = time.monotonic() + seconds
    i = 0
    try:
        while time.monotonic() < deadline and i < FRAME_CAP:
            i += 1
            await raw.send({**request(i), "id": i})
            answer = await raw.reply(i, timeout=30)
            key = answer.get("code", answer["type"])
            answers[key] = answers.get(key, 0) + 1
    except Exception as exc:  # the server closed the connection: counted, and the attack goes on
        answers[f"closed: {exc}"[:80]] = 1
    return answers


async def _listers(url: str, seconds: float, count: int, read: bool) -> dict[str, Any]:
    """`count` connections of the attacker's account asking `tournament_list` over and over
    (reading the replies, or never reading a byte); what they got."""
    hello = {"name": TOURNAMENT_ACCOUNTS[0], "password": ACCOUNT_PASSWORD}
    raws = [await Raw.open(url, hello=hello) for _ in range(count)]
    got = {"lists": 0, "bytes": 0, "sent": 0, "refused": 0}
    deadline = time.monotonic() + seconds

    async def ask(raw: Raw) -> None:
        if not read:
            raw.ws.transport.pause_reading()
        i = 0
        with contextlib.suppress(Exception):
            while time.monotonic() < deadline and got["sent"] < FRAME_CAP * 5:
                i += 1
                await asyncio.wait_for(raw.send({"type": "tournament_list", "id": i}), 1)
                got["sent"] += 1
                if not read:
                    await asyncio.sleep(0.01)
                    continue
                while True:
                    frame = await asyncio.wait_for(raw.ws.recv(), max(deadline - time.monotonic(), 0.01))
                    message = msgpack.unpackb(frame, strict_map_key=False)
                    if message.get("id") == i:
                        break
                if message["type"] == "tournaments":
                    got["lists"] += 1
                    got["bytes"] += len(frame)
                else:
                    got["refused"] += 1
                    await asyncio.sleep(0.05)

    await asyncio.gather(*(ask(raw) for raw in raws))
    return got


async def attack_tournament_spam(url: str, seconds: float) -> dict[str, Any]:
    """One account creates tournaments as fast as it is answered for half the time; then 8
    connections of it list them, reading every reply, for the other half."""
    maker = await Raw.open(url, hello={"name": TOURNAMENT_ACCOUNTS[0], "password": ACCOUNT_PASSWORD})
    answers = await _creations(
        maker,
        seconds / 2,
        lambda i: {
            "type": "tournament_create",
            "name": f"spam{i}",
            "game": "tictactoe",
            "format": "swiss",
            "clock": TOURNAMENT_CLOCK,
            "starts_in": 30 * 24 * 3600,
        },
    )
    listed = await _listers(url, seconds / 2, 8, read=True)
    return {"create_answers": answers, **{f"list_{k}": v for k, v in listed.items()}}


async def attack_tournament_big_options(url: str, seconds: float) -> dict[str, Any]:
    """One account creates Duel tournaments whose options carry a 60 KB deck list (a valid deck
    padded with spaces); then the size of one `tournament_list`, and 8 connections that ask
    for it and never read."""
    from partida.games.registry import default_registry

    pool = default_registry().get("duel").pool  # type: ignore[attr-defined]
    deck = json.dumps(dict(next(iter(pool.decks.values())))) + " " * 60_000
    maker = await Raw.open(url, hello={"name": TOURNAMENT_ACCOUNTS[0], "password": ACCOUNT_PASSWORD})
    answers = await _creations(
        maker,
        seconds / 3,
        lambda i: {
            "type": "tournament_create",
            "name": f"big{i}",
            "game": "duel",
            "format": "swiss",
            "clock": TOURNAMENT_CLOCK,
            "options": {"custom_decks": True, "decklist0": deck},
            "starts_in": 30 * 24 * 3600,
        },
    )
    lister = await Raw.open(url, hello={"name": TOURNAMENT_ACCOUNTS[0], "password": ACCOUNT_PASSWORD})
    await lister.send({"type": "tournament_list", "id": "size"})
    frame = await asyncio.wait_for(lister.ws.recv(), 60)
    listed = await _listers(url, seconds * 2 / 3, 8, read=False)
    return {"create_answers": answers, "tournament_list_bytes": len(frame), "unread_lists_sent": listed["sent"]}


async def attack_idle_arenas(url: str, seconds: float) -> dict[str, Any]:
    """One account creates week-long arenas that start at once and that nobody enters, as many
    as it is let in the time (the idle server's CPU afterwards is the bench's last line)."""
    maker = await Raw.open(url, hello={"name": TOURNAMENT_ACCOUNTS[0], "password": ACCOUNT_PASSWORD})
    answers = await _creations(
        maker,
        seconds,
        lambda i: {
            "type": "tournament_create",
            "name": f"arena{i}",
            "game": "tictactoe",
            "format": "arena",
            "clock": TOURNAMENT_CLOCK,
            "duration": 7 * 24 * 3600,
            "starts_in": 0,
        },
    )
    return {"create_answers": answers}


async def attack_lobby_cursors(
    url: str, seconds: float, hosts: int = 4, rooms: int = 50, listers: int = 4
) -> dict[str, Any]:
    """From 4 addresses, pairs of guests open and start 50 public rooms each; then 4 connections
    per address ask for pages of 200 rooms at random cursors (each page built for its asker,
    cached for nobody), 8 requests in flight each, reading every answer."""
    deadline = time.monotonic() + seconds
    started = 0
    for m in range(hosts):
        a = await Raw.open(url, hello={"name": f"lister{m}a"}, address=_near(60, m + 1))
        b = await Raw.open(url, hello={"name": f"lister{m}b"}, address=_near(60, m + 1))
        for i in range(rooms):
            await a.send({"type": "create_room", "id": i, "game": "tictactoe", "seat": 0})
            answer = await a.reply(i)
            if answer["type"] != "room_created":
                break
            await b.send({"type": "join", "id": i, "room": answer["room"]})
            await b.reply(i)
            started += 1
    counts = {"pages": 0, "rate_limited": 0, "closed": 0}

    async def lister(address: tuple[str, int]) -> None:
        try:
            raw = await Raw.open(url, hello={"name": "cursor"}, address=address)
        except Exception:
            counts["closed"] += 1
            return
        flight = asyncio.Semaphore(8)

        async def read() -> None:
            while True:
                answer = await raw.recv(timeout=seconds + 5)
                flight.release()
                if answer.get("type") == "rooms":
                    counts["pages"] += 1
                elif answer.get("code") == "rate_limited":
                    counts["rate_limited"] += 1

        reading = asyncio.create_task(read())
        n = 0
        while time.monotonic() < deadline and n < FRAME_CAP and not reading.done():
            try:
                await asyncio.wait_for(flight.acquire(), max(deadline - time.monotonic(), 0.01))
                n += 1
                cursor = f"l{random.randint(0, started + 10)}"
                await raw.send({"type": "list_rooms", "id": n, "limit": 200, "cursor": cursor})
            except TimeoutError:
                break
            except Exception:
                break
        if reading.done() or raw.ws.close_code is not None:
            counts["closed"] += 1
        reading.cancel()

    await asyncio.gather(*(lister(_near(60, m + 1)) for m in range(hosts) for _ in range(listers)))
    return {"public_rooms": started, **counts, "pages_per_s": round(counts["pages"] / seconds, 1)}


LINKED = re.compile(rb'(?:href|src)="(/[^"]+)"')
IMPORTED = re.compile(rb'^import [^;]*? from "\./([^"]+)";', re.M)


async def _page_load(host: str, port: int) -> dict[str, int]:
    """One person opening the page with an empty cache, as a browser does: the page, what it
    links, then each module's imports as they arrive; the status of every file."""
    statuses: dict[str, int] = {}

    async def fetch(path: str) -> bytes:
        try:
            reader, writer = await asyncio.open_connection(host, port, local_addr=ATTACKER)
            writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
            data = await asyncio.wait_for(reader.read(), 10)
            writer.close()
        except (OSError, TimeoutError):
            statuses[path] = 0
            return b""
        head, _, body = data.partition(b"\r\n\r\n")
        statuses[path] = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/") else 0
        return body if statuses[path] == 200 else b""

    wanted = [path.decode() for path in LINKED.findall(await fetch("/"))]
    while wanted:
        fresh = [path for path in dict.fromkeys(wanted) if path not in statuses]
        bodies = await asyncio.gather(*(fetch(path) for path in fresh))
        wanted = [f"/{name.decode()}" for body in bodies for name in IMPORTED.findall(body)]
    return statuses


async def attack_page_crowd(url: str, seconds: float, people: int = 30, later: float = 10.0) -> dict[str, Any]:
    """Not an attack: 30 people behind one address (a class, an office's NAT) open the page at
    once, and 30 more `later` seconds after; how many got every file of the page."""
    host, port = url.removeprefix("ws://").rsplit(":", 1)
    first = await asyncio.gather(*(_page_load(host, int(port)) for _ in range(people)))
    await asyncio.sleep(later)
    second = await asyncio.gather(*(_page_load(host, int(port)) for _ in range(people)))
    files = max(len(load) for load in first + second)

    def whole(loads: list[dict[str, int]]) -> int:
        return sum(1 for load in loads if len(load) == files and set(load.values()) == {200})

    refused = sum(1 for load in first + second for status in load.values() if status != 200)
    return {
        "files": files,
        "pages_served_first": whole(first),
        "pages_served_later": whole(second),
        "files_refused": refused,
    }


async def attack_seek_flood(url: str, seconds: float, hosts: int = 8, readers: int = 8) -> dict[str, Any]:
    """Guests from 8 addresses post seeks as fast as they are let for the first half: a
    connection after another, three seeks each (the most one owner may hold), every seek of the
    same terms (a Duel with a deck list padded near the 4 KiB options cap) and a rating range no
    guest is in, so none pairs and each new one meets them all. Then 8 readers from another
    address ask `list_seeks` (a bare request: the first page, or everything on a server that does
    not page) and read each answer, as fast as they are let."""
    from partida.games.registry import default_registry

    pool = default_registry().get("duel").pool  # type: ignore[attr-defined]
    deck = json.dumps(dict(next(iter(pool.decks.values()))))
    options = {"custom_decks": True, "decklist0": deck + " " * max(3600 - len(deck), 0)}
    seek = {"type": "seek", "game": "duel", "options": options, "clock": {"per_move": 30}, "range": [1e9, 2e9]}
    deadline = time.monotonic() + seconds
    posting_until = time.monotonic() + seconds / 2
    posted = 0
    refused: dict[str, int] = {}
    held: list[Raw] = []

    async def host(h: int) -> None:
        nonlocal posted
        turned_away = 0  # connections in a row that could post nothing
        while time.monotonic() < posting_until and turned_away < 3:
            try:
                raw = await Raw.open(url, hello={"name": f"seeker{h}x{len(held)}"}, address=_near(80, h + 1))
            except Exception:
                refused["connection"] = refused.get("connection", 0) + 1
                break
            held.append(raw)
            mine = 0
            while mine < 3 and time.monotonic() < posting_until:
                await raw.send({**seek, "id": mine})
                answer = await raw.reply(mine, 30)
                if answer["type"] == "seek_posted":
                    posted += 1
                    mine += 1
                    continue
                code = answer.get("code", answer["type"])
                refused[code] = refused.get(code, 0) + 1
                if code != "rate_limited":
                    break
                await asyncio.sleep(0.05)
            turned_away = 0 if mine else turned_away + 1

    await asyncio.gather(*(host(h) for h in range(hosts)))
    listed = 0
    received = 0
    largest = 0
    listing_codes: dict[str, int] = {}
    waits: list[float] = []

    async def read(r: int) -> None:
        nonlocal listed, received, largest
        with contextlib.suppress(Exception):
            raw = await Raw.open(url, hello={"name": f"reader{r}"}, address=_near(81, 1))
            i = 0
            while time.monotonic() < deadline and listed < FRAME_CAP:
                i += 1
                began = time.monotonic()
                await raw.send({"type": "list_seeks", "id": i})
                while True:
                    frame = await asyncio.wait_for(raw.ws.recv(), 60)
                    message = msgpack.unpackb(frame, strict_map_key=False)
                    if message.get("id") == i:
                        break
                waits.append((time.monotonic() - began) * 1000)
                received += len(frame)
                largest = max(largest, len(frame))
                if message["type"] == "seeks":
                    listed += 1
                else:
                    code = message.get("code", message["type"])
                    listing_codes[code] = listing_codes.get(code, 0) + 1
                    await asyncio.sleep(0.05)

    await asyncio.gather(*(read(r) for r in range(readers)))
    return {
        "connections": len(held),
        "seeks_posted": posted,
        "refused": refused,
        "listings": listed,
        "listing_refusals": listing_codes,
        "listing_mb_received": round(received / 1e6, 1),
        "largest_listing_bytes": largest,
        "listing_p50_ms": percentile(waits, 50),
    }


ATTACKS = {
    "seat_hijack": attack_seat_hijack,
    "surrogate_name": attack_surrogate_name,
    "big_id": attack_big_id,
    "list_rooms_flood": attack_list_rooms_flood,
    "deep_json": attack_deep_json,
    "deep_action": attack_deep_action,
    "connection_flood": attack_connection_flood,
    "login_flood": attack_login_flood,
    "guess_codes": attack_guess_codes,
    "big_options": attack_big_options,
    "deep_decklist": attack_deep_decklist,
    "huge_game_id": attack_huge_game_id,
    "pipelined_get": attack_pipelined_get,
    "lobby_freeze": attack_lobby_freeze,
    "bot_monopoly": attack_bot_monopoly,
    "bot_time": attack_bot_time,
    "login_crowd": attack_login_crowd,
    "connect_loop": attack_connect_loop,
    "http_flood": attack_http_flood,
    "tournament_spam": attack_tournament_spam,
    "tournament_big_options": attack_tournament_big_options,
    "idle_arenas": attack_idle_arenas,
    "page_crowd": attack_page_crowd,
    "lobby_cursors": attack_lobby_cursors,
    "seek_flood": attack_seek_flood,
}
TOURNAMENT_ATTACKS = ("tournament_spam", "tournament_big_options", "idle_arenas")


# The bench's side: the server, the bystanders, the measurements.


class Bystanders:
    """Two players playing random tic-tac-toe games back to back; every move's round trip."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.alice = await Client.connect(self.url, name="alice")
        self.bob = await Client.connect(self.url, name="bob")
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        rng = random.Random(7)
        while True:
            try:
                code = (await self.alice.create_room("tictactoe", seat=0, public=False))["room"]
                await self.bob.join(code)
            except ServerError as exc:  # counted, not fatal: the bench reports refusals
                self.errors.append(str(exc))
                await asyncio.sleep(0.1)
                continue
            await asyncio.gather(self._play(self.alice, code, rng), self._play(self.bob, code, rng))

    async def _play(self, client: Client, code: str, rng: random.Random) -> None:
        while True:
            update = await client.next_update(code)
            if update["status"] == "finished":
                return
            if update.get("decision") is None:
                continue
            from partida.games.prompts import prompt_from_data

            action = prompt_from_data(update["decision"]).random_answer(rng)
            while True:
                began = time.perf_counter()
                try:
                    await asyncio.wait_for(client.act(code, action, seq=update["seq"]), 30)
                except (ServerError, TimeoutError) as exc:  # counted; the same move is sent again
                    self.errors.append(str(exc))
                    if getattr(exc, "code", None) == "stale_decision":
                        break
                    await asyncio.sleep(0.05)
                    continue
                self.latencies.append((time.perf_counter() - began) * 1000)
                break

    def take(self) -> tuple[list[float], list[str]]:
        taken, self.latencies = self.latencies, []
        errors, self.errors = self.errors, []
        return taken, errors

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
        for client in (self.alice, self.bob):
            await client.close()


def percentile(values: list[float], q: float) -> float | None:
    if len(values) < 2:
        return round(values[0], 2) if values else None
    return round(statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1], 2)


async def measure(
    name: str, server: Served, log: Path, players: Bystanders, seconds: float, address: str = "127.0.0.2"
) -> dict[str, Any]:
    players.take()
    before = rss_mib(server.pid)
    log_before = log.stat().st_size
    cpu_before, phase_began = cpu_seconds(server.pid), time.monotonic()
    peak = before
    outcome: dict[str, Any] = {}
    if name == "baseline":
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            await asyncio.sleep(0.05)
            peak = max(peak, rss_mib(server.pid))
    else:
        attacker = await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--run-attack",
            name,
            "--url",
            server.url,
            "--seconds",
            str(seconds),
            "--address",
            address,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        waiter = asyncio.create_task(attacker.communicate())
        began = time.monotonic()
        hard_stop = began + seconds * 3 + 20
        # at least `seconds` long, even when the attack is over sooner: its effects may last
        while (not waiter.done() or time.monotonic() < began + seconds) and time.monotonic() < hard_stop:
            await asyncio.sleep(0.05)
            peak = max(peak, rss_mib(server.pid))
        if not waiter.done():
            attacker.kill()
            outcome = {"attacker": "killed after the time bound"}
        stdout, _ = await waiter
        if stdout.strip():
            outcome = json.loads(stdout.decode().strip().splitlines()[-1])
    latencies, refused = players.take()
    alive = server.process.poll() is None
    phase_s = time.monotonic() - phase_began
    return {
        "attack": name,
        "p50_ms": percentile(latencies, 50),
        "p95_ms": percentile(latencies, 95),
        "moves": len(latencies),
        "moves_per_s": round(len(latencies) / phase_s, 1),
        "bystander_errors": len(refused),
        "bystander_error_kinds": sorted({error.split(":")[0] for error in refused}),
        "rss_before_mib": round(before, 1),
        "rss_peak_mib": round(peak, 1),
        "rss_after_mib": round(rss_mib(server.pid), 1),
        "server_cpu_share": round((cpu_seconds(server.pid) - cpu_before) / phase_s, 2) if alive else None,
        "log_bytes": log.stat().st_size - log_before,
        "server_alive": alive,
        "outcome": outcome,
    }


def run_bench(attacks: list[str], seconds: float, stored_arenas: int = 0) -> None:
    agents = {"bot_monopoly": "alphabeta", "bot_time": "othello-engine-hard"}
    wanted = sorted({agents[a] for a in attacks if a in agents})
    bots = ["--bots", ",".join(wanted)] if wanted else ["--no-bots"]
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "server.log"
        db = f"sqlite+aiosqlite:///{tmp}/abuse.db"
        if any(name in TOURNAMENT_ATTACKS for name in attacks) or stored_arenas:
            for name in TOURNAMENT_ACCOUNTS:
                command = [*THIS_CHECKOUT, "db", "create-user", name, "--password", ACCOUNT_PASSWORD, "--db", db]
                subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        if stored_arenas:
            store_arenas(db, stored_arenas)
        idle = "idle_arenas" in attacks or stored_arenas > 0
        # the server's own limits (limits=None): they are what the attacks are measured against
        with log.open("wb") as log_file, served(db, *bots, limits=None, log_level="info", stderr=log_file) as server:
            asyncio.run(phases(server, log, attacks, seconds, idle))


STORE_ARENAS = """
import asyncio, sys
from datetime import UTC, datetime
from partida.storage.database import Database
from partida.storage.tournaments import TournamentStore

async def main(url, n):
    db = await Database.open(url)
    store = TournamentStore(db)
    for i in range(n):
        await store.create(f"stored{i}", "tictactoe", {}, 2, {"initial": 60.0, "increment": 0.0},
                           "arena", "both", datetime.now(UTC), duration=7 * 24 * 3600.0)
    await db.close()

asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


def store_arenas(db: str, count: int) -> None:
    """`count` week-long arenas, started, nobody entered: written by the build under test's own
    store before its server starts (an operator's `partida tournament create --db`, many times)."""
    subprocess.run([sys.executable, "-c", STORE_ARENAS, db, str(count)], check=True)


async def phases(server: Served, log: Path, attacks: list[str], seconds: float, idle: bool = False) -> None:
    players = Bystanders(server.url)
    await players.start()
    await asyncio.sleep(1.0)  # warm up
    print(json.dumps(await measure("baseline", server, log, players, seconds)), flush=True)
    for i, name in enumerate(attacks):
        if server.process.poll() is not None:
            break
        address = f"127.0.0.{i + 2}"
        print(json.dumps(await measure(name, server, log, players, seconds, address)), flush=True)
        await asyncio.sleep(0.5)
    with contextlib.suppress(Exception):  # a stop that hangs must not hang the bench
        await asyncio.wait_for(players.stop(), 15)
    if idle and server.process.poll() is None:
        # three windows: a server that just started (or just took many tournaments) may still be
        # doing their one-time work in the first; the last is what it costs for good
        fractions = []
        for _ in range(3):
            began, cpu = time.monotonic(), cpu_seconds(server.pid)
            await asyncio.sleep(seconds)
            fractions.append(round((cpu_seconds(server.pid) - cpu) / (time.monotonic() - began), 4))
        rss = round(rss_mib(server.pid), 1)
        line = {"phase": "idle", "seconds": seconds, "idle_cpu_fractions": fractions, "rss_mib": rss}
        print(json.dumps(line), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=6.0, help="length of each phase (default: %(default)s)")
    parser.add_argument("--attack", action="append", choices=sorted(ATTACKS), help="run only these attacks")
    parser.add_argument(
        "--stored-arenas",
        type=int,
        default=0,
        help="write this many week-long empty arenas before the server starts, and report its idle CPU",
    )
    parser.add_argument("--run-attack", choices=sorted(ATTACKS), help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--address", default="127.0.0.2", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run_attack:
        global ATTACKER
        ATTACKER = (args.address, 0)
        random.seed(secrets.randbits(32))
        try:
            coroutine = ATTACKS[args.run_attack](args.url, args.seconds)
            outcome = asyncio.run(asyncio.wait_for(coroutine, args.seconds * 3 + 15))
        except Exception as exc:
            outcome = {"attacker_failed": f"{type(exc).__name__}: {exc}"[:200]}
        print(json.dumps(outcome), flush=True)
        os._exit(0)  # no lingering close handshakes: the bench waits for this process to end
    run_bench(args.attack or list(ATTACKS), args.seconds, args.stored_arenas)


if __name__ == "__main__":
    main()
