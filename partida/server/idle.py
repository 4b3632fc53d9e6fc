"""Closing connections that say nothing: one timer per connection, looked at once a period.

A greeted connection in no room that sends nothing for `idle_timeout` seconds is closed; one that
holds a seat or watches may stay quiet as long as it likes, and so may a bot waiting for games.
A timeout around every `recv` said the same, but armed and cancelled a timer for every message
received, a cost paid on every move; here the connection only notes when it last heard from its
client (`touch`), and the timer looks at that when it fires.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from partida.server.session import Session

log = logging.getLogger(__name__)


class IdleWatch:
    def __init__(self, session: Session, timeout: float, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.session = session
        self.timeout = timeout
        self._loop = loop or asyncio.get_running_loop()  # another: timers a test moves by hand
        self.heard = self._loop.time()
        self._handle = self._loop.call_later(timeout, self._look)

    def touch(self) -> None:
        """The client sent something."""
        self.heard = self._loop.time()

    def cancel(self) -> None:
        self._handle.cancel()

    def _look(self) -> None:
        session = self.session
        if session.closed:
            return
        quiet = self._loop.time() - self.heard
        if quiet < self.timeout:
            self._handle = self._loop.call_later(self.timeout - quiet, self._look)
            return
        identity = session.identity
        waiting_bot = identity is not None and (identity.agent is not None or identity.kind == "bot")
        if session.rooms or waiting_bot:
            self.heard = self._loop.time()  # looked at again one period from now
            self._handle = self._loop.call_later(self.timeout, self._look)
            return
        log.info("%s (%s): idle, closing", session.name, session.address)
        session.close_soon(1001, "idle for too long")
