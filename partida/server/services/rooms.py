"""The room requests: `create_room` (and the terms challenges and seeks are checked against), the
requests a room answers (join, leave, watch, add_bot, start, act, the endings, rematch), and a
gone connection leaving its rooms.

The rooms are the table's (`server/rooms/table.py`: open, resume, find, drop) and each room's
rules its core's (`partida/room/core.py`); this service checks the terms a new room is opened with,
finds the room a request names, and runs each request as one of its commands (the ending requests
as the core's rule for each, carried out by the driver's `request_ending`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from partida.games.base import BadOptions, Game
from partida.games.registry import Registry, UnknownGame
from partida.protocol import Encoding, ErrorCode, ProtocolError, encode, server_message
from partida.protocol import messages as m
from partida.room.clocks import MAX_SECONDS, BadClock, ClockSpec
from partida.room.core import Effect, RoomCore
from partida.room.terms import RoomTerms
from partida.server.limits import Limiter
from partida.server.publisher import Publisher
from partida.server.rooms.driver import Room
from partida.server.rooms.rematch import offer_rematch
from partida.server.rooms.table import Rooms
from partida.server.services.bots import BotDirectory
from partida.server.session import Session

if TYPE_CHECKING:
    from partida.server.shell import Handler

log = logging.getLogger(__name__)

NOTE_MAX = 300  # characters of a resignation's note (why a bridge's engine gave up)
EndingRule = Callable[[RoomCore[Session], int], list[Effect]]
# Ending requests: the core's rule for each (a request that does not apply is refused with a
# stable error code and changes nothing), and the reply that says it was done.
ENDING_REQUESTS: dict[str, tuple[EndingRule, str]] = {
    "resign": (RoomCore.resign, "resigned"),
    "offer_draw": (RoomCore.offer_draw, "draw_offered"),
    "accept_draw": (RoomCore.accept_draw, "draw_accepted"),
    "decline_draw": (RoomCore.decline_draw, "draw_declined"),
    "abort": (RoomCore.abort, "aborted"),
    "takeback_offer": (RoomCore.offer_takeback, "takeback_offered"),
    "takeback_accept": (RoomCore.accept_takeback, "takeback_accepted"),
    "takeback_decline": (RoomCore.decline_takeback, "takeback_declined"),
}


def checked_note(note: str) -> str:
    """A resignation's note goes into the stored result that every replay and listing shows."""
    note = note.strip()
    if not note or len(note) > NOTE_MAX:
        raise ProtocolError(ErrorCode.BAD_FIELD, f"resign: a note is 1 to {NOTE_MAX} characters")
    return note


def check_rated(session: Session, clock: ClockSpec | None) -> None:
    """A rated room is created by an account, with a clock (`partida.competition.ratings`: a
    game without a clock has no class, and guests are never rated)."""
    if session.identity is None or session.identity.kind == "guest":
        raise ProtocolError(ErrorCode.RATED_NEEDS_ACCOUNT, "only an account can play rated: log in, or play casual")
    if clock is None:
        raise ProtocolError(ErrorCode.RATED_NEEDS_CLOCK, "a rated game needs a clock (say 5+3); or play casual")


