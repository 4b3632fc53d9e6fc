"""A Duel evaluation fitted to game outcomes.

Hand-set weights (the spec's R(s), `strong_eval`) say what a position is worth in someone's
opinion; this one says what it was worth in thousands of games: a logistic regression of the
final result on features of positions at turn boundaries, fitted by `partida duel fit-eval`
(module `fit`). The value is the log-odds of winning for `me`, so the searches that use it
compare positions in the unit that matters. The weights are data (`weights.json`), refitted
when the cards or the agents change.

Features look only at what a seat can see or what a determinization samples consistently with it:
life totals (and how low they are), creatures (power, toughness, evasion, first strike, count),
lands, the own hand by kind, the opponent's hand size, the direct damage each deck carries per
card (the red deck's burn makes a small life total worse than it looks), whether either side's
board is lethal against the other's life, and who moves next.
"""

from __future__ import annotations

import json
from functools import cache
from operator import mul
from pathlib import Path

from partida.bots.duel.plan import Evaluator, reference_eval, strong_eval, terminal_value
from partida.games.duel.state import DuelState

WEIGHTS_FILE = Path(__file__).with_name("weights.json")

FEATURES = [
    "bias",
    "to_move",
    "life_me",
    "life_opp",
    "low_life_me",
    "low_life_opp",
    "power_me",
    "power_opp",
    "toughness_me",
    "toughness_opp",
    "flying_power_me",
    "flying_power_opp",
    "strike_power_me",
    "strike_power_opp",
    "creatures_me",
    "creatures_opp",
    "lands_me",
    "lands_opp",
    "hand_spells_me",
    "hand_useful_lands_me",
    "hand_opp",
    "burn_threat_me",
    "burn_threat_opp",
    "lethal_on_board_me",
    "lethal_on_board_opp",
    "race_me",
    "race_opp",
]

LOW_LIFE = 7
LAND_CAP = 7
USEFUL_LANDS = 6


def next_to_move(state: DuelState) -> int:
    """Who takes the next turn's decisions when the position is judged: in a first main phase (the
    start of a turn, where self-play records and rollouts stop) the active player; the searches
    judge positions later in a turn (combat, second main phase), after which the opponent moves."""
    return state.active if state.phase == "main1" else 1 - state.active


_burn_cache: dict[int, tuple[dict[str, int], float]] = {}


def burn_rate(state: DuelState, seat: int) -> float:
    """Damage to a player per card of the seat's deck list (sorceries that can hit a player)."""
    deck = state.decks[seat]
    hit = _burn_cache.get(id(deck))
    if hit is not None and hit[0] is deck:
        return hit[1]
    total = sum(deck.values())
    damage = 0
    for name, copies in deck.items():
        effect = state.pool.card(name).effect
        if effect is not None and effect.do == "damage" and effect.target in ("any", "player"):
            damage += effect.amount * copies
    rate = damage / total if total else 0.0
    _burn_cache[id(deck)] = (deck, rate)  # the deck is kept alive, so its id is not reused
    return rate


def features(state: DuelState, me: int) -> list[float]:
    """The feature vector of a position for `me`, in the order of FEATURES.

    The searches call this hundreds of thousands of times a game, so it reads the cards' fields
    directly instead of going through `Permanent`'s properties."""
    opp = 1 - me
    power = [0, 0]
    tough = [0, 0]
    flying = [0, 0]
    strike = [0, 0]
    count = [0, 0]
    lands = [0, 0]
    for perm in state.battlefield:
        owner = perm.owner
        card = perm.card
        if card.type == "creature":
            p = card.power + perm.counters
            power[owner] += p
            tough[owner] += card.toughness + perm.counters - perm.damage
            count[owner] += 1
            keywords = card.keywords
            if keywords:
                if "flying" in keywords:
                    flying[owner] += p
                if "double strike" in keywords:
                    strike[owner] += p
                elif "first strike" in keywords:
                    strike[owner] += p // 2 + 1 if p else 0
        else:
            lands[owner] += 1
    pm, po = state.players[me], state.players[opp]
    hand_lands = sum(1 for _, c in pm.hand if c.type == "land")
    hand_spells = len(pm.hand) - hand_lands
    useful = min(hand_lands, max(0, USEFUL_LANDS - lands[me]))
    life_m, life_o = pm.life, po.life
    return [
        1.0,
        1.0 if next_to_move(state) == me else 0.0,
        float(life_m),
        float(life_o),
        float(max(0, LOW_LIFE - life_m)),
        float(max(0, LOW_LIFE - life_o)),
        float(power[me]),
        float(power[opp]),
        float(tough[me]),
        float(tough[opp]),
        float(flying[me]),
        float(flying[opp]),
        float(strike[me]),
        float(strike[opp]),
        float(count[me]),
        float(count[opp]),
        float(min(lands[me], LAND_CAP)),
        float(min(lands[opp], LAND_CAP)),
        float(hand_spells),
        float(useful),
        float(len(po.hand)),
        len(po.hand) * burn_rate(state, opp),
        len(pm.hand) * burn_rate(state, me),
        1.0 if power[opp] >= life_m else 0.0,
        1.0 if power[me] >= life_o else 0.0,
        power[me] / max(1, life_o),
        power[opp] / max(1, life_m),
    ]


@cache
def load_weights(path: Path = WEIGHTS_FILE) -> tuple[float, ...]:
    """The weights of a file written by `partida duel fit-eval`, in the order of FEATURES."""
    try:
        data = json.loads(Path(path).read_text())
        weights = data["weights"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"cannot read Duel evaluation weights from {path}: {exc}") from None
    missing = [name for name in FEATURES if name not in weights]
    if missing:
        raise ValueError(f"{path}: no weight for {', '.join(missing)} (refit with `partida duel fit-eval`)")
    return tuple(float(weights[name]) for name in FEATURES)


def fitted_evaluator(path: Path = WEIGHTS_FILE) -> Evaluator:
    """The fitted evaluation with the weights of `path` (read once, here, so a bad file is an
    error when the agent is made, not in the middle of a game)."""
    weights = load_weights(Path(path))

    def evaluate(state: DuelState, me: int) -> float:
        """Log-odds that `me` wins; a finished game is +-1000."""
        if state.phase == "over":
            return terminal_value(state, me)  # type: ignore[return-value]
        return sum(map(mul, weights, features(state, me)))

    return evaluate


def fitted_eval(state: DuelState, me: int) -> float:
    """The fitted evaluation with the shipped weights."""
    return _shipped(state, me)


_shipped = fitted_evaluator()

EVALUATIONS: dict[str, Evaluator] = {"reference": reference_eval, "strong": strong_eval, "fitted": fitted_eval}


def evaluation(name: str, weights: str | Path | None = None) -> Evaluator:
    """An evaluation by name (an agent parameter), with an error that lists the choices; `weights`
    is a weights file for the fitted evaluation (default: the shipped one)."""
    if name not in EVALUATIONS:
        raise ValueError(f"evaluation must be one of {', '.join(EVALUATIONS)}, not {name!r}")
    if weights is not None:
        if name != "fitted":
            raise ValueError("a weights file goes with evaluation=fitted only")
        return fitted_evaluator(Path(weights))
    return EVALUATIONS[name]
