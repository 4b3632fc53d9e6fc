"""Game clocks: how much time each seat has left, charged on each accepted action.

Pure: every function takes the current time as an argument (the room passes its event loop's
monotonic time), so the rules are tested with plain numbers and no socket or sleep.

Two controls:

- Fischer `{"initial": S, "increment": S}`: a seat starts with `initial` seconds; the time it
  spends on a decision is taken from it, and `increment` is added after each of its answers.
- `{"per_move": S}`: every decision gets a fresh `per_move` seconds; unused time is not kept.

Only seats with an open decision are running, several at once in games with simultaneous
decisions. A seat whose remaining time reaches zero has timed out (the room decides what that
means, see `endings`).

A clock is stored as `remaining` at the last accepted action (`snapshot`); a restarted server
resumes from it, so the time the server was down is charged to nobody.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

MAX_SECONDS = 86400.0  # a day: longer is a typo, not a time control
DEFAULT_TIMEOUTS = 3  # timeouts before a seat of a 3+ seat game is played by the random bot


class BadClock(ValueError):
    """A clock spec that cannot be played with (unknown field, negative, zero or absurd value)."""


def _seconds(data: Mapping[str, Any], name: str, *, zero_ok: bool) -> float:
    value = data.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BadClock(f"clock {name!r} must be a number of seconds, not {value!r}")
    if value < 0 or (value == 0 and not zero_ok):
        least = "0 seconds or more" if zero_ok else "more than 0 seconds"  # an increment may be 0
        raise BadClock(f"clock {name!r} must be {least}, not {value}")
    if value > MAX_SECONDS:
        raise BadClock(f"clock {name!r} must be at most a day ({MAX_SECONDS:.0f} seconds), not {value}")
    return float(value)


@dataclass(frozen=True)
class ClockSpec:
    """A time control. Exactly one of `initial` (Fischer, with `increment`) or `per_move`."""

    initial: float | None = None
    increment: float = 0.0
    per_move: float | None = None
    timeouts: int = DEFAULT_TIMEOUTS

    @classmethod
    def parse(cls, data: Any) -> ClockSpec | None:
        """A spec from the wire (`create_room`'s `clock`); None for no clock."""
        if data is None:
            return None
        if not isinstance(data, Mapping):
            raise BadClock('a clock is {"initial": S, "increment": S} or {"per_move": S}')
        unknown = sorted(set(data) - {"initial", "increment", "per_move", "timeouts"})
        if unknown:
            raise BadClock(f"unknown clock field {unknown[0]!r} (fields: initial, increment, per_move, timeouts)")
        timeouts = data.get("timeouts", DEFAULT_TIMEOUTS)
        if isinstance(timeouts, bool) or not isinstance(timeouts, int) or not 1 <= timeouts <= 100:
            raise BadClock(f"clock 'timeouts' must be an integer from 1 to 100, not {timeouts!r}")
        if "per_move" in data:
            if "initial" in data or "increment" in data:
                raise BadClock("a clock has either per_move or initial and increment, not both")
            return cls(per_move=_seconds(data, "per_move", zero_ok=False), timeouts=timeouts)
        if "initial" not in data:
            raise BadClock('a clock needs "initial" (with "increment") or "per_move"')
        initial = _seconds(data, "initial", zero_ok=False)
        increment = _seconds(data, "increment", zero_ok=True) if "increment" in data else 0.0
        return cls(initial=initial, increment=increment, timeouts=timeouts)

    @classmethod
    def from_text(cls, text: str) -> ClockSpec:
        """Seconds throughout (`300+2`, `300`, `move:5`), as tables in code write a spec; what
        people type goes through `clock_notation.parse_clock` (minutes+seconds, as Lichess)."""
        text = text.strip().lower()
        try:
            if text.startswith("move:"):
                return cls.parse({"per_move": float(text[5:])})  # type: ignore[return-value]
            initial, _, increment = text.partition("+")
            return cls.parse({"initial": float(initial), "increment": float(increment or 0)})  # type: ignore[return-value]
        except ValueError as exc:
            if isinstance(exc, BadClock):
                raise
            raise BadClock(
                f"{text!r} is not a clock: write INITIAL+INCREMENT in seconds (300+2) or move:SECONDS"
            ) from None

    def to_data(self) -> dict[str, Any]:
        if self.per_move is not None:
            return {"per_move": self.per_move, "timeouts": self.timeouts}
        return {"initial": self.initial, "increment": self.increment, "timeouts": self.timeouts}

    @property
    def start_seconds(self) -> float:
        return self.per_move if self.per_move is not None else self.initial  # type: ignore[return-value]

    def describe(self) -> str:
        """The spec in the notation people write (room/clock_notation.py reads it back to this
        spec): whole quarters of a minute in minutes as Lichess does (5+3, 0.5+0), anything
        shorter or odder in seconds with its unit (2s+0.05); `move:30` for 30 s every move."""
        if self.per_move is not None:
            return f"move:{self.per_move:.6g}"
        initial = self.initial or 0.0
        if (initial * 4) % 60 == 0:
            return f"{initial / 60:.6g}+{self.increment:.6g}"
        return f"{initial:.6g}s+{self.increment:.6g}"


@dataclass
class Clock:
    """The clocks of one game. `running` maps each seat to act to when its decision opened."""

    spec: ClockSpec
    remaining: list[float]
    running: dict[int, float] = field(default_factory=dict)

    @classmethod
    def new(cls, spec: ClockSpec, seats: int, remaining: list[float] | None = None) -> Clock:
        """A fresh clock, or one resumed from a stored `snapshot`."""
        if remaining is None or len(remaining) != seats:
            remaining = [spec.start_seconds] * seats
        return cls(spec, [float(r) for r in remaining])

    def sync(self, to_act: Iterable[int], now: float, acted: int | None = None) -> None:
        """After an accepted action of `acted` (or at the start: None), with `to_act` the seats
        with an open decision now. The seat that acted is charged and gets its increment; seats
        whose decision closed without answering (a simultaneous decision resolved by others) are
        charged; seats still to act keep running; new ones start."""
        to_act = set(to_act)
        if acted is not None:
            self._stop(acted, now, answered=True)
        for seat in [s for s in self.running if s not in to_act]:
            self._stop(seat, now, answered=False)
        for seat in to_act:
            if seat not in self.running:
                if self.spec.per_move is not None:
                    self.remaining[seat] = self.spec.per_move
                self.running[seat] = now

    def _stop(self, seat: int, now: float, answered: bool) -> None:
        since = self.running.pop(seat, None)
        if since is not None:
            self.remaining[seat] = max(0.0, self.remaining[seat] - (now - since))
        if self.spec.per_move is not None:
            self.remaining[seat] = self.spec.per_move
        elif answered:
            self.remaining[seat] += self.spec.increment

    def rewind(self, to_act: Iterable[int], now: float) -> None:
        """A takeback, as Lichess rewinds a clock: the turn under way is not charged (whoever
        was thinking gets that time back), no other time changes, and the seats with a
        decision after the takeback start now."""
        self.running.clear()
        for seat in to_act:
            if self.spec.per_move is not None:
                self.remaining[seat] = self.spec.per_move
            self.running[seat] = now

    def save(self) -> tuple[list[float], dict[int, float]]:
        return list(self.remaining), dict(self.running)

    def restore(self, saved: tuple[list[float], dict[int, float]]) -> None:
        """Undo a `sync` whose action could not be stored."""
        self.remaining, self.running = list(saved[0]), dict(saved[1])

    def stop_all(self, now: float) -> None:
        """The game ended: charge the running seats and stop."""
        for seat in list(self.running):
            since = self.running.pop(seat)
            self.remaining[seat] = max(0.0, self.remaining[seat] - (now - since))

    def left(self, seat: int, now: float) -> float:
        since = self.running.get(seat)
        spent = 0.0 if since is None else now - since
        return max(0.0, self.remaining[seat] - spent)

    def deadline(self, seat: int) -> float | None:
        """When `seat` runs out of time (same time base as `now`), or None if it is not running."""
        since = self.running.get(seat)
        return None if since is None else since + self.remaining[seat]

    def next_deadline(self) -> float | None:
        deadlines = [d for d in (self.deadline(s) for s in self.running) if d is not None]
        return min(deadlines) if deadlines else None

    def expired(self, now: float) -> list[int]:
        """Running seats whose time is up at `now`, in seat order."""
        return sorted(s for s in self.running if self.left(s, now) <= 0.0)

    def snapshot(self, now: float) -> list[float]:
        """What each seat has left at `now`: what storage keeps after each accepted action."""
        return [round(self.left(s, now), 3) for s in range(len(self.remaining))]

    def to_data(self, now: float, wall: float) -> dict[str, Any]:
        """For updates: `remaining` per seat at `wall` (the server's epoch time when sent),
        `deadline` per seat (epoch seconds, null for a seat not to act)."""
        deadlines = []
        for seat in range(len(self.remaining)):
            d = self.deadline(seat)
            deadlines.append(None if d is None else round(wall + (d - now), 3))
        return {"spec": self.spec.to_data(), "remaining": self.snapshot(now), "deadline": deadlines}
