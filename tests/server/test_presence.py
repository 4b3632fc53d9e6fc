"""A node's presence (server/presence.py) with fake ports: a directory that keeps its rows in
memory, and the in-process bus standing in for the broker between nodes (a message another node
would publish is published on it; what this node sends is read from it)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from partida.games.registry import default_registry
from partida.protocol import ErrorCode, ProtocolError
from partida.server.account_presence import RemoteChallenge, SingleNodePresence
from partida.server.challenges import Challenge, Challenges
from partida.server.events import EventBus, Subscription
from partida.server.live_nodes import LiveNodes
from partida.server.presence import Presence
from partida.server.publisher import Publisher
from partida.storage.nodes import Presence as Where
from tests.fakes import Connection

HERE = "ws://a:1"
THERE = "ws://b:1"


class Directory:
    """The shared directory's account rows, in memory: this node's, and other nodes' as given."""

    def __init__(self) -> None:
        self.rows: dict[int, tuple[str, str, str]] = {}  # account id -> (node, name, kind), this node's
        self.elsewhere: list[Where] = []  # other nodes' rows
        self.urls = [HERE, THERE]  # the live nodes' URLs
        self.urls_read = 0
        self.forgotten = asyncio.Event()

    async def arrived(self, node: str, account_id: int, name: str, kind: str, agent: Any, games: Any) -> None:
        self.rows[account_id] = (node, name, kind)

    async def left(self, node: str, account_ids: list[int] | None = None) -> None:
        for account_id in [a for a, row in self.rows.items() if row[0] == node]:
            if account_ids is None or account_id in account_ids:
                del self.rows[account_id]
        self.forgotten.set()

    async def connected(self, name: str, exclude_node: str) -> list[Where]:
        return [w for w in self.elsewhere if w.name.lower() == name.lower() and w.node != exclude_node]

    async def live_urls(self) -> list[str]:
        self.urls_read += 1
        return list(self.urls)


class Node:
    def __init__(self, bus: EventBus, broker: bool = True) -> None:
        self.bus = bus
        self.directory = Directory()
        self.challenges = Challenges()
        self.live = LiveNodes([HERE])
        self.presence = Presence("a", HERE, self.live, default_registry(), Publisher(bus), self.challenges)
        self.broker = broker

    async def start(self) -> None:
        await self.presence.start(self.directory, self.bus if self.broker else None)  # type: ignore[arg-type]

    async def from_node_b(self, kind: str, **fields: Any) -> None:
        """A message node b publishes to this node."""
        await self.bus.publish(f"partida/nodes/a/{kind}", {"type": kind, "node": "b", "url": THERE, **fields})


@pytest.fixture
async def node() -> AsyncIterator[Node]:
    async with EventBus() as bus:
        node = Node(bus)
        await node.start()
        yield node
        await node.presence.stop()


async def told(subscription: Subscription) -> dict[str, Any]:
    async with asyncio.timeout(10):
        async for event in subscription:
            return {"topic": event.topic, **event.payload}
    raise AssertionError("the subscription ended")


def bob_on_b(kind: str = "user", agent: str | None = None, games: list[str] | None = None) -> Where:
    return Where("b", THERE, 7, "bob", kind, agent, games)


async def test_an_account_is_findable_from_its_hello_to_its_last_connection(node: Node) -> None:
    first, second = Connection("ada", account_id=1), Connection("ada", account_id=1)
    await node.presence.arrived(first)
    await node.presence.arrived(second)
    assert node.directory.rows == {1: ("a", "ada", "user")}
    node.presence.departed(first)
    assert node.directory.rows == {1: ("a", "ada", "user")}  # one connection is still here
    node.directory.forgotten.clear()
    node.presence.departed(second)
    await node.directory.forgotten.wait()
    assert node.directory.rows == {}


async def test_start_forgets_the_accounts_of_the_nodes_last_life() -> None:
    async with EventBus() as bus:
        node = Node(bus)
        node.directory.rows[3] = ("a", "old", "user")
        node.directory.rows[4] = ("b", "other", "user")
        await node.start()
        assert node.directory.rows == {4: ("b", "other", "user")}
        node.directory.rows[5] = ("a", "ada", "user")
        await node.presence.stop()
        assert node.directory.rows == {4: ("b", "other", "user")}  # its accounts leave with it


async def test_nobody_is_found_elsewhere_without_a_broker_to_reach_them() -> None:
    async with EventBus() as bus:
        node = Node(bus, broker=False)
        await node.start()
        node.directory.elsewhere = [bob_on_b()]
        assert await node.presence.elsewhere("bob") == []
        assert await node.presence.summon("bob", "tictactoe") is None
        await node.presence.stop()


async def test_a_bot_elsewhere_is_summoned_here_and_comes(node: Node) -> None:
    node.directory.elsewhere = [bob_on_b("bot")]
    sent = node.bus.subscribe("partida/nodes/b/#")
    summoning = asyncio.create_task(node.presence.summon("BOB", "tictactoe"))
    message = await told(sent)
    assert message == {"topic": "partida/nodes/b/summon", "type": "summon", "account_id": 7, "url": HERE, "node": "a"}
    bot = Connection("bob", "bot", 7)
    await node.presence.arrived(bot)  # its hello here
    assert await summoning is bot


async def test_a_bot_that_does_not_play_the_game_is_not_summoned(node: Node) -> None:
    node.directory.elsewhere = [bob_on_b("bot", games=["othello"])]
    sent = node.bus.subscribe("partida/nodes/b/#")
    with pytest.raises(ProtocolError) as refused:
        await node.presence.summon("bob", "tictactoe")
    assert refused.value.code == ErrorCode.BOT_DECLINES
    await node.bus.publish("partida/nodes/b/mark", {})
    assert (await told(sent))["topic"] == "partida/nodes/b/mark"  # no summons went before it
    assert await node.presence.summon("nobody", "tictactoe") is None  # connected nowhere else


