"""Duel matches between agents, in-process, with both deck assignments.

Prints one JSON object: per pairing, the first agent's win rate (draws count half) with a 95%
Wilson interval, wins/losses/draws overall and per deck of the first agent, mean game length in
turns, and mean seconds per decision of each agent. Half the games give the first agent the white
deck, half the red; who starts is the game's own seeded coin.

Deals matter in Duel (the white deck wins three games in four between random players, and a given
set of seeds can favour one seat): with `--mirror` every deal is played a second time with the
agents swapped (same game seeds, same seat and deck per deal), and a `mirrored` record gives the
first agent's result over both sides of every deal, where the luck of the deal cancels.

    .venv/bin/python bench/duel_matches.py --games 200 --pairings random:random,duel-search:random
    nice -n 10 .venv/bin/python bench/duel_matches.py --games 200 --mirror --pairings duel-lookahead:duel-search

`--study` runs the study's three experiments instead (its random player is the mulligan agent,
`duel-mulligan`, random except for the mulligan): random vs random, search vs random and search vs
search, and adds a `study` table that puts each of its figures (the white deck's wins between
random players, the search's wins with each deck against random, the red deck's wins between
search players) next to ours with a 95% interval.

    nice -n 10 .venv/bin/python bench/duel_matches.py --study --games 200 --seed 11
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from typing import Any

from partida.bots import base
from partida.bots.base import Agent, AgentSpec
from partida.bots.duel import lookahead, mulligan, search
from partida.bots.local import play_local
from partida.games.duel import GAMES

# The Duel agents and random, imported directly: the match runner does not depend on every other
# bots module importing cleanly (the shared registry imports them all).
SPECS: dict[str, AgentSpec] = {
    spec.name: spec for module in (base, mulligan, search, lookahead) for spec in module.AGENTS
}


def make_agent(name: str, **params: Any) -> Agent:
    """`name` may carry parameters: `duel-lookahead[evaluation=reference]`."""
    if name.endswith("]") and "[" in name:
        name, _, extra = name[:-1].partition("[")
        for pair in extra.split(";"):
            key, _, value = pair.partition("=")
            params[key.strip()] = value.strip()
    if name not in SPECS:
        raise SystemExit(f"unknown agent {name!r} (known: {', '.join(sorted(SPECS))})")
    spec = SPECS[name]
    return spec.factory(**{k: v for k, v in params.items() if k in spec.params})


DEFAULT_PAIRINGS = "random:random,duel-search:random,duel-lookahead:random,duel-lookahead:duel-search"
STUDY_PAIRINGS = "duel-mulligan:duel-mulligan,duel-search:duel-mulligan,duel-search:duel-search"


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def run_pairing(a: str, b: str, games: int, seconds: float, seed: int, progress: bool) -> dict[str, Any]:
    game = GAMES[0]
    wins = losses = draws = 0
    by_deck: dict[str, list[int]] = {"white": [0, 0, 0], "red": [0, 0, 0]}
    turns = 0
    secs = [0.0, 0.0]
    decisions = [0, 0]
    start = time.perf_counter()
    for i in range(games):
        deck_a = "white" if i % 2 == 0 else "red"
        deck_b = "red" if deck_a == "white" else "white"
        agents = [
            make_agent(a, seed=seed + 2 * i, seconds=seconds),
            make_agent(b, seed=seed + 2 * i + 1, seconds=seconds),
        ]
        played = play_local(game, agents, options={"deck0": deck_a, "deck1": deck_b}, seed=seed + i)
        state = played.state
        winner = state.winner()  # type: ignore[attr-defined]
        slot = 2 if winner is None else (0 if winner == 0 else 1)
        by_deck[deck_a][slot] += 1
        wins += slot == 0
        losses += slot == 1
        draws += slot == 2
        turns += state.turn  # type: ignore[attr-defined]
        for s in (0, 1):
            secs[s] += played.seconds[s]
            decisions[s] += played.decisions[s]
        if progress:
            print(f"{a} vs {b}: game {i + 1}/{games}: {wins}-{losses}-{draws}", file=sys.stderr, flush=True)
    score = wins + 0.5 * draws
    low, high = wilson(score, games)
    return {
        "agent": a,
        "opponent": b,
        "games": games,
        "seconds_per_decision_budget": seconds,
        "wins": wins,
        "losses": losses,
        "draws": draws,
        "win_rate": round(score / games, 4) if games else None,
        "ci95": [round(low, 4), round(high, 4)],
        "by_deck_of_agent": {d: {"wins": v[0], "losses": v[1], "draws": v[2]} for d, v in by_deck.items()},
        "mean_turns": round(turns / games, 2) if games else None,
        "mean_decision_seconds": {
            a if a != b else f"{a} (first)": round(secs[0] / max(1, decisions[0]), 5),
            b if a != b else f"{b} (second)": round(secs[1] / max(1, decisions[1]), 5),
        },
        "wall_seconds": round(time.perf_counter() - start, 1),
    }


def mirrored(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """The first agent's record over a pairing and its mirror (the same deals, agents swapped)."""
    wins = first["wins"] + second["losses"]
    losses = first["losses"] + second["wins"]
    draws = first["draws"] + second["draws"]
    games = first["games"] + second["games"]
    score = wins + 0.5 * draws
    low, high = wilson(score, games)
    return {
        "agent": first["agent"],
        "opponent": first["opponent"],
        "games": games,
        "wins": wins,
        "losses": losses,
        "draws": draws,
        "win_rate": round(score / games, 4) if games else None,
        "ci95": [round(low, 4), round(high, 4)],
    }


