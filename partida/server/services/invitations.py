"""What an invite link leads to, read before taking a seat: the game and its terms, who opened
the room, and the seats free. The link's code is all it takes (as `join` and `watch` take), and a
code that names no room counts as a guess (the shell's limit on guessed codes)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from partida.protocol import messages as m
from partida.protocol import server_message
from partida.server.rooms.table import Rooms
from partida.server.session import Session

if TYPE_CHECKING:
    from partida.server.shell import Handler


class InvitationService:
    def __init__(self, rooms: Rooms) -> None:
        self.rooms = rooms

    def handlers(self) -> Mapping[str, Handler]:
        return {"invitation": self.on_invitation}

    async def on_invitation(self, session: Session, req: m.Invitation) -> None:
        room = self.rooms.room(req.room)
        summary = room.summary()
        owner = room.owner.identity if room.owner is not None else None
        free = [s["seat"] for s in summary["seats"] if s["name"] is None]
        session.send(
            server_message(
                "invitation",
                req.id,
                room=room.code,
                summary=summary,
                host=None if owner is None else {"name": owner.name, "kind": owner.kind},
                free=free,
            )
        )
