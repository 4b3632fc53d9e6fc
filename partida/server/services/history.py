"""Stored games: `games` lists them, `game` gives one's record (`server/history.py` says who may
see what and builds the record)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from partida.games.base import Game
from partida.games.registry import Registry, UnknownGame
from partida.protocol import ErrorCode, ProtocolError, server_message
from partida.protocol import messages as m
from partida.room import chat as chat_rules
from partida.room.core import RoomCore
from partida.server import history
from partida.server.rooms.driver import Room
from partida.server.session import Session
from partida.storage.store import Store, StoredGame

if TYPE_CHECKING:
    from partida.server.shell import Handler


class HistoryService:
    def __init__(self, store: Store, registry: Registry, live_game: Callable[[int], Room | None]) -> None:
        self.store = store
        self.registry = registry
        self.live_game = live_game  # the room playing a stored game here, if any

    def handlers(self) -> Mapping[str, Handler]:
        return {"games": self.on_games, "game": self.on_game}

    async def on_games(self, session: Session, req: m.Games) -> None:
        account_id = session.identity.account_id if session.identity else None
        games = await self.store.list_games(
            history.check_limit(req.limit),
            req.game,
            req.status,
            player=req.player,
            only_visible=True,
            account_id=account_id,
        )
        session.send(server_message("stored_games", req.id, games=[history.listing(g) for g in games]))

    async def on_game(self, session: Session, req: m.GameRecord) -> None:
        stored, game = await visible_game(self.store, self.registry, session, req.game_id)
        live = self.live_game(stored.id)
        data = await replay_record(self.store, stored, game, live and live.core, steps=req.steps)
        session.send(server_message("stored_game", req.id, game=data))


async def replay_record(
    store: Store, stored: StoredGame, game: Game, live: RoomCore[Any] | None, *, steps: bool
) -> dict[str, Any]:
    """A stored game as its replay loads it: the record `history.record` builds for the asker,
    with the chat lines a replay shows (the spectators' only once the game is over). The export's
    JSON is this too, so a downloaded game is what the replay showed."""
    data = history.record(stored, game, live, steps=steps)
    channels = chat_rules.replay_channels(stored.status in ("finished", "aborted"))
    data["chat"] = [line.to_data() for line in await store.chat.history(("game", stored.id), channels)]
    return data


async def visible_game(store: Store, registry: Registry, session: Session, game_id: int) -> tuple[StoredGame, Game]:
    """A stored game the asker may see, and its rules; `no_such_game` for one they may not (as
    for one that is not stored: whether it exists is not theirs to learn)."""
    stored = await store.load_game(game_id)
    account_id = session.identity.account_id if session.identity else None
    if stored is None or not history.may_see(stored, account_id):
        raise ProtocolError(ErrorCode.NO_SUCH_GAME, f"there is no game {game_id} you may see")
    try:
        return stored, registry.get(stored.game)
    except UnknownGame as exc:
        raise ProtocolError(ErrorCode.UNKNOWN_GAME, str(exc)) from None
