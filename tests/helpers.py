"""Helpers the test modules share: playing games through a real server with real clients
(random answers, two players, a game to its end), waiting, a raw JSON client, password logins,
and rows written behind the server's back. Test modules import them from here, never from each
other."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import select
import sqlite3
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect as ws_connect

from partida.client import Client
from partida.games.prompts import Prompt
from partida.server.app import Server

# The checkout's root, and the data files tests read (tests/data/), wherever a test module sits.
REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"


def random_decider(seed: int):  # type: ignore[no-untyped-def]
    """A `decide` for `Client.play` answering at random, the same way for the same seed."""
    rng = random.Random(seed)

    def decide(update: dict[str, Any], prompt: Prompt) -> Any:
        return prompt.random_answer(rng)

    return decide


async def play_two(alice: Client, bob: Client, game: str, options: dict[str, Any] | None = None) -> list[dict]:
    """Alice opens a private room of `game` in seat 0, Bob joins, both play at random to the end;
    their final updates."""
    created = await alice.create_room(game, options, seat=0, public=False)
    code = created["room"]
    joined = await bob.join(code)
    assert joined["seat"] == 1
    return await asyncio.gather(
        alice.play(code, random_decider(1)),
        bob.play(code, random_decider(2)),
    )


async def final_update(client: Client, code: str, timeout: float = 20.0) -> dict[str, Any]:
    """The room's last update for this client, its updates before it read past."""
    while True:
        update = await client.next_update(code, timeout)
        if update["status"] == "finished":
            return update


def sqlite_path(db_url: str) -> str:
    """The file of a `sqlite+aiosqlite:///FILE` URL."""
    return db_url.split(":///", 1)[1]


def store_behind_the_back(
    db_url: str, game_id: int, index: int, seat: int, action: Any, clock: list[float] | None = None
) -> None:
    """Insert action `index` of the game as the server would have: the JSON and timestamp formats
    are those of the server's own last row of that game (there must be one)."""
    with contextlib.closing(sqlite3.connect(sqlite_path(db_url), timeout=10)) as conn:
        last = 'SELECT created_at, typeof(action) FROM actions WHERE game_id = ? ORDER BY "index" DESC LIMIT 1'
        row = conn.execute(last, (game_id,)).fetchone()
        assert row is not None, "the server has stored no action of this game yet"
        clock_text = None if clock is None else json.dumps(clock)
        conn.execute(
            'INSERT INTO actions (game_id, "index", seat, action, clock, created_at) VALUES (?, ?, ?, ?, ?, ?)',
            (game_id, index, seat, json.dumps(action), clock_text, row[0]),
        )
        conn.commit()
        # JSON text, which the column's numeric affinity turns into a number as it did the server's
        assert conn.execute(last, (game_id,)).fetchone() == row


async def update_at(client: Client, code: str, seq: int) -> dict[str, Any]:
    """The client's first update of the room at `seq` (earlier ones are read past)."""
    while True:
        update = await client.next_update(code, timeout=5)
        if update["seq"] == seq:
            return update
        assert update["seq"] < seq, update


async def two_players(server: Server, clock: dict[str, Any] | None = None) -> tuple[Client, Client, str]:
    """Alice (seat 0) and Bob in a started game of tic-tac-toe where Alice took the centre-left
    cell (3): Bob's turn, at move 1. Returns both and the room code."""
    alice = await Client.connect(server.url, name="alice")
    bob = await Client.connect(server.url, name="bob")
    code = (await alice.create_room("tictactoe", seat=0, public=False, clock=clock))["room"]
    await bob.join(code)
    await alice.act(code, 3, seq=0)
    await update_at(alice, code, 1)
    await update_at(bob, code, 1)
    return alice, bob, code


async def make_bot(server: Server, name: str) -> str:
    """A new bot account; its token."""
    _, token = await server.store.create_bot(name)
    return token


async def wait_for(check: Callable[[], Awaitable[bool]], what: str, timeout: float = 60.0) -> None:
    """Poll `check` until it holds; fail naming `what` after `timeout` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await check():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def seat_bot(server: Any, runners: Any, name: str, agent: str, **params: Any) -> None:
    """A bot account `name` running `agent` (the `runners` fixture), connected before the test
    seats it by name."""
    await runners(name, agent, params=params)

    async def connected() -> bool:
        return name in {s.identity.name for s in server.bot_sessions()}

    await wait_for(connected, f"bot {name} to connect", timeout=20)


class Raw:
    """A JSON client with no SDK in between: every message as the server sent it."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.seen: list[dict[str, Any]] = []
        self.ids = 0

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.ids += 1
        await self.ws.send(json.dumps({"type": kind, "id": self.ids, **fields}))
        while True:
            message = await self.next()
            if message.get("id") == self.ids:
                return message

    async def next(self) -> dict[str, Any]:
        message = json.loads(await asyncio.wait_for(self.ws.recv(), 10))
        self.seen.append(message)
        return message


