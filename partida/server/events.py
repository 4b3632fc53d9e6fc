"""The event bus: rooms and the lobby publish public events; spectators, dashboards and other
server nodes subscribe to them.

Two buses share one API. ``EventBus`` delivers in-process only. ``MqttEventBus`` also forwards
every event to an MQTT broker (JSON payloads, QoS 1) and delivers events that other server nodes
published there. Either way, ``publish`` never waits: a game room publishes, and a room must not
stall because a subscriber is slow or the broker is away. Each subscriber has a bounded queue that
drops its oldest events when full and counts them in ``Subscription.missed``; the MQTT forwarder
has a bounded queue of its own that does the same and counts them in ``MqttEventBus.dropped``.

    bus = await open_bus(None)                      # or open_bus("mqtt://127.0.0.1:1883")
    async with bus.subscribe("partida/rooms/+/game_over") as games_over:
        async for event in games_over:
            print(event.topic, event.payload["result"])

Topics and payloads are described in docs/events.md.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import ssl
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import TracebackType
from typing import Any
from urllib.parse import unquote, urlsplit

import aiomqtt
from paho.mqtt.subscribeoptions import SubscribeOptions

log = logging.getLogger(__name__)

ROOT = "partida"
"""Every topic the server publishes starts with this level; on a broker it becomes the prefix."""

SUBSCRIBER_QUEUE = 1000
OUTGOING_QUEUE = 10_000


@dataclass(frozen=True, slots=True)
class Event:
    """One published event. Subscribers share the payload object: treat it as read-only."""

    topic: str
    payload: dict[str, Any]


# Topics and patterns.


def check_topic(topic: str) -> None:
    """A topic to publish to: non-empty and free of wildcards (MQTT forbids them there)."""
    if not topic or "+" in topic or "#" in topic or "\0" in topic:
        raise ValueError(f"cannot publish to {topic!r}: a topic is non-empty and has no '+' or '#' wildcard.")


def check_pattern(pattern: str) -> None:
    """A subscription pattern: '+' fills one whole level, '#' only the whole last level."""
    levels = pattern.split("/")
    for i, level in enumerate(levels):
        wrong_plus = "+" in level and level != "+"
        wrong_hash = "#" in level and (level != "#" or i != len(levels) - 1)
        if not pattern or wrong_plus or wrong_hash:
            raise ValueError(
                f"bad subscription pattern {pattern!r}: '+' must fill one whole level and '#' the whole last level."
            )


def topic_matches(pattern: str, topic: str) -> bool:
    """MQTT matching: ``+`` matches exactly one level, ``#`` the rest (zero or more levels), and
    wildcards in the first level do not match topics starting with ``$`` (broker internals)."""
    return levels_match(pattern.split("/"), topic, topic.split("/"))


def levels_match(pattern_levels: list[str], topic: str, topic_levels: list[str]) -> bool:
    """`topic_matches` for a pattern and a topic already split into levels."""
    if topic[:1] == "$" and pattern_levels[0] in ("+", "#"):
        return False
    for i, level in enumerate(pattern_levels):
        if level == "#":
            return True
        if i >= len(topic_levels) or (level != "+" and level != topic_levels[i]):
            return False
    return len(pattern_levels) == len(topic_levels)


# Subscriptions.


class Subscription:
    """A subscriber's bounded queue of events matching ``pattern``.

    Iterate it (``async for event in subscription``) to receive events in publish order. When the
    subscriber falls more than ``maxlen`` events behind, the oldest are dropped and counted in
    ``missed``: the publisher never waits for a subscriber. Closing it (or leaving ``async with``)
    unsubscribes; iteration then ends once the events already queued are consumed.
    """

    def __init__(self, bus: EventBus, pattern: str, maxlen: int) -> None:
        if maxlen < 1:
            raise ValueError(f"a subscription queue holds at least one event, not {maxlen}.")
        self.pattern = pattern
        self.levels = pattern.split("/")  # split once: every publish is matched against it
        self.missed = 0
        self._bus = bus
        self._queue: collections.deque[Event] = collections.deque(maxlen=maxlen)
        self._ready = asyncio.Event()
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def pending(self) -> int:
        """How many events are queued and not yet consumed."""
        return len(self._queue)

    def deliver(self, event: Event) -> None:
        """Queue an event without ever waiting (called by the bus)."""
        if self._closed:
            return
        if len(self._queue) == self._queue.maxlen:
            self.missed += 1  # the deque drops the oldest event as we append
        self._queue.append(event)
        self._ready.set()

    def close(self) -> None:
        """Unsubscribe. Events already queued can still be read; nothing new arrives."""
        if self._closed:
            return
        self._closed = True
        self._bus._unsubscribe(self)
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[Event]:
        return self

    async def __anext__(self) -> Event:
        while not self._queue:
            if self._closed:
                raise StopAsyncIteration
            self._ready.clear()
            await self._ready.wait()
        return self._queue.popleft()

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


# The in-process bus.


class EventBus:
    """In-process publish/subscribe with MQTT-style topic patterns.

    ``publish`` hands each matching subscriber the event and returns at once; it is a coroutine so
    that buses which do I/O share the signature, but it never waits on a subscriber.
    """

    def __init__(self, subscriber_queue: int = SUBSCRIBER_QUEUE) -> None:
        self.subscriber_queue = subscriber_queue
        self._subscriptions: list[Subscription] = []
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    async def publish(self, topic: str, payload: dict[str, Any]) -> None:
        """Deliver ``payload`` under ``topic`` to every local subscriber whose pattern matches."""
        self._check_publish(topic, payload)
        self._deliver(Event(topic, payload))

    def wants(self, topic: str) -> bool:
        """Whether an event under ``topic`` would reach anyone: a publisher with a costly payload
        (every move's) builds it only then."""
        if not self._subscriptions:
            return False
        levels = topic.split("/")
        for subscription in self._subscriptions:
            if levels_match(subscription.levels, topic, levels):
                return True
        return False

    def subscribe(self, pattern: str, queue_size: int | None = None) -> Subscription:
        """Subscribe to topics matching ``pattern`` (``+`` one level, ``#`` the rest)."""
        if self._closed:
            raise RuntimeError("cannot subscribe: the event bus is closed.")
        check_pattern(pattern)
        subscription = Subscription(self, pattern, queue_size or self.subscriber_queue)
        self._subscriptions.append(subscription)
        return subscription

    async def subscribed(self, pattern: str, timeout: float | None = None) -> bool:
        """Wait until events under ``pattern`` from elsewhere reach this bus (at once here: there
        is no elsewhere); False if ``timeout`` passed first."""
        return True

    async def close(self) -> None:
        """Close every subscription (their iterations end) and refuse further publishing."""
        self._closed = True
        for subscription in list(self._subscriptions):
            subscription.close()

    async def __aenter__(self) -> EventBus:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    def _check_publish(self, topic: str, payload: dict[str, Any]) -> None:
        if self._closed:
            raise RuntimeError(f"cannot publish to {topic!r}: the event bus is closed.")
        check_topic(topic)
        if not isinstance(payload, dict):
            raise TypeError(f"an event payload is a dict (a JSON object), not {type(payload).__name__}.")

    def _deliver(self, event: Event) -> None:
        levels = event.topic.split("/")
        for subscription in self._subscriptions:
            if levels_match(subscription.levels, event.topic, levels):
                subscription.deliver(event)

    def _unsubscribe(self, subscription: Subscription) -> None:
        with contextlib.suppress(ValueError):
            self._subscriptions.remove(subscription)


# The MQTT bus.


@dataclass(frozen=True)
class MqttSettings:
    """Where the broker is, as parsed from an ``mqtt://`` URL."""

    host: str
    port: int = 1883
    username: str | None = None
    password: str | None = None
    prefix: str = ROOT
    tls: bool = False


class MqttEventBus(EventBus):
    """An ``EventBus`` that also forwards every event to an MQTT broker and delivers the events
    other nodes publish there.

    A background task owns the connection. ``publish`` delivers locally and appends the JSON-encoded
    event to a bounded queue that the task drains with QoS 1; when the broker is away the task
    reconnects with exponential backoff while the queue keeps the newest events (dropping the oldest,
    counted in ``dropped``). An event whose publication was not confirmed is sent again after the
    reconnection, so a subscriber on the broker may, rarely, see it twice (QoS 1 is at-least-once).

    On the broker, the bus subscribes to what its local subscribers want and no more (each
    pattern once, whatever the number of local subscriptions with it, and unsubscribed when the
    last one closes), so a node receives only the other nodes' events that someone on it uses.
    A new pattern takes effect once the broker acknowledges it: ``subscribed`` waits for that.
    Subscriptions use MQTT 5's *no local* option, so the broker never echoes this bus's own
    events back: a local subscriber sees each local event once, straight from ``publish``, and
    each remote event once, from the broker.

    Local topics start with ``partida/``; on the broker that first level is replaced by ``prefix``
    (several deployments can share one broker with prefixes such as ``staging/partida``).
    """

    def __init__(
        self,
        settings: MqttSettings,
        *,
        subscriber_queue: int = SUBSCRIBER_QUEUE,
        outgoing_queue: int = OUTGOING_QUEUE,
        min_backoff: float = 0.1,
        max_backoff: float = 10.0,
        publish_timeout: float = 10.0,
        max_inflight: int = 100,
    ) -> None:
        super().__init__(subscriber_queue)
        self.settings = settings
        self.node_id = uuid.uuid4().hex[:12]
        self.sent = 0
        self.received = 0
        self.dropped = 0
        self.min_backoff = min_backoff
        self.max_backoff = max_backoff
        self.publish_timeout = publish_timeout
        self.max_inflight = max_inflight
        self._outgoing: collections.deque[tuple[str, bytes]] = collections.deque(maxlen=outgoing_queue)
        self._wake = asyncio.Event()
        self._connected = asyncio.Event()
        self._patterns: dict[str, int] = {}  # local pattern -> open subscriptions with it
        self._on_broker: set[str] = set()  # local patterns the broker has acknowledged
        self._resubscribe = asyncio.Event()
        self._acknowledged = asyncio.Event()  # set (and replaced) whenever _on_broker changes
        self._task: asyncio.Task[None] | None = None

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def backlog(self) -> int:
        """Events waiting to be sent to the broker."""
        return len(self._outgoing)

    def start(self) -> None:
        """Start the background task that connects, sends and receives; reconnecting is its job."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"mqtt-bus-{self.node_id}")

    async def wait_connected(self, timeout: float | None = None) -> bool:
        """Wait until the broker connection is up and has every local subscription so far;
        False if ``timeout`` passed first."""
        try:
            async with asyncio.timeout(timeout):
                await self._connected.wait()
                while not self._patterns.keys() <= self._on_broker:
                    await self._acknowledged.wait()
        except TimeoutError:
            return False
        return True

    def wants(self, topic: str) -> bool:
        return True  # the broker's subscribers are out of sight: every event goes there

    def subscribe(self, pattern: str, queue_size: int | None = None) -> Subscription:
        subscription = super().subscribe(pattern, queue_size)
        self._patterns[pattern] = self._patterns.get(pattern, 0) + 1
        self._resubscribe.set()
        return subscription

    def _unsubscribe(self, subscription: Subscription) -> None:
        if subscription not in self._subscriptions:
            return
        super()._unsubscribe(subscription)
        left = self._patterns.get(subscription.pattern, 0) - 1
        if left > 0:
            self._patterns[subscription.pattern] = left
        else:
            self._patterns.pop(subscription.pattern, None)
            self._resubscribe.set()

    async def subscribed(self, pattern: str, timeout: float | None = None) -> bool:
        try:
            async with asyncio.timeout(timeout):
                while pattern not in self._on_broker:
                    await self._acknowledged.wait()
        except TimeoutError:
            return False
        return True

    def broker_pattern(self, pattern: str) -> str:
        """A local pattern as the broker's: its first level (``partida``, or a wildcard, since
        every local topic starts with ``partida``) becomes the prefix."""
        first, slash, rest = pattern.partition("/")
        if first == "#":
            return f"{self.settings.prefix}/#"
        return self.settings.prefix + slash + rest if first in (ROOT, "+") else pattern

    async def publish(self, topic: str, payload: dict[str, Any]) -> None:
        """Deliver locally, then queue the event for the broker; never waits for the broker.

        The payload is encoded here, so a payload that is not JSON fails in the publisher's hands
        (TypeError) rather than later in the background task.
        """
        self._check_publish(topic, payload)
        data = json.dumps(payload, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
        self._deliver(Event(topic, payload))
        if len(self._outgoing) == self._outgoing.maxlen:
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 1000 == 0:
                log.warning("MQTT outgoing queue full: %d event(s) dropped so far", self.dropped)
        self._outgoing.append((self.broker_topic(topic), data))
        self._wake.set()

    async def close(self, flush_timeout: float = 2.0) -> None:
        """Try for ``flush_timeout`` seconds to send what is queued, then disconnect."""
        await super().close()
        if self._task is None:
            return
        if self._outgoing and self.connected:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + flush_timeout
            while self._outgoing and self.connected and loop.time() < deadline:
                await asyncio.sleep(0.01)
        if self._outgoing:
            log.warning("MQTT bus closed with %d event(s) not sent to the broker", len(self._outgoing))
        await cancel_and_wait([self._task])
        self._task = None

    def broker_topic(self, topic: str) -> str:
        """``partida/rooms/X/action`` -> ``{prefix}/rooms/X/action``; other topics pass unchanged."""
        if self.settings.prefix != ROOT and (topic == ROOT or topic.startswith(ROOT + "/")):
            return self.settings.prefix + topic[len(ROOT) :]
        return topic

    def local_topic(self, topic: str) -> str:
        """The inverse of ``broker_topic``."""
        prefix = self.settings.prefix
        if prefix != ROOT and (topic == prefix or topic.startswith(prefix + "/")):
            return ROOT + topic[len(prefix) :]
        return topic

    # The background task.

    async def _run(self) -> None:
        backoff = self.min_backoff
        failures = 0
        where = f"{self.settings.host}:{self.settings.port}"
        while True:
            try:
                async with self._client() as client:
                    self._on_broker = set()
                    await self._sync_subscriptions(client)
                    self._connected.set()
                    log.info("connected to MQTT broker %s (node %s)", where, self.node_id)
                    backoff, failures = self.min_backoff, 0
                    await self._serve(client)
            except (aiomqtt.MqttError, OSError, TimeoutError) as error:
                failures += 1
                # The first failure of an outage is worth a warning; the retries are not.
                level = logging.WARNING if failures == 1 else logging.DEBUG
                log.log(level, "MQTT broker %s unavailable (%s); retrying in %.1fs", where, error, backoff)
            except Exception:  # a bug here must not silence the bus for good: log it and start over
                failures += 1
                log.exception("MQTT bus task failed; reconnecting in %.1fs", backoff)
            finally:
                self._connected.clear()
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, self.max_backoff)

    def _client(self) -> aiomqtt.Client:
        s = self.settings
        client = aiomqtt.Client(
            s.host,
            s.port,
            username=s.username,
            password=s.password,
            identifier=f"partida-{self.node_id}",
            protocol=aiomqtt.ProtocolVersion.V5,
            tls_context=ssl.create_default_context() if s.tls else None,
            timeout=self.publish_timeout,
            logger=log.getChild("aiomqtt"),
            max_inflight_messages=self.max_inflight,
        )
        client.pending_calls_threshold = self.max_inflight + 1  # our window is deliberate, not a leak
        return client

    async def _serve(self, client: aiomqtt.Client) -> None:
        """Send and receive until either side fails; the receiver notices a lost connection first."""
        tasks = [
            asyncio.create_task(self._send(client)),
            asyncio.create_task(self._receive(client)),
            asyncio.create_task(self._follow_subscriptions(client)),
        ]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                task.result()
        finally:
            await cancel_and_wait(tasks)

    async def _send(self, client: aiomqtt.Client) -> None:
        """Keep up to ``max_inflight`` publications waiting for their PUBACK at once.

        Waiting for each acknowledgement before sending the next caps a bus at about one event per
        round trip; a window keeps order (paho writes publications in call order) and lets the
        broker's acknowledgements overlap. Whatever is not acknowledged when the connection fails
        goes back to the front of the queue, in order.
        """
        inflight: dict[asyncio.Task[None], tuple[str, bytes]] = {}  # in publish order
        try:
            while True:
                for task in [t for t in inflight if t.done()]:
                    task.result()  # a failed publication ends this connection; `finally` requeues it
                    del inflight[task]
                    self.sent += 1
                if self._outgoing and len(inflight) < self.max_inflight:
                    topic, data = self._outgoing.popleft()
                    task = asyncio.create_task(client.publish(topic, data, qos=1, timeout=self.publish_timeout))
                    task.add_done_callback(lambda _: self._wake.set())
                    inflight[task] = (topic, data)
                    continue
                self._wake.clear()
                await self._wake.wait()
        finally:
            await cancel_and_wait(list(inflight))
            unsent = []
            for task, item in inflight.items():
                if not task.cancelled() and task.exception() is None:
                    self.sent += 1
                else:
                    unsent.append(item)
            for item in reversed(unsent):
                if len(self._outgoing) == self._outgoing.maxlen:
                    self.dropped += 1  # appendleft on a full deque drops the newest event
                self._outgoing.appendleft(item)

    async def _follow_subscriptions(self, client: aiomqtt.Client) -> None:
        while True:
            await self._resubscribe.wait()
            await self._sync_subscriptions(client)

    async def _sync_subscriptions(self, client: aiomqtt.Client) -> None:
        """Subscribe on the broker to the local patterns it lacks, and unsubscribe from those no
        local subscriber has any more."""
        self._resubscribe.clear()
        for pattern in [p for p in self._on_broker if p not in self._patterns]:
            await client.unsubscribe(self.broker_pattern(pattern), timeout=self.publish_timeout)
            self._acknowledge(pattern, False)
        for pattern in [p for p in self._patterns if p not in self._on_broker]:
            options = SubscribeOptions(qos=1, noLocal=True)
            await client.subscribe(self.broker_pattern(pattern), options=options, timeout=self.publish_timeout)
            self._acknowledge(pattern, True)

    def _acknowledge(self, pattern: str, on: bool) -> None:
        if on:
            self._on_broker.add(pattern)
        else:
            self._on_broker.discard(pattern)
        self._acknowledged.set()
        self._acknowledged = asyncio.Event()

    async def _receive(self, client: aiomqtt.Client) -> None:
        async for message in client.messages:
            if not self._subscriptions:
                continue
            try:
                payload = json.loads(message.payload) if isinstance(message.payload, bytes | str) else None
            except ValueError:
                payload = None
            if not isinstance(payload, dict):
                log.warning("ignoring MQTT message on %s: its payload is not a JSON object", message.topic)
                continue
            self.received += 1
            self._deliver(Event(self.local_topic(message.topic.value), payload))


async def cancel_and_wait(tasks: list[asyncio.Task[None]]) -> None:
    """Cancel tasks and wait until they are done, cancelling again if one swallowed the request.

    Python 3.11's ``asyncio.wait_for`` (used inside aiomqtt) can lose a cancellation that arrives as
    the awaited operation completes; a single ``cancel()`` then leaves the task running forever.
    """
    pending = {task for task in tasks if not task.done()}
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=1.0)
    for task in tasks:
        if not task.cancelled() and task.exception() is not None:
            log.debug("MQTT bus task ended with %r", task.exception())


# Opening a bus from configuration.


def parse_mqtt_url(url: str) -> MqttSettings:
    """``mqtt://[user:pass@]host[:port][/prefix]`` (``mqtts://`` for TLS) -> settings.

    Raises ValueError with a sentence a person configuring the server can act on.
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise ValueError(f"bad MQTT URL {url!r}: {error}.") from None
    if parts.scheme not in ("mqtt", "mqtts"):
        raise ValueError(f"bad MQTT URL {url!r}: it must start with mqtt:// (or mqtts:// for TLS).")
    if not parts.hostname:
        raise ValueError(f"bad MQTT URL {url!r}: it names no broker host, as in mqtt://127.0.0.1:1883.")
    if parts.query or parts.fragment:
        raise ValueError(f"bad MQTT URL {url!r}: it takes no ?query or #fragment.")
    prefix = unquote(parts.path).strip("/") or ROOT
    if "+" in prefix or "#" in prefix or "//" in prefix:
        raise ValueError(f"bad MQTT URL {url!r}: the topic prefix {prefix!r} has a wildcard or an empty level.")
    tls = parts.scheme == "mqtts"
    return MqttSettings(
        host=parts.hostname,
        port=port if port is not None else (8883 if tls else 1883),
        username=unquote(parts.username) if parts.username is not None else None,
        password=unquote(parts.password) if parts.password is not None else None,
        prefix=prefix,
        tls=tls,
    )


async def open_bus(mqtt_url: str | None) -> EventBus:
    """The bus for a server: in-process without a URL, MQTT-backed with one.

    Returns at once even if the broker is down: the bus connects (and reconnects) in the background
    and queues events meanwhile, so a server starts and plays whatever the broker is doing.
    """
    if mqtt_url is None or not mqtt_url.strip():
        return EventBus()
    bus = MqttEventBus(parse_mqtt_url(mqtt_url.strip()))
    bus.start()
    return bus
