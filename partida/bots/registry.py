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


def _value(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_agent(text: str) -> tuple[str, dict[str, Any]]:
    """An agent with parameters, `othello-engine[depth=4]` or `mcts[iterations=200;c=1.4]`: its
    name and its parameters (numbers read as numbers). Raises ValueError on a malformed one."""
    text = text.strip()
    if "[" not in text:
        return text, {}
    if not text.endswith("]"):
        raise ValueError(f"{text!r}: parameters go in brackets at the end, like name[depth=4]")
    name, _, inner = text[:-1].partition("[")
    params: dict[str, Any] = {}
    for pair in filter(None, (p.strip() for p in inner.split(";"))):
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{text!r}: {pair!r} is not KEY=VALUE")
        params[key.strip()] = _value(value.strip())
    return name.strip(), params


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
