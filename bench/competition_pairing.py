"""How long the tournament pairings take (partida/competition/): each round of a Swiss of
`--swiss` entrants (random results by strength) and arena pairing calls with `--arena` players
waiting at once. One JSON line per measurement, then a summary:

    {"format": "swiss", "entrants": 1000, "round": 1, "ms": ..., "games": 500, "repeats": 0}
    {"format": "arena", "waiting": 10000, "call": 1, "ms": ..., "tables": 5000}
    {"summary": true, "swiss_ms_max": ..., "arena_ms_max": ...}

    python bench/competition_pairing.py --swiss 1000 --rounds 9 --arena 10000 --calls 5

`--py4swiss` times that library's FIDE Dutch engine on the same Swiss instead (`pip install
py4swiss` first; docs/competition.md says why the project pairs by its own rules):

    python bench/competition_pairing.py --py4swiss --swiss 1000 --rounds 3 --arena 0
"""

from __future__ import annotations

import argparse
import json
import random
import time

from partida.competition.arena import ArenaScore, Waiting, pair_waiting
from partida.competition.results import Bye, GameResult
from partida.competition.swiss import pair_round


def swiss(entrants: int, rounds: int, rng: random.Random) -> list[float]:
    players = list(range(entrants))
    history: list[GameResult | Bye] = []
    met: set[frozenset[int]] = set()
    times = []
    for number in range(1, rounds + 1):
        start = time.perf_counter()
        rnd = pair_round(number, players, history)
        ms = (time.perf_counter() - start) * 1000
        times.append(ms)
        pairs = [frozenset(g) for g in rnd.games]
        repeats = sum(p in met for p in pairs)
        met.update(pairs)
        print(json.dumps({"format": "swiss", "entrants": entrants, "round": number, "ms": round(ms, 1),
                          "games": len(rnd.games), "repeats": repeats}), flush=True)
        for a, b in rnd.games:  # the better seed (lower number) wins more often; some draws
            x = rng.random()
            edge = 0.5 + (b - a) / (2 * entrants)
            ranks = (1, 1) if x < 0.1 else (1, 2) if x < 0.1 + 0.9 * edge else (2, 1)
            history.append(GameResult(number, (a, b), ranks))
        if rnd.bye is not None:
            history.append(Bye(number, rnd.bye))
    return times


def py4swiss(entrants: int, rounds: int, rng: random.Random) -> list[float]:
    """The same Swiss paired by py4swiss's DutchEngine, from in-memory TRF sections."""
    try:
        from py4swiss.engines import DutchEngine
        from py4swiss.trf import ParsedTrf
        from py4swiss.trf.codes import PlayerCode
        from py4swiss.trf.results import RoundResult
        from py4swiss.trf.results.color_token import ColorToken
        from py4swiss.trf.results.result_token import ResultToken
        from py4swiss.trf.sections import PlayerSection, XSection
    except ImportError:
        raise SystemExit("py4swiss is not installed: pip install py4swiss") from None
    results: dict[int, list[RoundResult]] = {i: [] for i in range(1, entrants + 1)}
    points = dict.fromkeys(results, 0)  # times ten, as TRF keeps them
    times = []
    for number in range(1, rounds + 1):
        sections = [
            PlayerSection(code=PlayerCode.PLAYER, starting_number=i, fide_rating=3000 - i, points_times_ten=points[i],
                          rank=i, results=list(results[i]))
            for i in results
        ]
        trf = ParsedTrf(player_sections=sections, x_section=XSection(number_of_rounds=rounds))
        start = time.perf_counter()
        pairings = DutchEngine.generate_pairings(trf)
        ms = (time.perf_counter() - start) * 1000
        times.append(ms)
        print(json.dumps({"format": "swiss-py4swiss", "entrants": entrants, "round": number, "ms": round(ms, 1),
                          "games": sum(1 for p in pairings if p.black)}), flush=True)
        for p in pairings:
            if not p.black:
                results[p.white].append(RoundResult(id=0, color=ColorToken.BYE_OR_NOT_PAIRED,
                                                    result=ResultToken.PAIRING_ALLOCATED_BYE))
                points[p.white] += 10
                continue
            x = rng.random()
            white, black = (ResultToken.DRAW,) * 2 if x < 0.1 else (
                (ResultToken.WIN, ResultToken.LOSS) if x < 0.55 else (ResultToken.LOSS, ResultToken.WIN))
            results[p.white].append(RoundResult(id=p.black, color=ColorToken.WHITE, result=white))
            results[p.black].append(RoundResult(id=p.white, color=ColorToken.BLACK, result=black))
            for who, token in ((p.white, white), (p.black, black)):
                points[who] += {ResultToken.WIN: 10, ResultToken.DRAW: 5}.get(token, 0)
    return times


def arena(waiting: int, calls: int, rng: random.Random) -> list[float]:
    """Each call pairs `waiting` players at once (the worst moment: everyone free together), with
    scores, ratings and last opponents from the games of the calls before."""
    scores = {p: ArenaScore() for p in range(waiting)}
    last: dict[int, frozenset[int]] = {p: frozenset() for p in range(waiting)}
    times = []
    for call in range(1, calls + 1):
        queue = [Waiting(p, scores[p].points, float(p % 997), rng.random(), last[p]) for p in range(waiting)]
        start = time.perf_counter()
        tables = pair_waiting(queue)
        ms = (time.perf_counter() - start) * 1000
        times.append(ms)
        print(json.dumps({"format": "arena", "waiting": waiting, "call": call, "ms": round(ms, 1),
                          "tables": len(tables)}), flush=True)
        for a, b in tables:
            ranks = rng.choice([(1, 2), (2, 1), (1, 1)])
            scores[a], scores[b] = scores[a].after(ranks, 0), scores[b].after(ranks, 1)
            last[a], last[b] = frozenset({b}), frozenset({a})
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--swiss", type=int, default=1000, help="entrants of the Swiss")
    parser.add_argument("--rounds", type=int, default=9, help="rounds of the Swiss")
    parser.add_argument("--arena", type=int, default=10000, help="players waiting at each arena call")
    parser.add_argument("--calls", type=int, default=5, help="arena pairing calls")
    parser.add_argument("--py4swiss", action="store_true", help="pair the Swiss with py4swiss instead")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    swiss_ms = (py4swiss if args.py4swiss else swiss)(args.swiss, args.rounds, rng)
    arena_ms = arena(args.arena, args.calls, rng) if args.arena else [0.0]
    print(json.dumps({"summary": True, "swiss_pairing": "py4swiss" if args.py4swiss else "partida",
                      "swiss_entrants": args.swiss, "swiss_ms_max": round(max(swiss_ms), 1),
                      "swiss_ms_mean": round(sum(swiss_ms) / len(swiss_ms), 1), "arena_waiting": args.arena,
                      "arena_ms_max": round(max(arena_ms), 1)}))


if __name__ == "__main__":
    main()
