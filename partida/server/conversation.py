"""One client connection as the shell sees it: its session, its messages handled one at a time
and in order, the hello it owes, its silence watched, and what is undone once it ends.

A connection's messages are handled by a task that exists only while messages wait
(`transport.Inbox`), so an idle connection holds no task. Its end (`ended`: leaving its rooms,
its challenges, its place in the lobby) runs once, after the message being handled, when the
session closes or the client goes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from partida.protocol import encoding_of
from partida.server.idle import IdleWatch
from partida.server.session import Session
from partida.server.transport import Data, Inbox, Link

log = logging.getLogger(__name__)


class Conversation(Inbox):
    """The `transport.Receiver` of a greeted or greeting client."""

    __slots__ = (
        "_end",
        "_ended",
        "_first",
        "_handle",
        "_hello",
        "_hello_timeout",
        "_idle",
        "_idle_timeout",
        "_lost",
        "session",
    )

    def __init__(
        self,
        link: Link,
        session: Session,
        handle: Callable[[Session, Data], Awaitable[None]],
        ended: Callable[[Session], Awaitable[None]],
        hello_timeout: float,
        idle_timeout: float,
    ) -> None:
        super().__init__(link)
        self.session = session
        self._handle = handle
        self._ended = ended
        self._hello_timeout = hello_timeout
        self._idle_timeout = idle_timeout
        self._hello: asyncio.TimerHandle | None = None
        self._idle: IdleWatch | None = None
        self._first = True
        self._end: asyncio.Future[None] | None = None
        self._lost = False
        self._await_hello()

    # transport.Receiver

    def received(self, message: Data) -> None:
        if self._end is None:
            self.put(message)

    def lingers(self) -> bool:
        return bool(self.session.rooms)  # a player's or a spectator's next message comes soon

    def writable(self) -> None:
        session = self.session
        if session.outbox or session.closed:
            session.drain()

    def lost(self) -> Awaitable[None] | None:
        self._lost = True
        self.clear()
        task = self.task
        if task is None:
            return self._ending()
        return self._after(task)

    async def _after(self, task: asyncio.Task[None]) -> None:
        """The end, after the message being handled (a seat taken meanwhile is left too)."""
        await asyncio.wait([task])
        await self._ending()

    # Messages.

    def handle(self, message: Data) -> Awaitable[None] | None:
        if self._end is not None:
            return None
        session = self.session
        if self._hello is not None:
            self._hello.cancel()  # the time to say hello runs while waiting, not while handling
            self._hello = None
        if self._idle is not None:
            self._idle.touch()
        if self._first:
            session.encoding = encoding_of(message)
            self._first = False
        return self._handle(session, message)

    def handled(self) -> Awaitable[None] | None:
        if self._end is not None:  # ended before this message: it was not handled
            return None
        session = self.session
        if session.closed or self._lost:
            self.clear()
            return self._ending()
        if not session.greeted:
            self._await_hello()
        elif self._idle is None and self._idle_timeout:
            self._idle = IdleWatch(session, self._idle_timeout)
        return None

    def _await_hello(self) -> None:
        if self._hello_timeout and not self.session.greeted:
            self._hello = asyncio.get_running_loop().call_later(self._hello_timeout, self._no_hello)

    def _no_hello(self) -> None:
        self._hello = None
        session = self.session
        log.info("%s (%s): no hello in time, closing", session.name, session.address)
        session.close_soon(1008, "no hello in time")
        self.clear()
        self._ending()

    def _ending(self) -> asyncio.Future[None]:
        """The connection's end, started once."""
        if self._end is None:
            if self._hello is not None:
                self._hello.cancel()
                self._hello = None
            if self._idle is not None:
                self._idle.cancel()
            self._end = asyncio.ensure_future(self._ended(self.session))
        return self._end
