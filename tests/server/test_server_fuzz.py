"""The request catalogue, fuzzed against a live server: every request type the protocol defines,
in MessagePack and in JSON, each field in turn given hostile values (integers at and past the
64-bit edges, 5,000-digit numbers, deep nesting, long text, every wrong type, a missing field, an
unknown one), and each game's options given the same. No reply may be `internal_error` and
nothing may be logged with a traceback. The catalogue is read from `partida.protocol.messages`,
so a new request type is fuzzed without touching this file."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import typing
from collections.abc import AsyncIterator, Iterator
from typing import Any

import msgpack
import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from partida.client import Client
from partida.protocol import messages
from partida.server.app import Server, ServerConfig
from partida.server.limits import Limits

DEEP = 3000
# Values Python would not even print or encode (a 5,000-digit number, lists and maps 3,000 deep)
# travel in messages as these markers; each frame is then spliced with the raw encoding
# (None: not representable in that format).
DIGITS, DEEP_LIST, DEEP_MAP = "<5000 digits>", "<list 3000 deep>", "<map 3000 deep>"
RAW: dict[str, tuple[str, bytes | None]] = {
    DIGITS: ("9" * 5000, None),
    DEEP_LIST: ("[" * DEEP + "]" * DEEP, b"\x91" * DEEP + b"\x90"),
    DEEP_MAP: ('{"k":' * DEEP + "{}" + "}" * DEEP, b"\x81\xa1k" * DEEP + b"\x80"),
}
# Values no field should ever crash on. Integers past MessagePack's range are sent in JSON only.
HOSTILE: list[Any] = [
    2**63 - 1,
    2**63,
    2**64 - 1,
    -(2**63),
    -(2**63) - 1,
    10**30,
    DIGITS,
    DEEP_LIST,
    DEEP_MAP,
    -1,
    0,
    1.5,
    1e308,
    True,
    None,
    "",
    "x" * 20_000,
    "é\u202e\u200b" * 50,
    "[" * DEEP,
    "{" * DEEP,
    [],
    {},
    [[]] * 3,
    {"a": {"b": 1}},
    "9" * 5000,
]


def nested_list(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


def nested_map(depth: int) -> Any:
    value: Any = {}
    for _ in range(depth):
        value = {"k": value}
    return value


def _options_values() -> list[Any]:
    """Option values to try for every option of every game: JSON-in-text nested deep, numbers of
    thousands of digits in and out of text, and the plain hostile values."""
    deep_text = "[" * DEEP + "]" * DEEP
    return [
        *HOSTILE,
        deep_text,
        '{"Plains": ' + "1" * 5000 + "}",
        '{"Plains": ' + "1" * 400 + "}",
        '{"Plains": 1e999}',
        '{"Plains": NaN}',
        "[" * 900,
        nested_list(40),
        nested_map(40),
    ]


def variants(server: Server, plausible: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(label, message) for every request type: the plausible message, each field hostile, each
    required field missing, an unknown field; for requests naming a game, every game's options
    hostile one at a time."""
    for kind, cls in messages.REQUESTS.items():
        fields = [f.name for f in dataclasses.fields(cls) if f.name != "id"]
        required = [
            f.name
            for f in dataclasses.fields(cls)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        ]
        base = {"type": kind, **{name: plausible.get(name, 0) for name in required}}
        yield f"{kind} plausible", base
        for name in [*fields, "id"]:
            for value in [*HOSTILE, DEEP_LIST, DEEP_MAP, nested_list(40), nested_map(40)]:
                yield f"{kind}.{name}={_short(value)}", {**base, name: value}
        for name in required:
            yield f"{kind} without {name}", {k: v for k, v in base.items() if k != name}
        yield f"{kind} unknown field", {**base, "zzz": 1}
        hints = typing.get_type_hints(cls)
        if "options" in hints and "game" in hints:
            for game in server.registry.games():
                for option in game.options:
                    for value in _options_values():
                        message = {**base, "game": game.name, "options": {"custom_decks": True, option: value}}
                        yield f"{kind} {game.name}.{option}={_short(value)}", message


def seek_sizes() -> Iterator[tuple[str, dict[str, Any]]]:
    """Seeks and listings of hostile sizes: options at and past the rooms' cap, a range of a
    hundred thousand bounds, pages asked for far past the largest, cursors past any id."""
    for size in (4000, 4097, 100_000):
        yield f"seek options of {size} bytes", {"type": "seek", "game": "othello", "options": {"opening": "x" * size}}
    yield "seek range of 100000", {"type": "seek", "game": "othello", "range": [1.0] * 100_000}
    yield "seek range of huge bounds", {"type": "seek", "game": "othello", "range": [-1e308, 1e308]}
    for limit in (200, 201, 2**63 - 1):
        yield f"list_seeks limit={limit}", {"type": "list_seeks", "limit": limit}
    for cursor in ("9" * 19, "9" * 20, "0", "-1", "١٢"):
        yield f"list_seeks cursor={cursor}", {"type": "list_seeks", "cursor": cursor, "watch": True}


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 40 else text[:37] + "..."


