"""Challenges: asking a named account (a person or a bot, here or on another node) for a game,
and the room that opens when it is accepted (`server/challenges.py` keeps the open ones)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from partida.protocol import ErrorCode, ProtocolError, server_message
from partida.protocol import messages as m
from partida.room.terms import RoomTerms
from partida.server.account_presence import AccountPresence
from partida.server.challenges import Challenge, Challenges
from partida.server.connections import Connections
from partida.server.limits import Limiter
from partida.server.rooms.table import Rooms
from partida.server.services.bots import BotDirectory
from partida.server.services.rooms import RoomService, check_rated
from partida.server.session import Session

if TYPE_CHECKING:
    from partida.server.shell import Handler


class ChallengeService:
    def __init__(
        self,
        challenges: Challenges,
        connections: Connections,
        presence: AccountPresence,
        bots: BotDirectory,
        terms: RoomService,
        rooms: Rooms,
        limiter: Limiter,
    ) -> None:
        self.challenges = challenges
        self.challenges.on_lapse = self.lapsed
        self.connections = connections
        self.presence = presence  # the challenged connected to other nodes
        self.bots = bots
        self.terms = terms  # checks a challenge's terms as it checks a new room's
        self.rooms = rooms
        self.limiter = limiter

    def handlers(self) -> Mapping[str, Handler]:
        return {"challenge": self.on_challenge, "accept": self.on_accept, "decline": self.on_decline}

    def disconnected(self, session: Session) -> None:
        """Its own challenges lapse; an account's last connection leaves no one to answer its own."""
        self.challenges.drop_from(session)
        self._challenged_left(session)

    async def on_challenge(self, session: Session, req: m.Challenge) -> None:
        me = session.identity
        assert me is not None
        targets = self.connections.of_account(req.to)
        if not targets:
            elsewhere = await self.presence.elsewhere(req.to)
            if elsewhere:
                await self._challenge_elsewhere(session, req, elsewhere)
                return
        if not targets:
            raise ProtocolError(
                ErrorCode.NO_SUCH_PLAYER, f"no account named {req.to!r} is connected (guests cannot be challenged)"
            )
        target = targets[0].identity
        assert target is not None and target.account_id is not None
        if target.account_id == me.account_id:
            raise ProtocolError(ErrorCode.BAD_FIELD, "challenge: you cannot challenge yourself")
        terms = self.terms.check_terms(session, req.game, req.options, req.seats, req.clock)
        game, clock = terms.game, terms.clock
        if req.rated:
            check_rated(session, clock)
        if target.kind == "bot":
            self.bots.may_play_bots(session)
            clock = clock or self.bots.game_clock()
        challenge = Challenge(
            session, target.account_id, target.name, game, terms.options, terms.seats, clock, rated=req.rated
        )
        if target.kind == "bot":
            # A bot answers by what its hello declared: no round trip, it is seated like any bot,
            # and a game it does not accept is refused before any challenge is sent.
            bot = min(targets, key=self.bots.games_of)
            self.bots.check(bot, game, terms.seats, clock, session)
            session.send(server_message("challenge_sent", req.id, challenge=challenge.to_data()))
            most = self.limiter.limits.games_per_bot
            if self.bots.games_of(bot) >= most:
                reason = f"{target.name} is playing {most} games, its most; try again later"
                declined = server_message("challenge_declined", challenge=challenge.id, by=target.name, reason=reason)
                session.send(declined)
                return
            try:
                self.bots.may_take(bot, session)
            except ProtocolError as share:  # this address holds its share of the bot's games
                session.send(
                    server_message("challenge_declined", challenge=challenge.id, by=target.name, reason=share.message)
                )
                return
            await self._open_challenge_room(challenge, bot)
            return
        self.challenges.add(challenge)
        session.send(server_message("challenge_sent", req.id, challenge=challenge.to_data()))
        for other in targets:
            other.send(server_message("challenge", challenge=challenge.to_data()))

    async def _challenge_elsewhere(self, session: Session, req: m.Challenge, elsewhere: list[Any]) -> None:
        """A challenge to an account connected to other nodes only (server/presence.py): a bot
        is summoned here and seated; a person is told through each node it is connected to. The
        challenge and its room stay on this node."""
        me = session.identity
        assert me is not None
        where = elsewhere[0]
        if where.account_id == me.account_id:
            raise ProtocolError(ErrorCode.BAD_FIELD, "challenge: you cannot challenge yourself")
        terms = self.terms.check_terms(session, req.game, req.options, req.seats, req.clock)
        if req.rated:
            check_rated(session, terms.clock)
        challenge = Challenge(
            session, where.account_id, where.name, terms.game, terms.options, terms.seats, terms.clock, rated=req.rated
        )
        if where.kind != "bot":
            self.challenges.add(challenge)
            session.send(server_message("challenge_sent", req.id, challenge=challenge.to_data()))
            await self.presence.forward(challenge, elsewhere)
            return
        session.send(server_message("challenge_sent", req.id, challenge=challenge.to_data()))
        try:
            bot = await self.presence.summon(where.name, terms.game.name)
            if bot is None:
                raise ProtocolError(ErrorCode.NO_BOT_AVAILABLE, f"{where.name} is no longer connected")
            self.bots.check(bot, terms.game, terms.seats, terms.clock, session)
        except ProtocolError as exc:  # it does not play the game, or did not come
            declined = server_message("challenge_declined", challenge=challenge.id, by=where.name, reason=exc.message)
            session.send(declined)
            return
        if not session.closed:  # the challenger may have left while the bot came
            await self._open_challenge_room(challenge, bot)

    def _challenged_left(self, session: Session) -> None:
        """The last connection here of a challenged account left: nobody can answer its open
        challenges any more (a new connection is not told of them), so their challengers hear so
        now, not when they lapse minutes later. Challenges forwarded to other nodes stay."""
        me = session.identity
        if me is None or me.account_id is None:
            return
        unanswerable = [c for c in self.challenges.open.values() if c.account_id == me.account_id and not c.nodes]
        if not unanswerable:  # the usual case, told without looking at every connection
            return
        if self.connections.holds_account(me.account_id):
            return
        for challenge in unanswerable:
            self.challenges.drop(challenge.id)
            challenge.challenger.send(
                server_message("challenge_declined", challenge=challenge.id, by=challenge.to, reason="left")
            )

    def lapsed(self, challenge: Challenge) -> None:
        challenge.challenger.send(
            server_message("challenge_declined", challenge=challenge.id, by=challenge.to, reason="expired")
        )

    async def on_accept(self, session: Session, req: m.AcceptChallenge) -> None:
        remote = self.presence.holds(req.challenge, session)
        if remote is not None:  # it lives on the challenger's node: accepted there
            raise ProtocolError(
                ErrorCode.MOVED,
                f"challenge {req.challenge} is on node {remote.node}",
                details={"url": remote.url, "challenge": req.challenge},
            )
        challenge = self.challenges.take(req.challenge, session)
        room, seat, token = await self._open_challenge_room(challenge, session)
        session.send(
            server_message(
                "challenge_accepted",
                req.id,
                challenge=challenge.id,
                room=room["code"],
                summary=room,
                seat=seat,
                token=token,
            )
        )

    async def on_decline(self, session: Session, req: m.DeclineChallenge) -> None:
        remote = self.presence.holds(req.challenge, session)
        if remote is not None:
            await self.presence.decline(session, req.id, req.challenge, remote)
            return
        challenge = self.challenges.take(req.challenge, session)
        assert session.identity is not None
        challenge.challenger.send(
            server_message("challenge_declined", challenge=challenge.id, by=session.identity.name, reason="declined")
        )
        session.send(server_message("challenge_declined", req.id, challenge=challenge.id, by=session.identity.name))

    async def _open_challenge_room(
        self, challenge: Challenge, opponent: Session
    ) -> tuple[dict[str, Any], int, str | None]:
        """A private room for a challenge: the challenger in seat 0, the opponent in seat 1 (a bot
        is seated as a bot), other seats free for whoever gets the code. Returns the opponent's
        room summary, seat and token; the challenger is told by `challenge_accepted`."""
        terms = RoomTerms(
            challenge.game,
            challenge.options,
            challenge.seats,
            clock=challenge.clock,
            abandon_after=self.rooms.abandon_after,
            takebacks=True,  # a casual game between friends (the core refuses them in a rated one)
            rated=challenge.rated,
        )
        room = await self.rooms.open(terms, challenge.challenger)
        assert opponent.identity is not None
        is_bot = opponent.identity.kind == "bot"
        seats: list[int] = []

        async def seat_both() -> None:
            # Checked in the room's command, before anyone sits: a challenger whose connection
            # ended while the room was being stored would otherwise hold a seat nobody sits in.
            if challenge.challenger.closed:
                await room.close_unstarted()
                raise ProtocolError(
                    ErrorCode.NO_SUCH_CHALLENGE, f"challenge {challenge.id} is gone: its challenger left"
                )
            await room.join(challenge.challenger, 0, None)
            challenge.challenger.send(  # before the second seat starts the game and its updates
                server_message(
                    "challenge_accepted",
                    challenge=challenge.id,
                    room=room.code,
                    summary=room.summary(),
                    seat=0,
                    token=room.core.token_for(0),
                )
            )
            seats.append(await room.seat_bot(opponent, 1) if is_bot else await room.join(opponent, 1, None))

        await room.call(seat_both)
        if is_bot:
            self.bots.games_by_address.add(challenge.challenger.address, room)
            return room.summary(), seats[0], None
        return room.summary(), seats[0], room.core.token_for(seats[0])
