"""Playing whole games in-process, without a network: the lab, tests and benchmarks use this."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from partida.bots.base import Agent, Turn
from partida.games.base import Action, Game, State


@dataclass
class LocalGame:
    """A finished in-process game: the final state, the action log, and time spent per seat."""

    state: State
    actions: list[tuple[int, Action]]
    seconds: list[float]
    decisions: list[int] = field(default_factory=list)


def play_local(
    game: Game,
    agents: Sequence[Agent],
    options: Mapping[str, Any] | None = None,
    seed: int = 0,
    max_actions: int = 1_000_000,
    on_action: Callable[[State, int, Action], None] | None = None,
) -> LocalGame:
    """Play one game to the end. Agents only ever see their own seat's view."""
    seats = len(agents)
    state = game.create(options, seed=seed, seats=seats)
    for seat, agent in enumerate(agents):
        agent.new_game(game, seat)
    log: list[tuple[int, Action]] = []
    seconds = [0.0] * seats
    decisions = [0] * seats
    while not state.is_over():
        pending = state.pending()
        if not pending:
            raise RuntimeError(f"{game.name}: no decision is open but the game is not over")
        decision = pending[0]
        seat = decision.seat
        turn = Turn(game, seat, decision.prompt, lambda s=seat: state.view(s))
        start = time.perf_counter()
        action = agents[seat].act(turn)
        seconds[seat] += time.perf_counter() - start
        decisions[seat] += 1
        state.apply(seat, action)
        log.append((seat, action))
        if on_action is not None:
            on_action(state, seat, action)
        if len(log) > max_actions:
            raise RuntimeError(f"{game.name}: more than {max_actions} actions; the game does not end")
    return LocalGame(state, log, seconds, decisions)
