"""The room driver: one room's core (`partida/room/core.py`, the game's rules without I/O) run
one command at a time, with the writes, pushes, events and timer the core asks for.

Everything that changes a room runs as a command under the room's lock, in arrival order, so a
game state is never touched by two coroutines at once. A player's request runs in its
connection's task (`call_here`): no hand-over to a room task and back on every move; commands from
anywhere else run in a task of their own (`call`), so cancelling their caller never cuts one off
halfway.

After every accepted action the room writes it to the action log and only then pushes the new
views, so an acknowledged action survives a crash; on restart the room is rebuilt by replaying
its log (`RoomCore.from_stored`, through the rooms table). A write that fails may have landed all
the same: the room then asks the stored log, the truth, what happened (`mending.py`).

One timer per room fires at the core's nearest deadline (a seat's time running out, or an absent
seat's grace period ending) and runs as a command like any other, in a task of its own. A room is
handed its ports (`RoomPorts`), never the server: what it can touch outside itself is that list.

A room is read through its core (`room.core.status`, `room.core.seats`...): the driver adds only
what waits or talks. The rooms table (`table.py`) opens, resumes and drops rooms; nothing else
holds them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from partida.games.base import Action, Decision
from partida.protocol import ErrorCode, ProtocolError, server_message
from partida.room.core import Answer, Effect, End, Push, RoomCore, RulesFailed, SaveEndings, Seat, Settle, TakeBack
from partida.server import parties
from partida.server.rooms import mending
from partida.server.rooms.codes import new_seat_token
from partida.server.session import send_all
from partida.storage.database import log_failure

if TYPE_CHECKING:
    from partida.server.publisher import Publisher
    from partida.server.session import Session
    from partida.storage.store import Store, StoredGame

log = logging.getLogger(__name__)
T = TypeVar("T")

# Seconds before a room tries again a timer's write that failed (`Room._on_timer`).
TIMER_RETRY_S = 1.0


def _closed(code: str) -> ProtocolError:
    return ProtocolError(ErrorCode.NO_SUCH_ROOM, f"room {code} has closed")


class LobbyListener(Protocol):
    """Who keeps the lobby's list of rooms: told of every change it shows (status, seats) and of
    a room leaving memory."""

    def changed(self, room: Room) -> None: ...

    def removed(self, room: Room) -> None: ...


@dataclass(frozen=True, eq=False)
class RoomPorts:
    """All a room's driver touches outside itself, handed by the rooms table (`table.py`): the
    store its game is written to, the publisher of its events, the lobby, and the subscribers to
    started and finished games. A room holds no server and looks nothing up elsewhere.

    `finished`: called in order, once per game that ends in this room (a ladder waking its
    scheduler, a tournament seating its next round), after the result is stored and told. The
    lists are the table's (`Rooms.on_finished`): services that start later add themselves. A
    subscriber must not block and must not raise.

    `started`: the same, once per game that starts in this room, after the start is stored and
    before anyone is told (the ratings' farming verdict, taken while the first move is awaited)."""

    store: Store
    publisher: Publisher
    lobby: LobbyListener
    finished: list[Callable[[Room], None]] = field(default_factory=list)
    started: list[Callable[[Room], None]] = field(default_factory=list)


class Room:
    """One room: its core, the connections in it (seated and watching), its lock and its timer."""

    def __init__(
        self, ports: RoomPorts, core: RoomCore[Session], owner: Session | None, code: str, *, public: bool, rated: bool
    ) -> None:
        self.ports = ports
        self.public = public
        self.rated = rated  # set False by the ratings when they refuse the game as farming at its start
        self.owner = owner
        self.code = code
        self.core = core
        self.spectators: set[Session] = set()
        self.created = time.time()
        self.finished_at: float | None = None  # the loop's time: finished rooms are reaped after a while
        self.rematch_room: Room | None = None
        self._timer: asyncio.TimerHandle | None = None
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
        for session in self.audience():
            session.rooms.discard(self)
        for task in list(self._timed):
            task.cancel()
        await asyncio.gather(*self._timed, return_exceptions=True)

    async def call(self, command: Callable[[], Awaitable[T]]) -> T:
        """Run `command` once the commands before it are done, and return its result (or raise its
        error: the room survives any command). Once begun, the command runs to its end even if
        the caller is cancelled (a scheduler stopping, a timer): it runs in a task of its own."""
        if not self._open:
            raise _closed(self.code)
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
            raise _closed(self.code)
        async with self._turn:
            if not self._open:
                raise _closed(self.code)
            try:
                return await command()
            except ProtocolError:
                raise
            except Exception:
                log.exception("room %s: command failed", self.code)
                raise

    # Summaries.

    def summary(self) -> dict[str, Any]:
        core = self.core
        return {
            "code": self.code,
            "game": core.game.name,
            "game_id": core.game_id,
            "options": core.options,
            "public": self.public,
            "rated": self.rated,
            "status": core.status,
            "seats": [s.to_data(i) if s else {"seat": i, "name": None} for i, s in enumerate(core.seats)],
            "spectators": len(self.spectators),
            "seed_hash": core.seed_hash,
            "clock": core.clock_spec.to_data() if core.clock_spec else None,
            "rematch": sorted(core.endings.rematch),
            "takebacks": core.takebacks_allowed(),
        }

    # Commands (run one at a time, under the room's lock, through `call`).

    async def join(self, session: Session, seat: int | None, token: str | None, announce: bool = True) -> int:
        """Seat `session` (or give it back its seat). `announce=False`: no `room` push for a seat
        taken in a room that does not start with it, for a caller whose reply carries the
        summary to the only one there (the creator's own seat in `create_room`)."""
        identity = session.identity
        assert identity is not None
        if self.rated and identity.kind == "guest":
            raise ProtocolError(ErrorCode.RATED_NEEDS_ACCOUNT, "this room is rated: only accounts can sit in it")
        core = self.core
        core.check_seat_number(seat)
        if token is not None:
            return self._attach(core.seat_of_token(token, seat), session)
        held = core.held_for(identity.account_id)
        if held is not None and (seat is None or seat == held):
            return self._attach(held, session)
        if self.rated and identity.account_id is not None:
            self._one_seat_per_account(identity.account_id)
        # read before the seat is chosen: nothing may await between a seat taken and its
        # announcement (a connection that ended meanwhile would leave a seat that never starts)
        rating = await self._rating_of(identity.account_id)
        seat = core.free_seat(seat, identity.account_id)
        fresh = new_seat_token()
        core.sit(seat, Seat(identity.name, identity.kind, identity.account_id, identity.agent, session, fresh, rating))
        session.rooms.add(self)
        await self.after_seating(announce)
        return seat

    async def _rating_of(self, account_id: int | None) -> str | None:
        """The rating shown beside one account's name here (`read_ratings` for one seat)."""
        core = self.core
        if account_id is None or core.clock_spec is None:
            return None
        try:
            shown = await self.ports.store.person_ratings.shown_ratings([account_id], core.game.name, core.clock_spec)
        except Exception:
            log.warning("room %s: a seat's rating could not be read", self.code, exc_info=True)
            return None
        return shown.get(account_id)

    async def read_ratings(self) -> None:
        """Each account seat's rating in this room's game and clock class, shown beside its name
        (a newcomer's `1500?`); none in a room without a clock, which is never rated. Read as
        someone sits, a rematch opens or a game resumes: never on a move. A read that fails
        leaves the names without ratings, never the seat refused."""
        core = self.core
        seats = [s for s in core.seats if s is not None and s.account_id is not None]
        if not seats or core.clock_spec is None:
            return
        accounts = [s.account_id for s in seats if s.account_id is not None]
        try:
            shown = await self.ports.store.person_ratings.shown_ratings(accounts, core.game.name, core.clock_spec)
        except Exception:
            log.warning("room %s: the seats' ratings could not be read", self.code, exc_info=True)
            return
        for s in seats:
            s.rating = shown.get(s.account_id) if s.account_id is not None else None

    def _one_seat_per_account(self, account_id: int) -> None:
        """A rated game is between different accounts: one account in two seats would play
        itself, which no rating can take (the game was said rated and never rated)."""
        if any(s is not None and s.account_id == account_id for s in self.core.seats):
            raise ProtocolError(
                ErrorCode.RATED_SEAT_TWICE,
                "this room is rated and your account already has a seat in it: one account plays one seat of a "
                "rated game (create a casual room to play both sides)",
            )

    def _attach(self, seat: int, session: Session) -> int:
        before = self.core.seat_back(seat, session)
        if before is not None:
            before.send(
                server_message("seat_lost", room=self.code, seat=seat, reason="reclaimed from another connection")
            )
        session.rooms.add(self)
        self._arm()
        if self.core.state is not None:
            self._push_seat(seat)
        self.broadcast_room()
        return seat

    async def seat_bot(self, bot: Session, seat: int | None) -> int:
        """Seat a connected bot (challenge or add-bot); the bot learns of it by a `seated`
        message and then plays like anyone."""
        seat = await self.join(bot, seat, None)
        bot.send(
            server_message(
                "seated",
                room=self.code,
                summary=self.summary(),
                seat=seat,
                token=self.core.token_for(seat),
                party=self.party_for(bot),
            )
        )
        return seat

    def reserve(self, seat: int, name: str, kind: str, account_id: int | None) -> str:
        """Hold a seat, before the start, for a player connected to another node (a seek paired
        there): it sits with no connection, and the token returned (drawn here, as every seat's)
        takes it, with `join`, on this node. Returns that token."""
        self.core.check_seat_number(seat)
        token = new_seat_token()
        self.core.sit(seat, Seat(name, kind, account_id, None, None, token))
        return token

    def away_from_the_start(self, seat: int) -> None:
        """A reserved seat still empty once the game has started is away, as a player whose
        connection dropped: its clock runs, and a game without one is abandoned after the grace
        period, so a player who never comes cannot hold the game."""
        held = self.core.seats[seat]
        if self.core.status == "playing" and held is not None and held.session is None and self.core.result is None:
            self.core.endings.leave(seat, self._now())
            self._arm()

    def party_for(self, bot: Session) -> str:
        """Who this room's game is for, as the bot `bot` is told it (server/parties.py): the
        holders of the other seats and the room's creator."""
        me = bot.identity
        assert me is not None
        keys = {
            parties.holder(s.account_id, s.session.address if s.session else None, s.name)
            for s in self.core.seats
            if s is not None and s.session is not bot and (s.account_id is None or s.account_id != me.account_id)
        }
        owner = self.owner
        if owner is not None and owner is not bot and owner.identity is not None:
            keys.add(parties.holder(owner.identity.account_id, owner.address, owner.identity.name))
        return parties.party(str(me.account_id or me.name), keys or [f"room:{self.code}"])

    async def leave(self, session: Session) -> None:
        self.spectators.discard(session)
        now = self._now()
        for seat in self.core.seats_of(session):
            self.core.seat_left(seat, now)
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
        if self.core.state is not None:
            session.send(self._update(None))

    async def start(self, session: Session | None) -> None:
        core = self.core
        state = core.new_state(session is None or self.owner is None or session is self.owner)
        seats, tokens = core.start_record()
        try:
            await self.ports.store.start_game(core.game_id, seats, tokens=tokens)
        except Exception as exc:
            # The room plays only once the database says so; otherwise its moves would be lost
            # on a restart (the game would still be stored as waiting). The write may have
            # landed all the same: the stored game decides.
            log_failure(log, exc, "room %s: could not store the start; asking the stored game", self.code)
            if not await mending.start_stored(self.ports.store, core.game_id, self.code, seats, tokens, exc):
                raise ProtocolError(ErrorCode.STORAGE, "the start could not be stored; try again") from None
        core.begin(state)
        self.ports.lobby.changed(self)
        for subscriber in self.ports.started:
            subscriber(self)
        topic = f"rooms/{self.event_name}/game_started"
        if self.ports.publisher.publishes(topic):
            await self.ports.publisher.publish(
                topic,
                {
                    "type": "game_started",
                    **self.event_base(),
                    "seats": self.summary()["seats"],
                    "seed_hash": core.seed_hash,
                },
            )
        over = await self._record_finish_if_over()
        core.sync_clock(None, self._now())
        self.broadcast_room()
        self.push_all()
        if over:
            await self._announce_finish()
        await self._autoplay()
        self._arm()

    async def after_seating(self, announce: bool = True) -> None:
        core = self.core
        if not (core.auto_start and core.status == "waiting" and core.full()):
            if announce:
                self.broadcast_room()
            return
        # The last seat taken starts the game: one `room` push (from `start`) says both.
        try:
            await self.start(None)
        except ProtocolError:
            self.broadcast_room()  # not started (the start could not be stored): the seat is news
            raise

    async def act(
        self, session: Session, action: Action, seq: int | None, seat: int | None, reply_to: int | str | None = None
    ) -> int:
        """An action of `session`'s, run as one of the room's commands (`call_here`'s contract,
        written out here rather than wrapped around a closure: every move comes this way), then
        the `acted` reply to request `reply_to`, if it has an id."""
        if not self._open:
            raise _closed(self.code)
        turn = self._turn
        await turn.acquire()  # not `async with`: two coroutines fewer, every move
        try:
            if not self._open:
                raise _closed(self.code)
            core = self.core
            if core.state is None:
                raise ProtocolError(ErrorCode.NOT_STARTED, "the game has not started")
            mine = core.seats_of(session)
            if not mine:
                raise ProtocolError(ErrorCode.NOT_SEATED, "you have no seat in this room")
            if core.clock is not None and core.expired(self._now()):
                await self._on_timer()  # an answer after the deadline comes too late, however close
            seat = core.check_act(mine, seat, seq)
            await self._play(seat, action)
            done = core.seq
            await self._autoplay()
            self._arm()
            if reply_to is not None:  # `server_message("acted", ...)`'s map, built inline
                session.send({"type": "acted", "room": self.code, "seq": done, "id": reply_to})
            return done
        except ProtocolError:
            raise
        except Exception:
            log.exception("room %s: command failed", self.code)
            raise
        finally:
            turn.release()

    async def _play(self, seat: int, action: Action) -> None:
        """Apply, store, charge the clock, push: one accepted action, whoever made it (a person,
        a bot, or the server answering for a timed-out or dropped-out seat)."""
        core = self.core
        now = asyncio.get_running_loop().time
        try:
            move = core.play(seat, action, now())
        except RulesFailed:
            log.exception("room %s: the rules raised on an action; rebuilt from the log", self.code)
            raise ProtocolError(ErrorCode.INTERNAL, "the server failed on that action; the game is unchanged") from None
        try:
            await self.ports.store.append_action(core.game_id, move.seq, seat, action, move.result, clock=move.snapshot)
        except Exception as exc:
            log_failure(log, exc, "room %s: could not store action %d; asking the stored log", self.code, move.seq)
            # The write may have landed anyway, or the log may be ahead of the room: it decides.
            outcome, stored = await mending.after_failed_write(
                self.ports.store, core, self.code, seat, action, move.result, exc
            )
            if stored is not None:  # the log differed: the room takes it
                await self._take_stored(stored)
                if outcome is mending.Outcome.STALE:
                    raise ProtocolError(
                        ErrorCode.STALE_DECISION,
                        f"that decision has passed: the stored game is at move {core.seq} "
                        "(the new views have been sent)",
                    ) from None
                return
            if outcome is mending.Outcome.ABSENT:
                core.undo(move)
                raise ProtocolError(ErrorCode.STORAGE, "the action could not be stored; try again") from None
        over = core.commit(move, now())
        if over:
            self._finished()
        self.push_all()
        topic = f"rooms/{self.event_name}/action"
        if self.ports.publisher.publishes(topic):  # the public view is built only for someone to see
            await self.ports.publisher.publish(
                topic,
                {"type": "action", **self.event_base(), "seq": core.seq, "seat": seat, **core.public_action(action)},
            )
        if over:
            await self._announce_finish()

    async def _autoplay(self) -> None:
        """Answer at once for the seats the server's random bot plays (a seat of a 3+ seat game
        that resigned or was taken over after too many timeouts)."""
        for _ in range(100_000):
            answer = self.core.auto_answer()
            if answer is None:
                return
            await self._play(*answer)

    async def perform(self, effects: Sequence[Effect]) -> None:
        """Carry out what a core command asked for, in order."""
        for effect in effects:
            if isinstance(effect, Push):
                self.push_all()
            elif isinstance(effect, End):
                await self.end(effect.result)
            elif isinstance(effect, SaveEndings):
                await self.ports.store.save_endings(self.core.game_id, self.core.endings.to_data())
            elif isinstance(effect, Settle):
                await self.settle()
            elif isinstance(effect, Answer):
                await self._play(effect.seat, effect.action)
            elif isinstance(effect, TakeBack):
                await self._take_back(effect.by)

    async def _take_back(self, by: int) -> None:
        """Store `by`'s takeback as an entry of the log (the record keeps the move and its
        takeback), then the room is at the position before `by`'s last move: pushed to all,
        the clocks restarted for the seat to move. A failed write is settled by the stored log,
        as a move's is (`mending`)."""
        core = self.core
        move = core.take_back(by, self._now())
        try:
            await self.ports.store.append_action(
                core.game_id, move.seq, move.seat, move.action, None, clock=move.snapshot
            )
        except Exception as exc:
            log_failure(log, exc, "room %s: could not store a takeback; asking the stored log", self.code)
            outcome, stored = await mending.after_failed_write(
                self.ports.store, core, self.code, move.seat, move.action, None, exc
            )
            if stored is not None:  # the log differed: the room takes it
                await self._take_stored(stored)
                if outcome is mending.Outcome.STALE:
                    raise ProtocolError(
                        ErrorCode.STALE_DECISION, f"the stored game is at move {core.seq}: ask again"
                    ) from None
                return
            if outcome is mending.Outcome.ABSENT:
                core.undo(move)
                raise ProtocolError(ErrorCode.STORAGE, "the takeback could not be stored; try again") from None
        core.commit_takeback(move)
        self.push_all()
        topic = f"rooms/{self.event_name}/action"
        if self.ports.publisher.publishes(topic):  # as a move's: relays on other nodes follow it
            await self.ports.publisher.publish(
                topic,
                {
                    "type": "action",
                    **self.event_base(),
                    "seq": core.seq,
                    "seat": move.seat,
                    **core.public_action(move.action),
                },
            )
        await self.settle()

    async def request_ending(
        self, session: Session, seat: int | None, rule: Callable[[RoomCore[Session], int], list[Effect]]
    ) -> None:
        """An ending request (resign, a draw offer, abort) of `session` for `seat`: the core's
        `rule` decides, this carries it out. A request whose write fails leaves the room's ending
        bookkeeping as it was: otherwise the room would hold a resignation (or a lapsed offer)
        the database does not, and refuse the request when it is asked again."""
        core = self.core
        seat = core.seat_in_play(session, seat)
        kept = core.endings_kept()
        effects = rule(core, seat)
        written = next((i + 1 for i, e in enumerate(effects) if isinstance(e, End | SaveEndings)), 0)
        try:
            await self.perform(effects[:written])
        except Exception:
            core.endings_back(kept)  # not ended in memory: nothing of the request stands
            raise
        await self.perform(effects[written:])

    async def _record_finish_if_over(self) -> bool:
        """Store the result as soon as the game ends, before anyone is told, so that whoever sees
        a finished game also finds it finished in the database."""
        result = self.core.rules_result()
        if result is None:
            return False
        await self._finish(result)
        return True

    async def _finish(self, result: dict[str, Any]) -> None:
        """End the game with `result` (its `reason` says why): stored first, then the room stops
        its clocks and timer. An aborted game is stored as 'aborted', without a result."""
        aborted = result["reason"] == "aborted"
        stored = (None, "aborted") if aborted else (result, "finished")
        await self.ports.store.finish_game(self.core.game_id, *stored)
        self.core.finish(result, self._now())
        self._finished()

    def _finished(self) -> None:
        """The core has just finished: the lobby shows it, the reaper counts from now, no timer."""
        self.ports.lobby.changed(self)
        self.finished_at = asyncio.get_running_loop().time()
        self._disarm()

    async def end(self, result: dict[str, Any]) -> None:
        """End the game for a reason other than its rules, and tell everyone."""
        await self._finish(result)
        self.push_all()
        await self._announce_finish()

    async def _announce_finish(self) -> None:
        result = self.core.result
        assert result is not None
        seed = str(self.core.seed)
        ended = server_message("game_over", room=self.code, game_id=self.core.game_id, result=result, seed=seed)
        send_all(self.audience(), ended)
        topic = f"rooms/{self.event_name}/game_over"
        if self.ports.publisher.publishes(topic):
            await self.ports.publisher.publish(
                topic,
                {"type": "game_over", **self.event_base(), "result": result, "seed": seed, "moves": self.core.seq},
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
        """Go on from a log the room has just adopted: after a restart (`finish_resumed`, the
        core built by `RoomCore.from_stored`), or when the stored log turned out ahead of the room
        (`_take_stored`). A game
        that has ended is announced: `ended` is the result it is stored with, or its last action
        ended it and the result is stored now, before anyone is told. Otherwise the clocks start
        from the snapshot stored with the last action, the server's bot answers for its seats and
        the timer is armed.

        `restarted`: nobody is connected yet, so no views are pushed, every seat's grace period
        starts, and a failed write of the server's bot fails the resume (the server then leaves
        the game in the database for its next start). Otherwise the players present get the new
        views first, and a failed write of the bot's (logged by `_play`) does not fail the
        request under way, which was about another action."""
        core = self.core
        if ended is not None:
            core.finish(ended, self._now())
            self._finished()
        if ended is not None or await self._record_finish_if_over():
            if not restarted:
                self.push_all()
            await self._announce_finish()
            return
        core.sync_clock(None, self._now())
        if restarted:
            now = self._now()
            for seat in range(core.num_seats):
                core.endings.leave(seat, now)
            await self._autoplay()
        else:
            self.push_all()
            with contextlib.suppress(ProtocolError):
                await self._autoplay()
        self._arm()

    # Time: one timer per room, at the core's nearest deadline.

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _arm(self) -> None:
        """(Re)set the room's timer to the core's nearest deadline."""
        self._disarm()
        when = self.core.next_deadline()
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
        core = self.core
        if core.result is not None or core.state is None:
            return
        try:
            now = self._now()
            if core.clock is not None:
                # a millisecond's grace: the loop may fire a timer a little before its time
                for seat in core.expired(now + 1e-3):
                    if core.result is not None:
                        break
                    if seat in core.expired(self._now() + 1e-3):  # not restarted meanwhile
                        await self.perform(core.time_out(seat))
            else:
                await self.perform(core.abandoned(now))
            await self._autoplay()
        except Exception:
            # A write failed (a loss on time, a timeout's random answer, an abandoned game's
            # end): try again in a while. Armed at its passed deadline the timer would fire at
            # once, again and again; left unarmed, the game would wait for someone to act, and
            # the one whose time ran out may never come back.
            self._disarm()
            if core.result is None:
                self._timer = asyncio.get_running_loop().call_later(TIMER_RETRY_S, self._fire)
            raise
        self._arm()

    async def settle(self) -> None:
        """After a change made outside an action (a resignation): restart the clocks of the seats
        to act, let the server's bot answer for its seats, and re-arm the timer."""
        self.core.sync_clock(None, self._now())
        await self._autoplay()
        self._arm()

    @property
    def event_name(self) -> str:
        """The room's name on the events bus: its code if public; a private room's code is its
        only key, so private rooms are published under their game id instead."""
        return self.code if self.public else f"game-{self.core.game_id}"

    async def close_unstarted(self) -> None:
        """Close a room that never started (the server reaps them after a while): its game is
        stored as aborted and whoever is inside is told."""
        if self.core.status != "waiting":
            return
        self.core.close_unstarted()
        self.finished_at = asyncio.get_running_loop().time()
        self.ports.lobby.changed(self)
        await self.ports.store.finish_game(self.core.game_id, None, status="aborted")
        self.broadcast_room()
        for session in self.audience():
            session.rooms.discard(self)

    def event_base(self) -> dict[str, Any]:
        return {"room": self.event_name, "game_id": self.core.game_id, "game": self.core.game.name, "time": time.time()}

    # Pushing views. Every seat gets its own view; spectators get the public one.

    def audience(self) -> set[Session]:
        sessions = {s.session for s in self.core.seats if s is not None and s.session is not None}
        return sessions | self.spectators

    def _update(self, seat: int | None) -> dict[str, Any]:
        return self.core.seat_update(seat, *self._shared_update())

    def _shared_update(self) -> tuple[dict[str, Any], list[Decision]]:
        core = self.core
        clock = None if core.clock is None else core.clock.to_data(self._now(), time.time())
        return core.shared_update(self.code, clock)

    def _push_seat(self, seat: int) -> None:
        occupant = self.core.seats[seat]
        if occupant is not None and occupant.session is not None:
            occupant.session.send(self._update(seat))

    def push_all(self) -> None:
        core = self.core
        shared, pending = self._shared_update()
        for seat, occupant in enumerate(core.seats):
            if occupant is not None and occupant.session is not None:
                occupant.session.send(core.seat_update(seat, shared, pending))
        if self.spectators:
            send_all(self.spectators, core.seat_update(None, shared, pending))

    def broadcast_room(self) -> None:
        self.ports.lobby.changed(self)
        audience = [session for session in self.audience() if not session.closed]
        if audience:  # built only for someone to get it (players who went, say, leave a room nobody is in)
            send_all(audience, server_message("room", room=self.code, summary=self.summary()))

    async def _take_stored(self, stored: StoredGame) -> None:
        """Replace the room's game with the stored one, found ahead of it (`mending`), as a
        restart rebuilds it (`RoomCore.catch_up`), and tell everyone."""
        self.core.catch_up(stored.actions, stored.clock_state)
        await self.settle_adopted_log(mending.stored_end(stored))
