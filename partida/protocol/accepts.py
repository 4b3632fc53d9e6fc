"""What a bot accepts to play, as its hello declares it, and the one rule that says whether a
game may be offered to it or seated with it.

A bot seated in a game it cannot play never moves: every decision waits out the clock, and a
game of four cannot even be aborted. So every place that offers or seats a bot (the games list,
`add_bot`, a room's `bots`, challenges, seeks, ladders, tournaments) asks `allows` first, and a
refusal comes at once, with a sentence naming what the bot plays.

Pure values and functions only: the server, the bot runner and the tests share them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol


class GameFacts(Protocol):
    """What the rule reads of a game (`partida.games.base.Game` has it)."""

    name: str
    min_seats: int
    max_seats: int
    perfect_information: bool


@dataclass(frozen=True)
class Accepts:
    """A bot's declaration. `games`: game name -> the seat counts it plays (None: any count);
    None for any game. `hidden_information`: whether it plays games where seats hide things
    (cards in hand). `clock_min`/`clock_max`: the clock seconds it plays under (see
    `clock_seconds`; an untimed game counts as endless time). `max_games`: games at once;
    `max_games_per_opponent`: games at once against one opponent."""

    games: Mapping[str, frozenset[int] | None] | None = None
    hidden_information: bool = True
    clock_min: float | None = None
    clock_max: float | None = None
    max_games: int | None = None
    max_games_per_opponent: int | None = None

    @classmethod
    def from_hello(
        cls,
        games: list[str] | Mapping[str, list[int] | None] | None,
        hidden_information: bool | None = None,
        clock_min: float | None = None,
        clock_max: float | None = None,
        max_games: int | None = None,
        max_games_per_opponent: int | None = None,
    ) -> Accepts:
        """From the hello's fields. A bare list of games (what bots sent before seat counts could
        be declared) means those games at any seat count; a missing `hidden_information` means
        yes, as before."""
        table: dict[str, frozenset[int] | None] | None
        if games is None:
            table = None
        elif isinstance(games, Mapping):
            table = {g: None if counts is None else frozenset(counts) for g, counts in games.items()}
        else:
            table = dict.fromkeys(games)
        return cls(
            table,
            True if hidden_information is None else hidden_information,
            clock_min,
            clock_max,
            max_games,
            max_games_per_opponent,
        )

    @classmethod
    def of_agent(cls, games: Iterable[GameFacts], supports: Callable[[Any], bool]) -> Accepts:
        """What a built-in agent plays among `games` (its `AgentSpec.supports`), any seat count."""
        chosen = [g for g in games if supports(g)]
        hidden = any(not g.perfect_information for g in chosen)
        return cls(dict.fromkeys(g.name for g in chosen), hidden_information=hidden)

    def hello_fields(self) -> dict[str, Any]:
        """The hello's fields for this declaration (those left at their default are left out)."""
        fields: dict[str, Any] = {}
        if self.games is not None:
            fields["games"] = self._games_data()
        if not self.hidden_information:
            fields["hidden_information"] = False
        for name in ("clock_min", "clock_max", "max_games", "max_games_per_opponent"):
            if getattr(self, name) is not None:
                fields[name] = getattr(self, name)
        return fields

    def narrowed(self, other: Accepts) -> Accepts:
        """What both declarations allow: a bot account's hello narrowed by its built-in agent."""

        def least(a: Any, b: Any, pick: Callable[[Any, Any], Any]) -> Any:
            return b if a is None else a if b is None else pick(a, b)

        games: dict[str, frozenset[int] | None] | None
        if self.games is None:
            games = None if other.games is None else dict(other.games)
        elif other.games is None:
            games = dict(self.games)
        else:
            games = {
                name: least(self.games[name], other.games[name], lambda a, b: a & b)
                for name in self.games.keys() & other.games.keys()
            }
        return Accepts(
            games,
            self.hidden_information and other.hidden_information,
            least(self.clock_min, other.clock_min, max),
            least(self.clock_max, other.clock_max, min),
            least(self.max_games, other.max_games, min),
            least(self.max_games_per_opponent, other.max_games_per_opponent, min),
        )

    def to_data(self) -> dict[str, Any]:
        """For the `bot_declines` error and `list_games`: what the bot plays, on the wire."""
        return {
            "games": None if self.games is None else self._games_data(),
            "hidden_information": self.hidden_information,
            "clock_min": self.clock_min,
            "clock_max": self.clock_max,
            "max_games": self.max_games,
            "max_games_per_opponent": self.max_games_per_opponent,
        }

    def _games_data(self) -> dict[str, list[int] | None]:
        assert self.games is not None
        return {g: None if c is None else sorted(c) for g, c in self.games.items()}

    def describe(self) -> str:
        """What it plays, in a sentence's end: for the refusals."""
        if self.games is None:
            games = "any game"
        elif not self.games:
            games = "no game"
        else:
            games = ", ".join(
                g if c is None else f"{g} ({'/'.join(map(str, sorted(c)))} seats)"
                for g, c in sorted(self.games.items())
            )
        parts = [games]
        if not self.hidden_information:
            parts.append("perfect-information games only")
        if self.clock_min is not None or self.clock_max is not None:
            low = f"{self.clock_min:g}" if self.clock_min is not None else "0"
            high = f"{self.clock_max:g}" if self.clock_max is not None else "any"
            parts.append(f"clocks of {low} to {high} seconds")
        return "; ".join(parts)


def clock_seconds(initial: float | None, increment: float = 0.0, per_move: float | None = None) -> float:
    """A clock as one number, what `clock_min`/`clock_max` bound: the time a seat has for its
    first move (a per-move clock's seconds; Fischer's initial time plus increment). No clock at
    all is endless time."""
    if per_move is not None:
        return per_move
    if initial is not None:
        return initial + increment
    return math.inf


def allows(
    accepts: Accepts,
    game: GameFacts,
    seats: int | None = None,
    clock: float | None = None,
    playing: int = 0,
    opponent_games: int = 0,
) -> str | None:
    """None if the bot may be offered or seated in `game`, else why not, naming what it plays.
    `seats`: the room's seat count (None: some count the game has). `clock`: `clock_seconds` of
    the room's clock (None: not checked, as in a listing). `playing`: the games it is in now;
    `opponent_games`: those against the asker."""
    plays = f"it plays {accepts.describe()}"
    if not accepts.hidden_information and not game.perfect_information:  # the likelier reason: first
        return f"does not play {game.name}, a game of hidden information: {plays}"
    if accepts.games is not None and game.name not in accepts.games:
        return f"does not play {game.name}: {plays}"
    counts = accepts.games.get(game.name) if accepts.games is not None else None
    if counts is not None:
        wanted = range(game.min_seats, game.max_seats + 1) if seats is None else (seats,)
        if not any(n in counts for n in wanted):
            told = f"{seats} seats" if seats is not None else f"{game.name}'s seat counts"
            return f"does not play {game.name} with {told}: {plays}"
    if clock is not None:
        if accepts.clock_min is not None and clock < accepts.clock_min:
            return f"does not play under a {clock:g}-second clock: {plays}"
        if accepts.clock_max is not None and clock > accepts.clock_max:
            shown = "no clock" if math.isinf(clock) else f"a {clock:g}-second clock"
            return f"does not play under {shown}: {plays}"
    if accepts.max_games is not None and playing >= accepts.max_games:
        return f"is playing {playing} games, the most it accepts; try again later"
    if accepts.max_games_per_opponent is not None and opponent_games >= accepts.max_games_per_opponent:
        return f"is playing {opponent_games} games against you, the most it accepts; try again later"
    return None
