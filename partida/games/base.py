"""The one interface every game sits behind.

A game is split the way OpenSpiel splits it: a `Game` holds the static facts (name, seats,
options) and a `State` the dynamic ones. Rules engines are pure: no I/O, no asyncio, no clocks.
Everything that crosses the wire (actions, views, prompts) is plain data (ints, strings, lists,
dicts with string keys) so it can be MessagePack- or JSON-encoded as it is.

A game is fully determined by (game, options, seats, seed, actions): chance comes from a seeded
generator that lives inside the state. That is what storage keeps and what a replay re-runs.
"""

from __future__ import annotations

import json
import random
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from partida.games.prompts import Prompt

Action = Any
View = dict[str, Any]


# The nesting and the integers an option given as JSON text may hold (`json_option`).
JSON_OPTION_DEPTH = 32
JSON_OPTION_DIGITS = 18
_JSON_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"')
_JSON_BRACKETS = re.compile(r"[\[\]{}]")


class IllegalAction(Exception):
    """An action the rules reject. The state is unchanged after it is raised.

    `code` is stable (clients switch on it); `message` is a sentence a person can read.
    """

    def __init__(self, message: str, code: str = "illegal_action") -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class BadOptions(ValueError):
    """Options a game cannot be created with (unknown name, wrong type, value out of range)."""


