"""What a built-in agent plays, as a declaration (protocol/accepts.py): the games of a registry
its `AgentSpec.supports` accepts. The pool's bots declare it in their hello, and the server
narrows any bot that names a built-in agent by it (a bot account running `mcts` cannot be
seated at hearts whatever its hello says)."""

from __future__ import annotations

from functools import lru_cache

from partida.bots.registry import all_agents
from partida.games.registry import Registry
from partida.protocol.accepts import Accepts


def agent_accepts(agent: str, registry: Registry) -> Accepts | None:
    """The declaration of the built-in agent `agent` over `registry`'s games; None for a name
    that is no built-in agent (someone's own program: its hello alone says what it plays)."""
    return _agent_accepts(agent, registry, tuple(registry.names()))


@lru_cache(maxsize=256)
def _agent_accepts(agent: str, registry: Registry, names: tuple[str, ...]) -> Accepts | None:
    # `names` is in the key: a registry that gains a game (a description file) is read afresh
    spec = all_agents().get(agent)
    if spec is None:
        return None
    return Accepts.of_agent(registry.games(), spec.supports)


def bot_accepts(declared: Accepts | None, agent: str | None, registry: Registry) -> Accepts:
    """A bot's declaration as the server holds to it: its hello's, narrowed by its agent's."""
    own = declared or Accepts()
    known = agent_accepts(agent, registry) if agent is not None else None
    return own if known is None else own.narrowed(known)
