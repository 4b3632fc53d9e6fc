"""Where rooms are: the one interface behind which a single server and one node of several
differ for rooms. The shell, the rooms service and the lobby ask it; only the wiring
(`server/app.py`) chooses which one.

A single server has every room here, so `SingleNodeRooms` answers "nowhere else" at no cost; a
node of several (`server/cluster.py`) looks in the shared directory, redirects with `moved` and
takes over dead nodes' rooms. Where accounts are is the other half (`server/account_presence.py`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from partida.protocol import ProtocolError

if TYPE_CHECKING:
    from partida.server.rooms.driver import Room
    from partida.server.session import Session

# Runs a request here (the shell's dispatch), for a room the directory has just brought here.
Dispatch = Callable[["Session", Any], Awaitable[None]]
# A page of other nodes' public rooms: (game, status, after game id, limit) -> summaries.
OtherRooms = Callable[[str | None, str | None, int, int], Awaitable[list[dict[str, Any]]]]


class RoomDirectory(Protocol):
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


class SingleNodeRooms:
    """Every room is here: nothing elsewhere to find or redirect to."""

    other_rooms: OtherRooms | None = None

    async def room_elsewhere(
        self, session: Session, request: Any, missing: ProtocolError, dispatch: Dispatch
    ) -> ProtocolError | None:
        return missing

    async def entered(self, room: Room) -> None:
        return None

    def left_memory(self, room: Room) -> None:
        return None
