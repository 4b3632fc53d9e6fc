"""Simulating matches in-process, across processes when asked.

A run is fixed by (game, options, agents, seats, seed, n): match i is played with the i-th seed
drawn from `random.Random(seed)`, and seat s's agent is seeded from the match seed, so a run
repeats exactly whatever the number of workers.

Per-round scores: a game's own `round_scores()` (RECYCLE's `saveturnstats`) when it records any;
otherwise `scores()` is sampled after every action of the last seat (a round is one action of
each seat in turn order), and once more at the end if the final scores differ from the last
sample (a game may end mid-round).
"""

from __future__ import annotations

import multiprocessing
import random
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from partida.bots.local import play_local
from partida.bots.registry import make_agent
from partida.games.base import Action, Game, State
from partida.games.registry import default_registry
from partida.lab.metrics import all_metrics

CHUNK = 50


@dataclass
class RunSpec:
    """What a run simulates. `agents` holds one name per seat, each `NAME` or `NAME:k=v,k=v`."""

    game: str
    options: dict[str, Any]
    agents: list[str]
    seats: int
    seed: int
    n: int
    game_files: list[str] = field(default_factory=list)


@dataclass
class MatchRecord:
    index: int
    seed: int
    result: dict[str, Any]
    rounds: list[list[float]]
    metrics: dict[str, float]


def match_seeds(seed: int, n: int) -> list[int]:
    rng = random.Random(seed)
    return [rng.getrandbits(63) for _ in range(n)]


def parse_agent(text: str) -> tuple[str, dict[str, Any]]:
    """`ismcts:iterations=200,seconds=0.1` -> ("ismcts", {"iterations": 200, "seconds": 0.1})."""
    name, _, rest = text.partition(":")
    params: dict[str, Any] = {}
    for pair in filter(None, rest.split(",")):
        key, _, value = pair.partition("=")
        try:
            params[key] = int(value)
        except ValueError:
            try:
                params[key] = float(value)
            except ValueError:
                params[key] = value
    return name, params


def load_game(spec: RunSpec) -> Game:
    registry = default_registry(game_files=[Path(p) for p in spec.game_files])
    return registry.get(spec.game)


def play_match(game: Game, spec: RunSpec, index: int, seed: int) -> MatchRecord:
    agents = []
    for seat, text in enumerate(spec.agents):
        name, params = parse_agent(text)
        agents.append(make_agent(name, game, **{**params, "seed": seed * 31 + seat}))
    sampled: list[list[float]] = []
    last = spec.seats - 1
    records_rounds: list[bool] = []  # decided at the first round: does the game record its own rounds?

    def on_action(state: State, seat: int, action: Action) -> None:
        if seat != last:
            return
        if not records_rounds:
            records_rounds.append(bool(state.round_scores()))
        if not records_rounds[0]:
            sampled.append(state.scores())

    played = play_local(game, agents, spec.options, seed=seed, on_action=on_action)
    state = played.state
    rounds = state.round_scores()
    if not rounds:
        final = state.scores()
        if not sampled or sampled[-1] != final:
            sampled.append(final)
        rounds = sampled
    result = state.result()
    return MatchRecord(index, seed, {"scores": result.scores, "ranks": result.ranks}, rounds, all_metrics(rounds))


_WORKER: dict[str, Any] = {}


def _init_worker(spec: RunSpec) -> None:
    # Ctrl-C reaches the whole process group: the parent stops the run (leaving the pool ends
    # its workers); workers that took it too each printed a traceback or two.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER["spec"] = spec
    _WORKER["game"] = load_game(spec)


def _play_chunk(chunk: list[tuple[int, int]]) -> list[MatchRecord]:
    return [play_match(_WORKER["game"], _WORKER["spec"], i, s) for i, s in chunk]


def _chunks(items: Sequence[tuple[int, int]], size: int) -> Iterator[list[tuple[int, int]]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def simulate(
    spec: RunSpec, workers: int = 1, on_progress: Callable[[int], None] | None = None
) -> tuple[list[MatchRecord], float]:
    """Play the run's n matches; returns the records in index order and the wall-clock seconds."""
    jobs = list(enumerate(match_seeds(spec.seed, spec.n)))
    start = time.perf_counter()
    records: list[MatchRecord] = []
    if workers <= 1:
        game = load_game(spec)
        for chunk in _chunks(jobs, CHUNK):
            records.extend(play_match(game, spec, i, s) for i, s in chunk)
            if on_progress:
                on_progress(len(chunk))
    else:
        context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
        with context.Pool(workers, initializer=_init_worker, initargs=(spec,)) as pool:
            for batch in pool.imap_unordered(_play_chunk, _chunks(jobs, CHUNK)):
                records.extend(batch)
                if on_progress:
                    on_progress(len(batch))
        records.sort(key=lambda r: r.index)
    return records, time.perf_counter() - start
