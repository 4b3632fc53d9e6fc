"""Where rooms and accounts are: the one interface behind which a single server and one node of
several differ. Services ask the locator; only the wiring (`server/app.py`) chooses which one.

A single server has everything here, so `SingleNode` answers "nowhere else" at no cost; a node
of several (`server/cluster.py`) looks in the shared directory, redirects with `moved`, takes over
dead nodes' rooms and reaches accounts connected to other nodes (`server/presence.py`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from partida.protocol import ProtocolError

if TYPE_CHECKING:
    from partida.server.challenges import Challenge
    from partida.server.presence import RemoteChallenge
    from partida.server.rooms.driver import Room
    from partida.server.session import Session
    from partida.storage.nodes import Presence as Where

# Runs a request here (the shell's dispatch), for a room the locator has just brought here.
Dispatch = Callable[["Session", Any], Awaitable[None]]
# A page of other nodes' public rooms: (game, status, after game id, limit) -> summaries.
OtherRooms = Callable[[str | None, str | None, int, int], Awaitable[list[dict[str, Any]]]]


class Locator(Protocol):
    @property
    def node_urls(self) -> list[str] | None:
        """The live nodes' URLs for `welcome` (None: a single server says nothing)."""

    @property
    def other_rooms(self) -> OtherRooms | None:
        """Other nodes' lobby pages (None: there are none)."""

    async def room_elsewhere(
        self, session: Session, request: Any, missing: ProtocolError, dispatch: Dispatch
    ) -> ProtocolError | None:
        """A request named a room this node does not have: the error to answer with (`moved`,
        or `missing`), or None when the request was served (the room was taken over and
        `dispatch` ran it, or a spectator was served from another node's events)."""

    async def entered(self, room: Room) -> None:
        """A new room opened here (a node may give it another code if the code is taken)."""

    def left_memory(self, room: Room) -> None:
        """A room left this node's memory (finished a while ago, or never started)."""

    async def arrived(self, session: Session) -> None:
        """An account logged in here: findable from other nodes."""

    def departed(self, session: Session) -> None:
        """A connection closed."""

    async def accounts_elsewhere(self, name: str) -> list[Where]:
        """Where the account `name` is connected, on other nodes only."""

    async def summon(self, name: str, game: str) -> Session | None:
        """A bot account connected only to other nodes, brought to a connection here."""

    def holds(self, challenge_id: str, session: Session) -> RemoteChallenge | None:
        """A challenge to `session`'s account that lives on another node."""

    async def forward(self, challenge: Challenge, elsewhere: list[Where]) -> None:
        """Tell a challenged person connected to other nodes."""

    async def decline(self, session: Session, request_id: Any, challenge_id: str, remote: RemoteChallenge) -> None:
        """Carry a decline back to the challenge's node."""


class SingleNode:
    """Everything is here: nothing elsewhere to find, redirect to, or tell."""

    node_urls: list[str] | None = None
    other_rooms: OtherRooms | None = None

    async def room_elsewhere(
        self, session: Session, request: Any, missing: ProtocolError, dispatch: Dispatch
    ) -> ProtocolError | None:
        return missing

    async def entered(self, room: Room) -> None:
        return None

    def left_memory(self, room: Room) -> None:
        return None

    async def arrived(self, session: Session) -> None:
        return None

    def departed(self, session: Session) -> None:
        return None

    async def accounts_elsewhere(self, name: str) -> list[Where]:
        return []

    async def summon(self, name: str, game: str) -> Session | None:
        return None

    def holds(self, challenge_id: str, session: Session) -> RemoteChallenge | None:
        return None

    async def forward(self, challenge: Challenge, elsewhere: list[Where]) -> None:
        return None

    async def decline(self, session: Session, request_id: Any, challenge_id: str, remote: RemoteChallenge) -> None:
        return None