def json_option(name: str, text: str) -> Any:
    """The value of an option a client gives as JSON text (a deck list pasted in a form), or
    BadOptions. The nesting is counted before the parser sees the text and integers are bounded
    as they are read: `json.loads` alone recurses once per level until Python's recursion limit
    and converts integers of any length (quadratic time, then Python's refusal past 4,300
    digits), and neither failure is a `JSONDecodeError`."""
    depth = 0
    for bracket in _JSON_BRACKETS.findall(_JSON_STRINGS.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        if depth > JSON_OPTION_DEPTH:
            raise BadOptions(f"option {name!r} nests deeper than {JSON_OPTION_DEPTH} levels")
    try:
        return json.loads(text, parse_int=_bounded_int, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        raise BadOptions(f"option {name!r} is not valid JSON: {exc}") from None


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > JSON_OPTION_DIGITS:
        raise ValueError(f"integers have at most {JSON_OPTION_DIGITS} digits")
    return int(digits)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


@dataclass(frozen=True)
class Decision:
    """A decision open to one seat: who must answer, and the prompt that says what is allowed."""

    seat: int
    prompt: Prompt

    def to_data(self) -> dict[str, Any]:
        return {"seat": self.seat, "prompt": self.prompt.to_data()}


@dataclass(frozen=True)
class Result:
    """Final outcome. `scores` are per seat (the game's own measure); `ranks` are 1-based and
    tied seats share a rank, so a draw between two players is ranks [1, 1]."""

    scores: list[float]
    ranks: list[int]

    @classmethod
    def from_scores(cls, scores: Sequence[float], higher_is_better: bool = True) -> Result:
        sign = 1 if higher_is_better else -1
        ranks = [1 + sum(1 for t in scores if sign * t > sign * s) for s in scores]
        return cls(list(scores), ranks)

    @property
    def winners(self) -> list[int]:
        return [seat for seat, rank in enumerate(self.ranks) if rank == 1]

    @property
    def is_draw(self) -> bool:
        return len(self.winners) > 1

    def to_data(self) -> dict[str, Any]:
        return {"scores": self.scores, "ranks": self.ranks, "winners": self.winners}


@dataclass(frozen=True)
class Option:
    """A variant setting a room may choose. `choices` restricts the values; `minimum`/`maximum`
    bound integers."""

    name: str
    default: Any
    help: str = ""
    choices: tuple[Any, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None

    def check(self, value: Any) -> Any:
        if isinstance(self.default, bool):
            if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
                value = value.lower() in ("true", "1", "yes")
            if not isinstance(value, bool):
                raise BadOptions(f"option {self.name!r} must be true or false, not {value!r}")
        elif isinstance(self.default, int):
            if isinstance(value, str):
                try:
                    value = int(value)
                except ValueError:
                    raise BadOptions(f"option {self.name!r} must be an integer, not {value!r}") from None
            if isinstance(value, bool) or not isinstance(value, int):
                raise BadOptions(f"option {self.name!r} must be an integer, not {value!r}")
            if self.minimum is not None and value < self.minimum:
                raise BadOptions(f"option {self.name!r} must be at least {self.minimum}")
            if self.maximum is not None and value > self.maximum:
                raise BadOptions(f"option {self.name!r} must be at most {self.maximum}")
        elif isinstance(self.default, str) and not isinstance(value, str):
            raise BadOptions(f"option {self.name!r} must be a string, not {value!r}")
        if self.choices is not None and value not in self.choices:
            allowed = ", ".join(map(str, self.choices))
            raise BadOptions(f"option {self.name!r} must be one of {allowed}, not {value!r}")
        return value

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "default": self.default, "help": self.help}
        if self.choices is not None:
            data["choices"] = list(self.choices)
        if self.minimum is not None:
            data["min"] = self.minimum
        if self.maximum is not None:
            data["max"] = self.maximum
        return data


class State(ABC):
    """The dynamic part of a game. Mutable: `apply` changes it in place (use `clone` to branch)."""

    @abstractmethod
    def pending(self) -> list[Decision]:
        """The decisions open now. Empty when the game is over. Several seats may have a decision
        open at once (simultaneous choices); a seat has at most one."""

    @abstractmethod
    def apply(self, seat: int, action: Action) -> None:
        """Check and apply one answer of `seat` to its open decision.

        Raises `IllegalAction` (state unchanged) for an out-of-turn seat, a finished game, or an
        answer the prompt or the rules reject."""

    @abstractmethod
    def view(self, seat: int | None) -> View:
        """What `seat` may see, as plain data; `None` is the spectators' view. Hidden information
        is enforced here and nowhere else."""

    @abstractmethod
    def is_over(self) -> bool: ...

    @abstractmethod
    def result(self) -> Result:
        """Only meaningful when `is_over()`."""

    @abstractmethod
    def clone(self) -> State: ...

    def last_event(self) -> str | None:
        """A sentence about the last answer that every seat and spectator may read ("casts Lava
        Axe at their opponent"), for games whose actions are not shown as they are (hidden
        information). None: nothing to tell, or the action itself is public."""
        return None

    def scores(self) -> list[float]:
        """Running score per seat (the lab samples it per round). Default: 0 for everyone."""
        return [0.0] * self.num_seats

    def round_scores(self) -> list[list[float]]:
        """Per-round score history recorded so far, one list of per-seat scores per finished
        round (what RECYCLE's `saveturnstats` records). Games without rounds return []."""
        return []

    # Chance, for search agents. A room never asks for it, so play, storage and replays keep
    # drawing chance from the state's seeded generator inside `apply`.

    def stop_at_chance(self, stop: bool = True) -> bool:
        """Ask this state (and its clones) to stop before each chance event it can enumerate
        instead of drawing it, so a search can weigh every outcome. Returns whether the game
        supports it; the default does not, and its chance stays inside `apply`."""
        return False

    def chance_outcomes(self) -> list[tuple[Any, float]] | None:
        """The outcomes of the chance event this state waits on, with their probabilities (they
        sum to 1), or None when it waits on none. While it waits, `pending()` is empty and
        `is_over()` is False; `apply_chance` resolves the event. Only after `stop_at_chance`."""
        return None

    def apply_chance(self, outcome: Any) -> None:
        """Resolve the waiting chance event with `outcome` (one of `chance_outcomes()`), then run
        on to the next decision, chance event or the end."""
        raise IllegalAction("no chance event is waiting", code="no_chance")

    @property
    @abstractmethod
    def num_seats(self) -> int: ...

    # Helpers shared by all games.

    def decision_for(self, seat: int) -> Decision | None:
        for decision in self.pending():
            if decision.seat == seat:
                return decision
        return None

    def require_decision(self, seat: int) -> Decision:
        """The open decision of `seat`, or the `IllegalAction` that an answer from it deserves."""
        if self.is_over():
            raise IllegalAction("the game is over", code="game_over")
        if not 0 <= seat < self.num_seats:
            raise IllegalAction(f"there is no seat {seat}", code="no_such_seat")
        decision = self.decision_for(seat)
        if decision is None:
            raise IllegalAction("it is not your turn", code="not_your_turn")
        return decision


class Game(ABC):
    """The static facts of a game, and the factory of its states."""

    name: str  # stable identifier: lowercase, used in URLs, storage and the command line
    title: str  # for people
    min_seats: int = 2
    max_seats: int = 2
    perfect_information: bool = True
    # Moves may be taken back by agreement in a casual game (partida/room/takebacks.py): only a
    # game whose every position follows from the moves alone and is seen by every seat, since a
    # takeback re-runs the seed and would show the asker the chance or the card that came next.
    takebacks: bool = False
    chance: bool = True  # False: the seed changes nothing (no deal, no dice), so it fixed nothing
    description: str = ""
    options: Mapping[str, Option] = {}

    @abstractmethod
    def new_state(self, options: Mapping[str, Any], seed: int, seats: int) -> State:
        """A fresh game. `options` have been resolved (defaults filled in, values checked)."""

    @abstractmethod
    def determinize(self, view: View, seat: int | None, rng: random.Random) -> State:
        """A full state consistent with what `seat` sees in `view`: hidden cards are sampled
        from the ones the seat has not seen, future chance from `rng`. For a perfect-information
        game this is an exact rebuild of the state. Search bots run on the result."""

    def openings(self) -> list[str]:
        """Balanced start positions for paired matches, as values of the game's `opening`
        option (none: games whose seed varies the deal need no book)."""
        return []

    def resolve_options(self, given: Mapping[str, Any] | None) -> dict[str, Any]:
        given = dict(given or {})
        unknown = sorted(set(given) - set(self.options))
        if unknown:
            known = ", ".join(sorted(self.options)) or "none"
            raise BadOptions(f"unknown option {unknown[0]!r} for {self.name} (options: {known})")
        return {name: opt.check(given[name]) if name in given else opt.default for name, opt in self.options.items()}

    def check_seats(self, seats: int | None) -> int:
        seats = self.min_seats if seats is None else seats
        if not self.min_seats <= seats <= self.max_seats:
            players = (
                str(self.min_seats) if self.min_seats == self.max_seats else f"{self.min_seats} to {self.max_seats}"
            )
            raise BadOptions(f"{self.name} is played by {players} players, not {seats}")
        return seats

    def create(
        self, options: Mapping[str, Any] | None = None, seed: int | None = None, seats: int | None = None
    ) -> State:
        """Convenience for tests, the lab and the CLI: resolve options and seats, then build."""
        resolved = self.resolve_options(options)
        seats = self.check_seats(seats)
        seed = random.SystemRandom().getrandbits(63) if seed is None else seed
        return self.new_state(resolved, seed, seats)

    def replay(
        self,
        options: Mapping[str, Any] | None,
        seed: int,
        seats: int,
        actions: Iterable[tuple[int, Action]],
    ) -> State:
        """Re-run a stored game. Raises `IllegalAction` if the log does not fit the rules."""
        state = self.new_state(self.resolve_options(options), seed, seats)
        for seat, action in actions:
            state.apply(seat, action)
        return state

    def render(self, view: View) -> str:
        """A plain-text picture of a view, for logs and the replay command."""
        return repr(view)

    def format_action(self, view: View, action: Action) -> str:
        """How an action is written for people (a square like `f5`, a card name)."""
        return str(action)

    def seat_label(self, seat: int) -> str | None:
        """What a seat is called in this game (`X`, `black (X)`), beside its number and player's
        name; None when seats have no name of their own."""
        return None

    def pass_note(self, view: View, last_seat: int | None) -> str | None:
        """A sentence when the rules skipped a seat's turn by themselves (Othello's forced pass),
        told after the move that caused it; `view` is the position after that move."""
        return None

    def told_moves(self, state: State, actions: Iterable[tuple[int, Action]], *, over: bool) -> list[dict[str, Any]]:
        """Apply `actions` to `state` and tell each one as a replay prints it: the game's own
        sentence (`last_event`: "casts Lava Axe at their opponent"), else `format_action` of the
        view the acting seat had. That view names cards in hand, so it is used only for a game
        that is `over` (its seed is revealed: nothing is hidden any more); before, the
        spectators' view. Raises `IllegalAction` if the log does not fit the rules."""
        moves = []
        for seat, action in actions:
            view = state.view(seat if over else None)
            state.apply(seat, action)
            text = state.last_event() or self.format_action(view, action)
            moves.append({"seat": seat, "action": action, "text": text})
        return moves

    def record(self, state: State) -> str | None:
        """The game's standard notation for the moves so far (an Othello transcript), if it has
        one; `partida replay` prints it."""
        return None

    def file_record(self, state: State, tags: Mapping[str, str]) -> str | None:
        """The game in its own file format, if it has one tools read (Othello: GGF), for the
        moves so far and the export's PGN-style `tags` (Site, Date, Player1, Result ...); None:
        the export writes its own tagged text."""
        return None

    def parse_action(self, view: View, prompt: Prompt, text: str) -> Action:
        """Read an action typed by a person; raises `IllegalAction` with a hint when it cannot."""
        return prompt.parse(text)

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "min_seats": self.min_seats,
            "max_seats": self.max_seats,
            "perfect_information": self.perfect_information,
            "takebacks": self.takebacks,
            "chance": self.chance,
            "description": self.description,
            "options": [opt.to_data() for opt in self.options.values()],
        }
