"""One connection: who it is, which format it speaks, and its outbound queue.

Rooms never await a client: they put messages in the session's bounded outbox and a writer task
sends them. A client too slow to drain its outbox is disconnected instead of slowing a room.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from partida.protocol import Encoding, encode

if TYPE_CHECKING:
    from partida.server.rooms import Room

log = logging.getLogger(__name__)

OUTBOX_LIMIT = 1024
_ids = itertools.count(1)


@dataclass
class Identity:
    """Who a session is: a guest, a user account or a bot account (kind), and for bots the agent
    it runs."""

    name: str
    kind: str = "guest"  # guest | user | bot
    account_id: int | None = None
    agent: str | None = None
    games: list[str] | None = None

    def to_data(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "agent": self.agent}


@dataclass(eq=False)
class Session:
    websocket: ServerConnection | None
    id: int = field(default_factory=lambda: next(_ids))
    encoding: Encoding = Encoding.MSGPACK
    identity: Identity | None = None
    rooms: set[Room] = field(default_factory=set)
    outbox: asyncio.Queue[dict[str, Any] | None] = field(default_factory=lambda: asyncio.Queue(OUTBOX_LIMIT))
    closed: bool = False
    close_reason: tuple[int, str] = (1000, "")

    @property
    def greeted(self) -> bool:
        return self.identity is not None

    @property
    def name(self) -> str:
        return self.identity.name if self.identity else f"connection-{self.id}"

    def send(self, message: dict[str, Any]) -> None:
        """Queue a message; never blocks. A full outbox means a stuck client: drop it."""
        if self.closed:
            return
        try:
            self.outbox.put_nowait(message)
        except asyncio.QueueFull:
            log.warning("%s: outbox full, closing the connection", self.name)
            self.close_soon(1008, "too slow: outbound queue full")

    def close_soon(self, code: int = 1000, reason: str = "") -> None:
        """Close after the messages already queued have been sent."""
        if self.closed:
            return
        self.closed = True
        self.close_reason = (code, reason)
        try:
            self.outbox.put_nowait(None)
        except asyncio.QueueFull:
            if self.websocket is not None:
                asyncio.get_running_loop().create_task(self.websocket.close(code, reason))

    async def writer(self) -> None:
        assert self.websocket is not None
        try:
            while True:
                message = await self.outbox.get()
                if message is None:
                    code, reason = self.close_reason
                    await self.websocket.close(code, reason)
                    return
                await self.websocket.send(encode(message, self.encoding))
        except ConnectionClosed:
            pass
