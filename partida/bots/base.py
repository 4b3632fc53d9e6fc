"""The agent interface: one agent serves every game through the `games` interface.

An agent sees exactly what a seat sees (its view and its open prompt), whether it runs in a bot
process over the network or in-process in the lab. Search agents rebuild a full state with
`game.determinize(view, seat, rng)`: exact for perfect-information games, sampled for hidden ones.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from partida.games.base import Action, Game, State, View
from partida.games.prompts import Prompt


class Turn:
    """One decision put to an agent. The view is computed only if the agent asks for it, so a
    random agent in the lab costs no more than its prompt."""

    def __init__(
        self,
        game: Game,
        seat: int,
        prompt: Prompt,
        view: View | Callable[[], View],
        clock: dict[str, Any] | None = None,
    ) -> None:
        self.game = game
        self.seat = seat
        self.prompt = prompt
        self._view = view
        self.clock = clock  # the room's clock as the update carries it (None: no clock)

    @cached_property
    def view(self) -> View:
        return self._view() if callable(self._view) else self._view

    def state(self, rng: random.Random) -> State:
        """A full state consistent with the view (see `Game.determinize`)."""
        return self.game.determinize(self.view, self.seat, rng)


class Agent(ABC):
    """Decides one prompt at a time. Agents may keep memory within a game; `new_game` resets it."""

    name: str = "agent"

    def new_game(self, game: Game, seat: int) -> None:  # noqa: B027 - optional hook
        """Called before the first decision of a game."""

    @abstractmethod
    def act(self, turn: Turn) -> Action: ...

    def close(self) -> None:  # noqa: B027 - optional hook
        """Called when the agent's game is over for it (an engine bridge ends its process)."""


class Forfeit(Exception):
    """Raised by `act` when the seat cannot go on (an external engine answered an illegal move,
    crashed for good, or never answered): the caller resigns the seat with this note, so the
    game's record says why, and the game goes on as a resignation makes it go on."""

    def __init__(self, note: str) -> None:
        super().__init__(note)
        self.note = note


@dataclass(frozen=True)
class AgentSpec:
    """How to make an agent by name. `games` limits it to some games (None: any game);
    `perfect_information_only` marks search agents that need the whole state; `external` the
    bridges, which need a command (`partida bot --gtp/--cmd`) and so are no server pool bot."""

    name: str
    factory: Callable[..., Agent]
    help: str
    games: frozenset[str] | None = None
    perfect_information_only: bool = False
    params: dict[str, Any] = field(default_factory=dict)
    external: bool = False  # plays through a program of its own (a bridge): never a pool bot

    def supports(self, game: Game) -> bool:
        if self.games is not None and game.name not in self.games:
            return False
        return not (self.perfect_information_only and not game.perfect_information)


class RandomAgent(Agent):
    """Uniform over legal answers (a uniformly random subset for subset prompts)."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def act(self, turn: Turn) -> Action:
        return turn.prompt.random_answer(self.rng)


AGENTS = [AgentSpec("random", RandomAgent, "uniformly random legal answers", params={"seed": None})]
