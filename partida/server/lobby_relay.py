"""The lobby's rooms across nodes, pushed: each node publishes what changed in its lobby on
`partida/lobby/rooms` (public summaries only, what `list_rooms` shows anyone), and pushes what
the other nodes published to its own `list_rooms` watchers. A single server has no relay; a node
without a broker lists the other nodes' rooms from the directory but pushes only its own."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from partida.server.events import EventBus
    from partida.server.lobby import Lobby
    from partida.server.publisher import Publisher

log = logging.getLogger(__name__)

TOPIC = "lobby/rooms"


class LobbyRelay:
    def __init__(self, node: str, lobby: Lobby, publisher: Publisher) -> None:
        self.node = node
        self.lobby = lobby
        self.publisher = publisher
        self._task: asyncio.Task[None] | None = None
        self._sending: set[asyncio.Task[None]] = set()

    def start(self, bus: EventBus) -> None:
        subscription = bus.subscribe(f"partida/{TOPIC}")
        self.lobby.share = self._share
        self._task = asyncio.get_running_loop().create_task(self._follow(subscription))

    async def stop(self) -> None:
        self.lobby.share = None
        tasks = [*([self._task] if self._task else []), *self._sending]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _share(self, rooms: list[dict[str, Any]], removed: list[str]) -> None:
        payload = {"node": self.node, "rooms": rooms, "removed": removed}
        task = asyncio.get_running_loop().create_task(self.publisher.publish(TOPIC, payload))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def _follow(self, subscription: Any) -> None:
        async with subscription:
            async for event in subscription:
                payload = event.payload
                if payload.get("node") == self.node:
                    continue
                found = payload.get("rooms") or []
                rooms = [r for r in found if isinstance(r, dict) and isinstance(r.get("code"), str)]
                removed = [c for c in payload.get("removed") or [] if isinstance(c, str)]
                if rooms or removed:
                    self.lobby.push_elsewhere(rooms, removed)
