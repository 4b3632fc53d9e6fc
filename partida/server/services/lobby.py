"""`list_rooms`: the lobby a page at a time, and pushed changes to those who watch it
(`server/lobby.py` keeps the pages)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from partida.protocol import messages as m
from partida.server.limits import Limiter
from partida.server.lobby import Lobby, check_page_request
from partida.server.lobby import reply as rooms_reply
from partida.server.pages import check_reading
from partida.server.session import Session

if TYPE_CHECKING:
    from partida.server.shell import Handler

BUILT_BYTES_PER_REQUEST = 100  # a page built for its asker costs one request more per this many bytes of rooms


class LobbyService:
    def __init__(self, lobby: Lobby, limiter: Limiter) -> None:
        self.lobby = lobby
        self.limiter = limiter

    def handlers(self) -> Mapping[str, Handler]:
        return {"list_rooms": self.on_list_rooms}

    def disconnected(self, session: Session) -> None:
        self.lobby.unwatch(session)

    async def on_list_rooms(self, session: Session, req: m.ListRooms) -> None:
        limit = check_page_request(req.game, req.status, req.cursor, req.limit)
        check_reading(session)
        built = session.limits is not None and not self.lobby.cached(
            req.game, req.status, req.cursor, limit, session.encoding
        )
        page = await self.lobby.page(req.game, req.status, req.cursor, limit, session.encoding)
        if built and session.limits is not None:
            # What building costs grows with the rooms summarized and encoded, which its bytes
            # measure; the debt refuses the asker's next requests, so pages at random cursors
            # (never shared, never cached for anyone else) come at the rate its bytes allow.
            self.limiter.charge(session.limits, len(page.rooms) / BUILT_BYTES_PER_REQUEST)
        session.send_frame(rooms_reply(req.id, page, session.encoding))
        if req.watch:
            self.lobby.watch(session, req.game, req.status)
        elif req.watch is False:
            self.lobby.unwatch(session)
