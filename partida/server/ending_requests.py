"""The requests that end a game before its rules do: resign, offer/accept/decline a draw, abort.
Each runs as one of the room's commands (`room.call`); the rules they follow are in `endings`, which
refuses a request that does not apply with a stable error code and changes nothing."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from typing import TYPE_CHECKING

from partida.room import endings

if TYPE_CHECKING:
    from partida.server.rooms import Room
    from partida.server.session import Session


@contextlib.contextmanager
def _forgotten_unless_stored(room: Room) -> Iterator[None]:
    """A request whose write fails leaves the room's ending bookkeeping as it was: otherwise the
    room would hold a resignation (or a lapsed offer) the database does not, and refuse the
    request when it is asked again (`already_resigned`, `no_draw_offer`)."""
    before = copy.deepcopy(room.endings)
    try:
        yield
    except Exception:
        if room.result is None:  # not ended in memory: nothing of the request stands
            room.endings = before
        raise


async def resign(room: Room, session: Session, seat: int | None) -> None:
    """Two seats: the other wins. More: the seat drops out (the server's random bot answers for
    it, it ranks last) and the game goes on until a single seat is left."""
    seat = room.seat_in_play(session, seat)
    with _forgotten_unless_stored(room):
        result = room.endings.resign(seat)
        if result is not None:
            await room.end(result)
            return
        await room.ports.store.save_endings(room.game_id, room.endings.to_data())
    room.push_all()
    await room.settle()


async def offer_draw(room: Room, session: Session, seat: int | None) -> None:
    seat = room.seat_in_play(session, seat)
    if room.endings.offer_draw(seat):  # the opponent's offer stands: agreed
        await room.end(endings.draw(room.num_seats, "draw_agreed"))
    else:
        room.push_all()  # updates carry `draw_offer`


async def accept_draw(room: Room, session: Session, seat: int | None) -> None:
    seat = room.seat_in_play(session, seat)
    with _forgotten_unless_stored(room):
        room.endings.accept_draw(seat)
        await room.end(endings.draw(room.num_seats, "draw_agreed"))


async def decline_draw(room: Room, session: Session, seat: int | None) -> None:
    seat = room.seat_in_play(session, seat)
    room.endings.decline_draw(seat)
    room.push_all()


async def abort(room: Room, session: Session, seat: int | None) -> None:
    room.seat_in_play(session, seat)
    room.endings.check_abort(s for s, _ in room.actions)
    await room.end(endings.aborted())
