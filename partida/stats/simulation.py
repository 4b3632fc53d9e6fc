"""Simulated SPRTs between agents of a known Elo difference: the check that the test accepts
the wrong hypothesis about as often as alpha and beta say (bench/sprt_error_rates.py, tests)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from partida.stats.elo import NELO_UNIT, Pentanomial, Trinomial, elo_to_score
from partida.stats.sprt import SprtSpec, Verdict, decide, llr


@dataclass(frozen=True)
class SimulatedRun:
    verdict: Verdict | None  # None: max_games reached first
    games: int


def game_probabilities(elo: float, draw_ratio: float) -> tuple[float, float, float]:
    """(loss, draw, win) chances of the first agent with this logistic Elo advantage."""
    score = elo_to_score(elo)
    win = score - draw_ratio / 2.0
    loss = 1.0 - score - draw_ratio / 2.0
    if win < 0 or loss < 0:
        raise ValueError(f"a draw ratio of {draw_ratio} is impossible at {elo} Elo")
    return loss, draw_ratio, win


def simulate(
    spec: SprtSpec,
    elo: float,
    draw_ratio: float,
    rng: random.Random,
    paired: bool = False,
    check_every: int = 8,
    max_games: int = 1_000_000,
) -> SimulatedRun:
    """One SPRT over independent games (or pairs of them, counted pentanomially), the LLR looked
    at every `check_every` games or pairs, as a match looks at it when results arrive."""
    chances = game_probabilities(elo, draw_ratio)
    outcomes = (0, 1, 2)  # the first agent's half-points in a game
    tri = [0, 0, 0]
    penta = [0, 0, 0, 0, 0]
    games = 0
    while games < max_games:
        for _ in range(check_every):
            if paired:
                a, b = rng.choices(outcomes, chances, k=2)
                penta[a + b] += 1
                games += 2
            else:
                tri[rng.choices(outcomes, chances)[0]] += 1
                games += 1
        counts = Pentanomial(*penta) if paired else Trinomial(wins=tri[2], draws=tri[1], losses=tri[0])
        verdict = decide(spec, llr(spec, counts))
        if verdict is not None:
            return SimulatedRun(verdict, games)
    return SimulatedRun(None, games)


def logistic_for_nelo(nelo: float, draw_ratio: float) -> float:
    """The logistic Elo at which games with this draw ratio have this normalized Elo: the normalized
    model's hypotheses, in the simulation's terms."""

    def nelo_at(elo: float) -> float:
        loss, draw, win = game_probabilities(elo, draw_ratio)
        score = win + draw / 2.0
        sigma = (win * (1 - score) ** 2 + draw * (0.5 - score) ** 2 + loss * score**2) ** 0.5
        return (score - 0.5) / sigma * NELO_UNIT

    low, high = -400.0, 400.0
    for _ in range(100):
        mid = (low + high) / 2.0
        if nelo_at(mid) < nelo:
            low = mid
        else:
            high = mid
    return (low + high) / 2.0
