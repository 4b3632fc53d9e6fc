"""How games end other than by their rules: resignation, draw offers, abort, timeouts,
abandonment, and the rematch that follows. Pure: the room passes in what happened and the time;
this module keeps the bookkeeping, checks requests (raising `ProtocolError` with a stable code
and changing nothing when a request is refused) and builds the results.

Every result carries `reason`: `normal` (the rules ended it), `time`, `resign`, `draw_agreed`,
`aborted` or `abandoned`. Results the rules did not produce are decisive: the seats that lost
share the last rank and score 0, the others share the first and score 1 (0.5 each for a draw).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from partida.games.base import Result
from partida.protocol import ErrorCode, ProtocolError

REASONS = ("normal", "time", "resign", "draw_agreed", "aborted", "abandoned")
DEFAULT_ABANDON_AFTER = 300.0  # seconds a seat may be away from a game without a clock


def normal(result: Result) -> dict[str, Any]:
    return {**result.to_data(), "reason": "normal"}


def decisive(num_seats: int, losers: Collection[int], reason: str) -> dict[str, Any]:
    """`losers` share the last rank, the others the first. Every seat a loser: a draw."""
    winners = [s for s in range(num_seats) if s not in losers]
    if not winners:
        return draw(num_seats, reason)
    ranks = [1 if s not in losers else len(winners) + 1 for s in range(num_seats)]
    scores = [1.0 if s not in losers else 0.0 for s in range(num_seats)]
    return {"scores": scores, "ranks": ranks, "winners": winners, "reason": reason}


def draw(num_seats: int, reason: str) -> dict[str, Any]:
    return {"scores": [0.5] * num_seats, "ranks": [1] * num_seats, "winners": list(range(num_seats)), "reason": reason}


def aborted() -> dict[str, Any]:
    """No result: nothing is rated, nobody won."""
    return {"scores": [], "ranks": [], "winners": [], "reason": "aborted"}


def with_dropouts(result: dict[str, Any], dropped: list[int]) -> dict[str, Any]:
    """The game's result with the seats that dropped out (resigned, in `dropped` order) ranked
    below every other seat, the first to drop out last. The others keep the game's order."""
    if not dropped:
        return result
    n = len(result["ranks"])
    stayed = [s for s in range(n) if s not in dropped]
    ranks = [0] * n
    for s in stayed:
        ranks[s] = 1 + sum(1 for t in stayed if result["ranks"][t] < result["ranks"][s])
    for place, s in enumerate(reversed(dropped)):
        ranks[s] = len(stayed) + 1 + place
    winners = [s for s in range(n) if ranks[s] == 1]
    return {**result, "ranks": ranks, "winners": winners, "dropped": list(dropped)}


