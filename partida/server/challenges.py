"""Challenges: asking a named account (a person or a bot) for a game.

A challenge names an account, not a connection: every connection of that account is told
(pushed `challenge`), and any of them may `accept` or `decline`. It lives while its challenger is
connected and at most `CHALLENGE_TTL` seconds. A bot account answers by the games it declared,
without a round trip: the server seats it as it seats any bot (`seated`). The challenger learns
the outcome by a pushed `challenge_accepted` (with the room, its seat and token) or
`challenge_declined` (with `reason` "expired" when it lapses unanswered).

The bookkeeping here is plain data, testable without a socket; `services/challenges.py` answers the requests.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from partida.protocol import ErrorCode, ProtocolError
from partida.server import entropy

if TYPE_CHECKING:
    from partida.games.base import Game
    from partida.room.clocks import ClockSpec
    from partida.server.session import Session

CHALLENGE_TTL = 300.0  # seconds an unanswered challenge stands
MAX_OPEN_PER_SESSION = 8  # open challenges one connection may have at a time


@dataclass(eq=False)
class Challenge:
    challenger: Session
    account_id: int  # the challenged account
    to: str  # its name as stored
    game: Game
    options: dict[str, Any]
    seats: int
    clock: ClockSpec | None
    id: str = field(default_factory=lambda: entropy.token_hex(6))
    created: float = field(default_factory=time.monotonic)
    lapse: asyncio.TimerHandle | None = None
    nodes: set[str] = field(default_factory=set)  # other nodes that told the challenged person
    rated: bool = False  # the room it opens is rated

    def to_data(self) -> dict[str, Any]:
        identity = self.challenger.identity
        assert identity is not None
        return {
            "id": self.id,
            "from": {"name": identity.name, "kind": identity.kind},
            "to": self.to,
            "game": self.game.name,
            "options": self.options,
            "seats": self.seats,
            "clock": self.clock.to_data() if self.clock else None,
            "rated": self.rated,
        }


class Challenges:
    """The open challenges of a server, by id. `on_lapse` is told of a challenge whose time ran
    out unanswered (its challenger still connected), to tell the challenger."""

    def __init__(
        self, on_lapse: Callable[[Challenge], None] | None = None, loop: asyncio.AbstractEventLoop | None = None
    ) -> None:
        self.open: dict[str, Challenge] = {}
        self.on_lapse = on_lapse
        self._loop = loop  # whose timers lapse challenges (None: the running loop's)

    def add(self, challenge: Challenge) -> None:
        self._expire()
        mine = sum(1 for c in self.open.values() if c.challenger is challenge.challenger)
        if mine >= MAX_OPEN_PER_SESSION:
            raise ProtocolError(
                ErrorCode.RATE_LIMITED, f"at most {MAX_OPEN_PER_SESSION} open challenges at a time; wait for answers"
            )
        self.open[challenge.id] = challenge
        loop = self._loop or asyncio.get_running_loop()
        challenge.lapse = loop.call_later(CHALLENGE_TTL, self._lapsed, challenge.id)

    def _lapsed(self, challenge_id: str) -> None:
        challenge = self.open.pop(challenge_id, None)
        if challenge is not None and not challenge.challenger.closed and self.on_lapse is not None:
            self.on_lapse(challenge)

    def drop(self, challenge_id: str) -> Challenge | None:
        """Remove a challenge answered elsewhere (declined on another node)."""
        challenge = self.open.pop(challenge_id, None)
        if challenge is not None and challenge.lapse is not None:
            challenge.lapse.cancel()
        return challenge

    def take(self, challenge_id: str, session: Session) -> Challenge:
        """Remove and return the challenge addressed to `session`'s account. Anyone else asking
        about it learns nothing of it: the same error as for no challenge at all."""
        self._expire()
        challenge = self.open.get(challenge_id)
        account_id = session.identity.account_id if session.identity else None
        if challenge is None or account_id is None or challenge.account_id != account_id:
            raise ProtocolError(ErrorCode.NO_SUCH_CHALLENGE, f"there is no open challenge {challenge_id!r} to you")
        return self.drop(challenge_id)  # type: ignore[return-value]

    def drop_from(self, session: Session) -> list[Challenge]:
        """A challenger left: its challenges lapse."""
        gone = [c for c in self.open.values() if c.challenger is session]
        for challenge in gone:
            self.drop(challenge.id)
        return gone

    def _expire(self) -> None:
        """Challenges whose challenger left (those that ran out of time went by their timer)."""
        for challenge_id in [i for i, c in self.open.items() if c.challenger.closed]:
            self.drop(challenge_id)
