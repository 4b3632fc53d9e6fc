"""The ladder requests: `ladder_join`, `ladder_leave`, `ladder_list`, `ladder_standings`,
`ladder_history`.

A bot account joins a ladder over its connection and stays a member while it is connected; the
director (`partida.server.competition.ladder_director`) pairs the members and opens their games.
With several nodes, members connect to the node that schedules (`moved` elsewhere).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from partida.bots.declaration import bot_accepts
from partida.competition.ladder_report import rating_series
from partida.games.registry import Registry
from partida.protocol import ErrorCode, ProtocolError, server_message
from partida.protocol import messages as m
from partida.protocol.accepts import allows, clock_seconds
from partida.room.clocks import ClockSpec
from partida.server.competition.ladder_director import LadderDirector, LiveLadder, Member
from partida.storage.ladders import LadderStore, Standing

if TYPE_CHECKING:
    from partida.server.session import Session
    from partida.server.shell import Handler

MAX_GAMES_PER_BOT = 16


class LadderService:
    def __init__(self, ladders: LadderStore, registry: Registry, director: LadderDirector) -> None:
        self.ladders = ladders
        self.registry = registry
        self.director = director

    def handlers(self) -> Mapping[str, Handler]:
        return {
            "ladder_join": self.on_join,
            "ladder_leave": self.on_leave,
            "ladder_list": self.on_list,
            "ladder_standings": self.on_standings,
            "ladder_history": self.on_history,
        }

    def disconnected(self, session: Session) -> None:
        self.director.disconnected(session)

    async def on_join(self, session: Session, req: m.LadderJoin) -> None:
        identity = session.identity
        assert identity is not None
        if identity.kind != "bot" or identity.account_id is None:
            raise ProtocolError(
                ErrorCode.BOTS_ONLY,
                "only bot accounts play on ladders (log in with a token from `partida db create-bot`)",
            )
        live = await self.director.ladder(req.ladder)
        game = live.info.game
        # the same rule as every other seating (protocol/accepts.py), under the ladder's code
        clock = ClockSpec.parse(live.info.clock)
        seconds = clock_seconds(clock.initial, clock.increment, clock.per_move) if clock else clock_seconds(None)
        accepts = bot_accepts(identity.accepts, identity.agent, self.registry)
        reason = allows(accepts, self.registry.get(game), live.info.seats, seconds)
        if reason is not None:
            raise ProtocolError(
                ErrorCode.WRONG_GAME,
                f"ladder {live.info.name} plays {game}, which this bot does not accept: it {reason}",
                details={"accepts": accepts.to_data()},
            )
        max_games = 1 if req.max_games is None else req.max_games
        if not 1 <= max_games <= MAX_GAMES_PER_BOT:
            raise ProtocolError(ErrorCode.BAD_FIELD, f"max_games is 1 to {MAX_GAMES_PER_BOT}, not {max_games}")
        await self.director.where(live.info.name)
        present = live.members.get(identity.account_id)
        if present is not None and present.session is not session and not present.session.closed:
            raise ProtocolError(
                ErrorCode.LADDER_JOINED_ELSEWHERE,
                f"{identity.name} is already in ladder {live.info.name} from another connection",
            )
        await self.ladders.join(live.info.id, identity.account_id)
        member = Member(identity.account_id, identity.name, session, max_games)
        live.members[identity.account_id] = member
        standing = await self._standing(live, identity.account_id)
        session.send(
            server_message(
                "ladder_joined",
                req.id,
                ladder=live.info.name,
                summary=await self._summary(live),
                standing=standing.to_data() if standing else None,
                max_games=max_games,
            )
        )
        self.director.wake()

    async def on_leave(self, session: Session, req: m.LadderLeave) -> None:
        live = await self.director.ladder(req.ladder)
        identity = session.identity
        assert identity is not None
        member = live.members.get(identity.account_id) if identity.account_id is not None else None
        if member is None or member.session is not session:
            raise ProtocolError(ErrorCode.NOT_IN_LADDER, f"this connection is not in ladder {live.info.name}")
        del live.members[member.account_id]
        session.send(server_message("ladder_left", req.id, ladder=live.info.name))

    async def on_list(self, session: Session, req: m.LadderList) -> None:
        live_ladders = self.director.ladders
        for info in await self.ladders.all():
            if info.name not in live_ladders:
                await self.director.load(info)
            else:
                live_ladders[info.name].info = info
        rows = [await self._summary(live) for _, live in sorted(live_ladders.items())]
        session.send(server_message("ladders", req.id, ladders=rows))

    async def on_standings(self, session: Session, req: m.LadderStandings) -> None:
        live = await self.director.ladder(req.ladder)
        table = await self.ladders.standings(live.info.id)
        connected, _ = await self.director.counts(live)
        rows = [
            {"rank": rank, **s.to_data(), "connected": s.account_id in connected}
            for rank, s in enumerate(table, start=1)
        ]
        session.send(server_message("standings", req.id, ladder=live.info.name, standings=rows))

    async def on_history(self, session: Session, req: m.LadderHistory) -> None:
        """Ratings over games, as `partida ladder plot` draws them, for a plot in a browser;
        members in standings order."""
        live = await self.director.ladder(req.ladder)
        history = await self.ladders.history(live.info.id)
        table = await self.ladders.standings(live.info.id)
        series = rating_series((c.name, c.before, c.after) for c in history)
        rows = [
            {
                "name": s.name,
                "points": [
                    {"games": p.games, "mu": p.mu, "sigma": p.sigma, "rating": p.display} for p in series[s.name]
                ],
            }
            for s in table
            if s.name in series
        ]
        session.send(server_message("ladder_history", req.id, ladder=live.info.name, series=rows))

    async def _summary(self, live: LiveLadder) -> dict[str, Any]:
        fresh = await self.ladders.get(live.info.name)
        if fresh is not None:
            live.info = fresh
        connected, playing = await self.director.counts(live)
        return {**live.info.to_data(), "connected": len(connected), "playing": playing}

    async def _standing(self, live: LiveLadder, account_id: int) -> Standing | None:
        table = await self.ladders.standings(live.info.id)
        return next((s for s in table if s.account_id == account_id), None)
