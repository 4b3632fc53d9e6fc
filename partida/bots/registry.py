"""Agents by name. Each module under `partida/bots/` may export `AGENTS`, a list of `AgentSpec`;
they are collected here, so adding an agent touches nothing else."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from typing import Any

from partida.bots.base import Agent, AgentSpec
from partida.games.base import Game


class UnknownAgent(LookupError):
    pass


@cache
def all_agents() -> dict[str, AgentSpec]:
    import partida.bots as package

    specs: dict[str, AgentSpec] = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"partida.bots.{info.name}")
        for spec in getattr(module, "AGENTS", ()):
            specs[spec.name] = spec
    return specs


def make_agent(name: str, game: Game | None = None, **params: Any) -> Agent:
    """Build an agent. Parameters the agent does not take are dropped, so a caller may pass a
    common set (seed, seconds) to any agent."""
    specs = all_agents()
    if name not in specs:
        raise UnknownAgent(f"unknown agent {name!r} (known: {', '.join(sorted(specs))})")
    spec = specs[name]
    if game is not None and not spec.supports(game):
        raise UnknownAgent(f"agent {name!r} does not play {game.name}")
    accepted = {k: v for k, v in params.items() if k in spec.params and v is not None}
    return spec.factory(**accepted)
