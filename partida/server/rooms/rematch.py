"""Rematches: when every human seat of a finished game asks for one, a new room opens with the
same players one seat on (two seats swap colours), the same options, clock and grace period.
Bots accept by themselves. Players learn of it by a `rematch` message (bots by `seated`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from partida.protocol import server_message
from partida.room.terms import RoomTerms
from partida.server.rooms.codes import new_seat_token
from partida.server.rooms.driver import Room

if TYPE_CHECKING:
    from partida.room.core import Seat
    from partida.server.session import Session


async def offer_rematch(room: Room, session: Session, seat: int | None) -> bool:
    """Record a rematch offer (a room command); True when every human seat wants one."""
    seat = room.core.own_seat(session, seat)
    ready = room.core.offer_rematch(seat)
    room.broadcast_room()  # the summary's `rematch` lists who asked
    return ready


async def open_rematch(open_room: Callable[[RoomTerms, Session | None], Awaitable[Room]], old: Room) -> dict[str, Any]:
    """Open the rematch of `old` (run in `old`'s task, so it opens once); returns its summary."""
    if old.rematch_room is not None:
        return old.rematch_room.summary()
    new = await open_room(old.core.rematch_terms(old.public, old.rated), None)
    old.rematch_room = new
    tokens = [new_seat_token() for _ in old.core.seats]
    await new.call(lambda: seat_rematch(new, old.core.seats, tokens, old.code))
    return new.summary()


async def seat_rematch(room: Room, old: list[Seat[Session] | None], tokens: list[str], old_code: str) -> None:
    """Fill every seat of the new room at once, tell each player where they sit, then start."""
    seats = room.core.seat_rematch(old, tokens)
    await room.read_ratings()  # the game before may have changed them
    summary = room.summary()
    for index, seat in enumerate(seats):
        if seat is None or seat.session is None:
            continue
        seat.session.rooms.add(room)
        if seat.agent is not None:
            seat.session.send(
                server_message(
                    "seated",
                    room=summary["code"],
                    summary=summary,
                    seat=index,
                    token=seat.token,
                    party=room.party_for(seat.session),
                )
            )
        else:
            seat.session.send(server_message("rematch", room=old_code, new_room=summary, seat=index, token=seat.token))
    await room.after_seating()