def deck_share(games: int, wins: float, draws: int) -> dict[str, Any]:
    score = wins + 0.5 * draws
    low, high = wilson(score, games)
    return {"games": games, "rate": round(score / games, 4) if games else None, "ci95": [round(low, 4), round(high, 4)]}


def study_table(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The study's figures next to ours: which deck wins between equal players, and how often the
    search beats random with each deck."""
    by_pair = {(r["agent"], r["opponent"]): r for r in results}
    rows = []
    for (a, b), what, study in (
        (("duel-mulligan", "duel-mulligan"), "random vs random: white wins", 0.718),
        (("duel-search", "duel-search"), "search vs search: red wins", 0.765),
    ):
        r = by_pair.get((a, b))
        if r is None:
            continue
        d = r["by_deck_of_agent"]
        deck = "white" if "white" in what else "red"
        other = "red" if deck == "white" else "white"
        wins = d[deck]["wins"] + d[other]["losses"]
        draws = d[deck]["draws"] + d[other]["draws"]
        rows.append({"figure": what, "study": study, **deck_share(r["games"], wins, draws)})
    r = by_pair.get(("duel-search", "duel-mulligan"))
    if r is not None:
        for deck, study in (("white", 0.959), ("red", 0.972)):
            v = r["by_deck_of_agent"][deck]
            games = v["wins"] + v["losses"] + v["draws"]
            row = {"figure": f"search vs random: search wins playing {deck}", "study": study}
            rows.append(row | deck_share(games, v["wins"], v["draws"]))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="games per pairing, half with each deck (default 200)")
    parser.add_argument("--seconds", type=float, default=1.0, help="time budget per decision (default 1.0)")
    parser.add_argument("--pairings", default=DEFAULT_PAIRINGS, help="comma-separated AGENT:OPPONENT pairs")
    parser.add_argument("--seed", type=int, default=1, help="base seed (games and agents)")
    parser.add_argument("--progress", action="store_true", help="print a line per game to stderr")
    parser.add_argument(
        "--mirror", action="store_true", help="also play every deal with the agents swapped and report both sides"
    )
    parser.add_argument(
        "--study", action="store_true", help="the study's three experiments, with its figures beside ours"
    )
    args = parser.parse_args(argv)
    if args.study:
        args.pairings = STUDY_PAIRINGS
    results = []
    for pair in args.pairings.split(","):
        a, sep, b = pair.strip().partition(":")
        if not sep:
            parser.error(f"a pairing is AGENT:OPPONENT, not {pair!r}")
        result = run_pairing(a, b, args.games, args.seconds, args.seed, args.progress)
        if args.mirror:
            result["mirror"] = run_pairing(b, a, args.games, args.seconds, args.seed, args.progress)
            result["mirrored"] = mirrored(result, result["mirror"])
        results.append(result)
    report: dict[str, Any] = {"game": "duel", "pairings": results}
    if args.study:
        report["study"] = study_table(results)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
