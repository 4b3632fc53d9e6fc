"""Fitting the Duel evaluation (`evaluation`) to game outcomes.

Self-play games between one-turn planners (the spec's R(s) or the hand-set `strong_eval`, drawn
per seat, with some random moves so the positions vary) are played on the full state, both deck
assignments alike. At the start of every turn both seats' features are recorded; when the game
ends each record is labelled with that seat's result (1 win, 0.5 draw, 0 loss). A logistic regression with a small
L2 penalty, solved by Newton's method, gives the weights.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np

from partida.bots.base import Turn
from partida.bots.duel.evaluation import FEATURES, features
from partida.bots.duel.mulligan import MulliganPolicy
from partida.bots.duel.plan import reference_eval, strong_eval
from partida.bots.duel.search import Planner
from partida.games.duel.game import Duel
from partida.games.duel.state import DuelState

PROMPT = {"main1": "main", "main2": "main", "attackers": "attackers", "blockers": "blockers",
          "order": "damage_order", "discard": "discard"}  # fmt: skip
MAX_ACTIONS = 5000


def self_play(
    games: int,
    seed: int = 0,
    epsilon: float = 0.1,
    progress: Callable[[int], None] | None = None,
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """Feature rows and result labels from `games` self-play games."""
    rng = random.Random(seed)
    game = Duel()
    rows: list[list[float]] = []
    labels: list[float] = []
    wins = [0, 0, 0]  # white, red, draw
    for i in range(games):
        deck0 = "white" if i % 2 == 0 else "red"
        options = {"deck0": deck0, "deck1": "red" if deck0 == "white" else "white"}
        state: DuelState = game.create(options, seed=rng.getrandbits(32), seats=2)  # type: ignore[assignment]
        planners = [Planner(rng.choice((reference_eval, strong_eval)), rng) for _ in range(2)]
        mulligan = MulliganPolicy()
        recorded: list[tuple[int, int]] = []  # (row index, seat)
        last_turn = 0
        for _ in range(MAX_ACTIONS):
            if state.is_over():
                break
            if state.turn != last_turn and state.phase == "main1":
                last_turn = state.turn
                for seat in (0, 1):
                    recorded.append((len(rows), seat))
                    rows.append(features(state, seat))
            seat = state.deciding_seat()
            assert seat is not None
            prompt = state.prompt()
            if state.phase in ("mulligan", "scry"):
                action = mulligan.answer(Turn(game, seat, prompt, lambda st=state, s=seat: st.view(s)))
            elif rng.random() < epsilon:
                action = prompt.random_answer(rng)
            else:
                action = planners[seat].decide(state, PROMPT[state.phase], seat)
            state.apply(seat, action)
        winner = state.winner()
        wins[2 if winner is None else (0 if (winner == 0) == (deck0 == "white") else 1)] += 1
        for _, seat in recorded:
            labels.append(0.5 if winner is None else float(winner == seat))
        if progress is not None:
            progress(i + 1)
    stats = {"games": games, "positions": len(rows), "white_wins": wins[0], "red_wins": wins[1], "draws": wins[2]}
    return np.array(rows, dtype=float), np.array(labels, dtype=float), stats


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0, iterations: int = 50) -> np.ndarray:
    """Weights maximising the log-likelihood minus l2/2 |w|^2 (the bias is not penalised)."""
    d = x.shape[1]
    w = np.zeros(d)
    penalty = np.full(d, l2)
    penalty[0] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        grad = x.T @ (y - p) - penalty * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty) + 1e-9 * np.eye(d)
        step = np.linalg.solve(hess, grad)
        w += step
        if np.max(np.abs(step)) < 1e-8:
            break
    return w


def log_loss(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    p = np.clip(1.0 / (1.0 + np.exp(-(x @ w))), 1e-12, 1 - 1e-12)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def fit(games: int, seed: int = 0, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Play, fit on the first 80% of the games' positions, report the held-out log loss."""
    x, y, stats = self_play(games, seed, progress=progress)
    cut = int(len(y) * 0.8)
    w = fit_logistic(x[:cut], y[:cut])
    held_out = log_loss(x[cut:], y[cut:], w)
    base = log_loss(x[cut:], y[cut:], np.zeros(len(FEATURES)))
    full = fit_logistic(x, y)
    return {
        "weights": {name: round(float(v), 5) for name, v in zip(FEATURES, full, strict=True)},
        "held_out_log_loss": round(held_out, 4),
        "coin_flip_log_loss": round(base, 4),
        "self_play": {**stats, "seed": seed},
    }