class Probe:
    """One bare connection that sends a frame, then a ping, and reads everything up to the pong:
    whatever the frame caused is in between."""

    def __init__(self, url: str, binary: bool, login: dict[str, str] | None = None) -> None:
        self.url, self.binary = url, binary
        self.login = login or {"name": "fuzzer"}  # an account's name and password: its requests get past accounts_only
        self.ws: Any = None
        self.pings = 0

    def encode(self, message: Any) -> bytes | str | None:
        if not self.binary:
            text = json.dumps(message)
            for marker, (raw, _) in RAW.items():
                text = text.replace(json.dumps(marker), raw)
            return text
        try:
            frame = msgpack.packb(message, use_bin_type=True)
        except (OverflowError, ValueError, TypeError):
            return None  # not representable in MessagePack: JSON only
        for marker, (_, packed) in RAW.items():
            if msgpack.packb(marker) in frame:
                if packed is None:
                    return None
                frame = frame.replace(msgpack.packb(marker), packed)
        return frame

    def decode(self, frame: bytes | str) -> dict[str, Any]:
        return json.loads(frame) if isinstance(frame, str) else msgpack.unpackb(frame, strict_map_key=False)

    async def open(self, greet: bool = True) -> None:
        self.ws = await ws_connect(self.url, max_size=None)
        if greet:
            replies = await self.exchange({"type": "hello", "version": 2, **self.login})
            assert replies and replies[0]["type"] == "welcome", replies

    async def exchange(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        """What the server answered `message` (and pushed meanwhile); [] when it closed."""
        frame = self.encode(message)
        if frame is None:
            return []
        self.pings += 1
        marker = f"probe-{self.pings}"
        replies: list[dict[str, Any]] = []
        try:
            await self.ws.send(frame)
            await self.ws.send(self.encode({"type": "ping", "id": marker}))
            while True:
                reply = self.decode(await asyncio.wait_for(self.ws.recv(), 10))
                if reply.get("id") == marker:
                    return replies
                replies.append(reply)
        except ConnectionClosed:
            self.ws = None
            return replies

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()


@pytest.fixture
async def roomy_server(db_url: str) -> AsyncIterator[Server]:
    """A server whose per-client rates never refuse the fuzzer, so every request reaches its
    handler (a `rate_limited` answer would test the limiter, not the handler)."""
    limits = Limits(
        request_burst=10**7,
        requests_per_second=10**7,
        address_request_burst=10**7,
        address_requests_per_second=10**7,
        rooms_created_burst=10**7,
        rooms_created_per_second=10**7,
        waiting_rooms_per_address=10**7,
        guess_burst=10**7,
        guesses_per_second=10**7,
        address_guess_burst=10**7,
        address_guesses_per_second=10**7,
        connection_burst=10**7,  # each hostile `hello` takes a new connection
        connections_per_second=10**7,
        chat_burst=10**7,  # every chat line the fuzzer sends reaches the checks past the limiter
        chat_lines_per_second=10**7,
        address_chat_burst=10**7,
        address_chat_lines_per_second=10**7,
    )
    srv = Server(ServerConfig(host="127.0.0.1", port=0, db_url=db_url, limits=limits))
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()


@pytest.mark.slow
@pytest.mark.parametrize("binary", [True, False], ids=["msgpack", "json"])
async def test_no_request_in_the_catalogue_causes_an_internal_error_or_a_traceback(
    roomy_server: Server, binary: bool, caplog: pytest.LogCaptureFixture
) -> None:
    server = roomy_server
    alice, bob = await Client.connect(server.url, name="alice"), await Client.connect(server.url, name="bob")
    code = (await alice.create_room("tictactoe", seat=0, public=False))["room"]
    await bob.join(code)
    game_id = server.rooms[code].core.game_id
    await server.store.create_user("carol", "long enough password")
    carol = await Client.connect(server.url, name="carol", password="long enough password")  # challenged
    waiting_seek = (await carol.seek("othello", clock={"per_move": 30}))["seek"]["id"]  # taken, cancelled
    plausible = {
        "room": code,
        "game": "tictactoe",
        "agent": "random",
        "to": "carol",
        "ladder": "none",
        "challenge": "none",
        "game_id": game_id,
        "version": 2,
        "action": 4,
        "tournament": "cup",
        "name": "cup2",
        "format": "swiss",
        "clock": {"initial": 60.0},
        "seek": waiting_seek,
        "text": "good game",
    }
    await carol.tournament_create("cup", "tictactoe", "swiss", {"initial": 60.0}, starts_in=3600)
    member = Probe(server.url, binary, {"name": "carol", "password": "long enough password"})
    probe = Probe(server.url, binary)
    failures: list[str] = []
    sent = 0
    with caplog.at_level(logging.INFO):
        for label, message in [*variants(server, plausible), *seek_sizes()]:
            hello = message["type"] == "hello"
            # tournament requests from an account, or they would stop at accounts_only
            sender = member if message["type"].startswith("tournament_") else probe
            if sender.ws is None or hello:
                await sender.close()
                await sender.open(greet=not hello)
            replies = await sender.exchange(message)
            sent += 1
            failures += [f"{label}: {r.get('message')}" for r in replies if r.get("code") == "internal_error"]
            if hello:
                await sender.close()
                sender.ws = None
    await probe.close()
    await member.close()
    for client in (alice, bob, carol):
        await client.close()
    tracebacks = [f"{r.name}: {r.getMessage()}" for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert sent > 1000
    assert not failures, failures[:20]
    assert not tracebacks, tracebacks[:20]
