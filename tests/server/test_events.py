"""The event bus: MQTT-style topic matching, in-process delivery that never blocks a publisher, and
the MQTT bus against a real Mosquitto broker, including a broker restart."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import aiomqtt
import pytest

from partida.server.events import (
    Event,
    EventBus,
    MqttEventBus,
    MqttSettings,
    Subscription,
    open_bus,
    parse_mqtt_url,
    topic_matches,
)
from tests.fixtures.programs import Mosquitto, free_port, start_mosquitto


async def take(subscription: Subscription, count: int, timeout: float = 10.0) -> list[Event]:
    """The next ``count`` events of a subscription; fails the test if they do not come in time."""

    async def collect() -> list[Event]:
        return [await anext(subscription) for _ in range(count)]

    return await asyncio.wait_for(collect(), timeout)


# Topic patterns.


@pytest.mark.parametrize(
    ("pattern", "topic", "expected"),
    [
        ("partida/lobby/room_created", "partida/lobby/room_created", True),
        ("partida/lobby/room_created", "partida/lobby/room_closed", False),
        ("partida/rooms/+/action", "partida/rooms/ABCD/action", True),
        ("partida/rooms/+/action", "partida/rooms/ABCD/game_over", False),
        ("partida/rooms/+/action", "partida/rooms/AB/CD/action", False),  # '+' is exactly one level
        ("partida/rooms/+", "partida/rooms/", True),  # an empty level is still a level
        ("partida/#", "partida/rooms/ABCD/action", True),
        ("partida/#", "partida", True),  # '#' also matches the parent level
        ("partida/#", "partidas/lobby", False),
        ("#", "partida/lobby/room_created", True),
        ("+/lobby/+", "partida/lobby/room_closed", True),
        ("#", "$SYS/broker/uptime", False),  # wildcards do not reach broker internals
        ("partida/rooms/+/action", "partida/rooms/ABCD/action/extra", False),
    ],
)
def test_topic_patterns_follow_mqtt_rules(pattern: str, topic: str, expected: bool) -> None:
    assert topic_matches(pattern, topic) is expected


@pytest.mark.parametrize("pattern", ["", "partida/#/action", "partida/room+", "partida/ro#"])
def test_a_malformed_pattern_is_refused_with_a_sentence(pattern: str) -> None:
    with pytest.raises(ValueError, match="pattern"):
        EventBus().subscribe(pattern)


@pytest.mark.parametrize("topic", ["", "partida/+/action", "partida/#"])
async def test_publishing_to_a_wildcard_topic_is_refused(topic: str) -> None:
    with pytest.raises(ValueError, match="cannot publish"):
        await EventBus().publish(topic, {"type": "x"})


# The in-process bus.


async def test_a_subscriber_receives_the_matching_events_in_publish_order() -> None:
    bus = EventBus()
    actions = bus.subscribe("partida/rooms/+/action")
    for seq in range(1, 6):
        await bus.publish("partida/rooms/ABCD/action", {"type": "action", "seq": seq})
        await bus.publish("partida/lobby/room_created", {"type": "room_created"})  # not matched
    events = await take(actions, 5)
    assert [e.payload["seq"] for e in events] == [1, 2, 3, 4, 5]
    assert {e.topic for e in events} == {"partida/rooms/ABCD/action"}
    assert actions.pending() == 0


async def test_the_bus_says_whether_a_topic_has_a_subscriber() -> None:
    """Rooms skip building an event nobody would receive (the public view after every move)."""
    bus = EventBus()
    assert not bus.wants("partida/rooms/ABCD/action")
    endings = bus.subscribe("partida/rooms/+/game_over")
    assert not bus.wants("partida/rooms/ABCD/action")
    assert bus.wants("partida/rooms/ABCD/game_over")
    everything = bus.subscribe("partida/#")
    assert bus.wants("partida/rooms/ABCD/action")
    everything.close()
    endings.close()
    assert not bus.wants("partida/rooms/ABCD/game_over")


async def test_every_subscriber_gets_the_events_its_pattern_selects() -> None:
    bus = EventBus()
    everything = bus.subscribe("partida/#")
    lobby = bus.subscribe("partida/lobby/+")
    room = bus.subscribe("partida/rooms/WXYZ/#")
    published = [
        ("partida/lobby/room_created", {"type": "room_created", "room": "WXYZ"}),
        ("partida/rooms/WXYZ/game_started", {"type": "game_started", "room": "WXYZ"}),
        ("partida/rooms/WXYZ/game_over", {"type": "game_over", "room": "WXYZ"}),
        ("partida/lobby/room_closed", {"type": "room_closed", "room": "WXYZ"}),
    ]
    for topic, payload in published:
        await bus.publish(topic, payload)
    assert [(e.topic, e.payload) for e in await take(everything, 4)] == published
    assert [e.payload["type"] for e in await take(lobby, 2)] == ["room_created", "room_closed"]
    assert [e.payload["type"] for e in await take(room, 2)] == ["game_started", "game_over"]


async def test_a_slow_subscriber_loses_its_oldest_events_without_blocking_the_publisher() -> None:
    bus = EventBus()
    slow = bus.subscribe("partida/#", queue_size=10)
    fast = bus.subscribe("partida/#", queue_size=2000)
    for seq in range(1000):  # nobody reads meanwhile: each publish must still return
        await bus.publish("partida/rooms/ABCD/action", {"seq": seq})
    assert slow.missed == 990
    assert [e.payload["seq"] for e in await take(slow, 10)] == list(range(990, 1000))
    assert fast.missed == 0
    assert [e.payload["seq"] for e in await take(fast, 1000)] == list(range(1000))


async def test_a_subscriber_waiting_for_events_wakes_up_when_one_is_published() -> None:
    bus = EventBus()
    subscription = bus.subscribe("partida/lobby/#")
    waiting = asyncio.create_task(take(subscription, 1))
    await asyncio.sleep(0)  # let it start waiting on an empty queue
    await bus.publish("partida/lobby/room_created", {"type": "room_created"})
    assert (await waiting)[0].payload == {"type": "room_created"}


async def test_leaving_a_subscription_unsubscribes_it() -> None:
    bus = EventBus()
    async with bus.subscribe("partida/#") as subscription:
        await bus.publish("partida/lobby/room_created", {"n": 1})
    await bus.publish("partida/lobby/room_created", {"n": 2})  # after leaving: not delivered
    assert subscription.closed
    assert [e.payload async for e in subscription] == [{"n": 1}]


async def test_closing_the_bus_ends_every_iteration_and_refuses_new_events() -> None:
    bus = EventBus()
    subscription = bus.subscribe("partida/#")
    reader = asyncio.create_task(asyncio.wait_for(_drain(subscription), 5))
    await bus.publish("partida/lobby/room_created", {"n": 1})
    await bus.close()
    assert await reader == [{"n": 1}]
    with pytest.raises(RuntimeError, match="closed"):
        await bus.publish("partida/lobby/room_created", {"n": 2})


async def _until(condition: Callable[[], bool]) -> None:
    while not condition():
        await asyncio.sleep(0.01)


async def _drain(subscription: Subscription) -> list[dict[str, Any]]:
    return [event.payload async for event in subscription]


# Configuration.


async def test_without_a_url_the_bus_is_in_process() -> None:
    bus = await open_bus(None)
    assert type(bus) is EventBus


def test_an_mqtt_url_gives_host_port_credentials_and_prefix() -> None:
    assert parse_mqtt_url("mqtt://broker.local") == MqttSettings(host="broker.local", port=1883)
    assert parse_mqtt_url("mqtt://u%40x:p%2Fw@10.0.0.5:1884/staging/partida") == MqttSettings(
        host="10.0.0.5", port=1884, username="u@x", password="p/w", prefix="staging/partida"
    )
    assert parse_mqtt_url("mqtts://broker.local").port == 8883


@pytest.mark.parametrize(
    "url",
    ["http://broker:1883", "mqtt://", "mqtt://broker:notaport", "mqtt://broker:1883/a/+", "mqtt://broker?x=1", "1883"],
)
async def test_a_bad_mqtt_url_is_refused_with_a_sentence(url: str) -> None:
    with pytest.raises(ValueError, match="bad MQTT URL"):
        await open_bus(url)


def test_a_topic_prefix_replaces_the_partida_level_on_the_broker() -> None:
    bus = MqttEventBus(MqttSettings(host="localhost", prefix="staging/partida"))
    assert bus.broker_topic("partida/rooms/ABCD/action") == "staging/partida/rooms/ABCD/action"
    assert bus.local_topic("staging/partida/rooms/ABCD/action") == "partida/rooms/ABCD/action"
    assert bus.broker_pattern("partida/rooms/+/game_over") == "staging/partida/rooms/+/game_over"
    assert bus.broker_pattern("+/lobby/#") == "staging/partida/lobby/#"
    assert bus.broker_pattern("#") == "staging/partida/#"


# The MQTT bus, against a real broker.


@pytest.fixture(scope="module")
def broker() -> Iterator[Mosquitto]:
    with start_mosquitto() as mosquitto:
        yield mosquitto


async def _connected_bus(broker: Mosquitto) -> AsyncIterator[MqttEventBus]:
    bus = await open_bus(broker.url)
    assert isinstance(bus, MqttEventBus)
    assert await bus.wait_connected(10)
    yield bus
    await bus.close()


mqtt_bus = pytest.fixture(name="mqtt_bus")(_connected_bus)
other_bus = pytest.fixture(name="other_bus")(_connected_bus)  # a second node's bus on the same broker


def sample_payload(seq: int) -> dict[str, Any]:
    """Payloads with the JSON shapes events use: nested objects, lists, unicode, floats, null."""
    return {
        "type": "action",
        "room": "ABCD",
        "game_id": 42,
        "time": 1700000000.25 + seq,
        "seq": seq,
        "seat": seq % 2,
        "action": {"cell": [seq % 3, seq // 3], "note": "élan ♞", "pass": None},
    }


@pytest.mark.mqtt
async def test_a_plain_mqtt_client_receives_every_event_with_its_payload_intact(
    broker: Mosquitto, mqtt_bus: MqttEventBus
) -> None:
    async with aiomqtt.Client("127.0.0.1", broker.port) as listener:
        await listener.subscribe("partida/#", qos=1)
        published = [("partida/rooms/ABCD/action", sample_payload(seq)) for seq in range(200)]
        published.append(("partida/lobby/room_closed", {"type": "room_closed", "room": "ABCD"}))
        for topic, payload in published:
            await mqtt_bus.publish(topic, payload)

        async def collect() -> list[tuple[str, dict[str, Any]]]:
            received = []
            async for message in listener.messages:
                received.append((message.topic.value, json.loads(message.payload)))  # type: ignore[arg-type]
                if len(received) == len(published):
                    return received
            return received

        assert await asyncio.wait_for(collect(), 20) == published


@pytest.mark.mqtt
async def test_bus_subscribers_on_two_nodes_each_see_every_event_exactly_once(
    mqtt_bus: MqttEventBus, other_bus: MqttEventBus
) -> None:
    here = mqtt_bus.subscribe("partida/rooms/#")
    there = other_bus.subscribe("partida/rooms/#")
    for bus in (mqtt_bus, other_bus):  # each bus subscribes on the broker to what it is asked for
        assert await bus.subscribed("partida/rooms/#", timeout=10)
    for seq in range(50):
        await mqtt_bus.publish("partida/rooms/HERE/action", sample_payload(seq))
    for seq in range(50):
        await other_bus.publish("partida/rooms/THERE/action", sample_payload(seq))
    for subscription in (here, there):
        events = await take(subscription, 100)
        for room in ("HERE", "THERE"):
            stream = [e.payload for e in events if e.topic == f"partida/rooms/{room}/action"]
            assert stream == [sample_payload(seq) for seq in range(50)]

    # Once the broker has acknowledged everything, a probe sent after it arrives next: had the
    # broker echoed a node's own events back, the copies would have come before the probe.
    await asyncio.wait_for(_until(lambda: mqtt_bus.sent == 50 and other_bus.sent == 50), 10)
    await other_bus.publish("partida/rooms/PROBE/action", {"type": "probe"})
    assert [e.topic for e in await take(here, 1)] == ["partida/rooms/PROBE/action"]
    assert [e.topic for e in await take(there, 1)] == ["partida/rooms/PROBE/action"]


@pytest.mark.mqtt
async def test_a_bus_receives_from_the_broker_only_what_its_subscribers_want(
    mqtt_bus: MqttEventBus, other_bus: MqttEventBus
) -> None:
    room_x = mqtt_bus.subscribe("partida/rooms/X/#")
    also_x = mqtt_bus.subscribe("partida/rooms/X/#")  # one broker subscription for both
    assert await mqtt_bus.subscribed("partida/rooms/X/#", timeout=10)
    received = mqtt_bus.received
    for room in ("Y", "X", "Y", "X"):
        await other_bus.publish(f"partida/rooms/{room}/action", {"room": room})
    assert [e.payload["room"] for e in await take(room_x, 2)] == ["X", "X"]
    assert [e.payload["room"] for e in await take(also_x, 2)] == ["X", "X"]
    assert mqtt_bus.received - received == 2  # the other room's events never came

    room_x.close()
    await other_bus.publish("partida/rooms/X/action", {"room": "X"})
    assert [e.payload["room"] for e in await take(also_x, 1)] == ["X"]  # still subscribed
    also_x.close()
    lobby = mqtt_bus.subscribe("partida/lobby/#")
    assert await mqtt_bus.subscribed("partida/lobby/#", timeout=10)
    received = mqtt_bus.received
    await other_bus.publish("partida/rooms/X/action", {"room": "X"})
    await other_bus.publish("partida/lobby/room_closed", {"room": "X"})
    assert [e.topic for e in await take(lobby, 1)] == ["partida/lobby/room_closed"]
    assert mqtt_bus.received - received == 1  # unsubscribed from the room on the broker
    lobby.close()


@pytest.mark.mqtt
async def test_a_payload_that_is_not_json_fails_in_the_publishers_hands(mqtt_bus: MqttEventBus) -> None:
    with pytest.raises(TypeError):
        await mqtt_bus.publish("partida/lobby/room_created", {"when": object()})


@pytest.mark.mqtt
async def test_the_bus_keeps_working_through_a_broker_restart() -> None:
    with start_mosquitto() as broker:
        bus = MqttEventBus(parse_mqtt_url(broker.url), min_backoff=0.05, max_backoff=0.5)
        other = MqttEventBus(parse_mqtt_url(broker.url), min_backoff=0.05, max_backoff=0.5)
        bus.start()
        other.start()
        local = bus.subscribe("partida/#")
        remote = other.subscribe("partida/#")
        try:
            assert await bus.wait_connected(10) and await other.wait_connected(10)
            await bus.publish("partida/rooms/ABCD/action", {"seq": 1})

            broker.stop()
            for seq in range(2, 12):  # the room goes on publishing while the broker is away
                await bus.publish("partida/rooms/ABCD/action", {"seq": seq})
            assert [e.payload["seq"] for e in await take(local, 11)] == list(range(1, 12))
            # Both have seen the broker go (a loaded machine may not have run their tasks yet), so
            # the waits below are for the new connections and their subscriptions, not the old.
            await asyncio.wait_for(_until(lambda: not bus.connected and not other.connected), 10)

            broker.start()
            assert await bus.wait_connected(20) and await other.wait_connected(20)
            async with aiomqtt.Client("127.0.0.1", broker.port) as listener:
                await listener.subscribe("partida/#", qos=1)
                await bus.publish("partida/rooms/ABCD/action", {"seq": 12})

                async def seqs_until_12() -> list[int]:
                    seqs = []
                    async for message in listener.messages:
                        seqs.append(json.loads(message.payload)["seq"])  # type: ignore[arg-type]
                        if seqs[-1] == 12:
                            break
                    return seqs

                # The listener may arrive while the backlog of the outage is being sent: it sees
                # the end of that backlog, in order, then the new event.
                seqs = await asyncio.wait_for(seqs_until_12(), 20)
                assert seqs == list(range(seqs[0], 13))
            await asyncio.wait_for(_until(lambda: bus.sent == 12), 10)
            assert bus.backlog() == 0 and bus.dropped == 0

            # The other node subscribed again before 12 was published: it receives 12 and 13.
            await bus.publish("partida/rooms/ABCD/action", {"seq": 13})
            seqs = []
            while not seqs or seqs[-1] != 13:
                seqs += [e.payload["seq"] for e in await take(remote, 1)]
            assert seqs[-2:] == [12, 13]
        finally:
            await bus.close()
            await other.close()


async def test_without_a_broker_the_bus_delivers_locally_and_keeps_only_the_newest_events() -> None:
    unreachable = MqttSettings(host="127.0.0.1", port=free_port())  # nothing listens there
    bus = MqttEventBus(unreachable, outgoing_queue=5, min_backoff=0.05)
    bus.start()
    local = bus.subscribe("partida/#")
    try:
        for seq in range(8):
            await bus.publish("partida/rooms/ABCD/action", {"seq": seq})
        assert [e.payload["seq"] for e in await take(local, 8)] == list(range(8))
        assert not await bus.wait_connected(0.3)
        assert bus.backlog() == 5 and bus.dropped == 3
    finally:
        await bus.close()
