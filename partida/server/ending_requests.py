"""The requests that end a game before its rules do: resign, offer/accept/decline a draw, abort.
Each runs as one of the room's commands (`room.call`): the core's rule for it decides
(`RoomCore.resign`...; a request that does not apply is refused with a stable error code and
changes nothing) and the room carries out what the rule returns (`Room.request_ending`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from partida.room.core import RoomCore

if TYPE_CHECKING:
    from partida.server.rooms import Room
    from partida.server.session import Session


async def resign(room: Room, session: Session, seat: int | None, note: str | None = None) -> None:
    """Two seats: the other wins. More: the seat drops out (the server's random bot answers for
    it, it ranks last) and the game goes on until a single seat is left. `note`: why, kept in
    the result's `notes`."""
    await room.request_ending(session, seat, lambda core, s: core.resign(s, note))


async def offer_draw(room: Room, session: Session, seat: int | None) -> None:
    await room.request_ending(session, seat, RoomCore.offer_draw)


async def accept_draw(room: Room, session: Session, seat: int | None) -> None:
    await room.request_ending(session, seat, RoomCore.accept_draw)


async def decline_draw(room: Room, session: Session, seat: int | None) -> None:
    await room.request_ending(session, seat, RoomCore.decline_draw)


async def abort(room: Room, session: Session, seat: int | None) -> None:
    await room.request_ending(session, seat, RoomCore.abort)
