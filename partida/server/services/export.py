"""`export`: a stored game as a file (its text record, or the JSON its replay loads), under the
history's rules of who sees what (`server/history.py`): the export is built from the very record
a `game` request with `steps` would send the asker, so it never holds more than that replay."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from partida.games.registry import Registry
from partida.protocol import ErrorCode, ProtocolError, server_message
from partida.protocol import messages as m
from partida.room import export
from partida.server.limits import Limiter
from partida.server.rooms.driver import Room
from partida.server.services.history import replay_record, visible_game
from partida.server.session import Session
from partida.storage.store import Store

if TYPE_CHECKING:
    from partida.server.shell import Handler

# What an export costs the asker's request budget per entry of the game's log, beyond the
# request itself: the server re-runs the whole game to build it, as a replay with steps.
COST_PER_ENTRY = 1 / 50


class ExportService:
    def __init__(
        self, store: Store, registry: Registry, live_game: Callable[[int], Room | None], limiter: Limiter
    ) -> None:
        self.store = store
        self.registry = registry
        self.live_game = live_game  # the room playing a stored game here, if any
        self.limiter = limiter

    def handlers(self) -> Mapping[str, Handler]:
        return {"export": self.on_export}

    async def on_export(self, session: Session, req: m.Export) -> None:
        if req.format not in export.FORMATS:
            raise ProtocolError(ErrorCode.BAD_FIELD, f"export: format is one of {', '.join(export.FORMATS)}")
        stored, game = await visible_game(self.store, self.registry, session, req.game_id)
        if session.limits is not None:
            self.limiter.charge(session.limits, len(stored.actions) * COST_PER_ENTRY)
        live = self.live_game(stored.id)
        record = await replay_record(self.store, stored, game, live and live.core, steps=True)
        if req.format == "json":
            content = export.as_json(record)
        else:
            content = export.text(record, game, rated=stored.rated)
        session.send(
            server_message(
                "exported",
                req.id,
                game_id=stored.id,
                format=req.format,
                filename=export.filename(record, req.format),
                content=content,
            )
        )
