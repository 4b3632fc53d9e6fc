"""Glicko-2, as Mark Glickman's paper describes it ("Example of the Glicko-2 system", 2013), step
by step, on the Glicko scale (rating 1500, deviation in rating points) at its edges and the paper's
internal scale (divided by 173.7178) inside.

Written here rather than taken from a package: it is forty lines, the paper's worked example pins
it down to the paper's printed decimals (tests/competition/test_glicko2.py), and it needs two
things the PyPI packages we looked at do not expose as such: a prediction that counts both players'
deviations, and each game as its own period. Pure: no I/O, no state.

A rating period is whatever the caller hands `update` at once; the server rates each game as its
own period, as lichess does. The deviation is kept within [`min_deviation`, `max_deviation`]
by the caller's settings (lichess: 45 and 500), which the paper leaves to the operator.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

SCALE = 173.7178  # 400 / ln(10): the paper's step 2 converts ratings by it
CENTRE = 1500.0
EPSILON = 0.000001  # the paper's convergence tolerance for the volatility (step 5)


@dataclass(frozen=True, slots=True)
class Glicko2:
    """A player's Glicko-2 state on the Glicko scale."""

    rating: float = CENTRE
    deviation: float = 350.0
    volatility: float = 0.06


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _e(mu: float, mu_j: float, phi_j: float) -> float:
    return 1.0 / (1.0 + math.exp(-_g(phi_j) * (mu - mu_j)))


def expected_score(player: Glicko2, opponent: Glicko2) -> float:
    """The player's expected score against the opponent (a win 1, a draw 1/2), with both
    deviations counted: Glickman's Glicko formula with g(sqrt(RD1^2 + RD2^2)), which a
    prediction between two uncertain players needs (the paper's E uses the opponent's alone,
    as the update must)."""
    phi = math.hypot(player.deviation, opponent.deviation) / SCALE
    return _e((player.rating - CENTRE) / SCALE, (opponent.rating - CENTRE) / SCALE, phi)


def update(player: Glicko2, results: Sequence[tuple[Glicko2, float]], tau: float = 0.5) -> Glicko2:
    """The player's state after one rating period in which it scored `score` (1, 1/2 or 0)
    against each `opponent` of `results` (their states before the period). A period without
    games only widens the deviation (the paper's step 6 alone)."""
    mu = (player.rating - CENTRE) / SCALE  # step 2
    phi = player.deviation / SCALE
    sigma = player.volatility
    if not results:
        return Glicko2(player.rating, math.sqrt(phi * phi + sigma * sigma) * SCALE, sigma)
    terms = []
    for opponent, score in results:
        mu_j = (opponent.rating - CENTRE) / SCALE
        g_j = _g(opponent.deviation / SCALE)
        terms.append((g_j, _e(mu, mu_j, opponent.deviation / SCALE), score))
    v = 1.0 / sum(g * g * e * (1.0 - e) for g, e, _ in terms)  # step 3
    improvement = sum(g * (s - e) for g, e, s in terms)
    delta = v * improvement  # step 4
    sigma = _volatility(delta, phi, v, sigma, tau)  # step 5
    phi_star = math.sqrt(phi * phi + sigma * sigma)  # step 6
    phi_new = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)  # step 7
    mu_new = mu + phi_new * phi_new * improvement
    return Glicko2(mu_new * SCALE + CENTRE, phi_new * SCALE, sigma)  # step 8


def _volatility(delta: float, phi: float, v: float, sigma: float, tau: float) -> float:
    """Step 5: the new volatility, by the Illinois algorithm on f(x) as the paper gives it."""
    a = math.log(sigma * sigma)
    d2, p2 = delta * delta, phi * phi

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (d2 - p2 - v - ex) / (2.0 * (p2 + v + ex) ** 2) - (x - a) / (tau * tau)

    big_a = a
    if d2 > p2 + v:
        big_b = math.log(d2 - p2 - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > EPSILON:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2.0)
