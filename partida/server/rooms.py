"""A room: one game, one task. Everything that changes a room runs inside its task, one command
at a time, so a game state is never touched by two coroutines at once.

After every accepted action the room writes it to the action log and only then pushes the new
views, so an acknowledged action survives a crash; on restart the room is rebuilt by replaying
its log (`Room.resume`).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from partida.games.base import Action, Decision, Game, IllegalAction, State
from partida.protocol import ErrorCode, ProtocolError, server_message

if TYPE_CHECKING:
    from partida.server.app import Server
    from partida.server.session import Session
    from partida.storage.store import StoredGame

log = logging.getLogger(__name__)
T = TypeVar("T")

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: codes are read aloud and typed


PUBLIC_CODE_LENGTH = 6  # listed anyway: short, to read aloud
PRIVATE_CODE_LENGTH = 12  # 60 bits: the code is the only key to a private room


def new_room_code(length: int = PUBLIC_CODE_LENGTH) -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(length))


def seed_hash(seed: int) -> str:
    """The commitment published when a game starts; the seed itself is revealed at the end, and
    anyone can check `sha256("partida-seed:" + str(seed))` against it and re-run the game."""
    return hashlib.sha256(f"partida-seed:{seed}".encode()).hexdigest()


def new_seat_token() -> str:
    """A secret that reclaims a seat, drawn afresh each time someone takes the seat: it belongs to
    that holder alone, so a token kept from an earlier seating (say, by a creator who sat in every
    seat before a friend took one) stops working. Stored with the seat when the game starts, so it
    survives a restart."""
    return secrets.token_urlsafe(18)


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


class Room:
    def __init__(
        self,
        server: Server,
        game: Game,
        options: dict[str, Any],
        seats: int,
        public: bool,
        owner: Session | None,
        auto_start: bool = True,
        code: str | None = None,
    ) -> None:
        self.server = server
        self.game = game
        self.options = options
        self.num_seats = seats
        self.public = public
        self.owner = owner
        self.auto_start = auto_start
        self.code = code or new_room_code(PUBLIC_CODE_LENGTH if public else PRIVATE_CODE_LENGTH)
        self.seed = secrets.randbits(63)
        self.seed_hash = seed_hash(self.seed)
        self.game_id: int = 0
        self.seats: list[Seat | None] = [None] * seats
        self.spectators: set[Session] = set()
        self.state: State | None = None
        self.actions: list[tuple[int, Action]] = []
        self.status = "waiting"
        self.created = time.time()
        self.finished_at: float | None = None
        self.last: dict[str, Any] | None = None
        self._inbox: asyncio.Queue[tuple[Callable[[], Awaitable[Any]], asyncio.Future[Any]]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    # The room task.

    def start_task(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"room-{self.code}")

    async def stop_task(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        while not self._inbox.empty():
            _, future = self._inbox.get_nowait()
            if not future.done():
                future.set_exception(ProtocolError(ErrorCode.NO_SUCH_ROOM, f"room {self.code} has closed"))

    async def _run(self) -> None:
        while True:
            command, future = await self._inbox.get()
            try:
                result = await command()
            except Exception as exc:  # the room survives any command
                if not isinstance(exc, ProtocolError):
                    log.exception("room %s: command failed", self.code)
                if not future.done():
                    future.set_exception(exc)
            else:
                if not future.done():
                    future.set_result(result)

    async def call(self, command: Callable[[], Awaitable[T]]) -> T:
        """Run `command` inside the room task and return its result (or raise its error)."""
        if self._task is None or self._task.done():
            raise ProtocolError(ErrorCode.NO_SUCH_ROOM, f"room {self.code} has closed")
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._inbox.put_nowait((command, future))
        return await future

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
        }

    def seats_of(self, session: Session) -> list[int]:
        return [i for i, s in enumerate(self.seats) if s is not None and s.session is session]

    # Commands (run inside the room task through `call`).

    async def join(self, session: Session, seat: int | None, token: str | None) -> int:
        identity = session.identity
        assert identity is not None
        if seat is not None and not 0 <= seat < self.num_seats:
            raise ProtocolError(ErrorCode.NO_SUCH_SEAT, f"this room has seats 0 to {self.num_seats - 1}")
        if token is not None:
            if seat is None or self.game_id == 0:
                raise ProtocolError(ErrorCode.AUTH_FAILED, "a seat token needs the seat number")
            occupant = self.seats[seat]
            expected = (occupant.token or legacy_seat_token(self.seed, self.game_id, seat)) if occupant else ""
            if occupant is None or not hmac.compare_digest(token.encode(), expected.encode()):
                raise ProtocolError(ErrorCode.AUTH_FAILED, "that token does not hold this seat")
            return self._attach(seat, session)
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
        await self._after_seating()
        return seat

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
        if self.state is not None:
            self._push_seat(seat)
        self._broadcast_room()
        return seat

    async def seat_bot(self, bot: Session, seat: int | None) -> int:
        """Seat a connected bot (challenge or add-bot); the bot learns of it by a `seated`
        message and then plays like anyone."""
        seat = await self.join(bot, seat, None)
        bot.send(server_message("seated", room=self.summary(), seat=seat, token=self.token_for(seat)))
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
        session.rooms.discard(self)
        self._broadcast_room()

    async def disconnect(self, session: Session) -> None:
        """A dropped connection keeps its seats in a started game (they are held until it comes
        back); before the start, the seats are freed."""
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
            await self.server.store.start_game(self.game_id, seats, tokens=tokens)
        except Exception:
            # The room plays only once the database says so; otherwise its moves would be lost
            # on a restart (the game would still be stored as waiting).
            log.exception("room %s: could not store the start; the room stays waiting", self.code)
            raise ProtocolError(ErrorCode.STORAGE, "the start could not be stored; try again") from None
        self.state = state
        self.status = "playing"
        await self.server.publish(
            f"rooms/{self.event_name}/game_started",
            {
                "type": "game_started",
                **self.event_base(),
                "seats": self.summary()["seats"],
                "seed_hash": self.seed_hash,
            },
        )
        over = await self._record_finish_if_over()
        self._broadcast_room()
        self._push_all()
        if over:
            await self._announce_finish()

    async def _after_seating(self) -> None:
        self._broadcast_room()
        if self.auto_start and self.status == "waiting" and all(s is not None for s in self.seats):
            await self.start(None)

    async def act(self, session: Session, action: Action, seq: int | None, seat: int | None) -> int:
        if self.state is None:
            raise ProtocolError(ErrorCode.NOT_STARTED, "the game has not started")
        mine = self.seats_of(session)
        if not mine:
            raise ProtocolError(ErrorCode.NOT_SEATED, "you have no seat in this room")
        if seat is None:
            open_seats = [d.seat for d in self.state.pending() if d.seat in mine]
            seat = open_seats[0] if open_seats else mine[0]
        elif seat not in mine:
            raise ProtocolError(ErrorCode.NOT_SEATED, f"seat {seat} is not yours")
        if seq is not None and seq != self.seq:
            raise ProtocolError(ErrorCode.STALE_DECISION, f"that decision has passed (now at move {self.seq})")
        try:
            self.state.apply(seat, action)
        except IllegalAction as exc:
            raise ProtocolError(IllegalCodes.get(exc.code, ErrorCode.ILLEGAL_ACTION), exc.message) from None
        except Exception:
            log.exception("room %s: the rules raised on an action; rebuilding from the log", self.code)
            self._rebuild()
            raise ProtocolError(ErrorCode.INTERNAL, "the server failed on that action; the game is unchanged") from None
        # An action that ends the game is stored with the result, in one transaction.
        over = self.state.is_over() and self.status != "finished"
        result = self.state.result().to_data() if over else None
        try:
            await self.server.store.append_action(self.game_id, self.seq, seat, action, result)
        except Exception:
            log.exception("room %s: could not store an action; it is undone", self.code)
            self._rebuild()
            raise ProtocolError(ErrorCode.STORAGE, "the action could not be stored; try again") from None
        self.actions.append((seat, action))
        self.last = {
            "seat": seat,
            "action": action if self.game.perfect_information else None,
            "text": self.state.last_event(),
        }
        if over:
            self._mark_finished()
        self._push_all()
        await self.server.publish(
            f"rooms/{self.event_name}/action",
            {"type": "action", **self.event_base(), "seq": self.seq, "seat": seat, **self._public_action(action)},
        )
        if over:
            await self._announce_finish()
        return self.seq

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

    async def _record_finish_if_over(self) -> bool:
        """Store the result as soon as the game ends, before anyone is told, so that whoever sees
        a finished game also finds it finished in the database."""
        assert self.state is not None
        if not self.state.is_over() or self.status == "finished":
            return False
        await self.server.store.finish_game(self.game_id, self.state.result().to_data())
        self._mark_finished()
        return True

    def _mark_finished(self) -> None:
        self.status = "finished"
        self.finished_at = asyncio.get_running_loop().time()

    async def _announce_finish(self) -> None:
        assert self.state is not None
        result = self.state.result().to_data()
        ended = server_message("game_over", room=self.code, game_id=self.game_id, result=result, seed=self.seed)
        for session in self._audience():
            session.send(ended)
        await self.server.publish(
            f"rooms/{self.event_name}/game_over",
            {"type": "game_over", **self.event_base(), "result": result, "seed": self.seed, "moves": self.seq},
        )
        self._broadcast_room()

    async def finish_resumed(self) -> None:
        """A resumed game whose last action ended it but whose result was not stored."""
        if await self._record_finish_if_over():
            await self._announce_finish()

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
        await self.server.store.finish_game(self.game_id, None, status="aborted")
        self._broadcast_room()
        for session in self._audience():
            session.rooms.discard(self)

    def event_base(self) -> dict[str, Any]:
        return {"room": self.event_name, "game_id": self.game_id, "game": self.game.name, "time": time.time()}

    # Pushing views. Every seat gets its own view; spectators get the public one.

    def _audience(self) -> set[Session]:
        sessions = {s.session for s in self.seats if s is not None and s.session is not None}
        return sessions | self.spectators

    def _update(self, seat: int | None, pending: list[Decision] | None = None) -> dict[str, Any]:
        assert self.state is not None
        over = self.state.is_over()
        pending = self.state.pending() if pending is None else pending
        decision = next((d for d in pending if d.seat == seat), None) if seat is not None else None
        message = server_message(
            "update",
            room=self.code,
            game_id=self.game_id,
            game=self.game.name,
            seq=self.seq,
            seat=seat,
            status=self.status if not over else "finished",
            view=self.state.view(seat),
            decision=decision.prompt.to_data() if decision else None,
            to_act=[d.seat for d in pending],
            last=self.last,
        )
        if over:
            message["result"] = self.state.result().to_data()
            message["seed"] = self.seed
        return message

    def _push_seat(self, seat: int, pending: list[Decision] | None = None) -> None:
        occupant = self.seats[seat]
        if occupant is not None and occupant.session is not None:
            occupant.session.send(self._update(seat, pending))

    def _push_all(self) -> None:
        assert self.state is not None
        pending = self.state.pending()  # once per action, not once per seat
        for seat in range(self.num_seats):
            self._push_seat(seat, pending)
        if self.spectators:
            public = self._update(None, pending)
            for session in self.spectators:
                session.send(public)

    def _broadcast_room(self) -> None:
        message = server_message("room", room=self.summary())
        for session in self._audience():
            session.send(message)

    # Restart.

    @classmethod
    def resume(cls, server: Server, game: Game, stored: StoredGame) -> Room:
        """Rebuild a room from storage by replaying its log; seats wait for their players."""
        room = cls(server, game, dict(stored.options), stored.seats, stored.public, None, code=stored.room_code)
        room.seed = stored.seed
        room.seed_hash = stored.seed_hash
        room.game_id = stored.id
        room.actions = [(seat, action) for seat, action in stored.actions]
        for seat, account_id, name in stored.seat_list:
            kind = "guest" if account_id is None else "account"
            room.seats[seat] = Seat(name, kind, account_id, token=stored.seat_tokens.get(seat) or "")
        room.state = game.replay(room.options, room.seed, room.num_seats, room.actions)
        room.status = "playing"
        if room.actions:
            seat, action = room.actions[-1]
            room.last = {"seat": seat, "action": action if game.perfect_information else None}
        return room
