"""A fake port for the SDK's unit tests: what a `Client` is handed in place of a websocket."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from websockets.exceptions import ConnectionClosed

from partida.client import Client
from partida.protocol import Encoding, decode, encode

Message = dict[str, Any]


def ok(message: Message) -> list[Message]:
    """A node that takes every request: one reply, with the request's id."""
    return [{"type": "ok", "id": message.get("id")}]


class FakeSocket:
    """Stands in for the websocket under a client: it keeps every message the client sends (in
    `sent`, and one at a time from `next_sent`), answers each with what `answer` returns for it
    (the messages a node would send back, pushes included), and hands the client whatever a
    test pushes, in order, until it is dropped."""

    def __init__(self, answer: Callable[[Message], list[Message]] = ok) -> None:
        self.answer = answer
        self.sent: list[Message] = []
        self._outbox: asyncio.Queue[Message] = asyncio.Queue()
        self._frames: asyncio.Queue[str | bytes | None] = asyncio.Queue()
        self.dropped = False

    async def send(self, frame: str | bytes) -> None:
        if self.dropped:
            raise ConnectionClosed(None, None)
        message = decode(frame)
        self.sent.append(message)
        self._outbox.put_nowait(message)
        for reply in self.answer(message):
            self.push(reply)

    async def next_sent(self) -> Message:
        return await asyncio.wait_for(self._outbox.get(), 10)

    def push(self, message: Message) -> None:
        self._frames.put_nowait(encode(message, Encoding.JSON))

    def drop(self) -> None:
        """The node goes away: the client's reader sees the end of the connection."""
        self.dropped = True
        self._frames.put_nowait(None)

    async def close(self) -> None:
        if not self.dropped:
            self.drop()

    def __aiter__(self) -> FakeSocket:
        return self

    async def __anext__(self) -> str | bytes:
        frame = await self._frames.get()
        if frame is None:
            raise StopAsyncIteration
        return frame

    def kinds(self) -> list[str]:
        return [message["type"] for message in self.sent]


def client_on(socket: FakeSocket, url: str = "ws://node-a.example:8765") -> Client:
    """A client whose own connection is `socket` (as `Client.connect` builds it, less the hello)."""
    return Client(socket, Encoding.MSGPACK, url)  # type: ignore[arg-type]
