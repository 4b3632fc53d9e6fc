"""What a refusal from the server says, and how to wait one out.

Its own part because every other part of the SDK raises these (the connection when a node cannot
be reached, the requests when the server answers `error`, the bot loop when a game's node goes
away), and because a bot author's first question about a failure is "should I try again, and
when?": `ServerError.retry_after` answers it, and `patiently` acts on it. Nothing here does I/O
but `patiently`'s sleep, so all of it can be tested with plain values.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")


class ServerError(Exception):
    """An `error` message from the server: `code` is stable, `message` is for people.
    `retry_after` is the seconds after which the same request would be let through, when
    waiting alone cures the refusal (a rate limit); otherwise None."""

    def __init__(self, code: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.retry_after = retry_after

    @classmethod
    def from_reply(cls, reply: dict[str, Any]) -> ServerError:
        wait = reply.get("retry_after")
        ok = isinstance(wait, int | float) and not isinstance(wait, bool) and 0 <= wait < float("inf")
        return cls(reply.get("code", "error"), reply.get("message", ""), float(wait) if ok else None)


class ConnectionLost(ServerError):
    def __init__(self, reason: str = "the connection to the server was lost", retry_after: float | None = None) -> None:
        super().__init__("connection_lost", reason, retry_after)


async def patiently(call: Callable[[], Awaitable[T]], tries: int = 5, longest: float = 60.0) -> T:
    """`await call()`; after a refusal that says when to retry (`retry_after`), wait that long
    (at most `longest` seconds) and call again, up to `tries` calls in all, instead of hammering
    a server that said it is not ready (a lost connection too, when the server refused a new one
    for now with a `Retry-After`). Any other error, and the last refusal, is raised."""
    for _ in range(tries - 1):
        try:
            return await call()
        except ServerError as refused:
            if refused.retry_after is None:
                raise
            await asyncio.sleep(min(refused.retry_after, longest))
    return await call()


def retry_after_header(value: str) -> float | None:
    """The seconds an HTTP `Retry-After` header asks for (a refused opening handshake), or None
    when it names none this client reads (absent, or an HTTP date)."""
    return float(value) if value.isdigit() else None
