"""Events for subscribers (here, or on a broker with several nodes): published only where
someone would receive them, and never at the cost of the request that caused them."""

from __future__ import annotations

import logging
from typing import Any

from partida.server.events import EventBus

log = logging.getLogger(__name__)


class Publisher:
    def __init__(self, bus: EventBus | None = None) -> None:
        self.bus = bus

    def publishes(self, topic: str) -> bool:
        """Whether an event under `topic` would reach a subscriber (here or on a broker)."""
        return self.bus is not None and self.bus.wants(f"partida/{topic}")

    async def publish(self, topic: str, payload: dict[str, Any]) -> None:
        if self.bus is not None:
            try:
                await self.bus.publish(f"partida/{topic}", payload)
            except Exception:
                log.exception("could not publish %s", topic)
