"""The websockets under a client: one per server node, and which nodes it may open one to.

Its own part because it is the only place the SDK touches the websockets library: opening a
connection (and turning each way that fails into `ConnectionLost`, with a 429's `Retry-After`),
and the rules for following another node's URL, which are pure and checked on plain strings: a
`summon` or `moved` leads only to a host of the client's deployment, since the new connection
says the same hello (password, bot token).
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidHandshake, InvalidStatus, InvalidURI

from partida.client.refusals import ConnectionLost, retry_after_header

FIRST_PAUSE = 0.2  # seconds before asking again after a node could not be reached
LONGEST_PAUSE = 2.0  # the pauses double up to this


def retry_pause(previous: float) -> float:
    """The pause before the next try after `previous` (0: none yet): doubling from
    `FIRST_PAUSE` up to `LONGEST_PAUSE`, so a dead node's takeover is noticed within seconds
    without asking a live one many times a second."""
    return min(max(previous * 2, FIRST_PAUSE), LONGEST_PAUSE)


def listed_nodes(welcome: dict[str, Any]) -> list[str]:
    """The node URLs a `welcome` lists (a node of several lists the live ones)."""
    nodes = welcome.get("nodes")
    return [url for url in nodes if isinstance(url, str)] if isinstance(nodes, list) else []


class Link:
    """One websocket to one server node. The first is the client's own; the others are opened
    when a node answers `moved` (the room lives on another node of the deployment)."""

    def __init__(self, url: str, websocket: ClientConnection) -> None:
        self.url = url
        self.websocket = websocket
        self.reader: asyncio.Task[None] | None = None
        self.requests: set[int] = set()  # ids of requests sent here and not yet answered
        self.closed = asyncio.Event()


def host_of(url: str) -> str | None:
    """The host a websocket URL names (lower case), or None for a URL that is not one."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    return parts.hostname if parts.scheme in ("ws", "wss") and parts.hostname else None


def same_url(a: str, b: str) -> bool:
    return a.rstrip("/").lower() == b.rstrip("/").lower()


async def open_websocket(url: str, timeout: float) -> ClientConnection:
    try:
        return await asyncio.wait_for(connect(url, max_size=1 << 22, open_timeout=timeout, compression=None), timeout)
    except (TimeoutError, OSError) as exc:
        raise ConnectionLost(f"cannot reach {url}: {exc or 'timed out'}") from None
    except (InvalidURI, ValueError):  # not ws:// or wss://, or a port that is not a number
        raise ConnectionLost(f"{url!r} is not a websocket URL: write ws://HOST:PORT") from None
    except InvalidStatus as exc:
        if exc.response.status_code == 429:  # too many new connections from this address: it says when
            seconds = retry_after_header(exc.response.headers.get("Retry-After", ""))
            raise ConnectionLost(f"{url} refused a new connection for now: {exc}", seconds) from None
        raise ConnectionLost(f"{url} did not answer as a websocket server: {exc}") from None
    except InvalidHandshake as exc:  # something else listens there
        raise ConnectionLost(f"{url} did not answer as a websocket server: {exc}") from None
