"""Elo, LOS and SPRT against values worked out by hand from the published formulas, and simulated
SPRTs that must accept the right hypothesis about as often as alpha and beta promise.

The formulas (fastchess's sprt.cpp and elo code, OpenBench's stats, after M. Van den Bergh,
"Comments on Normalized Elo"):
- score s = (W + D/2) / N; per-game variance var = (W (1-s)^2 + D (1/2-s)^2 + L s^2) / N
- logistic Elo = -400 log10(1/s - 1); 95% interval from s -/+ 1.959964 sqrt(var / N)
- normalized Elo = (s - 1/2) / sqrt(var) * 800 / ln 10 (pairs: sqrt(2 var_pair) for one game's spread)
- LOS (games) = Phi((W - L) / sqrt(W + L)); LOS (pairs) = Phi((s - 1/2) / sqrt(var_pair / pairs))
- bounds: ln(beta / (1 - alpha)), ln((1 - beta) / alpha)
- LLR: N * sum_i phat_i ln(p1_i / p0_i) with p0, p1 the most likely distributions under H0, H1.
  For small Elo differences this is the classical quadratic approximation
  LLR ~ N (s1 - s0)(2s - s0 - s1) / (2 var) (logistic) and N (t1 - t0)(2t - t0 - t1) / 2 with
  t = (s - 1/2) / sigma (normalized), which these tests check it against; without draws the
  logistic MLE is exact: p = (1 - s_H, s_H), so LLR = W ln(s1/s0) + L ln((1-s1)/(1-s0))."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys

import pytest

from partida.stats.elo import Pentanomial, Trinomial, elo_to_score, estimate, frequencies, score_to_elo
from partida.stats.simulation import logistic_for_nelo, simulate
from partida.stats.sprt import SprtSpec, decide, llr, mle_logistic, mle_normalized, parse_spec

NELO_UNIT = 800 / math.log(10)


def test_bounds_are_walds() -> None:
    spec = SprtSpec(0, 5, 0.05, 0.05)
    assert spec.lower == pytest.approx(math.log(0.05 / 0.95)) == pytest.approx(-2.944439, abs=1e-6)
    assert spec.upper == pytest.approx(2.944439, abs=1e-6)
    assert SprtSpec(0, 5, 0.05, 0.10).lower == pytest.approx(math.log(0.10 / 0.95))


def test_trinomial_estimate_by_hand() -> None:
    # W 1100 D 2000 L 1000: s = 2100/4100 = 0.5121951; var = (1100*0.4878049^2 + 2000*0.0121951^2
    # + 1000*0.5121951^2) / 4100 = (261.7489 + 0.2974 + 262.3439) / 4100 = 0.1279001
    e = estimate(Trinomial(wins=1100, draws=2000, losses=1000))
    assert e.score == pytest.approx(0.5121951, abs=1e-7)
    var = (1100 * (1 - e.score) ** 2 + 2000 * (0.5 - e.score) ** 2 + 1000 * e.score**2) / 4100
    assert var == pytest.approx(0.1279001, abs=1e-6)
    # Elo = -400 log10(4100/2100 - 1) = -400 log10(0.952381) = 8.4757
    assert e.elo == pytest.approx(8.4757, abs=1e-3)
    # half-width of s: 1.959964 * sqrt(0.1279001 / 4100) = 0.0109470; s in [0.5012481, 0.5231421]
    assert e.elo_low == pytest.approx(score_to_elo(0.5012481), abs=1e-3)
    assert e.elo_low == pytest.approx(0.8673, abs=1e-3)
    assert e.elo_high == pytest.approx(16.0922, abs=1e-3)
    # nElo = 0.0121951 / sqrt(0.1279001) * 347.4355 = 11.847
    assert e.nelo == pytest.approx(11.847, abs=1e-3)
    # LOS = Phi(100 / sqrt(2100)) = Phi(2.18218) = 0.98545
    assert e.los == pytest.approx(0.98545, abs=1e-5)
    assert e.draw_ratio == pytest.approx(2000 / 4100)


def test_pentanomial_estimate_by_hand() -> None:
    # pairs 50, 300, 800, 350, 60 (N = 1560) at 0, 1/4, 1/2, 3/4, 1:
    # s = (75 + 400 + 262.5 + 60) / 1560 = 797.5 / 1560 = 0.5112179
    # var_pair = sum n_i (a_i - s)^2 / N = 0.0646168 (computed below term by term)
    e = estimate(Pentanomial(50, 300, 800, 350, 60))
    s = 797.5 / 1560
    var = (50 * s**2 + 300 * (0.25 - s) ** 2 + 800 * (0.5 - s) ** 2 + 350 * (0.75 - s) ** 2 + 60 * (1 - s) ** 2) / 1560
    assert e.score == pytest.approx(s)
    assert e.elo == pytest.approx(-400 * math.log10(1 / s - 1))
    assert e.elo_high == pytest.approx(score_to_elo(s + 1.959964 * math.sqrt(var / 1560)), abs=1e-3)
    assert e.nelo == pytest.approx((s - 0.5) / math.sqrt(2 * var) * NELO_UNIT)
    assert e.los == pytest.approx(0.5 * (1 + math.erf((s - 0.5) / math.sqrt(var / 1560) / math.sqrt(2))))
    assert e.draw_ratio == pytest.approx(800 / 1560)


def test_logistic_llr_without_draws_is_exact() -> None:
    # W 60 L 40, H0: 0 Elo (s0 = 1/2), H1: 20 Elo (s1 = 1/(1 + 10^-0.05) = 1/1.8912509 = 0.5287506):
    # LLR = 60 ln(0.5287506/0.5) + 40 ln(0.4712494/0.5) = 60 * 0.0559087 - 40 * 0.0592206 = 0.98570
    # (the empty draw class counts as 0.001 game, as in fastchess: a difference of about 1e-5)
    spec = SprtSpec(0, 20, model="logistic")
    s1 = elo_to_score(20)
    assert s1 == pytest.approx(0.5287506, abs=1e-7)
    assert llr(spec, Trinomial(wins=60, draws=0, losses=40)) == pytest.approx(0.98570, abs=2e-4)


@pytest.mark.parametrize("counts", [Trinomial(1100, 2000, 1000), Pentanomial(50, 300, 800, 350, 60)])
def test_llr_agrees_with_the_quadratic_approximation(counts: Trinomial | Pentanomial) -> None:
    # Trinomial(1100, 2000, 1000), logistic [0, 5]: 4100 * 0.0071945 * (2 * 0.5121951 - 1.0071945)
    # / (2 * 0.1279001) = 1.9830; normalized: t = 0.0121951 / 0.3576313 = 0.0340997,
    # t1 = 5 / 347.4355 = 0.0143913, LLR ~ 4100 * 0.0143913 * (0.0681994 - 0.0143913) / 2 = 1.5874
    n = sum(counts.counts)
    probs = [c / n for c in counts.counts]
    s = sum(a * p for a, p in zip(counts.scores, probs, strict=True))
    var = sum(p * (a - s) ** 2 for a, p in zip(counts.scores, probs, strict=True))
    s0, s1 = 0.5, elo_to_score(5)
    approx_logistic = n * (s1 - s0) * (2 * s - s0 - s1) / (2 * var)
    t = (s - 0.5) / math.sqrt(var)
    t1 = (math.sqrt(2) if isinstance(counts, Pentanomial) else 1) * 5 / NELO_UNIT
    approx_normalized = n * t1 * (2 * t - t1) / 2
    if isinstance(counts, Trinomial):
        assert approx_logistic == pytest.approx(1.9830, abs=1e-4)
        assert approx_normalized == pytest.approx(1.5874, abs=1e-4)
    assert llr(SprtSpec(0, 5, model="logistic"), counts) == pytest.approx(approx_logistic, rel=0.01)
    assert llr(SprtSpec(0, 5, model="normalized"), counts) == pytest.approx(approx_normalized, rel=0.01)


def test_the_mle_meets_its_constraint() -> None:
    scores = (0.0, 0.25, 0.5, 0.75, 1.0)
    probs = [0.05, 0.2, 0.5, 0.2, 0.05]
    p = mle_logistic(scores, probs, 0.53)
    assert sum(p) == pytest.approx(1.0)
    assert sum(a * q for a, q in zip(scores, p, strict=True)) == pytest.approx(0.53)
    p = mle_normalized(scores, probs, 0.1)
    mu = sum(a * q for a, q in zip(scores, p, strict=True))
    sigma = math.sqrt(sum(q * (a - mu) ** 2 for a, q in zip(scores, p, strict=True)))
    assert sum(p) == pytest.approx(1.0)
    assert (mu - 0.5) / sigma == pytest.approx(0.1, abs=1e-6)


@pytest.mark.parametrize("t", [0.5, 1.22, 2.0, 5.0])
def test_the_mle_meets_a_constraint_far_from_the_data(t: float) -> None:
    """A hypothesis of hundreds of Elo against a run of draws: no tilt of the uniform start meets
    it, and the answer was a ZeroDivisionError."""
    scores = (0.0, 0.25, 0.5, 0.75, 1.0)
    _, probs = frequencies(Pentanomial(0, 0, 1, 0, 0), regularize=True)
    p = mle_normalized(scores, probs, t)
    mu = sum(a * q for a, q in zip(scores, p, strict=True))
    sigma = math.sqrt(sum(q * (a - mu) ** 2 for a, q in zip(scores, p, strict=True)))
    assert sum(p) == pytest.approx(1.0)
    assert (mu - 0.5) / sigma == pytest.approx(t, abs=1e-6)


def test_the_llr_falls_as_h1_moves_away_from_a_run_of_draws() -> None:
    draws = Pentanomial(0, 0, 1, 0, 0)
    values = [llr(SprtSpec(0, elo1, model="normalized"), draws) for elo1 in (10, 100, 300, 1000, 3000)]
    assert values == sorted(values, reverse=True)
    assert decide(SprtSpec(0, 3000), values[-1]) == "H0"


def test_decide_and_parse() -> None:
    spec = parse_spec("elo0=0 elo1=5 alpha=0.05 beta=0.05")
    assert spec == SprtSpec(0, 5, 0.05, 0.05, "normalized")
    assert parse_spec("elo0=-1,elo1=3,model=logistic").model == "logistic"
    assert decide(spec, 3.0) == "H1" and decide(spec, -3.0) == "H0" and decide(spec, 0.0) is None
    for bad in ("elo0=5 elo1=0", "elo0=0 elo1=5 alpha=1", "elo0", "gamma=1", "elo1=x", "model=bayes"):
        with pytest.raises(ValueError):
            parse_spec(bad)


@pytest.mark.slow
@pytest.mark.parametrize(("model", "paired"), [("logistic", False), ("normalized", True)])
def test_simulated_sprts_keep_their_error_rates(model: str, paired: bool) -> None:
    """60 SPRTs at each hypothesis with alpha = beta = 0.05: 10 or more wrong verdicts out of 60
    has a chance under 0.2% if the rate is 5%; a test that ignored the data would fail one side."""
    spec = SprtSpec(0, 40, 0.05, 0.05, model)  # type: ignore[arg-type]
    rng = random.Random(2024)
    draws = 0.3
    h1_elo = 40 if model == "logistic" else logistic_for_nelo(40, draws)
    false_h1 = sum(simulate(spec, 0, draws, rng, paired=paired).verdict != "H0" for _ in range(60))
    false_h0 = sum(simulate(spec, h1_elo, draws, rng, paired=paired).verdict != "H1" for _ in range(60))
    assert false_h1 < 10
    assert false_h0 < 10


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "partida", *args], capture_output=True, text=True, timeout=60)


@pytest.mark.processes
def test_stats_sprt_command() -> None:
    done = run_cli("stats", "sprt", "--wins", "1100", "--draws", "2000", "--losses", "1000", "--model", "logistic")
    assert done.returncode == 0, done.stderr
    assert "Elo +8.5 [+0.9, +16.1]" in done.stdout
    assert "LLR 1.98 (-2.94, 2.94) continue" in done.stdout
    done = run_cli("stats", "sprt", "--penta", "50,300,800,350,60", "--elo0=-10", "--elo1", "0", "--json")
    data = json.loads(done.stdout)
    assert data["sprt"]["counts"] == "pentanomial"
    assert data["sprt"]["accepted"] == "H1"
    assert data["pentanomial"]["trials"] == 1560
    done = run_cli("stats", "sprt", "--wins", "1", "--elo0", "5", "--elo1", "0")
    assert done.returncode == 2 and done.stderr.strip() == "partida: error: elo0 (5) must be less than elo1 (0)"
    done = run_cli("stats", "sprt", "--penta", "1,2,x,4,5")
    assert done.returncode == 2 and "five whole numbers" in done.stderr
    done = run_cli("stats", "sprt")
    assert done.returncode == 2 and "no results" in done.stderr