@dataclass
class Endings:
    """The ending-related state of one game. `auto` seats are answered by the server's random
    bot (a resigned seat of a 3+ seat game, or one taken over after too many timeouts); `away`
    maps the seats whose connection dropped to when it did (monotonic time)."""

    num_seats: int
    abandon_after: float = DEFAULT_ABANDON_AFTER
    draw_offer: int | None = None
    resigned: list[int] = field(default_factory=list)
    timeouts: list[int] = field(default_factory=list)
    auto: set[int] = field(default_factory=set)
    rematch: set[int] = field(default_factory=set)
    away: dict[int, float] = field(default_factory=dict)
    notes: dict[int, str] = field(default_factory=dict)  # a resigned seat's reason, for the record
    # Takebacks (partida/room/takebacks.py): allowed in this game (a casual game of a game that
    # declares them; stored, so a restarted room keeps its rule), the seat whose offer stands,
    # and (seat, move number) of an offer declined: asked again only after a move.
    takebacks: bool = False
    takeback_offer: int | None = None
    takeback_declined: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        if len(self.timeouts) != self.num_seats:
            self.timeouts = [0] * self.num_seats

    # What storage keeps (what a restarted server needs to finish the game the same way).

    def to_data(self) -> dict[str, Any]:
        return {
            "abandon_after": self.abandon_after,
            "resigned": list(self.resigned),
            "timeouts": list(self.timeouts),
            "auto": sorted(self.auto),
            **({"notes": {str(s): n for s, n in self.notes.items()}} if self.notes else {}),
            **({"takebacks": True} if self.takebacks else {}),
        }

    @classmethod
    def from_data(cls, num_seats: int, data: dict[str, Any] | None, abandon_after: float) -> Endings:
        data = data or {}
        return cls(
            num_seats,
            abandon_after=float(data.get("abandon_after", abandon_after)),
            resigned=[int(s) for s in data.get("resigned", [])],
            timeouts=[int(t) for t in data.get("timeouts", [])],
            auto={int(s) for s in data.get("auto", [])},
            notes={int(s): str(n) for s, n in (data.get("notes") or {}).items()},
            takebacks=bool(data.get("takebacks", False)),
        )

    # Resignation.

    def resign(self, seat: int, note: str | None = None) -> dict[str, Any] | None:
        """Record a resignation. Two seats: the result (the other wins). More: the seat drops out
        (the random bot answers for it) and None, unless a single seat is left, who wins. A
        `note` (why) goes into the result's `notes`, by seat."""
        if seat in self.resigned:
            raise ProtocolError(ErrorCode.ALREADY_RESIGNED, f"seat {seat} has already resigned")
        self.resigned.append(seat)
        if note:
            self.notes[seat] = note
        self.auto.add(seat)
        self.draw_offer = None
        self.takeback_offer = None
        left = [s for s in range(self.num_seats) if s not in self.resigned]
        if len(left) <= 1:
            scores = [1.0 if s in left else 0.0 for s in range(self.num_seats)]
            base = {"scores": scores, "ranks": [1] * self.num_seats, "winners": left, "reason": "resign"}
            return self._noted(with_dropouts(base, self.resigned))
        return None

    def final(self, result: Result) -> dict[str, Any]:
        """The result of a game its rules ended, with the dropouts ranked last."""
        data = normal(result)
        return self._noted(with_dropouts(data, self.resigned))

    def _noted(self, result: dict[str, Any]) -> dict[str, Any]:
        """The resignations' notes ride in the result, so the stored game keeps them (keys are
        seats as strings: the result is JSON)."""
        if not self.notes:
            return result
        return {**result, "notes": {str(s): n for s, n in sorted(self.notes.items())}}

    # Draw offers (two-seat games only).

    def _two_seats(self) -> None:
        if self.num_seats != 2:
            raise ProtocolError(ErrorCode.DRAW_UNAVAILABLE, "draws are offered in two-seat games only")

    def offer_draw(self, seat: int) -> bool:
        """Record an offer; True when it meets the opponent's standing offer (a draw agreed)."""
        self._two_seats()
        if self.draw_offer is not None and self.draw_offer != seat:
            return True
        self.draw_offer = seat
        return False

    def accept_draw(self, seat: int) -> None:
        self._two_seats()
        if self.draw_offer is None or self.draw_offer == seat:
            raise ProtocolError(
                ErrorCode.NO_DRAW_OFFER, "there is no draw offer to accept (it may have lapsed when a move was made)"
            )
        self.draw_offer = None

    def decline_draw(self, seat: int) -> None:
        self._two_seats()
        if self.draw_offer is None or self.draw_offer == seat:
            raise ProtocolError(ErrorCode.NO_DRAW_OFFER, "there is no draw offer to decline")
        self.draw_offer = None

    def on_action(self, seat: int) -> None:
        """A draw offer lapses when the offerer's opponent moves; a takeback offer when anyone
        does (the position it was asked about is gone)."""
        if self.draw_offer is not None and self.draw_offer != seat:
            self.draw_offer = None
        if self.takeback_offer is not None or self.takeback_declined is not None:
            self.takeback_offer = self.takeback_declined = None

    # Takeback offers (the rule of what is taken back: partida/room/takebacks.py).

    def offer_takeback(self, seat: int, seq: int) -> bool:
        """Record `seat`'s offer at move `seq`; True when it meets the opponent's standing offer
        (agreed: the opponent's is carried out)."""
        if self.takeback_declined == (seat, seq):
            raise ProtocolError(ErrorCode.TAKEBACK_WAIT, "your takeback was declined: ask again after the next move")
        if self.takeback_offer is not None and self.takeback_offer != seat:
            return True
        self.takeback_offer = seat
        return False

    def answered_takeback(self, seat: int) -> int:
        """The seat whose takeback `seat` accepts or declines: the opponent's standing offer."""
        if self.takeback_offer is None or self.takeback_offer == seat:
            raise ProtocolError(
                ErrorCode.NO_TAKEBACK_OFFER, "there is no takeback offer to answer (it lapses when a move is made)"
            )
        return self.takeback_offer

    def decline_takeback(self, seat: int, seq: int) -> None:
        offer = self.answered_takeback(seat)
        self.takeback_offer = None
        self.takeback_declined = (offer, seq)

    # Abort.

    def check_abort(self, acted: Iterable[int]) -> None:
        """Abort is possible until every seat has made its first move."""
        if set(range(self.num_seats)) <= set(acted):
            raise ProtocolError(
                ErrorCode.ABORT_TOO_LATE, "every seat has moved: the game can no longer be aborted (resign instead)"
            )

    # Timeouts.

    def timed_out(self, seat: int) -> str:
        """What a timeout of `seat` means: `lose` in a two-seat game; else `default` (a random
        answer for it) or `takeover` (that, and the random bot plays it from now on)."""
        if self.num_seats == 2:
            return "lose"
        self.timeouts[seat] += 1
        return "default"

    def take_over_if_due(self, seat: int, limit: int) -> bool:
        if self.num_seats > 2 and self.timeouts[seat] >= limit and seat not in self.auto:
            self.auto.add(seat)
            return True
        return False

    # Abandonment (games without a clock).

    def leave(self, seat: int, now: float) -> None:
        if seat not in self.auto:
            self.away.setdefault(seat, now)

    def back(self, seat: int) -> None:
        self.away.pop(seat, None)

    def next_abandon(self) -> float | None:
        return min(self.away.values()) + self.abandon_after if self.away else None

    def abandoned(self, now: float, moves: int) -> dict[str, Any] | None:
        """The result when a seat has been away longer than the grace period: the seats away
        that long lose (all of them away: a draw), or the game is aborted before two moves."""
        gone = sorted(s for s, since in self.away.items() if now - since >= self.abandon_after)
        if not gone:
            return None
        if moves < 2:
            return aborted()
        return decisive(self.num_seats, gone, "abandoned")

    # Rematch.

    def offer_rematch(self, seat: int, humans: Collection[int]) -> bool:
        """Record that `seat` wants a rematch; True when every human seat does."""
        self.rematch.add(seat)
        return set(humans) <= self.rematch


def rotated(seats: list[Any]) -> list[Any]:
    """The seats of a rematch: everyone moves one seat on (two seats swap colours)."""
    return seats[-1:] + seats[:-1]
