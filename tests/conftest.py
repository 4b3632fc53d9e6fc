"""Fixtures: a real server on a loopback port with its own SQLite file, real SDK clients, and
in-process bot runners that connect over the websocket like any bot."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from partida.bots.runner import BotRunner
from partida.client import Client
from partida.server.app import Server, ServerConfig
from partida.server.limits import Limits

pytest_plugins = ["tests.services", "tests.storage_fixtures", "tests.node_fixtures"]

# The markers (see pyproject.toml) that the shared fixtures imply, so that a test is marked by
# what it uses wherever its file lives; the rest are written on the test or its module.
FIXTURE_MARKS = {
    "postgres": "postgres",
    "pg_cluster": "postgres",
    "pg_shared": "postgres",
    "mosquitto": "mqtt",
    "browser": "browser",
}
# Fixtures run once per backend (tests/storage_fixtures.py): only their "postgresql" run needs a cluster.
BACKEND_FIXTURES = ("storage_url", "empty_url")
# What `--quick` leaves out: every test that needs real time, a program of its own, a service or
# a browser, or many seconds of work.
QUICK_EXCLUDES = ("realtime", "processes", "postgres", "mqtt", "browser", "slow")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--quick",
        action="store_true",
        help=f"leave out the tests marked {', '.join(QUICK_EXCLUDES)} (the suite to run before every commit)",
    )


# The audit events by which a process starts another program or a copy of itself.
SPAWN_EVENTS = ("subprocess.Popen", "os.posix_spawn", "os.fork")
# A server's SQLite writer is a process of its own that every server test starts; it is part of
# the server under test, not a program a test runs.
OWN_PARTS = ("partida.storage.sqlite_process",)
_spawned: list[str] | None = None  # under --quick, while a test runs: the programs it started


def _audit_spawns(event: str, args: tuple[Any, ...]) -> None:
    if _spawned is None or event not in SPAWN_EVENTS:
        return
    argv = [str(word) for word in args[1]] if event != "os.fork" and isinstance(args[1], (list, tuple)) else []
    if not any(part in argv for part in OWN_PARTS):
        _spawned.append(" ".join(argv)[:200] or event)


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("quick"):
        sys.addaudithook(_audit_spawns)  # a hook cannot be removed: it is idle outside a test


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Any:
    global _spawned
    if item.config.getoption("quick"):
        _spawned = []
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """Under --quick, fail a test that started a program: it must carry the `processes` marker,
    or the quick run would silently grow slow again."""
    global _spawned
    try:
        return (yield)
    finally:
        spawned, _spawned = _spawned, None
        if spawned:
            pytest.fail(f"started {spawned[0]!r} ({len(spawned)} in all): mark it `processes`", pytrace=False)


@pytest.hookimpl(tryfirst=True)  # before `-m` reads the markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        needs = {FIXTURE_MARKS[name] for name in getattr(item, "fixturenames", ()) if name in FIXTURE_MARKS}
        callspec = getattr(item, "callspec", None)
        if callspec is not None and any(callspec.params.get(name) == "postgresql" for name in BACKEND_FIXTURES):
            needs.add("postgres")
        for marker in sorted(needs):
            item.add_marker(marker)
    if config.getoption("quick"):
        left_out = [item for item in items if any(item.get_closest_marker(name) for name in QUICK_EXCLUDES)]
        if left_out:
            config.hook.pytest_deselected(items=left_out)
            dropped = set(left_out)
            items[:] = [item for item in items if item not in dropped]


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
