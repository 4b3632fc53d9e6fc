"""How well each rating model predicts results it has not seen yet: the stored rated games are
replayed in the order they were rated, and before each game every model predicts it from the
ratings it has so far, then learns its result (`evaluate`). Pure: the games come in as values.

The models, each with a rating per player and pool (a game and clock class, as people's ratings
are kept):

- `glicko2`: the server's model for two seats (`ratings.rate_people`), predicting with both
  players' deviations (`glicko2.expected_score`), lichess's settings; the days between games are
  not replayed (absences do not widen deviations here), so the replay is the same whenever it runs;
- `openskill`: Plackett-Luce with the ladders' parameters, predicting with the library's
  `predict_win` (the ladders' pairing rule uses the same);
- `elo`: the baseline, K = 20 on the 400-point logistic, everyone starting at 1500.

What is counted, over the games of two seats (Glicko-2 and Elo rate no others):

- **predicted**: the share of the decisive games that the favourite won (the side the model gave
  more than half); a game the model called even counts half. Draws are left out of this share
  (neither side was "predicted"), and counted in the log loss.
- **log loss**: the mean of -(s ln p + (1 - s) ln(1 - p)), p the model's expected score of the
  first seat and s its score (1, 1/2, 0): lower is better; 0.693 is a coin's.

Both are reported over every game and over the second half alone (ratings settled), and the
model with the lowest log loss over every game is named as the measured choice. Games of more
seats are predicted by OpenSkill alone: predicted when the winner had the best chance, the loss
-ln(the winner's chance); games of more seats with a shared first place are left out.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from partida.competition.ratings import (
    PersonRating,
    Rating,
    expected_first,
    pair_score,
    rate,
    rate_people,
    win_probabilities,
)

ELO_K = 20.0
ELO_START = 1500.0
CLIP = 1e-12  # a prediction of exactly 0 or 1 that comes true costs log(1/CLIP), not infinity


@dataclass(frozen=True, slots=True)
class RatedResult:
    """One rated game as stored: its pool (game and clock class), its players in seat order and
    their ranks (1 = first; equal ranks are a tie)."""

    pool: tuple[str, str]
    players: tuple[Hashable, ...]
    ranks: tuple[int, ...]


class Model(Protocol):
    name: str

    def predict(self, result: RatedResult) -> list[float]:
        """Each seat's chance of finishing first (two seats: its expected score)."""
        ...

    def learn(self, result: RatedResult) -> None: ...


class Glicko2Model:
    name = "glicko2"

    def __init__(self) -> None:
        self.ratings: dict[tuple[tuple[str, str], Hashable], PersonRating] = {}

    def _get(self, result: RatedResult) -> list[PersonRating]:
        return [self.ratings.get((result.pool, p), PersonRating()) for p in result.players]

    def predict(self, result: RatedResult) -> list[float]:
        return expected_first(self._get(result))

    def learn(self, result: RatedResult) -> None:
        after = rate_people(self._get(result), result.ranks)
        for player, rating in zip(result.players, after, strict=True):
            self.ratings[(result.pool, player)] = rating


class OpenSkillModel:
    name = "openskill"

    def __init__(self) -> None:
        self.ratings: dict[tuple[tuple[str, str], Hashable], Rating] = {}

    def _get(self, result: RatedResult) -> list[Rating]:
        return [self.ratings.get((result.pool, p), Rating()) for p in result.players]

    def predict(self, result: RatedResult) -> list[float]:
        return win_probabilities(self._get(result))

    def learn(self, result: RatedResult) -> None:
        after = rate(self._get(result), result.ranks)
        for player, rating in zip(result.players, after, strict=True):
            self.ratings[(result.pool, player)] = rating


class EloModel:
    name = "elo"

    def __init__(self, k: float = ELO_K) -> None:
        self.k = k
        self.ratings: dict[tuple[tuple[str, str], Hashable], float] = {}

    def _get(self, result: RatedResult) -> list[float]:
        return [self.ratings.get((result.pool, p), ELO_START) for p in result.players]

    def predict(self, result: RatedResult) -> list[float]:
        a, b = self._get(result)
        p = 1.0 / (1.0 + 10.0 ** ((b - a) / 400.0))
        return [p, 1.0 - p]

    def learn(self, result: RatedResult) -> None:
        a, b = self._get(result)
        p = 1.0 / (1.0 + 10.0 ** ((b - a) / 400.0))
        change = self.k * (pair_score(result.ranks) - p)
        self.ratings[(result.pool, result.players[0])] = a + change
        self.ratings[(result.pool, result.players[1])] = b - change