class RoomService:
    def __init__(
        self, rooms: Rooms, registry: Registry, limiter: Limiter, bots: BotDirectory, publisher: Publisher
    ) -> None:
        self.rooms = rooms  # this node's rooms; their default grace when the creator names none
        self.registry = registry
        self.limiter = limiter
        self.bots = bots
        self.publisher = publisher
        self.bot_games_by_address = bots.games_by_address
        # Told of each connection that joined or watched a room, after its reply (chat's history).
        self.entered: list[Callable[[Session, Room], Awaitable[None]]] = []

    def handlers(self) -> Mapping[str, Handler]:
        return {
            "create_room": self.on_create_room,
            "join": self.on_join,
            "leave": self.on_leave,
            "watch": self.on_watch,
            "add_bot": self.on_add_bot,
            "start": self.on_start,
            "act": self.on_act,
            **{kind: self.on_ending for kind in ENDING_REQUESTS},
            "rematch": self.on_rematch,
        }

    async def disconnected(self, session: Session) -> None:
        """A gone connection leaves every room it was in."""
        if session.rooms:
            # one task of its own leaves every room, to the last, even if this one is cancelled
            await asyncio.shield(asyncio.ensure_future(self._leave_rooms(session)))

    async def _leave_rooms(self, session: Session) -> None:
        """A gone connection's seats, in every room it was in, one room after the other: one
        task for them all, where each room was a task of its own (`Room.call`), and a bot that
        played game after game on one connection is in every room not yet reaped."""
        for room in list(session.rooms):
            with contextlib.suppress(Exception):  # a room that closed meanwhile; failures are logged
                await room.call_here(lambda room=room: room.disconnect(session))

    async def return_bot_to_its_seats(self, session: Session) -> None:
        """After a restart the pool bots reconnect (and after a takeover they are here already):
        put them back in the games they were playing."""
        assert session.identity is not None
        for room in list(self.rooms.values()):
            if room.core.status != "playing":
                continue
            for seat, occupant in enumerate(room.core.seats):
                if (
                    occupant is not None
                    and occupant.account_id == session.identity.account_id
                    and occupant.session is None
                ):
                    await room.call(lambda room=room, seat=seat: room.seat_bot(session, seat))

    def check_terms(
        self, session: Session, name: str, raw_options: dict[str, Any] | None, raw_seats: int | None, raw_clock: Any
    ) -> RoomTerms:
        """The game, options, seat count and clock a new room would have, checked (for
        `create_room` and `challenge`), and the asker allowed one more waiting room."""
        try:
            game = self.registry.get(name)
        except UnknownGame as exc:
            raise ProtocolError(ErrorCode.UNKNOWN_GAME, str(exc)) from None
        options = self.check_options(game, raw_options)
        try:
            seats = game.check_seats(raw_seats)
        except BadOptions as exc:
            raise ProtocolError(ErrorCode.BAD_OPTIONS, str(exc)) from None
        if session.limits is not None:
            limit = self.limiter.limits.waiting_rooms_per_address
            self.limiter.may_create_room(session.limits, self.rooms.waiting_by_address.count(session.address, limit))
        try:
            clock = ClockSpec.parse(raw_clock)
        except BadClock as exc:
            raise ProtocolError(ErrorCode.BAD_CLOCK, str(exc)) from None
        return RoomTerms(game, options, seats, clock=clock, abandon_after=self.rooms.abandon_after)

    def check_options(self, game: Game, raw_options: dict[str, Any] | None) -> dict[str, Any]:
        """`raw_options` resolved by `game`, within the size cap: a room's, and a tournament's
        (whose every table is a room)."""
        # The size as sent is checked before the game reads the options (a game may parse text
        # in them), the size as resolved after (defaults and conversions: what is stored).
        self._check_options_size(raw_options or {})
        try:
            options = game.resolve_options(raw_options)
        except BadOptions as exc:
            raise ProtocolError(ErrorCode.BAD_OPTIONS, str(exc)) from None
        self._check_options_size(options)
        return options

    def _check_options_size(self, options: dict[str, Any]) -> None:
        size = len(encode(options, Encoding.MSGPACK))
        if size > self.limiter.limits.options_bytes:
            raise ProtocolError(
                ErrorCode.BAD_OPTIONS, f"the options take {size} bytes; at most {self.limiter.limits.options_bytes}"
            )

    async def on_create_room(self, session: Session, req: m.CreateRoom) -> None:
        terms = self.check_terms(session, req.game, req.options, req.seats, req.clock)
        game, seats, clock = terms.game, terms.seats, terms.clock
        if req.public and session.limits is not None:
            limit = self.limiter.limits.public_rooms_per_address
            public = self.rooms.public_by_address.count(session.address, limit)
            self.limiter.may_open_public_room(session.limits, public)
        if req.bots:
            self.bots.may_play_bots(session)
        if req.bots and clock is None:
            clock = self.bots.game_clock()
        bots = await self._parse_bot_seats(req.bots or {}, terms, clock, session)
        if req.seat is not None and not 0 <= req.seat < seats:
            raise ProtocolError(ErrorCode.NO_SUCH_SEAT, f"this game has seats 0 to {seats - 1}")
        if req.rated:
            check_rated(session, clock)
            seated = [b.identity.account_id for b, _ in bots.values() if b.identity is not None]
            if req.seat is not None:
                seated.append(session.identity.account_id if session.identity else None)
            if len(seated) != len(set(seated)):  # refused before the room exists: nothing to undo
                raise ProtocolError(
                    ErrorCode.RATED_SEAT_TWICE,
                    "a rated room seats each account once: one account in two seats would play itself",
                )
        grace = self.rooms.abandon_after if req.abandon_after is None else req.abandon_after
        if not 0 < grace <= MAX_SECONDS:
            raise ProtocolError(
                ErrorCode.BAD_OPTIONS, f"abandon_after must be more than 0 and at most a day, not {grace}"
            )
        # `room_created` is sent once the room's row is committed: a room that could not be
        # stored (a full disk) is refused, never announced (docs/speed.md, "A new room's row").
        terms = RoomTerms(
            game,
            terms.options,
            seats,
            public=req.public,
            auto_start=req.auto_start,
            clock=clock,
            abandon_after=grace,
            rated=req.rated,
            takebacks=True,  # a person's room: casual ones allow takebacks (the core says where)
        )
        room = await self.rooms.open(terms, session)
        if bots:
            self.bot_games_by_address.add(session.address, room)
        if self.publisher.publishes("lobby/room_created"):
            await self.publisher.publish(
                "lobby/room_created", {"type": "room_created", **room.event_base(), "public": room.public}
            )
        seat = None
        token = None
        if req.seat is not None:
            # no `room` push for it: the new room has nobody else, and `room_created` below
            # carries the same summary (the push cost a summary, an encoding and a frame per game)
            seat = await room.call_here(lambda: room.join(session, req.seat, None, announce=False))
        for bot_seat, (bot_session, _) in bots.items():
            await room.call(lambda b=bot_session, s=bot_seat: room.seat_bot(b, s))
        if seat is not None:
            token = room.core.token_for(seat)
        session.send(
            server_message("room_created", req.id, room=room.code, summary=room.summary(), seat=seat, token=token)
        )

    async def _parse_bot_seats(
        self, bots: dict[Any, str], terms: RoomTerms, clock: ClockSpec | None, asker: Session
    ) -> dict[int, tuple[Session, str]]:
        seats = terms.seats
        chosen: dict[int, tuple[Session, str]] = {}
        for key, agent in bots.items():
            try:
                seat = int(key)
            except (TypeError, ValueError):
                raise ProtocolError(ErrorCode.BAD_FIELD, f"bots: {key!r} is not a seat number") from None
            if not 0 <= seat < seats:
                raise ProtocolError(ErrorCode.NO_SUCH_SEAT, f"this game has seats 0 to {seats - 1}")
            chosen[seat] = (await self.bots.find(agent, terms.game, seats, clock, asker), agent)
        return chosen

    async def on_join(self, session: Session, req: m.Join) -> None:
        room = self.rooms.room(req.room)
        seat = await room.call_here(lambda: room.join(session, req.seat, req.token))
        session.send(
            server_message(
                "joined", req.id, room=room.code, summary=room.summary(), seat=seat, token=room.core.token_for(seat)
            )
        )
        for hook in self.entered:
            await hook(session, room)

    async def on_leave(self, session: Session, req: m.Leave) -> None:
        room = self.rooms.room(req.room)
        await room.call_here(lambda: room.leave(session))
        session.send(server_message("left", req.id, room=room.code))

    async def on_watch(self, session: Session, req: m.Watch) -> None:
        room = self.rooms.room(req.room)
        if room not in session.rooms:
            self.limiter.may_watch(sum(1 for r in session.rooms if session in r.spectators))
        session.send(server_message("watching", req.id, room=room.code, summary=room.summary()))
        await room.call_here(lambda: room.watch(session))
        for hook in self.entered:
            await hook(session, room)

    async def on_add_bot(self, session: Session, req: m.AddBot) -> None:
        room = self.rooms.room(req.room)
        if room.owner is not None and session is not room.owner:
            raise ProtocolError(ErrorCode.NOT_OWNER, "only the room's creator can add bots to it")
        self.bots.may_play_bots(session)
        core = room.core
        bot = await self.bots.find(req.agent, core.game, core.num_seats, core.clock_spec, session)
        seat = await room.call(lambda: room.seat_bot(bot, req.seat))
        self.bot_games_by_address.add(session.address, room)
        session.send(
            server_message("bot_added", req.id, room=room.code, summary=room.summary(), seat=seat, agent=req.agent)
        )

    async def on_start(self, session: Session, req: m.Start) -> None:
        room = self.rooms.room(req.room)
        await room.call_here(lambda: room.start(session))
        session.send(server_message("started", req.id, room=room.code, summary=room.summary()))

    def on_act(self, session: Session, req: m.Act) -> Awaitable[int]:
        # The room's own coroutine, not one awaiting it: every move passes here.
        return self.rooms.room(req.room).act(session, req.action, req.seq, req.seat, reply_to=req.id)

    # Endings: resign, draw offers, abort (the core's rules), rematch (server/rooms/rematch.py).

    async def on_ending(self, session: Session, req: m.SeatRequest) -> None:
        """resign, offer_draw, accept_draw, decline_draw and abort: the core's rule for each,
        carried out by the room as one of its commands, then the reply that names it. Two seats:
        a resignation makes the other the winner; more, the seat drops out (the server's random
        bot answers for it, it ranks last) and the game goes on until one seat is left; a note
        says why, kept in the result's `notes`."""
        rule, reply = ENDING_REQUESTS[req.type]
        room = self.rooms.room(req.room)
        if isinstance(req, m.Resign) and req.note is not None:
            note = checked_note(req.note)

            def resign(core: RoomCore[Session], seat: int) -> list[Effect]:
                return core.resign(seat, note)

            await room.call_here(lambda: room.request_ending(session, req.seat, resign))
        else:
            await room.call_here(lambda: room.request_ending(session, req.seat, rule))
        session.send(server_message(reply, req.id, room=room.code))

    async def on_rematch(self, session: Session, req: m.Rematch) -> None:
        room = self.rooms.room(req.room)
        ready = await room.call(lambda: offer_rematch(room, session, req.seat))
        new = await room.call(lambda: self.rooms.rematch(room)) if ready else None
        again = room.rematch_room
        if new is not None and again is not None and any(s is not None and s.agent for s in again.core.seats):
            # the new game with a bot is the asker's, as its first was: counted for its address
            self.bot_games_by_address.add(session.address, again)
        session.send(server_message("rematch_offered", req.id, room=room.code, rematch=new))
