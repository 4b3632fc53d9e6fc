"""The lobby's rooms and tournaments across nodes, pushed: each node publishes what changed in
its lobby on `partida/lobby/rooms` (public summaries only, what `list_rooms` shows anyone), and
pushes what the other nodes published to its own `list_rooms` watchers; and that its tournaments
changed on `partida/lobby/tournaments`, for the other nodes' `tournament_list` watchers (who list
again: every node reads the tournaments from the database). A single server has no relay; a node
without a broker lists the other nodes' rooms and tournaments but pushes only its own."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from partida.server.events import EventBus
    from partida.server.lobby import Lobby
    from partida.server.publisher import Publisher
    from partida.server.tournament_list import TournamentPages

log = logging.getLogger(__name__)

TOPIC = "lobby/rooms"
TOURNAMENTS_TOPIC = "lobby/tournaments"


class LobbyRelay:
    def __init__(self, node: str, lobby: Lobby, tournaments: TournamentPages, publisher: Publisher) -> None:
        self.node = node
        self.lobby = lobby
        self.tournaments = tournaments
        self.publisher = publisher
        self._task: asyncio.Task[None] | None = None
        self._news: asyncio.Task[None] | None = None
        self._sending: set[asyncio.Task[None]] = set()

    def start(self, bus: EventBus) -> None:
        subscription = bus.subscribe(f"partida/{TOPIC}")
        news = bus.subscribe(f"partida/{TOURNAMENTS_TOPIC}")
        self.lobby.share = self._share
        self.tournaments.share = self._share_tournaments
        loop = asyncio.get_running_loop()
        self._task = loop.create_task(self._follow(subscription))
        self._news = loop.create_task(self._follow_tournaments(news))

    async def stop(self) -> None:
        self.lobby.share = None
        self.tournaments.share = None
        tasks = [t for t in (self._task, self._news) if t is not None] + list(self._sending)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _share(self, rooms: list[dict[str, Any]], removed: list[str]) -> None:
        payload = {"node": self.node, "rooms": rooms, "removed": removed}
        task = asyncio.get_running_loop().create_task(self.publisher.publish(TOPIC, payload))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    def _share_tournaments(self) -> None:
        task = asyncio.get_running_loop().create_task(
            self.publisher.publish(TOURNAMENTS_TOPIC, {"node": self.node, "changed": True})
        )
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def _follow_tournaments(self, subscription: Any) -> None:
        async with subscription:
            async for event in subscription:
                if event.payload.get("node") != self.node:
                    self.tournaments.changed_elsewhere()

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
