"""People's ratings on the server: the farming verdict at a rated game's start, the rating of
its result at its end, and the requests that read ratings (`ratings`, `rating_history`,
`leaderboard`).

A subscriber to the rooms' started and finished games (`Rooms.on_started`, `Rooms.on_finished`),
as the ladders are: a casual game costs it one attribute read. The rules are
`partida.competition.ratings`; the writes are the store's (`rate_game`, `judge_farming`), each
exactly once per game whoever asks, so a server that stopped between a game's end and its rating
rates it when it starts again (`start`), and a result delivered twice is rated once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from partida.competition.ratings import ClockClass
from partida.games.registry import Registry, UnknownGame
from partida.protocol import ErrorCode, ProtocolError, server_message
from partida.protocol import messages as m
from partida.server.rooms.driver import Room
from partida.server.session import Session, send_all
from partida.storage.person_ratings import board_data
from partida.storage.store import Store

if TYPE_CHECKING:
    from partida.server.shell import Handler

log = logging.getLogger(__name__)

CLASSES = [c.value for c in ClockClass]
MAX_ROWS = 500
VERDICT_TEXT = {
    "flag": "this rated game's seats share an address: it is rated, and flagged for review",
    "refuse": "these accounts share an address and have played rated games together too often "
    "today: this game is played casual",
}


class RatingService:
    """Handed only the store (its rating writes and reads) and the games (to name them in
    requests): what a rated game needs beyond its room is in the database, so any node, and a
    node after a restart, rates it the same way."""

    def __init__(self, store: Store, registry: Registry) -> None:
        self.store = store
        self.registry = registry
        self._tasks: set[asyncio.Task[None]] = set()

    def handlers(self) -> Mapping[str, Handler]:
        return {"ratings": self.on_ratings, "rating_history": self.on_history, "leaderboard": self.on_leaderboard}

    def start(self) -> None:
        self._spawn(self._catch_up())

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _catch_up(self) -> None:
        """Rate the finished rated games that are not rated yet (the server stopped in between)."""
        try:
            for game_id in await self.store.person_ratings.unrated_games():
                await self.store.rate_game(game_id)
        except Exception:
            log.exception("rating the games left unrated failed; the next start tries again")

    # Subscriptions (plain calls in the room's task: they must not block).

    def game_started(self, room: Room) -> None:
        if room.rated:
            self._spawn(self._judge(room))

    def game_over(self, room: Room) -> None:
        if room.rated:
            self._spawn(self._rate(room))

    async def _judge(self, room: Room) -> None:
        """The farming verdict, taken when the game starts so that its players know at once."""
        seats = [s for s in room.core.seats if s is not None]
        accounts = [s.account_id for s in seats]
        # A bot account's address is none of its own (a bot host plays many accounts at once).
        addresses = [
            None if s.kind == "bot" or s.session is None or not s.session.address else s.session.address for s in seats
        ]
        try:
            verdict = await self.store.judge_farming(room.core.game_id, accounts, addresses, time.time())
        except Exception:
            log.exception("room %s: the farming verdict could not be stored; the game stays rated", room.code)
            return
        if verdict == "ok":
            return
        if verdict == "refuse":
            room.rated = False
        told = server_message(
            "rating_verdict",
            room=room.code,
            game_id=room.core.game_id,
            verdict=verdict,
            rated=verdict != "refuse",
            message=VERDICT_TEXT[verdict],
        )
        self._tell_seats(room, told)

    async def _rate(self, room: Room) -> None:
        try:
            changes = await self.store.rate_game(room.core.game_id)
        except Exception:
            log.exception("room %s: rating game %s failed; it is rated at the next start", room.code, room.core.game_id)
            return
        if changes:
            first = changes[0]
            told = server_message(
                "rating_changed",
                room=room.code,
                game_id=room.core.game_id,
                game=first["game"],
                clock_class=first["clock_class"],
                changes=changes,
            )
            self._tell_seats(room, told)
            try:
                await room.call(lambda: self._show_after(room, changes))
            except ProtocolError:
                pass  # the room has closed: nobody is left to see its names

    @staticmethod
    async def _show_after(room: Room, changes: list[dict[str, Any]]) -> None:
        """The seats' new ratings beside their names (a room command: seats change under the
        room's lock only), pushed with the room's summary."""
        for change in changes:
            seat = room.core.seats[change["seat"]]
            if seat is not None:
                seat.rating = change["after"]["shown"]
        room.broadcast_room()

    @staticmethod
    def _tell_seats(room: Room, message: dict[str, Any]) -> None:
        send_all((s.session for s in room.core.seats if s is not None and s.session is not None), message)

    # Requests.

    async def _account(self, session: Session, name: str | None) -> tuple[int, str]:
        if name is None:
            identity = session.identity
            if identity is None or identity.account_id is None:
                raise ProtocolError(ErrorCode.NO_SUCH_PLAYER, "guests have no ratings: name an account")
            return identity.account_id, identity.name
        account = await self.store.get_account_by_name(name)
        if account is None:
            raise ProtocolError(ErrorCode.NO_SUCH_PLAYER, f"there is no account {name!r}")
        return account.id, account.name

    def _game(self, name: str) -> str:
        try:
            return self.registry.get(name).name
        except UnknownGame as exc:
            raise ProtocolError(ErrorCode.UNKNOWN_GAME, str(exc)) from None

    @staticmethod
    def _class(name: str) -> str:
        if name not in CLASSES:
            raise ProtocolError(ErrorCode.BAD_FIELD, f"clock_class is one of {', '.join(CLASSES)}, not {name!r}")
        return name

    @staticmethod
    def _limit(limit: int | None, default: int) -> int:
        if limit is None:
            return default
        if not 1 <= limit <= MAX_ROWS:
            raise ProtocolError(ErrorCode.BAD_FIELD, f"limit is from 1 to {MAX_ROWS}, not {limit}")
        return limit

    async def on_ratings(self, session: Session, req: m.Ratings) -> None:
        account_id, name = await self._account(session, req.name)
        game = None if req.game is None else self._game(req.game)
        lines = await self.store.person_ratings.of_account(account_id, game)
        session.send(server_message("ratings", req.id, name=name, ratings=[line.to_data() for line in lines]))

    async def on_history(self, session: Session, req: m.RatingHistory) -> None:
        account_id, name = await self._account(session, req.name)
        game, kind = self._game(req.game), self._class(req.clock_class)
        points = await self.store.person_ratings.history(account_id, game, kind, self._limit(req.limit, MAX_ROWS))
        session.send(
            server_message(
                "rating_history",
                req.id,
                name=name,
                game=game,
                clock_class=kind,
                history=[p.to_data() for p in points],
            )
        )

    async def on_leaderboard(self, session: Session, req: m.Leaderboard) -> None:
        game = self._game(req.game)
        kinds = CLASSES if req.clock_class is None else [self._class(req.clock_class)]
        limit = self._limit(req.limit, 50)
        boards = {}
        for kind in kinds:
            lines = await self.store.person_ratings.leaderboard(game, kind, limit)
            boards[kind] = board_data(lines)
        session.send(server_message("leaderboard", req.id, game=game, boards=boards))
