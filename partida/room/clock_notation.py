"""A time control as people write it, the one notation of every command-line flag (and, in
partida/web/clock_notation.js, of the browser's form, both checked against one table of cases:
tests/data/clock_notation.json).

Lichess's way: `5+3` is 5 minutes and 3 seconds added after each move, `0.5+0` half a minute.
A unit on the first number writes a short clock as bot ladders use them: `2s+0.05` is 2 seconds
and 0.05 s a move (`s`, `ms`, `m` or `min`, `h`; with a unit the increment may be left out).
`move:30` gives every move 30 seconds, unused time not kept (`move:2m`: two minutes).

The wire keeps its spec in seconds (`{"initial": 300, "increment": 3}`); this module is only
the text on either side of it.
"""

from __future__ import annotations

import re
from typing import Any

from partida.room.clocks import BadClock, ClockSpec

FORMS = (
    "write MINUTES+SECONDS as Lichess does (5+3: 5 minutes, 3 s added a move), a unit for a short clock "
    "(2s+0.05: 2 seconds, 0.05 s a move) or move:SECONDS (move:30: 30 s for every move)"
)

_UNITS = {"ms": 0.001, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
_TERM = re.compile(r"^(\d+(?:\.\d*)?|\.\d+)\s*([a-z]*)$")


class BadClockText(BadClock):
    """Text that is not a clock; its message ends with the accepted forms."""


def _seconds(term: str, default_unit: str) -> tuple[float, bool]:
    """A number with an optional unit, in seconds, and whether a unit was written."""
    found = _TERM.match(term.strip())
    if found is None or found.group(2) not in ("", *_UNITS):
        raise ValueError(term)
    return float(found.group(1)) * _UNITS[found.group(2) or default_unit], bool(found.group(2))


def parse_clock(text: str) -> ClockSpec:
    """The spec `text` writes; BadClockText (saying the accepted forms) for anything else,
    including a clock the rules refuse (zero, negative, longer than a day)."""
    written = text.strip().lower()
    try:
        if written.startswith("move:"):
            per_move, _ = _seconds(written[5:], "s")
            spec = ClockSpec.parse({"per_move": per_move})
        else:
            first, plus, second = written.partition("+")
            initial, unit = _seconds(first, "m")
            if not plus and not unit:
                raise ValueError(written)  # `300` could be minutes or seconds: not guessed
            increment = _seconds(second, "s")[0] if plus else 0.0
            spec = ClockSpec.parse({"initial": initial, "increment": increment})
    except BadClock as exc:
        raise BadClockText(f"{text.strip()!r} is not a clock to play with ({exc}); {FORMS}") from None
    except ValueError:
        raise BadClockText(f"{text.strip()!r} is not a clock: {FORMS}") from None
    assert spec is not None
    return spec


def clock_data(text: str) -> dict[str, Any]:
    """`parse_clock` as the protocol's `clock` field."""
    return parse_clock(text).to_data()


def clock_text(clock: ClockSpec | dict[str, Any] | None) -> str:
    """The notation of a spec, or of the protocol's `clock` field: what `parse_clock` reads back
    to the same spec (`ClockSpec.describe`); "no clock" for none."""
    spec = clock if isinstance(clock, ClockSpec) or clock is None else ClockSpec.parse(clock)
    return "no clock" if spec is None else spec.describe()
