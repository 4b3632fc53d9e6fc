"""The bot directory: which connected bot accounts play which games, which one to seat for an
agent's name, and the catalogue of games with the bots that play each (`list_games`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from partida.bots.declaration import agent_accepts, bot_accepts
from partida.bots.registry import all_agents
from partida.games.base import Game
from partida.games.registry import Registry
from partida.protocol import ErrorCode, ProtocolError, server_message
from partida.protocol import messages as m
from partida.protocol.accepts import Accepts, allows, clock_seconds
from partida.room.clocks import ClockSpec
from partida.room.core import Seat
from partida.server.account_presence import AccountPresence
from partida.server.connections import Connections
from partida.server.limits import Limiter
from partida.server.rooms.counts import RoomsByAddress
from partida.server.rooms.driver import Room
from partida.server.session import Session

if TYPE_CHECKING:
    from partida.server.shell import Handler

RESERVED_PREFIX = "pool-"  # the built-in bots' accounts, reserved before the pool creates them


class BotDirectory:
    def __init__(
        self,
        connections: Connections,
        registry: Registry,
        limiter: Limiter,
        presence: AccountPresence,
        games_by_address: RoomsByAddress,
    ) -> None:
        self.connections = connections
        self.registry = registry
        self.limiter = limiter
        self.presence = presence  # bot accounts connected to other nodes
        self.games_by_address = games_by_address  # rooms with bots, by their creator's address

    def handlers(self) -> Mapping[str, Handler]:
        return {"list_games": self.on_list_games}

    async def on_list_games(self, session: Session, req: m.ListGames) -> None:
        games = []
        for game in self.registry.games():
            info = game.describe()
            # only the agents whose declaration allows the game: the New room form offers these;
            # a bridge (`stdio`, `gtp`) names no bot, and is asked for by its account's name
            info["bots"] = sorted(
                {
                    s.identity.agent  # type: ignore[union-attr]
                    for s in self.connections.bots()
                    if not _bridge(s.identity.agent) and self.refusal(s, game) is None  # type: ignore[union-attr]
                }
            )
            games.append(info)
        # the clock a game with a bot gets when its creator asks for none: the form says so first
        bot_clock = self.game_clock()
        session.send(server_message("games", req.id, games=games, bot_clock=bot_clock and bot_clock.to_data()))

    def accepts(self, bot: Session) -> Accepts:
        """What a connected bot plays: its hello's declaration, narrowed by its built-in agent's."""
        identity = bot.identity
        assert identity is not None
        return bot_accepts(identity.accepts, identity.agent, self.registry)

    def refusal(
        self,
        bot: Session,
        game: Game,
        seats: int | None = None,
        clock: ClockSpec | bool | None = False,
        asker: Session | None = None,
    ) -> str | None:
        """Why `bot` may not be offered or seated in `game` (protocol/accepts.py's `allows`),
        None if it may. `clock` False: a listing (neither clock nor load checked); None: an
        untimed room. `asker`: who would play it (for `max_games_per_opponent`)."""
        if clock is False:  # a listing: what it plays, not how busy it is
            return allows(self.accepts(bot), game, seats)
        seconds = _clock_seconds(clock)  # type: ignore[arg-type]
        playing = self.games_of(bot)
        against = self.games_against(bot, asker) if asker is not None else 0
        return allows(self.accepts(bot), game, seats, seconds, playing, against)

    def check(
        self, bot: Session, game: Game, seats: int | None, clock: ClockSpec | None, asker: Session | None
    ) -> None:
        """`refusal`, raised as `bot_declines` with the bot's declaration in `accepts`."""
        reason = self.refusal(bot, game, seats, clock, asker)
        if reason is not None:
            raise self.declines(bot, reason)

    def declines(self, bot: Session, reason: str, who: str = "") -> ProtocolError:
        """The refusal of `bot` (named `who`, else "the bot NAME"), with its declaration."""
        return ProtocolError(
            ErrorCode.BOT_DECLINES,
            f"{who or 'the bot ' + bot.name} {reason}",
            details={"accepts": self.accepts(bot).to_data()},
        )

    @staticmethod
    def games_against(bot: Session, asker: Session) -> int:
        """The games `bot` is in, not over, where `asker` (its account, or this connection of a
        guest) has a seat: what `max_games_per_opponent` bounds."""
        me = asker.identity
        account = me.account_id if me is not None else None

        def theirs(seat: Seat[Session] | None) -> bool:
            if seat is None:
                return False
            return seat.account_id == account if account is not None else seat.session is asker

        return sum(1 for room in _games_on(bot) if any(theirs(s) for s in room.core.seats))

    @staticmethod
    def games_of(bot: Session) -> int:
        """The games a bot connection is seated in that are not over."""
        return sum(1 for _ in _games_on(bot))

    def account(self, name: str) -> Session | None:
        """The connection of the bot account `name` here, if it is connected here."""
        return next((s for s in self.connections.bots() if s.identity.name.lower() == name.lower()), None)  # type: ignore[union-attr]

    def may_play_bots(self, session: Session) -> None:
        """One address keeps at most `bot_games_per_address` games with bots going."""
        if session.limits is not None:
            limit = self.limiter.limits.bot_games_per_address
            self.limiter.may_play_bots(session.limits, self.games_by_address.count(session.address, limit))

    def games_for(self, bot: Session, address: str) -> int:
        """The games of `bot` not over that `address` asked for."""
        return sum(1 for room in _games_on(bot) if self.games_by_address.holds(address, room))

    def may_take(self, bot: Session, asker: Session | None) -> None:
        """`asker`'s address keeps at most `games_per_bot_per_address` of `bot`'s games."""
        if asker is not None and asker.limits is not None:
            self.limiter.may_take_bot(asker.limits, bot.name, self.games_for(bot, asker.address))

    def game_clock(self) -> ClockSpec | None:
        """The clock of a game with a bot whose creator asked for none: a player who walks away
        without leaving (and so is never abandoned) must not hold the bot's game for good."""
        seconds = self.limiter.limits.bot_move_seconds
        return ClockSpec(per_move=seconds) if seconds > 0 else None

    def pick(
        self,
        wanted: str,
        game: Game,
        seats: int | None = None,
        clock: ClockSpec | bool | None = False,
        asker: Session | None = None,
    ) -> Session:
        """The bot to seat for `wanted`: a connected bot account of that name (any agent, built-in
        or its own), else the least busy bot running the built-in agent of that name: the server's
        own pool bots first, someone's bot account running that agent only when no pool bot does.
        A bot whose declaration does not allow the room is refused at once (`bot_declines`); only a
        bot of which `asker`'s address holds less than its share (`may_take`)."""
        bots = self.connections.bots()
        most = self.limiter.limits.games_per_bot
        bot = self.account(wanted)
        if bot is not None:
            reason = self.refusal(bot, game, seats, clock, asker)
            if reason is not None:
                raise self.declines(bot, reason)
            if self.games_of(bot) >= most:
                raise ProtocolError(
                    ErrorCode.NO_BOT_AVAILABLE, f"the bot {bot.name} is playing {most} games, its most; try again later"
                )
            self.may_take(bot, asker)
            return bot
        if _bridge(wanted):  # "gtp" names a bridge, not what plays behind it
            raise ProtocolError(
                ErrorCode.UNKNOWN_AGENT,
                f"{wanted!r} is a bridge to a program of someone's; ask for the bot by its account name",
            )
        running = [s for s in bots if s.identity.agent == wanted]  # type: ignore[union-attr]
        candidates = [s for s in running if self.refusal(s, game, seats, clock, asker) is None]
        if running and not candidates:
            first = running[0]
            raise self.declines(first, self.refusal(first, game, seats, clock, asker) or "", wanted)
        if candidates:
            free = [s for s in candidates if self.games_of(s) < most]
            if not free:
                raise ProtocolError(
                    ErrorCode.NO_BOT_AVAILABLE,
                    f"every {wanted} bot is playing {most} games, its most; try again later",
                )
            # the server's own pool bot first (an agent's name means it), then the least busy
            free.sort(key=lambda s: (not s.name.startswith(RESERVED_PREFIX), self.games_of(s)))
            for bot in free[:-1]:
                try:
                    self.may_take(bot, asker)
                    return bot
                except ProtocolError:
                    continue  # this address's share of it is taken: another bot of the agent
            self.may_take(free[-1], asker)
            return free[-1]
        available = sorted({s.identity.agent for s in bots if self.refusal(s, game) is None})  # type: ignore[union-attr,misc]
        hint = ", ".join(available) if available else "none"
        if wanted not in all_agents():
            raise ProtocolError(
                ErrorCode.UNKNOWN_AGENT,
                f"{wanted!r} is neither a built-in agent nor a connected bot account "
                f"(agents connected for {game.name}: {hint})",
            )
        known = agent_accepts(wanted, self.registry)
        if known is not None and (reason := allows(known, game, seats)) is not None:
            raise ProtocolError(ErrorCode.BOT_DECLINES, f"{wanted} {reason}", details={"accepts": known.to_data()})
        raise ProtocolError(
            ErrorCode.NO_BOT_AVAILABLE, f"no {wanted} bot is connected for {game.name} (connected bots: {hint})"
        )

    async def find(
        self,
        wanted: str,
        game: Game,
        seats: int | None = None,
        clock: ClockSpec | bool | None = False,
        asker: Session | None = None,
    ) -> Session:
        """`pick`; a bot account of that name connected only to another node is summoned here
        (server/presence.py), then held to its declaration like one of this node's."""
        try:
            return self.pick(wanted, game, seats, clock, asker)
        except ProtocolError as exc:
            if exc.code not in (ErrorCode.UNKNOWN_AGENT, ErrorCode.NO_BOT_AVAILABLE):
                raise
            if self.account(wanted) is not None:
                raise  # connected here, and does not play the game
            bot = await self.presence.summon(wanted, game.name)
            if bot is None:
                raise
            self.check(bot, game, seats, clock, asker)
            self.may_take(bot, asker)
            return bot


def _bridge(agent: str | None) -> bool:
    """Whether `agent` is a bridge to someone's program (`stdio`, `gtp`), not a bot of its own."""
    spec = all_agents().get(agent) if agent is not None else None
    return spec is not None and spec.external


def _clock_seconds(clock: ClockSpec | None) -> float:
    if clock is None:
        return clock_seconds(None)
    return clock_seconds(clock.initial, clock.increment, clock.per_move)


def _games_on(bot: Session) -> list[Room]:
    """The rooms of this node `bot` is in whose game is not over (not another node's, watched)."""
    return [r for r in bot.rooms if isinstance(r, Room) and r.core.status in ("waiting", "playing")]
