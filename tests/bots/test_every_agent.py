"""Every registered game against every built-in agent: a bot is offered for a game if and only if
its agent can play it (`AgentSpec.supports`), and every pairing offered plays a game to its end.

The offer is read from a real server's `list_games`, with a bot of every agent connected; the
playouts run in-process (`play_local`) on fast agent parameters, every pairing the same seating
rule (`allows` over the agent's declaration) allows, and a sample also through the server."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from partida.bots.base import Agent, RandomAgent, Turn
from partida.bots.declaration import agent_accepts
from partida.bots.local import play_local
from partida.bots.registry import all_agents, make_agent
from partida.client import Client, ServerError
from partida.games.base import Action, Game
from partida.games.registry import default_registry
from partida.protocol.accepts import allows
from partida.server.app import Server

# Each agent's quickest honest setting: the test is about who plays what, not how well.
FAST: dict[str, dict[str, Any]] = {
    "alphabeta": {"depth": 1},
    "expectimax": {"depth": 1},
    "mcts": {"iterations": 8},
    "ismcts": {"iterations": 1},  # each iteration plays the hand out: hearts takes 52 of them
    "duel-search": {"main_nodes": 20, "attack_sets": 4, "block_sets": 8},
    "duel-lookahead": {"seconds": 0.01, "samples": 2, "lines": 1, "attacks": 1, "horizon": 1},
    "othello-engine": {"depth": 1},
    "othello-reference": {"depth": 1},
}
# Agents that take no speed parameter (a fixed strength level thinking seconds a move) make their
# first decisions, then hand the seat to a random agent that finishes the game.
SLOW_DECISIONS = {"othello-engine-hard": 2}
SERVER_PARAMS = {"depth": 1, "iterations": 8, "seconds": 0.05, "main_nodes": 20, "samples": 2}

REGISTRY = default_registry()
# The agents this installation plays itself; the bridges (`gtp`, `stdio`) play someone's program,
# which tests/bots/test_bots_gtp.py and tests/bots/test_bots_stdio.py start.
BUILT_IN = {name: spec for name, spec in all_agents().items() if not spec.external}
PAIRS = [(game.name, agent) for game in REGISTRY.games() for agent in sorted(BUILT_IN)]


class Handover(Agent):
    """`agent` for its first `decisions`, then uniformly random answers."""

    def __init__(self, agent: Agent, decisions: int) -> None:
        self.agent, self.left, self.rest = agent, decisions, RandomAgent(seed=0)

    def new_game(self, game: Game, seat: int) -> None:
        self.agent.new_game(game, seat)

    def act(self, turn: Turn) -> Action:
        self.left -= 1
        return self.agent.act(turn) if self.left >= 0 else self.rest.act(turn)


def offered(game: str, agent: str) -> bool:
    """The seating rule the server applies, on the declaration a pool bot of `agent` sends."""
    accepts = agent_accepts(agent, REGISTRY)
    assert accepts is not None
    return allows(accepts, REGISTRY.get(game)) is None


# The pairings that take seconds of search each (left out of the quick run).
SLOW_PAIRS = {("hearts", "ismcts"), ("othello", "othello-engine-hard")}


@pytest.mark.parametrize(
    ("game", "agent"),
    [pytest.param(g, a, id=f"{g}-{a}", marks=[pytest.mark.slow] if (g, a) in SLOW_PAIRS else []) for g, a in PAIRS],
)
def test_a_pairing_is_offered_iff_the_agent_plays_it_and_then_plays_to_the_end(game: str, agent: str) -> None:
    spec, rules = all_agents()[agent], REGISTRY.get(game)
    assert offered(game, agent) == spec.supports(rules)
    if not offered(game, agent):
        return
    seats = rules.min_seats
    first = make_agent(agent, rules, seed=1, **FAST.get(agent, {}))
    agents: list[Agent] = [Handover(first, SLOW_DECISIONS[agent]) if agent in SLOW_DECISIONS else first]
    agents += [RandomAgent(seed=seat) for seat in range(1, seats)]
    finished = play_local(rules, agents, seed=7)
    assert finished.state.is_over() and finished.decisions[0] > 0


async def test_list_games_offers_each_agent_for_exactly_the_games_it_plays(
    server: Server, connect: Callable[..., Awaitable[Client]], bots: Any
) -> None:
    await bots(*sorted(BUILT_IN), **SERVER_PARAMS)
    listed = {g["name"]: set(g["bots"]) for g in await (await connect(name="lister")).list_games()}
    assert set(listed) == set(REGISTRY.names())
    for game in REGISTRY.games():
        assert listed[game.name] == {a for a, spec in BUILT_IN.items() if spec.supports(game)}, game.name
    # every pairing not offered is refused at once by the server too, with the bot's declaration
    asker = await connect(name="asker")
    for game, agent in PAIRS:
        if not offered(game, agent):
            with pytest.raises(ServerError) as refused:
                await asker.create_room(game, seat=0, bots={1: agent}, auto_start=False)
            assert refused.value.code == "bot_declines", (game, agent, refused.value)
            assert f"{agent} does not play {game}" in refused.value.message


@pytest.mark.parametrize(
    ("game", "agent"),
    [("tictactoe", "mcts"), ("othello", "alphabeta"), ("crazyeights", "ismcts"), ("hearts", "expectimax")],
)
@pytest.mark.slow
async def test_a_sample_of_pairings_plays_to_the_end_through_the_server(
    server: Server, connect: Callable[..., Awaitable[Client]], bots: Any, game: str, agent: str
) -> None:
    await bots(agent, "random", **SERVER_PARAMS)
    rules = REGISTRY.get(game)
    seats = {seat: "random" for seat in range(1, rules.min_seats)}
    created = await (await connect(name="host")).create_room(
        game, bots={0: agent, **seats}, clock={"per_move": 30.0}, public=False
    )
    room = server.rooms[created["room"]]
    async with asyncio.timeout(120):
        while room.core.status != "finished":
            await asyncio.sleep(0.1)
    assert room.core.seats[0] is not None and room.core.seats[0].agent == agent
