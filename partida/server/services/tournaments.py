"""The tournament requests: `tournament_create`, `tournament_list`, `tournament_join`,
`tournament_withdraw`, `tournament_standings`, `tournament_pairings`.

They check and write the tournament's rows; the director (`partida.server.competition.
tournament_director`) runs it from its start to its last game, told here of a tournament created
(`plan`) and of an entrant come (`entered`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from partida.bots.declaration import bot_accepts
from partida.games.base import BadOptions, Game
from partida.games.registry import Registry, UnknownGame
from partida.protocol import ErrorCode, ProtocolError, server_message
from partida.protocol import messages as m
from partida.protocol.accepts import allows, clock_seconds
from partida.room.clocks import BadClock, ClockSpec
from partida.server.competition.tournament_director import TournamentDirector, standings
from partida.server.limits import Limiter
from partida.server.pages import check_reading
from partida.server.tournament_list import TournamentPages, check_list_request
from partida.server.tournament_list import reply as tournaments_reply
from partida.storage.database import StorageError
from partida.storage.tournaments import (
    ENTRIES,
    FORMATS,
    NoSuchTournament,
    Slot,
    TournamentExists,
    TournamentInfo,
    TournamentStore,
)

if TYPE_CHECKING:
    from partida.server.session import Session
    from partida.server.shell import Handler

MAX_ROUNDS = 100
MAX_DURATION = 7 * 24 * 3600.0
MAX_START_IN = 30 * 24 * 3600.0


class TournamentService:
    def __init__(
        self,
        store: TournamentStore,
        registry: Registry,
        limiter: Limiter,
        check_options: Callable[[Game, dict[str, Any] | None], dict[str, Any]],
        pages: TournamentPages,
        director: TournamentDirector,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.registry = registry
        self.limiter = limiter
        self.check_options = check_options  # the rooms' own: a tournament's tables are rooms
        self.pages = pages
        self.director = director
        self.now = now  # a tournament starts `starts_in` seconds from it
        # creations one at a time on this node: the caps are counted and the row written together
        self._creating = asyncio.Lock()

    def handlers(self) -> Mapping[str, Handler]:
        return {
            "tournament_create": self.on_create,
            "tournament_list": self.on_list,
            "tournament_join": self.on_join,
            "tournament_withdraw": self.on_withdraw,
            "tournament_standings": self.on_standings,
            "tournament_pairings": self.on_pairings,
        }

    # Requests.

    async def on_create(self, session: Session, req: m.TournamentCreate) -> None:
        me = self._account(session)
        try:
            game = self.registry.get(req.game)
        except UnknownGame as exc:
            raise ProtocolError(ErrorCode.UNKNOWN_GAME, str(exc)) from None
        options = self.check_options(game, req.options)
        try:
            seats = game.check_seats(req.seats)
        except BadOptions as exc:
            raise ProtocolError(ErrorCode.BAD_OPTIONS, str(exc)) from None
        try:
            clock = ClockSpec.parse(req.clock)
        except BadClock as exc:
            raise ProtocolError(ErrorCode.BAD_CLOCK, str(exc)) from None
        if clock is None:
            raise ProtocolError(ErrorCode.BAD_CLOCK, "a tournament's games have a clock")
        if req.format not in FORMATS:
            raise ProtocolError(ErrorCode.BAD_FIELD, f"format is one of {', '.join(FORMATS)}, not {req.format!r}")
        if req.entry not in ENTRIES:
            raise ProtocolError(ErrorCode.BAD_FIELD, f"entry is one of {', '.join(ENTRIES)}, not {req.entry!r}")
        if req.format == "arena" and not (req.duration and 0 < req.duration <= MAX_DURATION):
            raise ProtocolError(ErrorCode.BAD_FIELD, "an arena needs a duration: more than 0 seconds, at most a week")
        if req.format != "arena" and req.duration is not None:
            raise ProtocolError(ErrorCode.BAD_FIELD, "only an arena has a duration; a round robin or Swiss has rounds")
        if req.rounds is not None and not 1 <= req.rounds <= MAX_ROUNDS:
            raise ProtocolError(ErrorCode.BAD_FIELD, f"rounds must be 1 to {MAX_ROUNDS}, not {req.rounds}")
        if req.format == "round-robin" and req.rounds not in (None, 1, 2):
            raise ProtocolError(ErrorCode.BAD_FIELD, "a round robin has 1 cycle (single) or 2 (double)")
        if not 0 <= req.starts_in <= MAX_START_IN:
            raise ProtocolError(ErrorCode.BAD_FIELD, "starts_in must be 0 seconds to 30 days")
        starts_at = datetime.fromtimestamp(self.now(), UTC) + timedelta(seconds=req.starts_in)
        rounds = req.rounds if req.rounds is not None else (4 if req.format == "swiss" else None)
        async with self._creating:
            await self._may_create(me, session.address)
            try:
                info = await self.store.create(
                    req.name,
                    game.name,
                    options,
                    seats,
                    clock.to_data(),
                    req.format,
                    req.entry,
                    starts_at,
                    rounds=rounds,
                    duration=req.duration,
                    created_by=me,
                    created_from=session.address,
                )
            except TournamentExists as exc:
                raise ProtocolError(ErrorCode.TOURNAMENT_EXISTS, str(exc)) from None
            except (NoSuchTournament, StorageError) as exc:
                if type(exc) is not StorageError:
                    raise
                raise ProtocolError(ErrorCode.BAD_FIELD, str(exc)) from None
        self.pages.changed()
        self.director.plan(Slot(info.id, info.status, info.format, info.starts_at.timestamp(), info.duration))
        session.send(server_message("tournament_created", req.id, tournament=info.to_data()))

    async def _may_create(self, account_id: int, address: str) -> None:
        """Every live tournament is held by the server (listed, scheduled, an arena watched):
        one account, and one address, hold a bounded number at once."""
        limits = self.limiter.limits
        mine, here = await self.store.live_created(account_id, address)
        if mine >= limits.tournaments_per_account:
            raise ProtocolError(
                ErrorCode.TOO_MANY_TOURNAMENTS,
                f"you have {mine} tournaments registering or running; at most {limits.tournaments_per_account}",
            )
        if here >= limits.tournaments_per_address:
            raise ProtocolError(
                ErrorCode.TOO_MANY_TOURNAMENTS,
                f"{here} tournaments created from your address are registering or running; "
                f"at most {limits.tournaments_per_address}",
            )

    async def on_list(self, session: Session, req: m.TournamentList) -> None:
        limit = check_list_request(req.status, req.cursor, req.limit)
        check_reading(session)
        if session.limits is not None and not self.pages.cached(req.status, req.cursor, limit, session.encoding):
            self.limiter.charge(session.limits, limit / 10)  # a page built costs the asker what it costs
        page = await self.pages.page(req.status, req.cursor, limit, session.encoding)
        session.send_frame(tournaments_reply(req.id, page, session.encoding))
        if req.watch:
            self.pages.watch(session)
        elif req.watch is False:
            self.pages.unwatch(session)

    async def on_join(self, session: Session, req: m.TournamentJoin) -> None:
        me = self._account(session)
        info = await self._tournament(req.tournament)
        assert session.identity is not None
        kind = session.identity.kind
        if (info.entry == "people" and kind == "bot") or (info.entry == "bots" and kind != "bot"):
            who = "bots" if info.entry == "bots" else "people"
            raise ProtocolError(ErrorCode.ENTRY_REFUSED, f"tournament {info.name} is for {who} only")
        if kind == "bot" and info.game in self.registry:
            # a bot paired in a game it cannot play would lose every round on time, holding its tables
            reason = self._bot_refusal(session, info)
            if reason is not None:
                raise ProtocolError(ErrorCode.BOT_DECLINES, f"{session.identity.name} {reason}")
        if info.status == "finished" or (info.status == "running" and info.format == "round-robin"):
            raise ProtocolError(
                ErrorCode.TOURNAMENT_CLOSED, f"tournament {info.name} takes no more entrants ({info.status})"
            )
        await self.store.enter(info.id, me)
        self.pages.changed()
        self.director.entered(info.id)
        fresh = await self._tournament(info.name)
        session.send(server_message("tournament_joined", req.id, tournament=fresh.to_data()))

    def _bot_refusal(self, session: Session, info: TournamentInfo) -> str | None:
        identity = session.identity
        assert identity is not None
        clock = ClockSpec.parse(info.clock) if info.clock else None
        seconds = clock_seconds(clock.initial, clock.increment, clock.per_move) if clock else clock_seconds(None)
        accepts = bot_accepts(identity.accepts, identity.agent, self.registry)
        return allows(accepts, self.registry.get(info.game), info.seats, seconds)

    async def on_withdraw(self, session: Session, req: m.TournamentWithdraw) -> None:
        me = self._account(session)
        info = await self._tournament(req.tournament)
        if not await self.store.withdraw(info.id, me):
            raise ProtocolError(ErrorCode.NOT_ENTERED, f"you are not entered in tournament {info.name}")
        self.pages.changed()
        session.send(server_message("tournament_withdrawn", req.id, tournament=info.name))

    async def on_standings(self, session: Session, req: m.TournamentStandings) -> None:
        info = await self._tournament(req.tournament)
        tables = await self.store.tables(info.id)
        rows = standings(info.format, tables, await self.store.entrants(info.id))
        session.send(server_message("tournament_standings", req.id, tournament=info.to_data(), standings=rows))

    async def on_pairings(self, session: Session, req: m.TournamentPairings) -> None:
        info = await self._tournament(req.tournament)
        tables = await self.store.tables(info.id, req.round)
        rows = [
            {
                "round": t.round,
                "table": t.table,
                "players": t.names,
                "room": t.room_code,
                "game_id": t.game_id,
                "status": "bye" if t.game_id is None else t.status,
                "result": t.result,
            }
            for t in tables
        ]
        session.send(server_message("tournament_pairings", req.id, tournament=info.name, tables=rows))

    # Helpers.

    async def _tournament(self, name: str) -> TournamentInfo:
        info = await self.store.get(name)
        if info is None:
            raise ProtocolError(ErrorCode.NO_SUCH_TOURNAMENT, f"there is no tournament named {name!r}")
        return info

    @staticmethod
    def _account(session: Session) -> int:
        identity = session.identity
        if identity is None or identity.account_id is None:
            raise ProtocolError(ErrorCode.ACCOUNTS_ONLY, "tournaments are for accounts: log in (guests cannot enter)")
        return identity.account_id
