"""Stored games over the wire: what a player on another machine may read of the history.

A finished game hides nothing any more (its seed is revealed, so anyone can re-run every shuffle),
so it is sent whole: seats, result, every move in words, and the seed for the client to check
against the hash published at the start. A live game is sent as its spectators see it. Private
games are shown only to accounts that sat in them, so the history never leaks an invite code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from partida.games.base import Game, IllegalAction
from partida.protocol import ErrorCode, ProtocolError
from partida.room.record import steps as steps_of
from partida.room.record import told

if TYPE_CHECKING:
    from partida.room.core import RoomCore
    from partida.storage.store import StoredGame

MAX_LISTED = 200


def may_see(stored: StoredGame, account_id: int | None) -> bool:
    return stored.public or (account_id is not None and any(a == account_id for _, a, _ in stored.seat_list))


def listing(stored: StoredGame) -> dict[str, Any]:
    """One line of a `games` reply."""
    return {
        "game_id": stored.id,
        "game": stored.game,
        "status": stored.status,
        "public": stored.public,
        "room": stored.room_code if stored.public else None,
        "seats": [
            {
                "seat": seat,
                "name": name,
                "guest": account is None,
                "kind": stored.seat_kinds.get(seat, "guest"),
                **({"version": stored.seat_versions[seat]} if seat in stored.seat_versions else {}),
            }
            for seat, account, name in stored.seat_list
        ],
        "moves": stored.action_count,
        "result": stored.result,
        "created_at": stored.created_at.isoformat() if stored.created_at else None,
        "finished_at": stored.finished_at.isoformat() if stored.finished_at else None,
    }


def record(stored: StoredGame, game: Game, live: RoomCore[Any] | None, *, steps: bool = False) -> dict[str, Any]:
    """A `game` reply: the whole game once finished, the spectators' picture while live; with
    `steps`, the spectators' picture after every move. `live`: the core of the room playing it
    here, if any."""
    data = listing(stored)
    data.update(options=stored.options, seats_count=stored.seats, seed_hash=stored.seed_hash, clock=stored.clock)
    data["moves"] = len(stored.actions)
    if stored.status == "finished":
        try:
            moves, state = told(game, stored, over=True)
        except IllegalAction as exc:  # a log its game's rules, changed since, refuse
            raise ProtocolError(ErrorCode.NO_SUCH_GAME, f"game {stored.id} cannot be replayed: {exc}") from None
        data.update(seed=str(stored.seed), log=moves, view=state.view(None))
    elif live is not None and live.state is not None:
        data["view"] = live.state.view(None)
        if game.perfect_information:
            data["log"] = [{"seat": seat, "action": action} for seat, action in live.actions]
    else:
        data["view"] = None
    if steps:
        actions = live.actions if live is not None and live.state is not None else stored.actions
        data["steps"] = steps_of(game, stored.options, stored.seed, stored.seats, actions)
    return data


def check_limit(limit: int) -> int:
    if not 1 <= limit <= MAX_LISTED:
        raise ProtocolError(ErrorCode.BAD_FIELD, f"games: limit is 1 to {MAX_LISTED}")
    return limit