async def play_to_the_end(connect, game: str, seats: int) -> int:
    """A public game of `game` played at random by `seats` guests; its id."""
    players = [await connect(name=f"p{i}") for i in range(seats)]
    created = await players[0].create_room(game, seat=0, seats=seats, public=True)
    code = created["room"]
    for p in players[1:]:
        await p.join(code)
    finals = await asyncio.gather(*(p.play(code, random_decider(i + 7)) for i, p in enumerate(players)))
    return finals[0]["game_id"]


def local_states(server: Server, record: dict):  # type: ignore[no-untyped-def]
    """The game re-run here from the revealed seed: the full state before and after each move."""
    game = server.registry.get(record["game"])
    state = game.create(record["options"], seed=int(record["seed"]), seats=record["seats_count"])
    yield state
    for move in record["log"]:
        state.apply(move["seat"], move["action"])
        yield state


async def login(url: str, address: str, name: str, password: str) -> dict[str, Any]:
    """One password login from the loopback address `address`; the server's reply."""
    async with ws_connect(url, local_addr=(address, 0)) as ws:
        await ws.send(json.dumps({"type": "hello", "version": 2, "name": name, "password": password}))
        return json.loads(await asyncio.wait_for(ws.recv(), 60))


async def guess_forever(url: str, address: str) -> None:
    """Guess ada's password from `address` until cancelled (run by a process of its own)."""
    while True:
        with contextlib.suppress(Exception):
            await login(url, address, "ada", "wrong guess")
        await asyncio.sleep(0.05)  # the guessers share the server's event loop here: leave it room


def read_until(fd: int, pattern: str, seconds: float = 30) -> str:
    """What a terminal (a pty's master `fd`) shows until `pattern` appears in it."""
    seen = b""
    deadline = time.monotonic() + seconds
    while re.search(pattern, plain(seen)) is None:
        assert time.monotonic() < deadline, seen.decode(errors="replace")
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                seen += os.read(fd, 4096)
            except OSError:
                break
    return plain(seen)


def plain(output: bytes) -> str:
    """Terminal output without its colour and cursor sequences."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", output.decode(errors="replace"))


async def rated_results(store: Any, pairs: list[tuple[str, str]], clock: dict[str, Any]) -> None:
    """Rated two-seat games of tic-tac-toe stored and rated as the server would: each pair is
    (winner, loser), accounts made as first named (password NAME + " horse battery")."""
    ids: dict[str, int] = {}
    for n, pair in enumerate(pairs):
        for name in pair:
            if name not in ids:
                ids[name] = (await store.create_user(name, f"{name} horse battery")).id
        winner, loser = pair
        game_id = await store.create_game("tictactoe", {}, n, "hash", 2, f"R{n}", False, clock=clock, rated=True)
        await store.start_game(game_id, [(0, ids[winner], winner), (1, ids[loser], loser)])
        await store.finish_game(game_id, {"scores": [1, 0], "ranks": [1, 2], "winners": [0]})
        assert await store.rate_game(game_id)


# Text a person may type that a page must show as text, never run or parse as markup: chat lines,
# names. The last is the fuzz catalogue's bidi and zero-width string (tests/server/test_server_fuzz.py).
XSS_PAYLOADS = (
    "<script>window.__xss = 1</script>",
    '<img src=x onerror="window.__xss = 2">',
    '"><svg onload="window.__xss = 3">',
    '<a href="javascript:window.__xss = 4">link</a>',
    "&lt;b&gt;not bold&lt;/b&gt; {{7*7}} ${7*7}",
    "é\u202e\u200b" * 5,
)


@contextlib.contextmanager
def reachable_directory(prefix: str = "partida-hosted-"):  # type: ignore[no-untyped-def]
    """A fresh directory that every user can pass through, removed afterwards: hosted bots'
    bundles go there, since the sandbox runs their programs as nobody, and pytest's own
    temporary directories are closed to others."""
    import shutil
    import tempfile

    directory = Path(tempfile.mkdtemp(prefix=prefix))
    directory.chmod(0o755)
    try:
        yield directory
    finally:
        for root, dirs, _ in os.walk(directory):
            for name in dirs:
                os.chmod(os.path.join(root, name), 0o755)
        shutil.rmtree(directory, ignore_errors=True)