async def test_a_bot_here_is_told_of_a_summons_from_a_live_node(node: Node) -> None:
    bot, person = Connection("bob", "bot", 7), Connection("carol", "user", 8)
    await node.presence.arrived(bot)
    await node.presence.arrived(person)
    await node.from_node_b("summon", account_id=7)
    assert await bot.next() == {"type": "summon", "url": THERE}
    await node.from_node_b("summon", account_id=8)  # a person is never summoned
    await node.from_node_b("summon", account_id=7)
    assert await bot.next() == {"type": "summon", "url": THERE}
    assert person.inbox.empty()


async def test_a_message_naming_no_live_node_is_ignored_and_counted(node: Node) -> None:
    bot = Connection("bob", "bot", 7)
    await node.presence.arrived(bot)
    assert node.live.urls == [HERE]  # node b started after this node last read the list
    await node.from_node_b("summon", account_id=7)
    assert await bot.next() == {"type": "summon", "url": THERE}
    assert node.presence.node_urls == [HERE, THERE]  # read again, and `welcome` names it too
    forged = {"type": "summon", "node": "x", "url": "ws://evil:1", "account_id": 7}
    await node.bus.publish("partida/nodes/a/summon", forged)
    await node.from_node_b("summon", account_id=7)
    assert await bot.next() == {"type": "summon", "url": THERE}  # not sent to evil first
    assert node.presence.forged == 1


async def test_a_challenge_from_another_node_is_held_for_its_account_and_declined_back(node: Node) -> None:
    ada, eve = Connection("ada", account_id=1), Connection("eve", account_id=2)
    await node.presence.arrived(ada)
    await node.presence.arrived(eve)
    data = {"id": "c1", "from": {"name": "bob", "kind": "user"}, "to": "ada", "game": "tictactoe"}
    await node.from_node_b("challenge", challenge=data, account_id=1)
    assert await ada.next() == {"type": "challenge", "challenge": data}
    remote = node.presence.holds("c1", ada)
    assert isinstance(remote, RemoteChallenge) and (remote.node, remote.url) == ("b", THERE)
    assert node.presence.holds("c1", eve) is None  # not to her
    assert node.presence.holds("c2", ada) is None
    sent = node.bus.subscribe("partida/nodes/b/#")
    await node.presence.decline(ada, 5, "c1", remote)
    assert await told(sent) == {
        "topic": "partida/nodes/b/declined",
        "type": "declined",
        "challenge": "c1",
        "by": "ada",
        "reason": "declined",
        "node": "a",
    }
    assert await ada.next() == {"type": "challenge_declined", "id": 5, "challenge": "c1", "by": "ada"}
    assert node.presence.holds("c1", ada) is None


async def test_a_challenge_for_someone_gone_is_declined_back_at_once(node: Node) -> None:
    sent = node.bus.subscribe("partida/nodes/b/#")
    data = {"id": "c1", "to": "ada", "game": "tictactoe"}
    await node.from_node_b("challenge", challenge=data, account_id=1)
    assert await told(sent) == {
        "topic": "partida/nodes/b/declined",
        "type": "declined",
        "challenge": "c1",
        "by": "ada",
        "reason": "not connected",
        "node": "a",
    }


async def test_a_challenge_goes_to_every_node_the_person_is_on_and_ends_when_all_say_gone(node: Node) -> None:
    challenger = Connection("ada", account_id=1)
    game = default_registry().get("tictactoe")
    challenge = Challenge(challenger, 7, "bob", game, {}, 2, None)
    node.challenges.add(challenge)
    sent = node.bus.subscribe("partida/nodes/+/challenge")
    elsewhere = [bob_on_b(), Where("c", "ws://c:1", 7, "bob", "user", None, None)]
    await node.presence.forward(challenge, elsewhere)
    first, second = await told(sent), await told(sent)
    assert [first["topic"], second["topic"]] == ["partida/nodes/b/challenge", "partida/nodes/c/challenge"]
    assert first["challenge"] == challenge.to_data() and first["url"] == HERE and first["account_id"] == 7
    assert challenge.nodes == {"b", "c"}
    await node.bus.publish(
        "partida/nodes/a/declined",
        {"type": "declined", "challenge": challenge.id, "by": "bob", "reason": "not connected", "node": "b"},
    )
    await node.bus.publish(
        "partida/nodes/a/declined",
        {"type": "declined", "challenge": challenge.id, "by": "bob", "reason": "declined", "node": "c"},
    )
    assert await challenger.next() == {
        "type": "challenge_declined",
        "challenge": challenge.id,
        "by": "bob",
        "reason": "declined",
    }
    assert challenge.id not in node.challenges.open
    assert challenger.inbox.empty()  # the first, from a node bob had left, told nothing


async def test_a_single_server_finds_nobody_elsewhere() -> None:
    presence = SingleNodePresence()
    ada = Connection("ada", account_id=1)
    await presence.arrived(ada)
    presence.departed(ada)
    assert presence.node_urls is None  # its welcome names no nodes
    assert await presence.elsewhere("ada") == []
    assert await presence.summon("bob", "tictactoe") is None
    assert presence.holds("c1", ada) is None
    remote = RemoteChallenge("b", THERE, 1)
    await presence.decline(ada, 1, "c1", remote)
    assert ada.inbox.empty()
