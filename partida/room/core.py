"""A room's game without I/O: its seats and their tokens, the game state and its log, the clocks,
the endings and the result, changed only by commands that take plain values (who, what, the time
`now` on the driver's monotonic clock) and return what the driver must do about it.

The driver (`partida/server/rooms/driver.py`) holds one core per room and runs its commands under the
room's lock; it owns everything that waits or talks: the connections seated here (a seat's
`session` is opaque to the core, which only compares it), the writes, the pushes, the events and
the timer. A command never waits, so a core is tested with plain numbers and no event loop.

Two kinds of answer:

- A change that must be stored before anyone learns of it comes in two steps: `play` applies an
  action and returns the `Move` to write (its clock snapshot, and the result when it ends the
  game); the driver writes it and then calls `commit` (the move stands) or `undo` (it does not).
  The start (`new_state`, then `begin`) and an ending (`End`, then `finish`) work the same way.
- The ending requests and the timer return `Effect`s, performed in order: `SaveEndings` (store
  the ending bookkeeping), `End(result)` (store the result, then tell everyone), `Push` (every
  seat its view), `Settle` (restart the clocks, let the server's bot answer for its seats, arm the
  timer), `Answer(seat, action)` (play this action for that seat: a timed-out seat's random
  answer). `next_deadline` says when the timer must fire.

Invariants: `actions` is the stored log (a move joins it only once written); `state` is the game
after `actions`, except between `play` and `commit`/`undo`; `result` is set once, and from then
on no command changes the game; `seats` are stored when the game starts and are fixed from then
on (only their connections change).
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from partida.games.base import Action, Decision, Game, IllegalAction, State
from partida.protocol import ErrorCode, ProtocolError
from partida.room import endings, takebacks
from partida.room.clocks import Clock, ClockSpec
from partida.room.endings import Endings
from partida.room.record import public_last
from partida.room.terms import RoomTerms

H = TypeVar("H")  # who holds a seat: the driver's connection; the core only compares it

ILLEGAL_CODES = {
    "not_your_turn": ErrorCode.NOT_YOUR_TURN,
    "game_over": ErrorCode.GAME_OVER,
    "no_such_seat": ErrorCode.NO_SUCH_SEAT,
}


def legacy_seat_token(seed: int, game_id: int, seat: int) -> str:
    """How tokens were derived before they were drawn per seating; still honoured for a game
    stored without a token (started by an older Partida)."""
    key = seed.to_bytes(8, "big", signed=True)
    return hmac.new(key, f"seat:{game_id}:{seat}".encode(), hashlib.sha256).hexdigest()[:32]


@dataclass(eq=False)
class Seat(Generic[H]):
    """Who sits in a seat. `token` reclaims it: drawn afresh for each seating (by the driver,
    from the system's generator), so it belongs to that holder alone; stored when the game
    starts. `session`: the holder's connection while connected, else None (the seat is held)."""

    name: str
    kind: str
    account_id: int | None = None
    agent: str | None = None
    session: H | None = None
    token: str = ""
    rating: str | None = None  # shown beside the name (`1500?`): the driver reads it as one sits

    def to_data(self, index: int) -> dict[str, Any]:
        return {
            "seat": index,
            "name": self.name,
            "kind": self.kind,
            "agent": self.agent,
            "connected": self.session is not None,
            "rating": self.rating,
        }


# Effects: what the driver does after an ending request or a timer's command, in order.


@dataclass(frozen=True, slots=True)
class SaveEndings:
    """Store `endings.to_data()` (resignations, timeouts, the seats the server's bot plays)."""


@dataclass(frozen=True, slots=True)
class End:
    """Store `result` (its `reason` says why the game ended), then `finish` and tell everyone."""

    result: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Push:
    """Every seat its view, every spectator the public one."""


@dataclass(frozen=True, slots=True)
class Settle:
    """Restart the clocks of the seats to act, answer for the seats the server's bot plays,
    re-arm the timer."""


@dataclass(frozen=True, slots=True)
class Answer:
    """Play `action` for `seat` as if it had answered (a timed-out seat's random answer)."""

    seat: int
    action: Action


@dataclass(frozen=True, slots=True)
class TakeBack:
    """Take back `by`'s last move (and the reply after it): `take_back` gives the log entry to
    write, then `commit_takeback` (or `undo`, the write failed), then push and settle."""

    by: int


Effect = SaveEndings | End | Push | Settle | Answer | TakeBack


@dataclass(slots=True)
class Move:
    """An action applied to the state and not yet in the log: what the driver writes
    (`seq`, `seat`, `action`, `result`, `snapshot`), and what `undo` needs."""

    seq: int
    seat: int
    action: Action
    result: dict[str, Any] | None  # the action ends the game: stored with it, in one write
    snapshot: list[float] | None  # the clocks after it, stored with it
    saved_clock: tuple[list[float], dict[int, float]] | None


class RulesFailed(Exception):
    """The game's rules raised something other than `IllegalAction` on an action: the core has
    rebuilt the state from the log, unchanged."""


class StoredLog(Protocol):
    """What a core is rebuilt from: a game as stored (`partida.storage.store.StoredGame` is one),
    read as plain values."""

    id: int
    options: dict[str, Any]
    seats: int
    seed: int
    seed_hash: str
    public: bool
    rated: bool
    clock: dict[str, Any] | None
    endings: dict[str, Any] | None
    clock_state: list[float] | None
    seat_list: list[tuple[int, int | None, str]]
    seat_kinds: dict[int, str]
    seat_tokens: dict[int, str | None]
    actions: list[tuple[int, Any]]


class RoomCore(Generic[H]):
    def __init__(self, terms: RoomTerms, seed: int, seed_hash: str) -> None:
        self.game: Game = terms.game
        self.options = terms.options
        self.num_seats = terms.seats
        self.auto_start = terms.auto_start
        self.clock_spec: ClockSpec | None = terms.clock
        self.seed = seed
        self.seed_hash = seed_hash
        self.game_id = 0
        self.seats: list[Seat[H] | None] = [None] * terms.seats
        self.kept: tuple[int | None, ...] = terms.kept or (None,) * terms.seats
        self.status = "waiting"  # waiting | playing | finished | aborted
        self.state: State | None = None
        self.actions: list[tuple[int, Action]] = []
        self.last: dict[str, Any] | None = None
        self.clock: Clock | None = None
        self.endings = Endings(
            terms.seats, terms.abandon_after, takebacks=terms.takebacks and terms.game.takebacks and not terms.rated
        )
        self.result: dict[str, Any] | None = None  # the final result, with its reason
        self._decisions: list[Decision] | None = None  # `state.pending()` until the state changes
        self._rng: random.Random | None = None

    @classmethod
    def from_stored(cls, game: Game, stored: StoredLog, abandon_after: float) -> RoomCore[H]:
        """The core of a game in play rebuilt from storage (a restart, a node taking over a dead
        node's game): its seats as they were started, held for their players, its ending
        bookkeeping, and its log replayed. `abandon_after`: the grace period of a game stored
        without one."""
        clock = ClockSpec.parse(stored.clock) if stored.clock else None
        terms = RoomTerms(game, dict(stored.options), stored.seats, stored.public, clock=clock, rated=stored.rated)
        core: RoomCore[H] = cls(terms, stored.seed, stored.seed_hash)
        core.endings = Endings.from_data(stored.seats, stored.endings, abandon_after)
        core.game_id = stored.id
        for seat, account_id, name in stored.seat_list:
            # guest | user | bot, as before the restart (a bot's seat was "account": not a bot
            # to the clients, which mark bots)
            kind = stored.seat_kinds.get(seat) or ("guest" if account_id is None else "user")
            core.seats[seat] = Seat(name, kind, account_id, token=stored.seat_tokens.get(seat) or "")
        core.status = "playing"
        core.adopt(stored.actions, stored.clock_state)
        return core

    def stored_as(self, game_id: int) -> None:
        """The room's game has its row: its id, once, before anyone can take a seat."""
        self.game_id = game_id

    @property
    def seq(self) -> int:
        return len(self.actions)

    @property
    def rng(self) -> random.Random:
        """Answers for timed-out seats and the server's bot; seeded from the system on first use
        (most rooms never answer for anyone)."""
        if self._rng is None:
            self._rng = random.Random()
        return self._rng

    def decisions(self) -> list[Decision]:
        """The decisions open now: `state.pending()`, built once per state rather than once per
        reader (the move's checks, the clock, each seat's update)."""
        assert self.state is not None
        if self._decisions is None:
            self._decisions = self.state.pending()
        return self._decisions

    # Seats and tokens.

    def check_seat_number(self, seat: int | None) -> None:
        if seat is not None and not 0 <= seat < self.num_seats:
            raise ProtocolError(ErrorCode.NO_SUCH_SEAT, f"this room has seats 0 to {self.num_seats - 1}")

    def seat_of_token(self, token: str, seat: int | None) -> int:
        """The seat `token` holds (each seating draws its own, so the token alone says which);
        `seat`, when given, must be the token's."""
        held = [i for i in range(self.num_seats) if self._token_holds(i, token)] if self.game_id else []
        if not held or (seat is not None and seat not in held):
            raise ProtocolError(ErrorCode.AUTH_FAILED, "that token does not hold this seat")
        return held[0]

    def _token_holds(self, seat: int, token: str) -> bool:
        occupant = self.seats[seat]
        if occupant is None:
            return False
        expected = occupant.token or legacy_seat_token(self.seed, self.game_id, seat)
        return hmac.compare_digest(token.encode(), expected.encode())

    def token_for(self, seat: int) -> str:
        occupant = self.seats[seat]
        assert occupant is not None
        return occupant.token or legacy_seat_token(self.seed, self.game_id, seat)

    def held_for(self, account_id: int | None) -> int | None:
        """The seat an account holds while away from it (its connection gone): it may take it back."""
        if account_id is None:
            return None
        for i, s in enumerate(self.seats):
            if s is not None and s.account_id == account_id and s.session is None:
                return i
        return None

    def free_seat(self, seat: int | None, account_id: int | None = None) -> int:
        """The seat a newcomer (`account_id`; None for a guest) takes: `seat`, or the seat kept
        for it, or the first free seat kept for nobody."""
        if self.status != "waiting":
            raise ProtocolError(ErrorCode.ALREADY_STARTED, "the game has started; watch it, or use your seat token")
        kept = self.kept
        if seat is None:
            free = [i for i, s in enumerate(self.seats) if s is None]
            if not free:
                raise ProtocolError(ErrorCode.ROOM_FULL, "every seat is taken")
            mine = [i for i in free if account_id is not None and kept[i] == account_id]
            open_to_all = [i for i in free if kept[i] is None]
            if not mine and not open_to_all:
                raise ProtocolError(ErrorCode.SEAT_KEPT, "every free seat is kept for someone else: watch the game")
            return (mine or open_to_all)[0]
        occupant = self.seats[seat]
        if occupant is not None:
            raise ProtocolError(ErrorCode.SEAT_TAKEN, f"seat {seat} is taken by {occupant.name}")
        if kept[seat] is not None and kept[seat] != account_id:
            raise ProtocolError(ErrorCode.SEAT_KEPT, f"seat {seat} is kept for another player: watch the game")
        return seat

    def sit(self, seat: int, occupant: Seat[H]) -> None:
        """`occupant` takes `seat` (found free by `free_seat`, the game not started)."""
        self.seats[seat] = occupant

    def seat_back(self, seat: int, session: H) -> H | None:
        """`session` holds `seat` again; returns the connection that held it until now, if
        another one (it is told it lost the seat)."""
        occupant = self.seats[seat]
        assert occupant is not None
        before = occupant.session if occupant.session is not None and occupant.session is not session else None
        occupant.session = session
        self.endings.back(seat)
        return before

    def seat_left(self, seat: int, now: float) -> None:
        """Its holder went: before the start the seat is free again; after, it is held for its
        return (its grace period runs from `now` in a game going on)."""
        if self.status == "waiting":
            self.seats[seat] = None
            return
        occupant = self.seats[seat]
        assert occupant is not None
        occupant.session = None
        if self.result is None:
            self.endings.leave(seat, now)

    def seats_of(self, session: H) -> list[int]:
        return [i for i, s in enumerate(self.seats) if s is not None and s.session is session]

    def own_seat(self, session: H, seat: int | None) -> int:
        """The seat a request of `session` is about: `seat` if it holds it, else its first."""
        mine = self.seats_of(session)
        if not mine:
            raise ProtocolError(ErrorCode.NOT_SEATED, "you have no seat in this room")
        if seat is None:
            return mine[0]
        if seat not in mine:
            raise ProtocolError(ErrorCode.NOT_SEATED, f"seat {seat} is not yours")
        return seat

    def seat_in_play(self, session: H, seat: int | None) -> int:
        """`own_seat`, in a game that has started and not ended."""
        seat = self.own_seat(session, seat)
        if self.state is None:
            raise ProtocolError(ErrorCode.NOT_STARTED, "the game has not started")
        if self.result is not None:
            raise ProtocolError(ErrorCode.GAME_OVER, "the game is over")
        return seat

    def full(self) -> bool:
        return all(s is not None for s in self.seats)

    # The start: `new_state` and `start_record`, the driver stores them, then `begin`.

    def new_state(self, by_owner: bool) -> State:
        """The game's first state, once the start is allowed (`by_owner`: asked by the room's
        creator, or by nobody: the last seat taken)."""
        if self.status != "waiting":
            raise ProtocolError(ErrorCode.ALREADY_STARTED, "the game has already started")
        if not by_owner:
            raise ProtocolError(ErrorCode.NOT_OWNER, "only the room's creator can start it")
        if not self.full():
            raise ProtocolError(ErrorCode.SEATS_EMPTY, "every seat must be taken before the start")
        return self.game.new_state(self.options, self.seed, self.num_seats)

    def start_record(self) -> tuple[list[tuple[int, int | None, str]], dict[int, str]]:
        """What storage keeps of the start: each seat's account and name, and its token."""
        seats = [(i, s.account_id, s.name) for i, s in enumerate(self.seats) if s is not None]
        tokens = {i: s.token for i, s in enumerate(self.seats) if s is not None}
        return seats, tokens

    def begin(self, state: State) -> None:
        """The start is stored: the game is on."""
        self.state = state
        self._decisions = None
        self.status = "playing"
        if self.clock_spec is not None:
            self.clock = Clock.new(self.clock_spec, self.num_seats)

    # Actions: `play`, the driver stores the move, then `commit` or `undo`.

    def check_act(self, mine: Sequence[int], seat: int | None, seq: int | None) -> int:
        """The seat an `act` of someone holding `mine` answers for, checked: its open decision
        (`seat` if given), at the move it was asked at (`seq`, if given)."""
        if self.result is not None:
            raise ProtocolError(ErrorCode.GAME_OVER, "the game is over")
        if seat is None:
            open_seats = [d.seat for d in self.decisions() if d.seat in mine]
            seat = open_seats[0] if open_seats else mine[0]
        elif seat not in mine:
            raise ProtocolError(ErrorCode.NOT_SEATED, f"seat {seat} is not yours")
        if seq is not None and seq != self.seq:
            raise ProtocolError(ErrorCode.STALE_DECISION, f"that decision has passed (now at move {self.seq})")
        return seat

    def play(self, seat: int, action: Action, now: float) -> Move:
        """Apply `action` of `seat` and charge the clocks; returns the move to store. A refused
        action changes nothing (`ProtocolError` with the rules' code)."""
        assert self.state is not None
        try:
            self._decisions = None
            self.state.apply(seat, action)
        except IllegalAction as exc:
            raise ProtocolError(ILLEGAL_CODES.get(exc.code, ErrorCode.ILLEGAL_ACTION), exc.message) from None
        except Exception as exc:
            self.rebuild()
            raise RulesFailed() from exc
        saved = self.clock.save() if self.clock is not None else None
        snapshot = self.sync_clock(seat, now)
        # An action that ends the game is stored with the result, in one write.
        result = self.endings.final(self.state.result()) if self.state.is_over() and self.result is None else None
        return Move(self.seq, seat, action, result, snapshot, saved)

    def commit(self, move: Move, now: float) -> bool:
        """The move is stored: it joins the log. True when it ended the game."""
        assert self.state is not None
        self.actions.append((move.seat, move.action))
        self.last = public_last(self.game, self.state, move.seat, move.action)
        self.endings.on_action(move.seat)
        if move.result is not None:
            self.finish(move.result, now)
            return True
        return False

    def undo(self, move: Move) -> None:
        """The move could not be stored: the game is as it was before `play`."""
        self.rebuild()
        if self.clock is not None and move.saved_clock is not None:
            self.clock.restore(move.saved_clock)

    def rebuild(self) -> None:
        """The state re-run from the log (its standing moves: `takebacks.line`)."""
        self.state = self.game.replay(self.options, self.seed, self.num_seats, takebacks.line(self.actions))
        self._decisions = None

    def adopt(self, actions: Sequence[tuple[int, Action]], clock_state: list[float] | None) -> None:
        """Take a stored log as the game: the state replayed from it, the clocks from the
        snapshot stored with its last action (a restart, or a log found ahead of the room)."""
        self.actions = [(seat, action) for seat, action in actions]
        self.rebuild()
        assert self.state is not None
        if self.actions and takebacks.is_takeback(self.actions[-1][0]):
            self.last = takebacks.public_last(self.actions)
        else:
            self.last = public_last(self.game, self.state, *self.actions[-1]) if self.actions else None
        if self.clock_spec is not None:
            self.clock = Clock.new(self.clock_spec, self.num_seats, clock_state)

    def catch_up(self, actions: Sequence[tuple[int, Action]], clock_state: list[float] | None) -> None:
        """Take a stored log found ahead of the room (`adopt`), the ending bookkeeping carried
        through the actions the room had not seen: a draw offer lapses as it would have. Seats,
        their connections and the rest of the bookkeeping stay, since every other write of a
        game is the room's own and waited for."""
        for acted, _ in actions[self.seq :]:
            self.endings.on_action(acted)
        self.adopt(actions, clock_state)

    def sync_clock(self, acted: int | None, now: float) -> list[float] | None:
        """Charge `acted` and start the clocks of the seats to act now (the server's bot answers
        for `auto` seats at once: their clocks stay still). Returns the snapshot to store."""
        if self.clock is None or self.state is None:
            return None
        pending = [] if self.state.is_over() else self.decisions()
        to_act = [d.seat for d in pending if d.seat not in self.endings.auto]
        self.clock.sync(to_act, now, acted)
        return self.clock.snapshot(now)

    def auto_answer(self) -> tuple[int, Action] | None:
        """An answer for a seat the server's random bot plays (a seat of a 3+ seat game that
        resigned or was taken over after too many timeouts), if one is to act."""
        if self.state is None or self.result is not None or not self.endings.auto:
            return None
        decision = next((d for d in self.decisions() if d.seat in self.endings.auto), None)
        if decision is None:
            return None
        return decision.seat, decision.prompt.random_answer(self.rng)

    # The end.

    def rules_result(self) -> dict[str, Any] | None:
        """The result to store when the game's last action ended it and none is stored yet."""
        assert self.state is not None
        if not self.state.is_over() or self.result is not None:
            return None
        return self.endings.final(self.state.result())

    def finish(self, result: dict[str, Any], now: float) -> None:
        """The result is stored: the game is over, its clocks stop."""
        self.result = result
        self.status = "finished"
        self.endings.draw_offer = None
        if self.clock is not None:
            self.clock.stop_all(now)

    def close_unstarted(self) -> None:
        self.status = "aborted"

    def endings_kept(self) -> Endings:
        """The ending bookkeeping as it is now, for `endings_back` if the write of a request's
        change to it fails."""
        return copy.deepcopy(self.endings)

    def endings_back(self, kept: Endings) -> None:
        """Undo an ending request whose write failed, unless the game ended meanwhile in memory:
        otherwise the room would hold a resignation (or a lapsed offer) the database does not."""
        if self.result is None:
            self.endings = kept

    # Ending requests, for a seat in play (`seat_in_play`).

    def resign(self, seat: int, note: str | None = None) -> list[Effect]:
        """Two seats: the other wins. More: the seat drops out (the server's random bot answers
        for it, it ranks last) and the game goes on until a single seat is left."""
        result = self.endings.resign(seat, note)
        if result is not None:
            return [End(result)]
        return [SaveEndings(), Push(), Settle()]

    def offer_draw(self, seat: int) -> list[Effect]:
        if self.endings.offer_draw(seat):  # the opponent's offer stands: agreed
            return [End(endings.draw(self.num_seats, "draw_agreed"))]
        return [Push()]  # updates carry `draw_offer`

    def accept_draw(self, seat: int) -> list[Effect]:
        self.endings.accept_draw(seat)
        return [End(endings.draw(self.num_seats, "draw_agreed"))]

    def decline_draw(self, seat: int) -> list[Effect]:
        self.endings.decline_draw(seat)
        return [Push()]

    def abort(self, seat: int) -> list[Effect]:
        self.endings.check_abort(s for s, _ in self.actions)
        return [End(endings.aborted())]

    # Takebacks (what is taken back and how the log keeps it: partida/room/takebacks.py).

    def takebacks_allowed(self) -> bool:
        """A casual two-seat game of a game that allows takebacks, between people: a bot is
        never asked (a takeback against one is refused)."""
        return (
            self.endings.takebacks
            and self.num_seats == 2
            and not any(s is not None and (s.kind == "bot" or s.agent is not None) for s in self.seats)
        )

    def _takeback_count(self, seat: int) -> int:
        """How many standing moves `seat`'s takeback would undo, checked."""
        if not self.takebacks_allowed():
            raise ProtocolError(
                ErrorCode.TAKEBACK_UNAVAILABLE,
                "takebacks are for casual games between two people, of a game without chance or hidden "
                "cards (Othello, tic-tac-toe); never rated, tournament or ladder games, nor against a bot",
            )
        if takebacks.taken(self.actions) >= takebacks.MAX_PER_GAME:
            raise ProtocolError(
                ErrorCode.TOO_MANY_TAKEBACKS, f"this game has had its {takebacks.MAX_PER_GAME} takebacks"
            )
        count = takebacks.undo_count(takebacks.line(self.actions), seat)
        if count == 0:
            raise ProtocolError(ErrorCode.NOTHING_TO_TAKE_BACK, "you have no move to take back")
        return count

    def offer_takeback(self, seat: int) -> list[Effect]:
        """Ask the opponent to take back `seat`'s last move (and the reply after it). Meeting the
        opponent's own standing offer, the opponent's is carried out."""
        self._takeback_count(seat)
        if self.endings.offer_takeback(seat, self.seq):
            return [TakeBack(self.endings.answered_takeback(seat))]
        return [Push()]  # updates carry `takeback_offer`

    def accept_takeback(self, seat: int) -> list[Effect]:
        by = self.endings.answered_takeback(seat)
        self._takeback_count(by)
        return [TakeBack(by)]

    def decline_takeback(self, seat: int) -> list[Effect]:
        self.endings.decline_takeback(seat, self.seq)
        return [Push()]

    def take_back(self, by: int, now: float) -> Move:
        """Go back to the position before `by`'s last move; returns the log entry to store. The
        clocks as Lichess rewinds them (`Clock.rewind`): the turn under way is not charged, no
        other time changes, and the seat to move after the takeback starts."""
        count = self._takeback_count(by)
        standing = takebacks.line(self.actions)
        seat, action = takebacks.entry(by, count)
        saved = self.clock.save() if self.clock is not None else None
        self.state = self.game.replay(self.options, self.seed, self.num_seats, standing[:-count])
        self._decisions = None
        snapshot = None
        if self.clock is not None:
            self.clock.rewind([d.seat for d in self.decisions() if d.seat not in self.endings.auto], now)
            snapshot = self.clock.snapshot(now)
        return Move(self.seq, seat, action, None, snapshot, saved)

    def commit_takeback(self, move: Move) -> None:
        """The takeback is stored: it joins the log, every offer lapses."""
        self.actions.append((move.seat, move.action))
        self.last = takebacks.public_last(self.actions)
        self.endings.on_action(move.seat)

    # Time.

    def next_deadline(self) -> float | None:
        """When the timer must fire: a running clock's nearest deadline, or (without a clock)
        the end of an absent seat's grace period; None for a game not on."""
        if self.result is not None or self.state is None:
            return None
        return self.clock.next_deadline() if self.clock is not None else self.endings.next_abandon()

    def expired(self, now: float) -> list[int]:
        """The seats whose time has run out at `now`, in seat order; none once the game is over."""
        if self.clock is None or self.result is not None:
            return []
        return self.clock.expired(now)

    def time_out(self, seat: int) -> list[Effect]:
        """`seat`'s time ran out: two seats, it loses; more, a random answer is given for it, and
        after the clock's number of timeouts the server's random bot plays it to the end."""
        assert self.state is not None and self.clock_spec is not None
        if self.endings.timed_out(seat) == "lose":
            return [End(endings.decisive(self.num_seats, [seat], "time"))]
        taken = self.endings.take_over_if_due(seat, self.clock_spec.timeouts)
        effects: list[Effect] = [SaveEndings()]
        decision = self.state.decision_for(seat)
        if decision is not None and not taken:
            effects.append(Answer(seat, decision.prompt.random_answer(self.rng)))
        return effects

    def abandoned(self, now: float) -> list[Effect]:
        """Without a clock: the game ends when a seat has been away longer than its grace."""
        result = self.endings.abandoned(now, self.seq)
        return [] if result is None else [End(result)]

    # Rematch.

    def offer_rematch(self, seat: int) -> bool:
        """Record that `seat` wants a rematch; True when every human seat does."""
        if self.result is None:
            raise ProtocolError(ErrorCode.GAME_NOT_OVER, "a rematch is offered once the game is over")
        humans = [i for i, s in enumerate(self.seats) if s is not None and s.agent is None]
        return self.endings.offer_rematch(seat, humans)

    def rematch_terms(self, public: bool, rated: bool) -> RoomTerms:
        """The terms of this game's rematch: the same game, options, seats, clock and grace
        period (`public` and `rated` are the driver's: a rated game refused as farming at its
        start is casual, and so is its rematch)."""
        return RoomTerms(
            self.game,
            dict(self.options),
            self.num_seats,
            public,
            clock=self.clock_spec,
            abandon_after=self.endings.abandon_after,
            rated=rated,
            takebacks=self.endings.takebacks,
        )

    def seat_rematch(self, old: Sequence[Seat[H] | None], tokens: Sequence[str]) -> list[Seat[H] | None]:
        """Fill every seat at once with the players of the game `old` was seated for, everyone
        one seat on (`rematch_seats`), each with a fresh token of `tokens`; returns the seats."""
        assert self.status == "waiting" and not any(self.seats), "a rematch is seated in a new, empty room"
        self.seats = rematch_seats(old, tokens)
        return self.seats

    # Updates: the same fields for everyone, then what one seat alone may see.

    def shared_update(self, code: str, clock: dict[str, Any] | None) -> tuple[dict[str, Any], list[Decision]]:
        """The fields of an update that are the same for every seat and spectator (built once
        per push, not once per reader), and the decisions open. `clock`: the clocks as sent
        (`Clock.to_data`), or None."""
        assert self.state is not None
        over = self.result is not None
        pending = [] if over else self.decisions()
        message = {  # `server_message("update", ...)`, without the keywords' dict: built every move
            "type": "update",
            "room": code,
            "game_id": self.game_id,
            "game": self.game.name,
            "seq": len(self.actions),
            "seat": None,
            "status": "finished" if over else self.status,
            "view": None,
            "decision": None,
            "to_act": [d.seat for d in pending],
            "last": self.last,
            "clock": clock,
            "draw_offer": self.endings.draw_offer,
            "takeback_offer": self.endings.takeback_offer,
            "resigned": list(self.endings.resigned),
        }
        if over:
            message["result"] = self.result
            message["seed"] = str(self.seed)  # decimal: seeds exceed 2^53, where JSON numbers round
        return message, pending

    def seat_update(self, seat: int | None, shared: dict[str, Any], pending: list[Decision]) -> dict[str, Any]:
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

    def public_action(self, action: Action) -> dict[str, Any]:
        """What an `action` event carries: only what a spectator may see (the action itself for
        perfect-information games, the spectators' view for every game)."""
        assert self.state is not None
        data: dict[str, Any] = {"view": self.state.view(None)}
        if self.game.perfect_information:
            data["action"] = action
        return data


def rematch_seats(seats: Sequence[Seat[H] | None], tokens: Sequence[str]) -> list[Seat[H] | None]:
    """The seats of a rematch: the same players (and connections), everyone one seat on (two
    seats swap colours), each with a fresh token from `tokens` (one per seat)."""
    fresh = iter(tokens)
    return [
        Seat(s.name, s.kind, s.account_id, s.agent, s.session, next(fresh)) if s is not None else None
        for s in endings.rotated(list(seats))
    ]
