"""The sequential probability ratio test between two Elo hypotheses, as fastchess computes it.

H0: the first agent is elo0 stronger; H1: it is elo1 stronger (elo0 < elo1). After each game or
pair the log-likelihood ratio (LLR) of the counts under the two hypotheses is compared with Wald's
bounds log(beta / (1 - alpha)) and log((1 - beta) / alpha): below the lower one H0 is accepted,
above the upper one H1, between them the match goes on. alpha is the chance of accepting H1 when
H0 holds, beta of accepting H0 when H1 holds.

The likelihood of each hypothesis is that of the most likely outcome distribution that satisfies
it (a generalized SPRT): among distributions over the outcome scores with the expected score of
the hypothesis (logistic model) or with the normalized Elo of the hypothesis (normalized model),
the one closest to the observed frequencies. Michel Van den Bergh, "Comments on Normalized Elo"
(proposition 1.1 and section 4.1) gives both maximum likelihood estimates as the root of a
one-dimensional monotone equation in a multiplier theta, solved here by bisection.

- logistic: Elo as in rating lists, 400 log10(s / (1 - s)); a hypothesis fixes the expected score.
- normalized: Elo in units of the spread of the results, (s - 1/2) / sigma * 800 / ln 10; a
  hypothesis fixes t = (s - 1/2) / sigma, so it does not depend on how drawish the game is."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from partida.stats.elo import NELO_UNIT, Counts, Pentanomial, elo_to_score, frequencies, mean_and_variance

# The most games an SPRT match plays before giving up on a verdict (`partida match --sprt`
# without --games): a difference of a few normalized Elo takes thousands of games to
# tell, a clear one (depth 4 against depth 3 in Othello) a few hundred.
SPRT_MOST_GAMES = 20000

Model = Literal["logistic", "normalized"]
MODELS: tuple[Model, ...] = ("logistic", "normalized")


@dataclass(frozen=True)
class SprtSpec:
    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05
    model: Model = "normalized"

    def __post_init__(self) -> None:
        if not self.elo0 < self.elo1:
            raise ValueError(f"elo0 ({self.elo0:g}) must be less than elo1 ({self.elo1:g})")
        for name in ("alpha", "beta"):
            if not 0.0 < getattr(self, name) < 1.0:
                raise ValueError(f"{name} must be between 0 and 1 (exclusive)")
        if self.alpha + self.beta >= 1.0:
            raise ValueError("alpha + beta must be less than 1")
        if self.model not in MODELS:
            raise ValueError(f"unknown model {self.model!r} (known: {', '.join(MODELS)})")

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1.0 - self.beta) / self.alpha)


def parse_spec(text: str, model: Model = "normalized") -> SprtSpec:
    """`elo0=0 elo1=5 alpha=0.05 beta=0.05 [model=logistic]` (spaces or commas between)."""
    values: dict[str, float] = {}
    chosen: str = model
    for part in text.replace(",", " ").split():
        key, sep, value = part.partition("=")
        key = key.strip().lower()
        if not sep:
            raise ValueError(f"{part!r} is not KEY=VALUE (keys: elo0, elo1, alpha, beta, model)")
        if key == "model":
            chosen = value.strip()
            continue
        if key not in ("elo0", "elo1", "alpha", "beta"):
            raise ValueError(f"unknown SPRT key {key!r} (keys: elo0, elo1, alpha, beta, model)")
        try:
            values[key] = float(value)
        except ValueError:
            raise ValueError(f"{key}={value!r} is not a number") from None
    if chosen not in MODELS:
        raise ValueError(f"unknown model {chosen!r} (known: {', '.join(MODELS)})")
    return SprtSpec(model=chosen, **values)  # type: ignore[arg-type]


def _decreasing_root(f: Callable[[float], float], low: float, high: float) -> float:
    """The root of f, decreasing on the open interval (low, high) from +inf to -inf."""
    for _ in range(200):
        mid = 0.5 * (low + high)
        if mid in (low, high):
            break
        if f(mid) > 0:
            low = mid
        else:
            high = mid
    return 0.5 * (low + high)


class Unattainable(ValueError):
    """No distribution on these outcomes meets the constraint from this starting point."""


def _tilt(scores: tuple[float, ...], probs: list[float], phi: list[float]) -> list[float]:
    """The distribution p_i = phat_i / (1 + theta phi_i) closest to `probs` with sum p_i phi_i = 0
    (equation 1.2/4.9 of the paper): theta solves sum phat_i phi_i / (1 + theta phi_i) = 0, which
    has a root only when phi takes both signs."""
    if not min(phi) < 0.0 < max(phi):
        raise Unattainable("the constraint's weights do not change sign")
    low, high = -1.0 / max(phi), -1.0 / min(phi)
    theta = _decreasing_root(lambda x: sum(p * f / (1.0 + x * f) for p, f in zip(probs, phi, strict=True)), low, high)
    return [p / (1.0 + theta * f) for p, f in zip(probs, phi, strict=True)]


def mle_logistic(scores: tuple[float, ...], probs: list[float], s: float) -> list[float]:
    """The most likely distribution with expected score s."""
    return _tilt(scores, probs, [a - s for a in scores])


MOST_STEPS = 4096


def mle_normalized(scores: tuple[float, ...], probs: list[float], t: float, mu_ref: float = 0.5) -> list[float]:
    """The most likely distribution with (mu - mu_ref) / sigma = t, by the fixed-point iteration of
    section 4.1 of the paper, starting from the uniform distribution.

    A t far from the data (a hypothesis of hundreds of Elo against a run of draws) can leave the
    uniform start with no tilt that meets the constraint; t is then reached in steps, each
    iteration starting from the solution for the step before (the solution moves continuously
    with t, and at a solution the weights always change sign)."""
    steps = 1
    while True:
        try:
            p = [1.0 / len(scores)] * len(scores)
            for k in range(1, steps + 1):
                p = _fixed_point(scores, probs, t * k / steps, mu_ref, p)
            return p
        except Unattainable:
            if steps >= MOST_STEPS:
                raise Unattainable(f"no distribution of these results has a normalized t of {t:g}") from None
            steps *= 4


def _fixed_point(scores: tuple[float, ...], probs: list[float], t: float, mu_ref: float, p: list[float]) -> list[float]:
    for _ in range(100):
        mu, var = mean_and_variance(scores, p)
        sigma = math.sqrt(var)
        if sigma == 0.0:
            raise Unattainable("a distribution with no spread has no normalized t")
        phi = [a - mu_ref - 0.5 * t * sigma * (1.0 + ((a - mu) / sigma) ** 2) for a in scores]
        new = _tilt(scores, probs, phi)
        done = max(abs(x - y) for x, y in zip(new, p, strict=True)) < 1e-10
        p = new
        if done:
            break
    return p


def llr(spec: SprtSpec, counts: Counts) -> float:
    """The log-likelihood ratio of H1 against H0 given the counts (0 before any result)."""
    if not sum(counts.counts):
        return 0.0
    total, probs = frequencies(counts, regularize=True)
    scores = counts.scores
    if spec.model == "logistic":
        p0 = mle_logistic(scores, probs, elo_to_score(spec.elo0))
        p1 = mle_logistic(scores, probs, elo_to_score(spec.elo1))
    else:
        # a pair's result spreads 1/sqrt(2) as much as a game's, so its t is sqrt(2) times larger
        factor = math.sqrt(2.0) if isinstance(counts, Pentanomial) else 1.0
        p0 = mle_normalized(scores, probs, factor * spec.elo0 / NELO_UNIT)
        p1 = mle_normalized(scores, probs, factor * spec.elo1 / NELO_UNIT)
    return total * sum(p * (math.log(b) - math.log(a)) for p, a, b in zip(probs, p0, p1, strict=True))


Verdict = Literal["H0", "H1"]


def decide(spec: SprtSpec, value: float) -> Verdict | None:
    """Which hypothesis the LLR accepts, or None to go on."""
    if value >= spec.upper:
        return "H1"
    if value <= spec.lower:
        return "H0"
    return None
