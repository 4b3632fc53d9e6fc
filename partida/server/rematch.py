"""Rematches: when every human seat of a finished game asks for one, a new room opens with the
same players one seat on (two seats swap colours), the same options, clock and grace period.
Bots accept by themselves. Players learn of it by a `rematch` message (bots by `seated`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from partida.protocol import server_message
from partida.room.core import Seat, rematch_seats
from partida.room.terms import RoomTerms
from partida.server.rooms import Room, new_seat_token

if TYPE_CHECKING:
    from partida.server.services.rooms import OpenRoom
    from partida.server.session import Session


async def offer_rematch(room: Room, session: Session, seat: int | None) -> bool:
    """Record a rematch offer (a room command); True when every human seat wants one."""
    seat = room.core.own_seat(session, seat)
    ready = room.core.offer_rematch(seat)
    room.broadcast_room()  # the summary's `rematch` lists who asked
    return ready


async def open_rematch(open_room: OpenRoom, old: Room) -> dict[str, Any]:
    """Open the rematch of `old` (run in `old`'s task, so it opens once); returns its summary."""
    if old.rematch_room is not None:
        return old.rematch_room.summary()
    terms = RoomTerms(
        old.game,
        dict(old.options),
        old.num_seats,
        old.public,
        clock=old.clock_spec,
        abandon_after=old.endings.abandon_after,
        rated=old.rated,
    )
    new = await open_room(terms, None)
    old.rematch_room = new
    seats = rematch_seats(old.seats, [new_seat_token() for _ in old.seats])
    await new.call(lambda: seat_rematch(new, seats, old.code))
    return new.summary()


async def seat_rematch(room: Room, seats: list[Seat[Session] | None], old_code: str) -> None:
    """Fill every seat of the new room at once, tell each player where they sit, then start."""
    room.core.seats = list(seats)
    summary = room.summary()
    for index, seat in enumerate(room.seats):
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
