"""Several nodes on one PostgreSQL database (a pytest plugin, registered in conftest.py): a node's
configuration, `three` started nodes sharing a Mosquitto broker, and a bot or a user connected to
one node only."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from partida.bots.runner import BotRunner
from partida.client import Client
from partida.server.app import Server, ServerConfig
from tests.services import free_port
from tests.storage_fixtures import fresh_database

LEASE = 1.5


def node_config(url: str, name: str, mqtt: str | None = None) -> ServerConfig:
    port = free_port()
    public_url = f"ws://127.0.0.1:{port}"
    return ServerConfig(
        port=port, db_url=url, mqtt_url=mqtt, node=name, public_url=public_url, lease=LEASE, abandon_after=60
    )


PASSWORD = "correct horse battery"


@pytest.fixture
async def three(postgres, mosquitto) -> AsyncIterator[list[Server]]:  # type: ignore[no-untyped-def]
    url = fresh_database(postgres, "nodes_reach")
    started: list[Server] = []
    try:
        for name in ("a", "b", "c"):
            server = Server(node_config(url, name, mosquitto.url))
            await server.start()
            started.append(server)
            assert await server.bus.wait_connected(10)  # type: ignore[union-attr]
        yield started
    finally:
        for server in reversed(started):
            with contextlib.suppress(Exception):
                await server.stop()


async def bot_on(server: Server, name: str, **kwargs: Any) -> asyncio.Task[None]:
    """A user-run bot account playing random moves, connected to `server` only."""
    _, token = await server.store.create_bot(name)
    task = asyncio.create_task(BotRunner(server.url, "random", token=token, **kwargs).run(reconnect=False))
    for _ in range(200):
        if any(s.identity and s.identity.name == name for s in server.sessions):
            return task
        await asyncio.sleep(0.02)
    raise AssertionError(f"the bot {name} did not connect")


async def user_on(server: Server, name: str) -> Client:
    with contextlib.suppress(Exception):
        await server.store.create_user(name, PASSWORD)
    return await Client.connect(server.url, name=name, password=PASSWORD)
