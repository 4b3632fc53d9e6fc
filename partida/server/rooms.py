"""A room: one game, one command at a time. Everything that changes a room runs as a command under
the room's lock, in arrival order, so a game state is never touched by two coroutines at once. A
player's request runs in its connection's task (`call_here`): no hand-over to a room task and back
on every move; commands from anywhere else run in a task of their own (`call`), so cancelling
their caller never cuts one off halfway.

After every accepted action the room writes it to the action log and only then pushes the new
views, so an acknowledged action survives a crash; on restart the room is rebuilt by replaying
its log (`Room.resume`). A write that fails may have landed all the same: the room then asks the
stored log, the truth, what happened (`mending`).

Clocks (`clocks`) and the ways a game ends besides its rules (`endings`) are pure modules; the
room wires them in: one timer per room fires at the nearest deadline (a seat's time running out,
or an absent seat's grace period ending) and runs as a command like any other, in a task of its own.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from partida.games.base import Action, Decision, Game, IllegalAction, State
from partida.protocol import ErrorCode, ProtocolError, server_message
from partida.room import endings
from partida.room.clocks import Clock, ClockSpec
from partida.room.endings import Endings
from partida.room.record import public_last
from partida.room.seed import seed_hash
from partida.room.terms import RoomTerms
from partida.server import entropy, mending
from partida.server.session import send_all
from partida.storage.database import log_failure

if TYPE_CHECKING:
    from partida.server.publisher import Publisher
    from partida.server.session import Session
    from partida.storage.store import Store, StoredGame

log = logging.getLogger(__name__)
T = TypeVar("T")

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: codes are read aloud and typed


PUBLIC_CODE_LENGTH = 6  # listed anyway: short, to read aloud
PRIVATE_CODE_LENGTH = 12  # 60 bits: the code is the only key to a private room


# byte -> letter, for `bytes.translate`: the alphabet's 32 letters divide 256, so uniformly
_CODE_LETTERS = bytes(ord(CODE_ALPHABET[byte % len(CODE_ALPHABET)]) for byte in range(256))


def _room_codes(length: int) -> Callable[[int], list[str]]:
    def make(n: int) -> list[str]:
        letters = entropy.token_bytes(length * n).translate(_CODE_LETTERS).decode("ascii")
        return [letters[i : i + length] for i in range(0, length * n, length)]

    return make


_CODES = {length: entropy.Pool(_room_codes(length)) for length in (PUBLIC_CODE_LENGTH, PRIVATE_CODE_LENGTH)}


def new_room_code(length: int = PUBLIC_CODE_LENGTH) -> str:
    """`length` letters of the alphabet, uniformly: each random byte gives one letter without
    bias (the bytes of many codes from one call to the system's generator, mapped in C)."""
    pool = _CODES.get(length)
    return _room_codes(length)(1)[0] if pool is None else pool.take()


def _seeds(n: int) -> list[tuple[int, str]]:
    """`n` new games' seeds (63 random bits each, as `entropy.randbits(63)` draws them) with
    their commitments."""
    raw = entropy.token_bytes(8 * n)
    seeds = [int.from_bytes(raw[i : i + 8], "big") >> 1 for i in range(0, 8 * n, 8)]
    return [(seed, seed_hash(seed)) for seed in seeds]


_SEEDS = entropy.Pool(_seeds)
# Seconds before a room tries again a timer's write that failed (`Room._on_timer`).
TIMER_RETRY_S = 1.0
SEAT_TOKEN_BYTES = 18  # a multiple of 3: each token is 24 base64 letters, with no padding


def _seat_tokens(n: int) -> list[str]:
    text = base64.urlsafe_b64encode(entropy.token_bytes(SEAT_TOKEN_BYTES * n)).decode("ascii")
    size = SEAT_TOKEN_BYTES // 3 * 4
    return [text[i : i + size] for i in range(0, size * n, size)]


_SEAT_TOKENS = entropy.Pool(_seat_tokens)


def new_seat_token() -> str:
    """A secret that reclaims a seat, drawn afresh each time someone takes the seat: it belongs to
    that holder alone, so a token kept from an earlier seating (say, by a creator who sat in every
    seat before a friend took one) stops working. Stored with the seat when the game starts, so it
    survives a restart. 18 random bytes as URL-safe base64 (as `secrets.token_urlsafe(18)`)."""
    return _SEAT_TOKENS.take()


def legacy_seat_token(seed: int, game_id: int, seat: int) -> str:
    """How tokens were derived before they were drawn per seating; still honoured for a game
    stored without a token (started by an older Partida)."""
    key = seed.to_bytes(8, "big", signed=True)
    return hmac.new(key, f"seat:{game_id}:{seat}".encode(), hashlib.sha256).hexdigest()[:32]


@dataclass(eq=False)
class Seat:
    name: str
    kind: str
    account_id: int | None = None
    agent: str | None = None
    session: Session | None = None
    token: str = ""

    def to_data(self, index: int) -> dict[str, Any]:
        return {
            "seat": index,
            "name": self.name,
            "kind": self.kind,
            "agent": self.agent,
            "connected": self.session is not None,
        }


IllegalCodes = {
    "not_your_turn": ErrorCode.NOT_YOUR_TURN,
    "game_over": ErrorCode.GAME_OVER,
    "no_such_seat": ErrorCode.NO_SUCH_SEAT,
}


class LobbyListener(Protocol):
    """Who keeps the lobby's list of rooms: told of every change it shows (status, seats) and of
    a room leaving memory."""

    def changed(self, room: Room) -> None: ...

    def removed(self, room: Room) -> None: ...


@dataclass(frozen=True, eq=False)
class RoomPorts:
    """All a room's driver touches outside itself, handed by the wiring (server/app.py): the
    store its game is written to, the publisher of its events, the lobby, and the subscribers to
    finished games. A room holds no server and looks nothing up elsewhere.

    `finished`: called in order, once per game that ends in this room (a ladder waking its
    scheduler, a tournament seating its next round), after the result is stored and told. The
    list is the wiring's: services that start later append themselves. A subscriber must not
    block and must not raise."""

    store: Store
    publisher: Publisher
    lobby: LobbyListener
    finished: list[Callable[[Room], None]] = field(default_factory=list)


class Room:
    def __init__(self, ports: RoomPorts, terms: RoomTerms, owner: Session | None, code: str | None = None) -> None:
        self.ports = ports
        self.game = terms.game
        self.options = terms.options
        self.num_seats = terms.seats
        self.public = terms.public
        self.owner = owner
        self.auto_start = terms.auto_start
        self.code = code or new_room_code(PUBLIC_CODE_LENGTH if terms.public else PRIVATE_CODE_LENGTH)
        self.seed, self.seed_hash = _SEEDS.take()
        self.game_id: int = 0
        self.seats: list[Seat | None] = [None] * terms.seats
        self.spectators: set[Session] = set()
        self.state: State | None = None
        self.actions: list[tuple[int, Action]] = []
        self.status = "waiting"
        self.created = time.time()
        self.finished_at: float | None = None
        self.last: dict[str, Any] | None = None
        self.clock_spec = terms.clock
        self.clock: Clock | None = None
        self.endings = Endings(terms.seats, terms.abandon_after)
        self.result: dict[str, Any] | None = None  # the final result, with its reason
        self._timer: asyncio.TimerHandle | None = None
        self.rematch_room: Room | None = None
        self._rng: random.Random | None = None  # answers for timed-out seats and the random bot
        self._decisions: list[Decision] | None = None  # `state.pending()` until the state changes
        self._turn = asyncio.Lock()  # held by the command running now; the others wait in order
        self._open = False  # between open and close: commands are accepted
        self._timed: set[asyncio.Task[None]] = set()  # timer commands under way

    # Commands.

    def open(self) -> None:
        self._open = True

    async def close(self) -> None:
        """Accept no more commands: those waiting are refused with `no_such_room`; a timer
        command under way is cancelled. Its players' and spectators' connections forget it: a
        connection that stays (a bot playing game after game) would otherwise hold every room
        it ever sat in, and leave each of them again when it goes."""
        self._disarm()
        self._open = False
        self.ports.lobby.removed(self)
        for session in self._audience():
            session.rooms.discard(self)
        for task in list(self._timed):
            task.cancel()
        await asyncio.gather(*self._timed, return_exceptions=True)

    async def call(self, command: Callable[[], Awaitable[T]]) -> T:
        """Run `command` once the commands before it are done, and return its result (or raise its
        error: the room survives any command). Once begun, the command runs to its end even if
        the caller is cancelled (a scheduler stopping, a timer): it runs in a task of its own."""
        if not self._open:
            raise ProtocolError(ErrorCode.NO_SUCH_ROOM, f"room {self.code} has closed")
        task = asyncio.ensure_future(self.call_here(command))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())  # read, if the caller went
        return await asyncio.shield(task)

    async def call_here(self, command: Callable[[], Awaitable[T]]) -> T:
        """`call`, run in the caller's own task: no hand-over to another task and back, which is
        most of what a move costs besides its work. For the server's request handlers (a
        connection's task is never cancelled in the middle of a request: it ends when the client
        goes, between requests) and tasks nobody cancels (a gone connection's leaving, shielded),
        so a command is never cut off halfway."""
        if not self._open:
            raise ProtocolError(ErrorCode.NO_SUCH_ROOM, f"room {self.code} has closed")
        async with self._turn:
            if not self._open:
                raise ProtocolError(ErrorCode.NO_SUCH_ROOM, f"room {self.code} has closed")
            try:
                return await command()
            except ProtocolError:
                raise
            except Exception:
                log.exception("room %s: command failed", self.code)
                raise

    # Summaries.

    @property
    def seq(self) -> int:
        return len(self.actions)

    def summary(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "game": self.game.name,
            "game_id": self.game_id,
            "options": self.options,
            "public": self.public,
            "status": self.status,
            "seats": [s.to_data(i) if s else {"seat": i, "name": None} for i, s in enumerate(self.seats)],
            "spectators": len(self.spectators),
            "seed_hash": self.seed_hash,
            "clock": self.clock_spec.to_data() if self.clock_spec else None,
            "rematch": sorted(self.endings.rematch),
        }

    def decisions(self) -> list[Decision]:
        """The decisions open now: `state.pending()`, built once per state rather than once per
        reader (the move's checks, the clock, each seat's update)."""
        assert self.state is not None
        if self._decisions is None:
            self._decisions = self.state.pending()
        return self._decisions

    @property
    def rng(self) -> random.Random:
        """Seeded from the system on first use: most rooms never answer for anyone."""
        if self._rng is None:
            self._rng = random.Random()
        return self._rng

    def seats_of(self, session: Session) -> list[int]:
        return [i for i, s in enumerate(self.seats) if s is not None and s.session is session]

    # Commands (run one at a time, under the room's lock, through `call`).

    async def join(self, session: Session, seat: int | None, token: str | None, announce: bool = True) -> int:
        """Seat `session` (or give it back its seat). `announce=False`: no `room` push for a seat
        taken in a room that does not start with it, for a caller whose reply carries the
        summary to the only one there (the creator's own seat in `create_room`)."""
        identity = session.identity
        assert identity is not None
        if seat is not None and not 0 <= seat < self.num_seats:
            raise ProtocolError(ErrorCode.NO_SUCH_SEAT, f"this room has seats 0 to {self.num_seats - 1}")
        if token is not None:
            # the token alone says which seat (each seating draws its own); a seat number, when
            # given, must be the token's
            held = [i for i in range(self.num_seats) if self._token_holds(i, token)] if self.game_id else []
            if not held or (seat is not None and seat not in held):
                raise ProtocolError(ErrorCode.AUTH_FAILED, "that token does not hold this seat")
            return self._attach(held[0], session)
        held = self._held_by(session)
        if held is not None and (seat is None or seat == held):
            return self._attach(held, session)
        if self.status != "waiting":
            raise ProtocolError(ErrorCode.ALREADY_STARTED, "the game has started; watch it, or use your seat token")
        if seat is None:
            free = [i for i, s in enumerate(self.seats) if s is None]
            if not free:
                raise ProtocolError(ErrorCode.ROOM_FULL, "every seat is taken")
            seat = free[0]
        elif self.seats[seat] is not None:
            raise ProtocolError(ErrorCode.SEAT_TAKEN, f"seat {seat} is taken by {self.seats[seat].name}")  # type: ignore[union-attr]
        self.seats[seat] = Seat(
            identity.name, identity.kind, identity.account_id, identity.agent, session, new_seat_token()
        )
        session.rooms.add(self)
        await self.after_seating(announce)
        return seat

    def _token_holds(self, seat: int, token: str) -> bool:
        occupant = self.seats[seat]
        if occupant is None:
            return False
        expected = occupant.token or legacy_seat_token(self.seed, self.game_id, seat)
        return hmac.compare_digest(token.encode(), expected.encode())

    def _held_by(self, session: Session) -> int | None:
        identity = session.identity
        if identity is None or identity.account_id is None:
            return None
        for i, s in enumerate(self.seats):
            if s is not None and s.account_id == identity.account_id and s.session is None:
                return i
        return None

    def _attach(self, seat: int, session: Session) -> int:
        occupant = self.seats[seat]
        assert occupant is not None
        if occupant.session is not None and occupant.session is not session:
            occupant.session.send(
                server_message("seat_lost", room=self.code, seat=seat, reason="reclaimed from another connection")
            )
        occupant.session = session
        session.rooms.add(self)
        self.endings.back(seat)
        self._arm()
        if self.state is not None:
            self._push_seat(seat)
        self.broadcast_room()
        return seat

    async def seat_bot(self, bot: Session, seat: int | None) -> int:
        """Seat a connected bot (challenge or add-bot); the bot learns of it by a `seated`
        message and then plays like anyone."""
        seat = await self.join(bot, seat, None)
        bot.send(
            server_message("seated", room=self.code, summary=self.summary(), seat=seat, token=self.token_for(seat))
        )
        return seat

    def token_for(self, seat: int) -> str:
        occupant = self.seats[seat]
        assert occupant is not None
        return occupant.token or legacy_seat_token(self.seed, self.game_id, seat)

    async def leave(self, session: Session) -> None:
        self.spectators.discard(session)
        for seat in self.seats_of(session):
            if self.status == "waiting":
                self.seats[seat] = None  # seats are stored when the game starts
            else:
                self.seats[seat].session = None  # type: ignore[union-attr]  # held for its return
                if self.result is None:
                    self.endings.leave(seat, self._now())
        session.rooms.discard(self)
        self._arm()
        self.broadcast_room()

    async def disconnect(self, session: Session) -> None:
        """A dropped connection keeps its seats in a started game (they are held until it comes
        back: under a clock its time keeps running, without one the game is abandoned after the
        grace period); before the start, the seats are freed. Everyone sees the seat as
        disconnected in the `room` push."""
        await self.leave(session)

    async def watch(self, session: Session) -> None:
        self.spectators.add(session)
        session.rooms.add(self)
        if self.state is not None:
            session.send(self._update(None))

    async def start(self, session: Session | None) -> None:
        if self.status != "waiting":
            raise ProtocolError(ErrorCode.ALREADY_STARTED, "the game has already started")
        if session is not None and self.owner is not None and session is not self.owner:
            raise ProtocolError(ErrorCode.NOT_OWNER, "only the room's creator can start it")
        if any(s is None for s in self.seats):
            raise ProtocolError(ErrorCode.SEATS_EMPTY, "every seat must be taken before the start")
        state = self.game.new_state(self.options, self.seed, self.num_seats)
        seats = [(i, s.account_id, s.name) for i, s in enumerate(self.seats) if s is not None]
        tokens = {i: s.token for i, s in enumerate(self.seats) if s is not None}
        try:
            await self.ports.store.start_game(self.game_id, seats, tokens=tokens)
        except Exception as exc:
            # The room plays only once the database says so; otherwise its moves would be lost
            # on a restart (the game would still be stored as waiting). The write may have
            # landed all the same: the stored game decides.
            log_failure(log, exc, "room %s: could not store the start; asking the stored game", self.code)
            if not await mending.start_stored(self, seats, tokens, exc):
                raise ProtocolError(ErrorCode.STORAGE, "the start could not be stored; try again") from None
        self.state = state
        self._decisions = None
        self.status = "playing"
        self.ports.lobby.changed(self)
        if self.clock_spec is not None:
            self.clock = Clock.new(self.clock_spec, self.num_seats)
        topic = f"rooms/{self.event_name}/game_started"
        if self.ports.publisher.publishes(topic):
            await self.ports.publisher.publish(
                topic,
                {
                    "type": "game_started",
                    **self.event_base(),
                    "seats": self.summary()["seats"],
                    "seed_hash": self.seed_hash,
                },
            )
        over = await self._record_finish_if_over()
        self._sync_clock(None)
        self.broadcast_room()
        self.push_all()
        if over:
            await self._announce_finish()
        await self._autoplay()
        self._arm()

    async def after_seating(self, announce: bool = True) -> None:
        if not (self.auto_start and self.status == "waiting" and all(s is not None for s in self.seats)):
            if announce:
                self.broadcast_room()
            return
        # The last seat taken starts the game: one `room` push (from `start`) says both.
        try:
            await self.start(None)
        except ProtocolError:
            self.broadcast_room()  # not started (the start could not be stored): the seat is news
            raise

    async def act(self, session: Session, action: Action, seq: int | None, seat: int | None) -> int:
        if self.state is None:
            raise ProtocolError(ErrorCode.NOT_STARTED, "the game has not started")
        mine = self.seats_of(session)
        if not mine:
            raise ProtocolError(ErrorCode.NOT_SEATED, "you have no seat in this room")
        if self.clock is not None and self.result is None and self.clock.expired(self._now()):
            await self._on_timer()  # an answer after the deadline comes too late, however close
        if self.result is not None:
            raise ProtocolError(ErrorCode.GAME_OVER, "the game is over")
        if seat is None:
            open_seats = [d.seat for d in self.decisions() if d.seat in mine]
            seat = open_seats[0] if open_seats else mine[0]
        elif seat not in mine:
            raise ProtocolError(ErrorCode.NOT_SEATED, f"seat {seat} is not yours")
        if seq is not None and seq != self.seq:
            raise ProtocolError(ErrorCode.STALE_DECISION, f"that decision has passed (now at move {self.seq})")
        await self._play(seat, action)
        done = self.seq
        await self._autoplay()
        self._arm()
        return done

    async def _play(self, seat: int, action: Action) -> None:
        """Apply, store, charge the clock, push: one accepted action, whoever made it (a person,
        a bot, or the server answering for a timed-out or dropped-out seat)."""
        assert self.state is not None
        try:
            self._decisions = None
            self.state.apply(seat, action)
        except IllegalAction as exc:
            raise ProtocolError(IllegalCodes.get(exc.code, ErrorCode.ILLEGAL_ACTION), exc.message) from None
        except Exception:
            log.exception("room %s: the rules raised on an action; rebuilding from the log", self.code)
            self._rebuild()
            raise ProtocolError(ErrorCode.INTERNAL, "the server failed on that action; the game is unchanged") from None
        saved = self.clock.save() if self.clock is not None else None
        snapshot = self._sync_clock(seat)
        # An action that ends the game is stored with the result, in one transaction.
        over = self.state.is_over() and self.result is None
        result = self.endings.final(self.state.result()) if over else None
        try:
            await self.ports.store.append_action(self.game_id, self.seq, seat, action, result, clock=snapshot)
        except Exception as exc:
            log_failure(log, exc, "room %s: could not store action %d; asking the stored log", self.code, self.seq)
            # The write may have landed anyway, or the log may be ahead of the room: it decides.
            outcome = await mending.after_failed_write(self, seat, action, result, exc)
            if outcome is mending.Outcome.RELOADED:
                return
            if outcome is mending.Outcome.ABSENT:
                self._rebuild()
                if self.clock is not None and saved is not None:
                    self.clock.restore(saved)
                raise ProtocolError(ErrorCode.STORAGE, "the action could not be stored; try again") from None
        self.actions.append((seat, action))
        self.last = public_last(self.game, self.state, seat, action)
        self.endings.on_action(seat)
        if over:
            assert result is not None
            self._mark_finished(result)
        self.push_all()
        topic = f"rooms/{self.event_name}/action"
        if self.ports.publisher.publishes(topic):  # the public view is built only for someone to see
            await self.ports.publisher.publish(
                topic,
                {"type": "action", **self.event_base(), "seq": self.seq, "seat": seat, **self._public_action(action)},
            )
        if over:
            await self._announce_finish()

    def _sync_clock(self, acted: int | None) -> list[float] | None:
        """Charge `acted` and start the clocks of the seats to act now (the server's bot answers
        for `auto` seats at once: their clocks stay still). Returns the stored snapshot."""
        if self.clock is None or self.state is None:
            return None
        now = self._now()
        pending = [] if self.state.is_over() else self.decisions()
        to_act = [d.seat for d in pending if d.seat not in self.endings.auto]
        self.clock.sync(to_act, now, acted)
        return self.clock.snapshot(now)

    async def _autoplay(self) -> None:
        """Answer at once for the seats the server's random bot plays (a seat of a 3+ seat game
        that resigned or was taken over after too many timeouts)."""
        for _ in range(100_000):
            if self.state is None or self.result is not None or not self.endings.auto:
                return
            decision = next((d for d in self.decisions() if d.seat in self.endings.auto), None)
            if decision is None:
                return
            await self._play(decision.seat, decision.prompt.random_answer(self.rng))

    def _public_action(self, action: Action) -> dict[str, Any]:
        """Events carry only what a spectator may see: the action itself for perfect-information
        games, the spectators' view for every game."""
        assert self.state is not None
        data: dict[str, Any] = {"view": self.state.view(None)}
        if self.game.perfect_information:
            data["action"] = action
        return data

    def _rebuild(self) -> None:
        self.state = self.game.replay(self.options, self.seed, self.num_seats, self.actions)
        self._decisions = None

    async def _record_finish_if_over(self) -> bool:
        """Store the result as soon as the game ends, before anyone is told, so that whoever sees
        a finished game also finds it finished in the database."""
        assert self.state is not None
        if not self.state.is_over() or self.result is not None:
            return False
        await self._finish(self.endings.final(self.state.result()))
        return True

    async def _finish(self, result: dict[str, Any]) -> None:
        """End the game with `result` (its `reason` says why): stored first, then the room stops
        its clocks and timer. An aborted game is stored as 'aborted', without a result."""
        aborted = result["reason"] == "aborted"
        stored = (None, "aborted") if aborted else (result, "finished")
        await self.ports.store.finish_game(self.game_id, *stored)
        self._mark_finished(result)

    def _mark_finished(self, result: dict[str, Any]) -> None:
        self.result = result
        self.status = "finished"
        self.ports.lobby.changed(self)
        self.finished_at = asyncio.get_running_loop().time()
        self.endings.draw_offer = None
        if self.clock is not None:
            self.clock.stop_all(self._now())
        self._disarm()

    async def end(self, result: dict[str, Any]) -> None:
        """End the game for a reason other than its rules, and tell everyone."""
        await self._finish(result)
        self.push_all()
        await self._announce_finish()

    async def _announce_finish(self) -> None:
        assert self.result is not None
        result = self.result
        ended = server_message("game_over", room=self.code, game_id=self.game_id, result=result, seed=str(self.seed))
        send_all(self._audience(), ended)
        topic = f"rooms/{self.event_name}/game_over"
        if self.ports.publisher.publishes(topic):
            await self.ports.publisher.publish(
                topic,
                {"type": "game_over", **self.event_base(), "result": result, "seed": str(self.seed), "moves": self.seq},
            )
        # No `room` push: the summary's only change is its status, which the final update and
        # `game_over` say (the push cost a summary, an encoding and a frame per player per game).
        for subscriber in self.ports.finished:
            subscriber(self)

    async def finish_resumed(self) -> None:
        """After a restart: store the result of a game whose last action ended it, or start the
        clocks again from what remained at the last action (the time the server was down is
        charged to nobody) and the grace period of every seat, since nobody is back yet."""
        await self.settle_adopted_log(restarted=True)

    async def settle_adopted_log(self, ended: dict[str, Any] | None = None, *, restarted: bool = False) -> None:
        """Go on from a log the room has just adopted (`adopt_log`): after a restart
        (`finish_resumed`), or when the stored log turned out ahead of the room (`mending`). A game
        that has ended is announced: `ended` is the result it is stored with, or its last action
        ended it and the result is stored now, before anyone is told. Otherwise the clocks start
        from the snapshot stored with the last action, the server's bot answers for its seats and
        the timer is armed.

        `restarted`: nobody is connected yet, so no views are pushed, every seat's grace period
        starts, and a failed write of the server's bot fails the resume (the server then leaves
        the game in the database for its next start). Otherwise the players present get the new
        views first, and a failed write of the bot's (logged by `_play`) does not fail the
        request under way, which was about another action."""
        if ended is not None:
            self._mark_finished(ended)
        if ended is not None or await self._record_finish_if_over():
            if not restarted:
                self.push_all()
            await self._announce_finish()
            return
        self._sync_clock(None)
        if restarted:
            now = self._now()
            for seat in range(self.num_seats):
                self.endings.leave(seat, now)
            await self._autoplay()
        else:
            self.push_all()
            with contextlib.suppress(ProtocolError):
                await self._autoplay()
        self._arm()

    # Time: one timer per room, at the nearest deadline.

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _arm(self) -> None:
        """(Re)set the room's timer to the nearest deadline: a running clock's, or (without a
        clock) the end of an absent seat's grace period."""
        self._disarm()
        if self.result is not None or self.state is None:
            return
        when = self.clock.next_deadline() if self.clock is not None else self.endings.next_abandon()
        if when is not None:
            self._timer = asyncio.get_running_loop().call_at(when, self._fire)

    def _fire(self) -> None:
        self._timer = None
        if not self._open:
            return
        task = asyncio.get_running_loop().create_task(self._timed_command())
        self._timed.add(task)
        task.add_done_callback(self._timed.discard)

    async def _timed_command(self) -> None:
        with contextlib.suppress(Exception):  # logged by `call_here`; the room goes on
            await self.call_here(self._on_timer)  # this task is the timer's own; close cancels it

    async def _on_timer(self) -> None:
        if self.result is not None or self.state is None:
            return
        try:
            now = self._now()
            if self.clock is not None:
                for seat in self.clock.expired(now + 1e-3):
                    if self.result is not None:
                        break
                    if seat in self.clock.expired(self._now() + 1e-3):  # not restarted meanwhile
                        await self._time_out(seat)
            else:
                result = self.endings.abandoned(now, self.seq)
                if result is not None:
                    await self.end(result)
            await self._autoplay()
        except Exception:
            # A write failed (a loss on time, a timeout's random answer, an abandoned game's
            # end): try again in a while. Armed at its passed deadline the timer would fire at
            # once, again and again; left unarmed, the game would wait for someone to act, and
            # the one whose time ran out may never come back.
            self._disarm()
            if self.result is None:
                self._timer = asyncio.get_running_loop().call_later(TIMER_RETRY_S, self._fire)
            raise
        self._arm()

    async def _time_out(self, seat: int) -> None:
        """A seat's time ran out: two seats, it loses; more, a random answer is given for it, and
        after the room's number of timeouts the server's random bot plays it to the end."""
        assert self.state is not None and self.clock_spec is not None
        if self.endings.timed_out(seat) == "lose":
            await self.end(endings.decisive(self.num_seats, [seat], "time"))
            return
        taken = self.endings.take_over_if_due(seat, self.clock_spec.timeouts)
        await self.ports.store.save_endings(self.game_id, self.endings.to_data())
        decision = self.state.decision_for(seat)
        if decision is not None and not taken:
            await self._play(seat, decision.prompt.random_answer(self.rng))

    def own_seat(self, session: Session, seat: int | None) -> int:
        """The seat a request of `session` is about: `seat` if it holds it, else its first."""
        mine = self.seats_of(session)
        if not mine:
            raise ProtocolError(ErrorCode.NOT_SEATED, "you have no seat in this room")
        if seat is None:
            return mine[0]
        if seat not in mine:
            raise ProtocolError(ErrorCode.NOT_SEATED, f"seat {seat} is not yours")
        return seat

    def seat_in_play(self, session: Session, seat: int | None) -> int:
        """`own_seat`, in a game that has started and not ended."""
        seat = self.own_seat(session, seat)
        if self.state is None:
            raise ProtocolError(ErrorCode.NOT_STARTED, "the game has not started")
        if self.result is not None:
            raise ProtocolError(ErrorCode.GAME_OVER, "the game is over")
        return seat

    async def settle(self) -> None:
        """After a change made outside an action (a resignation): restart the clocks of the seats
        to act, let the server's bot answer for its seats, and re-arm the timer."""
        self._sync_clock(None)
        await self._autoplay()
        self._arm()

    @property
    def event_name(self) -> str:
        """The room's name on the events bus: its code if public; a private room's code is its
        only key, so private rooms are published under their game id instead."""
        return self.code if self.public else f"game-{self.game_id}"

    async def close_unstarted(self) -> None:
        """Close a room that never started (the server reaps them after a while): its game is
        stored as aborted and whoever is inside is told."""
        if self.status != "waiting":
            return
        self.status = "aborted"
        self.finished_at = asyncio.get_running_loop().time()
        self.ports.lobby.changed(self)
        await self.ports.store.finish_game(self.game_id, None, status="aborted")
        self.broadcast_room()
        for session in self._audience():
            session.rooms.discard(self)

    def event_base(self) -> dict[str, Any]:
        return {"room": self.event_name, "game_id": self.game_id, "game": self.game.name, "time": time.time()}

    # Pushing views. Every seat gets its own view; spectators get the public one.

    def _audience(self) -> set[Session]:
        sessions = {s.session for s in self.seats if s is not None and s.session is not None}
        return sessions | self.spectators

    def _update(self, seat: int | None) -> dict[str, Any]:
        return self._seat_update(seat, *self._shared_update())

    def _shared_update(self) -> tuple[dict[str, Any], list[Decision]]:
        """The fields of an update that are the same for every seat and spectator (built once
        per push, not once per reader), and the decisions open."""
        assert self.state is not None
        over = self.result is not None
        pending = [] if over else self.decisions()
        message = server_message(
            "update",
            room=self.code,
            game_id=self.game_id,
            game=self.game.name,
            seq=self.seq,
            seat=None,
            status="finished" if over else self.status,
            view=None,
            decision=None,
            to_act=[d.seat for d in pending],
            last=self.last,
            clock=self._clock_data(),
            draw_offer=self.endings.draw_offer,
            resigned=list(self.endings.resigned),
        )
        if over:
            message["result"] = self.result
            message["seed"] = str(self.seed)  # decimal: seeds exceed 2^53, where JSON numbers round
        return message, pending

    def _seat_update(self, seat: int | None, shared: dict[str, Any], pending: list[Decision]) -> dict[str, Any]:
        """`shared` with what `seat` alone may see: its view and its decision."""
        assert self.state is not None
        message = shared.copy()
        message["seat"] = seat
        message["view"] = self.state.view(seat)
        if seat is not None:
            for decision in pending:
                if decision.seat == seat:
                    message["decision"] = decision.prompt.to_data()
                    break
        return message

    def _clock_data(self) -> dict[str, Any] | None:
        if self.clock is None:
            return None
        return self.clock.to_data(self._now(), time.time())

    def _push_seat(self, seat: int) -> None:
        occupant = self.seats[seat]
        if occupant is not None and occupant.session is not None:
            occupant.session.send(self._update(seat))

    def push_all(self) -> None:
        shared, pending = self._shared_update()
        for seat, occupant in enumerate(self.seats):
            if occupant is not None and occupant.session is not None:
                occupant.session.send(self._seat_update(seat, shared, pending))
        if self.spectators:
            send_all(self.spectators, self._seat_update(None, shared, pending))

    def broadcast_room(self) -> None:
        self.ports.lobby.changed(self)
        audience = [session for session in self._audience() if not session.closed]
        if audience:  # built only for someone to get it (players who went, say, leave a room nobody is in)
            send_all(audience, server_message("room", room=self.code, summary=self.summary()))

    # Restart.

    @classmethod
    def resume(cls, ports: RoomPorts, game: Game, stored: StoredGame, abandon_after: float) -> Room:
        """Rebuild a room from storage by replaying its log; seats wait for their players.
        `abandon_after`: the grace period of a game stored without one."""
        clock = ClockSpec.parse(stored.clock) if stored.clock else None
        terms = RoomTerms(game, dict(stored.options), stored.seats, stored.public, clock=clock)
        room = cls(ports, terms, None, code=stored.room_code)
        room.endings = Endings.from_data(stored.seats, stored.endings, abandon_after)
        room.seed = stored.seed
        room.seed_hash = stored.seed_hash
        room.game_id = stored.id
        for seat, account_id, name in stored.seat_list:
            # guest | user | bot, as before the restart (a bot's seat was "account": not a bot
            # to the clients, which mark bots)
            kind = stored.seat_kinds.get(seat) or ("guest" if account_id is None else "user")
            room.seats[seat] = Seat(name, kind, account_id, token=stored.seat_tokens.get(seat) or "")
        room.status = "playing"
        room.adopt_log(stored)
        return room

    def adopt_log(self, stored: StoredGame) -> None:
        """Take the stored log as the game: the state replayed from it, the clocks from the
        snapshot stored with its last action. A restart does (`resume`), and so does a room
        whose log turned out ahead of it (`mending`)."""
        self.actions = [(seat, action) for seat, action in stored.actions]
        self._rebuild()
        assert self.state is not None
        self.last = public_last(self.game, self.state, *self.actions[-1]) if self.actions else None
        if self.clock_spec is not None:
            self.clock = Clock.new(self.clock_spec, self.num_seats, stored.clock_state)
