"""Othello engine benchmark: prints one JSON object.

Measures, in one run on this machine:
- the reference agent (pure Python, mobility heuristic) and the engine at depths 6, 7, 8 on the
  same early and middle-game positions: nodes, seconds and their ratios;
- the engine at depths 10 and 12 from the position after f5, and its nodes per second;
- the exact endgame solver on FFO positions #40 to #44, checked against the published answers;
- middle-game speed: depth 8 on positions with 40 empties;
- matches of the engine against the reference agent (depth 4) and against UCT MCTS, alternating
  colours from seeded random 4-ply openings, with a time budget per move.

    nice -n 10 .venv/bin/python bench/othello_search.py --games 100 --seconds 0.5
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import time
from typing import Any

from partida.bots.local import play_local
from partida.bots.mcts import MctsAgent
from partida.bots.othello_engine import OthelloEngineAgent
from partida.bots.othello_reference import OthelloReferenceAgent, ReferenceSearch
from partida.games.base import Game
from partida.games.othello import board as rules
from partida.games.othello import engine
from partida.games.othello.notation import from_transcript
from partida.games.othello.rules import Othello, OthelloState

# FFO endgame test positions #40-#44 (OBF form) and their published best moves and scores.
FFO = {
    40: ("O--OOOOX-OOOOOOXOOXXOOOXOOXOOOXXOOOOOOXX---OOOOX----O--X-------- X", ["a2"], 38),
    41: ("-OOOOO----OOOOX--OOOOOO-XXXXXOO--XXOOX--OOXOXX----OXXO---OOO--O- X", ["h4"], 0),
    42: ("--OOO-------XX-OOOOOOXOO-OOOOXOOX-OOOXXO---OOXOO---OOOXO--OOOO-- X", ["g2"], 6),
    43: ("--XXXXX---XXXX---OOOXX---OOXXXX--OOXXXO-OOOOXOO----XOX----XXXXX- O", ["g3", "c7"], -12),
    44: ("--O-X-O---O-XO-O-OOXXXOOOOOOXXXOOOOOXX--XXOOXO----XXXX-----XXX-- O", ["d2", "b8"], -14),
}


def realistic_position(empties: int, seed: int) -> OthelloState:
    """A position reached by sensible play: 4 random plies, then the engine at depth 2 with a
    little randomness, until `empties` squares remain."""
    rng = random.Random(seed)
    while True:
        state = OthelloState()
        while not state.is_over() and 64 - sum(state.counts()) > empties:
            moves = state.legal_moves()
            if len(state.moves) < 4 or rng.random() < 0.2:
                state.play(rng.choice(moves))
            else:
                state.play(engine.search_state(state, depth=2).move)
        if not state.is_over():
            return state


def depth_comparison(depths: list[int], positions: list[tuple[str, OthelloState]]) -> list[dict[str, Any]]:
    rows = []
    for depth in depths:
        ref_nodes = ref_seconds = eng_nodes = eng_seconds = 0.0
        per_position = []
        for label, state in positions:
            search = ReferenceSearch()
            start = time.perf_counter()
            search.best_move(list(state.board), state.to_move, depth)
            r_seconds = time.perf_counter() - start
            result = engine.search_state(state, depth=depth)
            per_position.append(
                {
                    "position": label,
                    "reference_nodes": search.nodes,
                    "reference_seconds": round(r_seconds, 4),
                    "engine_nodes": result.nodes,
                    "engine_seconds": round(result.seconds, 5),
                }
            )
            ref_nodes += search.nodes
            ref_seconds += r_seconds
            eng_nodes += result.nodes
            eng_seconds += result.seconds
        rows.append(
            {
                "depth": depth,
                "reference_nodes": int(ref_nodes),
                "reference_seconds": round(ref_seconds, 3),
                "engine_nodes": int(eng_nodes),
                "engine_seconds": round(eng_seconds, 4),
                "node_ratio": round(ref_nodes / max(eng_nodes, 1), 2),
                "time_ratio": round(ref_seconds / max(eng_seconds, 1e-9), 1),
                "positions": per_position,
            }
        )
    return rows


def opening_speed() -> list[dict[str, Any]]:
    state = from_transcript("f5")
    rows = []
    for depth in (10, 12):
        result = engine.search_state(state, depth=depth)
        rows.append(
            {
                "depth": depth,
                "nodes": result.nodes,
                "seconds": round(result.seconds, 3),
                "nodes_per_second": int(result.nodes_per_second),
                "best_move": rules.square_name(result.move),
            }
        )
    return rows


def ffo_suite(numbers: list[int]) -> list[dict[str, Any]]:
    rows = []
    for number in numbers:
        position, best_moves, score = FFO[number]
        board, player = engine.parse_position(position)
        result = engine.solve(board, player)
        assert result is not None
        move = "pass" if result.move is None else rules.square_name(result.move)
        rows.append(
            {
                "ffo": number,
                "empties": position[:64].count("-"),
                "move": move,
                "score": result.score,
                "published": {"moves": best_moves, "score": score},
                "correct": result.score == score and move in best_moves,
                "nodes": result.nodes,
                "seconds": round(result.seconds, 2),
                "nodes_per_second": int(result.nodes / result.seconds) if result.seconds else 0,
            }
        )
    return rows


def midgame_speed(count: int) -> dict[str, Any]:
    seconds, nodes = [], []
    for seed in range(count):
        state = realistic_position(40, 100 + seed)
        result = engine.search_state(state, depth=8)
        seconds.append(result.seconds)
        nodes.append(result.nodes)
    return {
        "positions": count,
        "empties": 40,
        "depth": 8,
        "mean_seconds": round(sum(seconds) / count, 4),
        "max_seconds": round(max(seconds), 4),
        "mean_nodes": int(sum(nodes) / count),
    }


def opening_state_game(opening: list[int]) -> Game:
    """An Othello game whose new states start after a fixed opening (so matches vary)."""

    class Opened(Othello):
        def new_state(self, options: Any, seed: int, seats: int) -> OthelloState:
            state = OthelloState()
            for square in opening:
                state.play(square)
            return state

    return Opened()


def match(opponent: str, games: int, seconds: float, reference_depth: int) -> dict[str, Any]:
    wins = draws = losses = 0
    margin = 0
    rng = random.Random(2026)
    opening: list[int] = []
    for number in range(games):
        if number % 2 == 0:  # a new random opening for each pair of games
            state = OthelloState()
            for _ in range(4):
                state.play(rng.choice(state.legal_moves()))
            opening = list(state.moves)
        game = opening_state_game(opening)
        bot = OthelloEngineAgent(seconds=seconds)
        if opponent == "reference":
            other: Any = OthelloReferenceAgent(depth=reference_depth, seed=number)
        else:
            other = MctsAgent(seconds=seconds, seed=number)
        seat = number % 2
        agents = [bot, other] if seat == 0 else [other, bot]
        final = play_local(game, agents, seed=number).state
        black, white = final.scores_with_empties()  # type: ignore[attr-defined]
        diff = (black - white) if seat == 0 else (white - black)
        margin += diff
        if diff > 0:
            wins += 1
        elif diff == 0:
            draws += 1
        else:
            losses += 1
    return {
        "opponent": f"othello-reference depth {reference_depth}" if opponent == "reference" else "mcts",
        "games": games,
        "seconds_per_move": seconds,
        "wins": wins,
        "draws": draws,
        "losses": losses,
        "mean_disc_margin": round(margin / max(games, 1), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=100, help="games per match (default: %(default)s)")
    parser.add_argument("--seconds", type=float, default=0.5, help="time per move in matches (default: %(default)s)")
    parser.add_argument("--positions", type=int, default=2, help="early and middle positions each (default: 2)")
    parser.add_argument("--depths", default="6,7,8", help="depths compared with the reference (default: 6,7,8)")
    parser.add_argument("--ffo", default="40,41,42,43,44", help="FFO numbers to solve (default: 40-44)")
    parser.add_argument("--midgame", type=int, default=10, help="40-empty positions for the depth-8 timing")
    parser.add_argument("--skip-matches", action="store_true", help="leave out the matches")
    parser.add_argument("--matches-only", action="store_true", help="only the matches")
    parser.add_argument("--opponents", default="reference,mcts", help="match opponents (default: %(default)s)")
    args = parser.parse_args()

    report: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "processor": platform.machine(), "cores": 2},
        "arguments": vars(args),
    }
    if not args.matches_only:
        positions = [(f"early-{i}", realistic_position(50, i)) for i in range(args.positions)]
        positions += [(f"middle-{i}", realistic_position(36, 50 + i)) for i in range(args.positions)]
        report["positions"] = {label: state.position_text() for label, state in positions}
        report["depths"] = depth_comparison([int(d) for d in args.depths.split(",")], positions)
        report["after_f5"] = opening_speed()
        report["midgame_40_empties"] = midgame_speed(args.midgame)
        report["ffo"] = ffo_suite([int(n) for n in args.ffo.split(",") if n])
    if not args.skip_matches and args.games > 0:
        opponents = [name.strip() for name in args.opponents.split(",") if name.strip()]
        report["matches"] = [match(name, args.games, args.seconds, 4) for name in opponents]
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
