"""`partida othello solve|analyze POSITION`: the Othello engine from the command line."""

from __future__ import annotations

import argparse
import json

from partida.cli import CliError
from partida.cli.common import add_json_flag


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("othello", help="solve and analyze Othello positions with the engine")
    commands = p.add_subparsers(dest="othello_command", metavar="COMMAND")
    position_help = "64 characters (X, O, - from a1 to h8), then the side to move (X or O), as in OBF files"

    solve = commands.add_parser(
        "solve", help="exact best move and final disc difference", description="Solve a position exactly."
    )
    solve.add_argument("position", nargs="+", help=position_help)
    solve.add_argument("--seconds", type=float, default=0.0, help="give up after this long (default: no limit)")
    add_json_flag(solve)
    solve.set_defaults(func=run_solve)

    analyze = commands.add_parser(
        "analyze", help="evaluation and principal variation", description="Search a position to a fixed depth."
    )
    analyze.add_argument("position", nargs="+", help=position_help)
    analyze.add_argument("--depth", type=int, default=10, help="search depth in plies (default: %(default)s)")
    analyze.add_argument("--seconds", type=float, default=0.0, help="time limit (default: none)")
    add_json_flag(analyze)
    analyze.set_defaults(func=run_analyze)
    p.set_defaults(func=lambda args: p.print_help() or 2)


def _position(words: list[str]) -> tuple[list[int], int]:
    from partida.games.othello.engine import parse_position

    try:
        return parse_position(" ".join(words))
    except ValueError as exc:
        raise CliError(str(exc)) from None


def _names(squares: list[int]) -> list[str]:
    from partida.games.othello.board import square_name

    return [square_name(s) for s in squares]


def run_solve(args: argparse.Namespace) -> int:
    from partida.games.othello import engine

    board, player = _position(args.position)
    result = engine.solve(board, player, args.seconds)
    if result is None:
        raise CliError(f"not solved within {args.seconds} seconds")
    move = "pass" if result.move is None else _names([result.move])[0]
    if args.json:
        data = {"move": move, "score": result.score, "pv": _names(result.pv), "nodes": result.nodes}
        data["seconds"] = round(result.seconds, 3)
        print(json.dumps(data))
    else:
        print(f"best move {move}, final disc difference {result.score:+d} for {'XO'[player]}")
        print(f"line: {' '.join(_names(result.pv))}")
        print(f"{result.nodes} nodes in {result.seconds:.2f} s")
    return 0


def run_analyze(args: argparse.Namespace) -> int:
    from partida.games.othello import board as rules
    from partida.games.othello import engine

    if args.depth < 1:
        raise CliError("--depth must be at least 1")
    board, player = _position(args.position)
    if not rules.legal_moves(board, player):
        raise CliError(f"{'XO'[player]} has no legal move in this position")
    result = engine.search(board, player, args.depth, args.seconds)
    data = {
        "move": _names([result.move])[0],
        "value": result.value,
        "exact": result.exact,
        "depth": result.depth,
        "pv": _names(result.pv),
        "nodes": result.nodes,
        "seconds": round(result.seconds, 3),
    }
    if args.json:
        print(json.dumps(data))
    else:
        kind = "exact disc difference" if result.exact else "evaluation (discs)"
        print(f"depth {result.depth}: best move {data['move']}, {kind} {result.value:+.2f} for {'XO'[player]}")
        print(f"principal variation: {' '.join(data['pv'])}")
        print(f"{result.nodes} nodes in {result.seconds:.2f} s ({result.nodes_per_second:,.0f} nodes/s)")
    return 0
