"""`server/publisher.py`: events go only where a subscriber would receive them, and a broker
that fails never fails the request that published."""

from __future__ import annotations

from typing import Any

import pytest

from partida.server.publisher import Publisher


class FakeBus:
    """An event bus with subscribers under `wanted`, keeping what it was asked to publish."""

    def __init__(self, wanted: set[str], broken: bool = False) -> None:
        self.wanted = wanted
        self.broken = broken
        self.published: list[tuple[str, dict[str, Any]]] = []

    def wants(self, topic: str) -> bool:
        return topic in self.wanted

    async def publish(self, topic: str, payload: dict[str, Any]) -> None:
        if self.broken:
            raise ConnectionError("the broker went away")
        self.published.append((topic, payload))


def publisher(bus: FakeBus) -> Publisher:
    return Publisher(bus)  # type: ignore[arg-type]


async def test_topics_are_published_under_partida_and_only_where_wanted() -> None:
    bus = FakeBus({"partida/games/started"})
    events = publisher(bus)
    assert events.publishes("games/started")
    assert not events.publishes("games/finished")
    await events.publish("games/started", {"room": "ab"})
    assert bus.published == [("partida/games/started", {"room": "ab"})]


async def test_without_a_bus_nothing_is_published_and_nothing_fails() -> None:
    events = Publisher()
    assert not events.publishes("games/started")
    await events.publish("games/started", {"room": "ab"})


async def test_a_failing_broker_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    events = publisher(FakeBus({"partida/games/started"}, broken=True))
    await events.publish("games/started", {"room": "ab"})
    assert "could not publish games/started" in caplog.text
