"""Forged messages on the broker between nodes: anyone who can publish on an open broker could
send a bot (with its token) or a person accepting a challenge to a server of their own. A node
acts on a `summon` or `challenge` only if it names a live node of the directory (real PostgreSQL
and Mosquitto), and the SDK follows a `summon` or `moved` only to a host of its deployment."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import aiomqtt
import pytest

from partida.client import Client, ServerError
from partida.protocol import ErrorCode, ProtocolError, server_message
from partida.server.app import Server
from tests.fixtures.nodes import bot_on, user_on
from tests.fixtures.programs import free_port
from tests.helpers import REPO


class Trap:
    """A listening socket standing for the forger's server: it counts who connects."""

    def __init__(self, host: str) -> None:
        self.host, self.port = host, free_port()
        self.visits = 0
        self.server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}"

    async def __aenter__(self) -> Trap:
        async def visit(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.visits += 1
            writer.close()

        self.server = await asyncio.start_server(visit, self.host, self.port)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()


async def publish(mosquitto: Any, topic: str, payload: dict[str, Any]) -> None:
    async with aiomqtt.Client("127.0.0.1", mosquitto.port) as forger:
        await forger.publish(topic, json.dumps(payload), qos=1)


async def test_a_forged_summon_or_challenge_sends_nobody_anywhere(three: list[Server], mosquitto, caplog) -> None:
    a, b, _ = three
    bot = await bot_on(a, "tessa")
    carol = await user_on(a, "carol")
    tessa = next(s for s in a.sessions if s.identity and s.identity.name == "tessa").identity
    assert tessa is not None
    try:
        async with Trap("127.0.0.1") as trap:  # the nodes' own host: only the node's check stops it
            with caplog.at_level(logging.WARNING):
                for payload in (
                    {"type": "summon", "account_id": tessa.account_id, "url": trap.url},
                    {"type": "summon", "account_id": tessa.account_id, "url": trap.url, "node": "b"},
                    {
                        "type": "challenge",
                        "account_id": await _account_id(a, "carol"),
                        "url": trap.url,
                        "node": "b",
                        "challenge": {"id": "forged", "from": "mallory", "to": "carol", "game": "tictactoe"},
                    },
                ):
                    await publish(mosquitto, f"partida/nodes/a/{payload['type']}", payload)
                assert a.cluster is not None
                for _ in range(500):  # until a has refused all three (it takes the broker's messages in turn)
                    if a.cluster.presence.forged == 3:
                        break
                    await asyncio.sleep(0.02)
                assert a.cluster.presence.forged == 3
            assert trap.visits == 0
            assert carol.challenges.empty()
            assert any("naming no live node" in r.getMessage() for r in caplog.records)
        # the nodes' own summons still work: b seats the bot connected to a
        alice = await Client.connect(b.url, name="alice")
        code = (await alice.create_room("tictactoe", seat=0, auto_start=False, public=False))["room"]
        assert (await alice.add_bot(code, "tessa", seat=1))["seat"] == 1
        await alice.close()
    finally:
        await carol.close()
        bot.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await bot


async def _account_id(server: Server, name: str) -> int:
    session = next(s for s in server.sessions if s.identity and s.identity.name == name)
    assert session.identity is not None and session.identity.account_id is not None
    return session.identity.account_id


@pytest.fixture
async def trap_elsewhere() -> AsyncIterator[Trap]:
    async with Trap("127.0.0.2") as trap:  # another host than the server's
        yield trap


async def test_the_sdk_follows_a_summon_only_within_its_deployment(server: Server, trap_elsewhere: Trap) -> None:
    """A node that pushes a summon to another host (one that does not check the broker, or a
    broker's forgery that got through) does not get the bot's hello sent there."""
    _, token = await server.store.create_bot("tessa")
    bot = await Client.connect(server.url, token=token, agent="random")
    session = next(s for s in server.sessions if s.identity and s.identity.name == "tessa")
    session.send(server_message("summon", url=trap_elsewhere.url))
    error = await asyncio.wait_for(bot.errors.get(), 5)
    assert error["code"] == "untrusted_url"
    # the same host, another port: part of the deployment (nodes of one machine)
    session.send(server_message("summon", url=f"ws://127.0.0.1:{free_port()}"))
    error = await asyncio.wait_for(bot.errors.get(), 5)
    assert error["code"] == "connection_lost"  # tried, and nobody there
    assert trap_elsewhere.visits == 0
    await bot.close()


@pytest.mark.realtime
async def test_the_sdk_follows_moved_only_within_its_deployment(server: Server, trap_elsewhere: Trap) -> None:
    async def moved_away(session: Any, request: Any) -> None:
        raise ProtocolError(ErrorCode.MOVED, "elsewhere", details={"url": trap_elsewhere.url, "room": request.room})

    server.handlers["watch"] = moved_away
    client = await Client.connect(server.url, name="ada")
    with pytest.raises(ServerError) as refused:
        await client.watch("ABCDEF")
    assert refused.value.code == "untrusted_url"
    assert trap_elsewhere.visits == 0
    # a host the program named as a node is followed
    other = await Client.connect(server.url, name="bob", nodes=[trap_elsewhere.url])
    other.move_patience = 0.5  # the trap never answers as a node: give up soon
    with pytest.raises(ServerError) as tried:
        await other.watch("ABCDEF")
    assert tried.value.code != "untrusted_url"
    assert trap_elsewhere.visits >= 1
    await client.close()
    await other.close()


# The broker of docker-compose.yml, with its own configuration and ACL.


@pytest.fixture
def compose_broker() -> Any:
    """Mosquitto started as docker-compose.yml starts it: the repository's mosquitto.conf and
    acl, a password file made with mosquitto_passwd, on a free loopback port."""
    import shutil
    import subprocess
    import tempfile
    from pathlib import Path

    from tests.fixtures.programs import Mosquitto, ensure_debian_package

    binary = ensure_debian_package("mosquitto", "mosquitto")
    passwd_tool = shutil.which("mosquitto_passwd") or str(Path(binary).parent.parent / "bin" / "mosquitto_passwd")
    deploy = REPO / "deploy" / "mosquitto"
    directory = Path(tempfile.mkdtemp(prefix="partida-compose-broker-"))  # pytest's tmp is root-only
    broker = Mosquitto(binary, free_port(), directory)
    passwd = directory / "passwd"
    subprocess.run([passwd_tool, "-c", "-b", str(passwd), "partida", "node secret"], check=True, capture_output=True)
    shutil.copy(deploy / "acl", directory / "acl")
    conf = (deploy / "mosquitto.conf").read_text()
    conf = conf.replace("listener 1883", f"listener {broker.port} 127.0.0.1")
    conf = conf.replace("/tmp/mosquitto-passwd", str(passwd)).replace("/partida/acl", str(directory / "acl"))
    broker.config.write_text(conf)
    directory.chmod(0o755)  # mosquitto drops root for its own user, as in the container
    shutil.chown(passwd, "mosquitto")  # as the compose file's entrypoint does
    for path in (directory / "acl", broker.config):
        path.chmod(0o644)
    broker.start()
    try:
        yield broker
    finally:
        broker.close()


async def _heard(broker: Any, topic: str, publisher: dict[str, Any], reader: dict[str, Any]) -> bool:
    """Whether a message `publisher` sends on `topic` reaches `reader` subscribed to it: it would
    come before a mark the nodes publish once the broker has taken it, on a topic anyone reads
    (the broker hands a subscriber its messages in the order it took them)."""
    mark = "partida/rooms/MARK/action"
    async with aiomqtt.Client("127.0.0.1", broker.port, **reader) as listener:
        await listener.subscribe(topic, qos=1)
        await listener.subscribe(mark, qos=1)
        async with aiomqtt.Client("127.0.0.1", broker.port, **publisher) as sender:
            await sender.publish(topic, b"{}", qos=1)  # acknowledged: the broker has taken it
        async with aiomqtt.Client("127.0.0.1", broker.port, username="partida", password="node secret") as node:
            await node.publish(mark, b"{}", qos=1)
        async with asyncio.timeout(10):
            async for message in listener.messages:
                return str(message.topic) != mark
    raise AssertionError("the mark never came")


@pytest.mark.mqtt
@pytest.mark.processes
async def test_the_compose_broker_lets_only_the_nodes_publish(compose_broker: Any) -> None:
    node = {"username": "partida", "password": "node secret"}
    anyone: dict[str, Any] = {}
    assert await _heard(compose_broker, "partida/nodes/a/summon", node, node)
    assert not await _heard(compose_broker, "partida/nodes/a/summon", anyone, node)  # a forged summon
    assert not await _heard(compose_broker, "partida/nodes/a/challenge", node, anyone)  # who plays whom
    assert await _heard(compose_broker, "partida/rooms/ABCD/action", node, anyone)  # public events
    assert not await _heard(compose_broker, "partida/rooms/ABCD/action", anyone, anyone)
    with pytest.raises(aiomqtt.MqttError):
        async with aiomqtt.Client("127.0.0.1", compose_broker.port, username="partida", password="guess"):
            pass