def models() -> list[Model]:
    return [Glicko2Model(), OpenSkillModel(), EloModel()]


def log_loss(p: float, score: float) -> float:
    p = min(1.0 - CLIP, max(CLIP, p))
    return -(score * math.log(p) + (1.0 - score) * math.log(1.0 - p))


@dataclass
class Tally:
    """One model's predictions over a run of games."""

    games: int = 0
    decisive: int = 0
    predicted: float = 0.0  # decisive games the favourite won (an even call: half)
    loss: float = 0.0

    def add(self, p: float, score: float) -> None:
        self.games += 1
        self.loss += log_loss(p, score)
        if score != 0.5:
            self.decisive += 1
            if p != 0.5:
                self.predicted += 1.0 if (p > 0.5) == (score == 1.0) else 0.0
            else:
                self.predicted += 0.5

    def add_table(self, chances: Sequence[float], winner: int) -> None:
        """A game of more seats won by one seat: predicted when the winner was given the best
        chance (a shared best chance: that share of it); the loss is -ln(winner's chance)."""
        self.games += 1
        self.decisive += 1
        best = max(chances)
        if chances[winner] == best:
            self.predicted += 1.0 / sum(1 for c in chances if c == best)
        self.loss -= math.log(min(1.0 - CLIP, max(CLIP, chances[winner])))

    def to_data(self) -> dict[str, float | int | None]:
        return {
            "games": self.games,
            "decisive": self.decisive,
            "predicted": round(self.predicted / self.decisive, 4) if self.decisive else None,
            "log_loss": round(self.loss / self.games, 4) if self.games else None,
        }


@dataclass
class Evaluation:
    """What `evaluate` found: per model, over every two-seat game and over the second half;
    OpenSkill over the games of more seats; each model's running mean log loss (for a plot)."""

    two_seat: int = 0
    draws: int = 0
    more_seats: int = 0
    every: dict[str, Tally] = field(default_factory=dict)
    second_half: dict[str, Tally] = field(default_factory=dict)
    tables: Tally = field(default_factory=Tally)
    curves: dict[str, list[float]] = field(default_factory=dict)

    @property
    def chosen(self) -> str | None:
        """The model with the lowest log loss over every two-seat game."""
        scored = [(t.loss / t.games, name) for name, t in self.every.items() if t.games]
        return min(scored)[1] if scored else None

    def to_data(self) -> dict[str, object]:
        return {
            "two_seat_games": self.two_seat,
            "draws": self.draws,
            "more_seat_games": self.more_seats,
            "models": {
                name: {"every": tally.to_data(), "second_half": self.second_half[name].to_data()}
                for name, tally in self.every.items()
            },
            "more_seats_openskill": self.tables.to_data(),
            "chosen": self.chosen,
        }


def evaluate(results: Iterable[RatedResult], chosen_models: Sequence[Model] | None = None) -> Evaluation:
    """Replay `results` in order through every model: predict, then learn (module docstring)."""
    every = list(results)
    run = list(chosen_models) if chosen_models is not None else models()
    pairs = [r for r in every if len(r.players) == 2]
    half = len(pairs) // 2
    out = Evaluation(two_seat=len(pairs), more_seats=len(every) - len(pairs))
    out.every = {m.name: Tally() for m in run}
    out.second_half = {m.name: Tally() for m in run}
    out.curves = {m.name: [] for m in run}
    seen = 0
    for result in every:
        if len(result.players) == 2:
            score = pair_score(result.ranks)
            out.draws += score == 0.5
            for model in run:
                p = model.predict(result)[0]
                out.every[model.name].add(p, score)
                if seen >= half:
                    out.second_half[model.name].add(p, score)
                tally = out.every[model.name]
                out.curves[model.name].append(tally.loss / tally.games)
                model.learn(result)
            seen += 1
            continue
        for model in run:
            if isinstance(model, OpenSkillModel):
                chances = model.predict(result)
                first = [i for i, rank in enumerate(result.ranks) if rank == min(result.ranks)]
                if len(first) == 1:
                    out.tables.add_table(chances, first[0])
                model.learn(result)
    return out
