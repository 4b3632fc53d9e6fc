"""Paired matches in-process, as engine testers play them: each deal (a seed, and for games
without chance an opening from the game's book) is played once for every rotation of the agents
over the seats, so the luck of the deal and the advantage of a seat cancel within the set. Results
are counted from the first agent's side: games (wins, draws, losses) and, for two agents, pairs
(the pentanomial counts the SPRT uses).

Sets run in worker processes (`parallel`); each is a pure function of its inputs, so the results
are those of `parallel=1` in another order."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from partida.bots.local import play_local
from partida.bots.registry import make_agent, parse_agent
from partida.stats.elo import Pentanomial, Trinomial


class AgentFailed(Exception):
    """An agent raised while playing: the match ends, naming it (its --seat, counted from 1)."""


@dataclass(frozen=True)
class GameSources:
    """Where the games beyond the installation's are described (`--game-file`, `--games-dir`),
    so that worker processes know the same games as the command."""

    files: tuple[str, ...] = ()
    dirs: tuple[str, ...] = ()


class _Guarded:
    """An agent whose failures name its --seat (a traceback from a worker process would not)."""

    def __init__(self, agent: Any, index: int, text: str) -> None:
        self._agent, self._index, self._text = agent, index, text

    def __getattr__(self, name: str) -> Any:
        return getattr(self._agent, name)

    def new_game(self, *args: Any) -> Any:
        return self._call("new_game", args)

    def act(self, *args: Any) -> Any:
        return self._call("act", args)

    def _call(self, name: str, args: tuple[Any, ...]) -> Any:
        try:
            return getattr(self._agent, name)(*args)
        except Exception as exc:
            raise AgentFailed(f"seat {self._index + 1} ({self._text}): the agent raised {exc!r}") from None


@dataclass(frozen=True)
class Deal:
    index: int
    seed: int
    opening: str | None  # the game's `opening` option, for games with a book


@dataclass
class SetResult:
    """One deal played under every rotation: per game, the agents in seat order and the first
    agent's points (1 won alone, 1/2 shared the win, 0 lost)."""

    deal: Deal
    games: list[dict[str, Any]] = field(default_factory=list)

    @property
    def points(self) -> list[float]:
        return [g["points"] for g in self.games]


def rotations(agents: Sequence[str]) -> list[list[str]]:
    return [list(agents[i:]) + list(agents[:i]) for i in range(len(agents))]


def first_agent_points(ranks: list[int], winners: list[int], seat: int) -> float:
    if ranks[seat] != 1:
        return 0.0
    return 1.0 if len(winners) == 1 else 0.5


def play_set(
    game_name: str, agents: Sequence[str], options: dict[str, Any], deal: Deal, sources: GameSources = GameSources()
) -> SetResult:
    """Play one deal under every rotation (run in a worker process: imports happen here)."""
    from pathlib import Path

    from partida.games.registry import default_registry

    registry = default_registry([Path(f) for f in sources.files], [Path(d) for d in sources.dirs])
    game = registry.get(game_name)
    opts = dict(options)
    if deal.opening is not None:
        opts["opening"] = deal.opening
    out = SetResult(deal)
    for shift, seating in enumerate(rotations(agents)):
        built = []
        for seat, text in enumerate(seating):
            name, params = parse_agent(text)
            agent = make_agent(name, game, seed=deal.seed * 16 + seat, **params)
            built.append(_Guarded(agent, (seat + shift) % len(agents), text))
        try:
            played = play_local(game, built, opts, seed=deal.seed)
        finally:
            for agent in built:
                agent.close()  # an engine bridge's process ends with its game
        result = played.state.result()
        first_seat = (len(agents) - shift) % len(agents)
        out.games.append(
            {
                "deal": deal.index,
                "seed": deal.seed,
                "opening": deal.opening,
                "seats": seating,
                "scores": result.scores,
                "winners": result.winners,
                "points": first_agent_points(result.ranks, result.winners, first_seat),
                "moves": len(played.actions),
            }
        )
    return out


@dataclass
class Tally:
    """The first agent's results so far."""

    wins: int = 0
    draws: int = 0
    losses: int = 0
    penta: list[int] = field(default_factory=lambda: [0, 0, 0, 0, 0])

    def add(self, result: SetResult) -> None:
        for p in result.points:
            if p == 1.0:
                self.wins += 1
            elif p == 0.0:
                self.losses += 1
            else:
                self.draws += 1
        if len(result.points) == 2:
            self.penta[round(2 * sum(result.points))] += 1

    @property
    def trinomial(self) -> Trinomial:
        return Trinomial(self.wins, self.draws, self.losses)

    @property
    def pentanomial(self) -> Pentanomial:
        return Pentanomial(*self.penta)


def deals(count: int, seed: int, book: Sequence[str]) -> Iterator[Deal]:
    """`count` deals: seeds from `seed` on, openings drawn from the book without repetition until
    it is used up (then again, reshuffled)."""
    rng = random.Random(seed)
    order: list[str] = []
    for index in range(count):
        opening = None
        if book:
            if not order:
                order = rng.sample(list(book), len(book))
            opening = order.pop()
        yield Deal(index, seed + index, opening)


def run_sets(
    game_name: str,
    agents: Sequence[str],
    options: dict[str, Any],
    planned: Iterator[Deal],
    parallel: int,
    sources: GameSources = GameSources(),
) -> Iterator[SetResult]:
    """Play the deals, yielding each set as it finishes; stopping the iteration (an SPRT verdict)
    leaves no set running. At most `parallel` sets are in flight."""
    if parallel <= 1:
        for deal in planned:
            yield play_set(game_name, agents, options, deal, sources)
        return
    with ProcessPoolExecutor(max_workers=parallel) as pool:
        running: set[Future[SetResult]] = set()
        try:
            for deal in planned:
                running.add(pool.submit(play_set, game_name, agents, options, deal, sources))
                if len(running) < parallel:
                    continue
                done, running = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    yield future.result()
            while running:
                done, running = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    yield future.result()
        finally:
            for future in running:
                future.cancel()
