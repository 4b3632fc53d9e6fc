"""The spec's mulligan agent: a finite-horizon MDP over (cards in hand, lands among them) solved by
value iteration, plus the simple scry rule. Other decisions are random, so this agent isolates the
value of the opening-hand policy; the search agents reuse `MulliganPolicy`."""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache
from math import comb
from typing import Any

from partida.bots.base import Agent, AgentSpec, Turn
from partida.games.duel.cards import default_pool

HAND = 7
DECK = 60
# Keep rewards r(j) for j lands in hand, from the study the game comes from.
REWARD_ON_PLAY = (-7, -3, 3, 4, 2, -1, -4, -6)
REWARD_ON_DRAW = (-4, 0, 5, 6, 3, 0, -3, -5)
CARD_WEIGHT = 3.5


@dataclass(frozen=True)
class MulliganTable:
    """V[i][j] (value of holding i cards with j lands), sigma[i] (value of mulliganing from i)."""

    lands: int
    on_the_play: bool
    value: tuple[tuple[float, ...], ...]
    sigma: tuple[float, ...]

    def reward(self, i: int, j: int) -> float:
        r = REWARD_ON_PLAY if self.on_the_play else REWARD_ON_DRAW
        return r[j] + CARD_WEIGHT * i

    def keep(self, i: int, j: int) -> bool:
        return i == 0 or self.reward(i, j) > self.sigma[i]

    def to_data(self) -> dict[str, Any]:
        return {
            "lands_in_deck": self.lands,
            "on_the_play": self.on_the_play,
            "rows": [
                {
                    "hand_size": i,
                    "mulligan_value": None if i == 0 else round(self.sigma[i], 4),
                    "keep_values": [round(self.reward(i, j), 4) for j in range(i + 1)],
                    "values": [round(self.value[i][j], 4) for j in range(i + 1)],
                    "keep": [self.keep(i, j) for j in range(i + 1)],
                }
                for i in range(HAND + 1)
            ],
        }


def hypergeometric(lands: int, drawn: int, j: int, deck: int = DECK) -> float:
    """P(j lands among `drawn` cards from a deck of `deck` cards holding `lands` lands)."""
    if j > drawn or j > lands or drawn - j > deck - lands:
        return 0.0
    return comb(lands, j) * comb(deck - lands, drawn - j) / comb(deck, drawn)


@cache
def mulligan_table(lands: int, on_the_play: bool, deck: int = DECK) -> MulliganTable:
    """Value iteration bottom-up: V(0,0) = R(0,0); V(i,j) = max(R(i,j), sigma_i)."""
    r = REWARD_ON_PLAY if on_the_play else REWARD_ON_DRAW
    value: list[list[float]] = [[float(r[0])]]
    sigma = [0.0]
    for i in range(1, HAND + 1):
        s = sum(hypergeometric(lands, i - 1, j, deck) * value[i - 1][j] for j in range(i))
        sigma.append(s)
        value.append([max(r[j] + CARD_WEIGHT * i, s) for j in range(i + 1)])
    return MulliganTable(lands, on_the_play, tuple(tuple(v) for v in value), tuple(sigma))


def deck_lands(decklist: dict[str, int]) -> tuple[int, int]:
    pool = default_pool()
    lands = sum(n for name, n in decklist.items() if name in pool.cards and pool.cards[name].is_land)
    return lands, sum(decklist.values())


class MulliganPolicy:
    """Answers the mulligan and scry prompts from a seat's view."""

    def answer(self, turn: Turn) -> Any:
        view = turn.view
        pool = default_pool()
        hand = view["hand"]
        lands_in_hand = sum(1 for c in hand if pool.cards[c["name"]].is_land)
        if turn.prompt.name == "mulligan":
            lands, size = deck_lands(view["players"][turn.seat]["decklist"])
            table = mulligan_table(lands, view["first"] == turn.seat, size)
            return "keep" if table.keep(len(hand), lands_in_hand) else "mulligan"
        top = view["library_known"].get("top")
        top_is_land = top is not None and pool.cards[top].is_land
        want_land = lands_in_hand < 3
        return "top" if top_is_land == want_land else "bottom"


class MulliganAgent(Agent):
    """Mulligan and scry by the policy; every other decision uniformly at random."""

    name = "duel-mulligan"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)
        self.policy = MulliganPolicy()

    def act(self, turn: Turn) -> Any:
        if turn.prompt.name in ("mulligan", "scry"):
            return self.policy.answer(turn)
        return turn.prompt.random_answer(self.rng)


AGENTS = [
    AgentSpec(
        "duel-mulligan",
        MulliganAgent,
        "Duel: mulligan by value iteration and the scry rule, otherwise random",
        games=frozenset({"duel"}),
        params={"seed": None},
    )
]
