"""Fixtures: a real server on a loopback port with its own SQLite file, real SDK clients, and
in-process bot runners that connect over the websocket like any bot."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from partida.bots.runner import BotRunner
from partida.client import Client
from partida.server.app import Server, ServerConfig
from partida.server.limits import Limits

# tests/fixtures/marking.py: the markers the shared fixtures imply, and --quick
pytest_plugins = [
    "tests.fixtures.marking",
    "tests.fixtures.programs",
    "tests.fixtures.storage",
    "tests.fixtures.nodes",
    "tests.fixtures.sandbox",
]


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'partida.db'}"


@pytest.fixture
async def server(db_url: str) -> AsyncIterator[Server]:
    srv = Server(ServerConfig(host="127.0.0.1", port=0, db_url=db_url))
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()


@pytest.fixture
async def limited(db_url: str) -> AsyncIterator[Callable[..., Awaitable[Server]]]:
    """Start servers with some limits changed (and reverse proxies trusted, if given)."""
    servers: list[Server] = []

    async def start(trusted_proxies: list[str] | None = None, **changes: Any) -> Server:
        config = ServerConfig(port=0, db_url=db_url, limits=Limits(**changes), trusted_proxies=trusted_proxies or [])
        server = Server(config)
        await server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        with contextlib.suppress(Exception):  # a test may have stopped it already
            await server.stop()


@pytest.fixture
async def connect(server: Server) -> AsyncIterator[Callable[..., Awaitable[Client]]]:
    clients: list[Client] = []

    async def make(**kwargs: object) -> Client:
        client = await Client.connect(server.url, **kwargs)  # type: ignore[arg-type]
        clients.append(client)
        return client

    yield make
    for client in clients:
        with contextlib.suppress(Exception):
            await client.close()


@pytest.fixture
async def bots(server: Server) -> AsyncIterator[Callable[..., Awaitable[None]]]:
    """Start bot runners (agent name -> connected bot) against the test server."""
    tasks: list[asyncio.Task[None]] = []
    names: list[str] = []

    async def start(*agents: str, **params: object) -> None:
        for agent in agents:
            names.append(f"test-{agent}")
            n = names.count(names[-1])
            name = names[-1] if n == 1 else f"{names[-1]}-{n}"
            _, token = await server.store.create_bot(name)  # only bot accounts are seated as bots
            runner = BotRunner(server.url, agent, name=name, token=token, params=dict(params))
            tasks.append(asyncio.create_task(runner.run(reconnect=False)))
        for _ in range(200):
            connected = {s.identity.agent for s in server.bot_sessions()}  # type: ignore[union-attr]
            if set(agents) <= connected:
                return
            await asyncio.sleep(0.02)
        raise RuntimeError(f"bots {agents} did not connect")

    yield start
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


@pytest.fixture
async def runners(server: Server) -> AsyncIterator[Callable[..., Awaitable[BotRunner]]]:
    """Start in-process bot runners under new bot accounts by name (ladder tests pass `ladders=`)."""
    tasks: list[asyncio.Task[None]] = []

    async def start(name: str, agent: str = "random", **kwargs: Any) -> BotRunner:
        _, token = await server.store.create_bot(name)
        runner = BotRunner(server.url, agent, token=token, **kwargs)
        tasks.append(asyncio.create_task(runner.run(reconnect=False)))
        return runner

    yield start
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
