"""`partida duel ...`: Duel-specific tools. `mulligan-table` prints the mulligan agent's value
iteration: the keep value of every (hand size, lands) state and the value of mulliganing; `fit-eval`
fits the `fitted` Duel evaluation to self-play outcomes."""

from __future__ import annotations

import argparse

from partida.cli import CliError
from partida.cli.common import add_json_flag, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("duel", help="Duel card game tools", description="Tools for the Duel card game.")
    duel_sub = p.add_subparsers(dest="duel_command", metavar="TOOL")
    t = duel_sub.add_parser(
        "mulligan-table",
        help="print the mulligan agent's table of keep and mulligan values",
        description="Solve the mulligan MDP of the Duel spec by value iteration for a deck and print, per "
        "hand size, the keep value R(i, j) and value V(i, j) for each land count j, and the mulligan "
        "value (the expected value of mulliganing to one card fewer).",
    )
    t.add_argument("--deck", default="white", help="a stock deck name (default: %(default)s)")
    side = t.add_mutually_exclusive_group(required=True)
    side.add_argument("--on-the-play", dest="on_the_play", action="store_true", help="the player goes first")
    side.add_argument("--on-the-draw", dest="on_the_play", action="store_false", help="the player goes second")
    add_json_flag(t)
    t.set_defaults(func=mulligan_table)
    f = duel_sub.add_parser(
        "fit-eval",
        help="fit the duel-lookahead evaluation to self-play game outcomes",
        description="Play self-play games between one-turn planners, record both seats' features at the start "
        "of every turn, fit a logistic regression of the results and write the weights (JSON) that the "
        "`fitted` evaluation reads (an agent takes another file as its `weights` parameter, e.g. "
        "duel-lookahead:weights=my.json). Prints the held-out log loss next to a coin flip's.",
    )
    f.add_argument("--games", type=int, default=3000, help="self-play games (default: %(default)s)")
    f.add_argument("--seed", type=int, default=0, help="seed of the games (default: %(default)s)")
    f.add_argument("--out", default=None, help="where to write the weights (default: the installed weights.json)")
    add_json_flag(f)
    f.set_defaults(func=fit_eval)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def fit_eval(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from rich.progress import Progress

    from partida.bots.duel.evaluation import WEIGHTS_FILE
    from partida.bots.duel.fit import fit

    if args.games < 10:
        raise CliError("--games must be at least 10 (a fit on fewer games is noise)")
    with Progress(transient=True) as bar:
        task = bar.add_task("self-play games", total=args.games)
        data = fit(args.games, args.seed, progress=lambda n: bar.update(task, completed=n))
    out = Path(args.out) if args.out else WEIGHTS_FILE
    try:
        out.write_text(json.dumps(data, indent=2) + "\n")
    except OSError as exc:
        raise CliError(f"cannot write the weights to {out}: {exc.strerror or exc} (choose a file with --out)") from None
    if args.json:
        print_json(data)
        return 0
    print(f"{data['self_play']['positions']} positions from {args.games} games; weights written to {out}")
    print(f"held-out log loss {data['held_out_log_loss']} (coin flip {data['coin_flip_log_loss']})")
    for name, weight in data["weights"].items():
        print(f"  {name:<22} {weight:+.4f}")
    return 0


def mulligan_table(args: argparse.Namespace) -> int:
    from partida.bots.duel.mulligan import deck_lands, mulligan_table
    from partida.games.duel.cards import default_pool

    pool = default_pool()
    if args.deck not in pool.decks:
        raise CliError(f"unknown deck {args.deck!r} (stock decks: {', '.join(sorted(pool.decks))})")
    lands, size = deck_lands(pool.decks[args.deck])
    table = mulligan_table(lands, args.on_the_play, size)
    data = table.to_data()
    data["deck"] = args.deck
    if args.json:
        print_json(data)
        return 0
    side = "on the play" if args.on_the_play else "on the draw"
    print(f"Mulligan table: {args.deck} deck ({lands} lands in {size}), {side}")
    print("keep value R(i,j) / value V(i,j) by lands j; '*' marks a mulligan (R <= mulligan value)")
    header = "hand  mulligan  " + "  ".join(f"{'j=' + str(j):>11}" for j in range(8))
    print(header)
    for row in data["rows"]:
        i = row["hand_size"]
        mull = "-" if row["mulligan_value"] is None else f"{row['mulligan_value']:.2f}"
        cells = []
        for j in range(i + 1):
            mark = "" if row["keep"][j] else "*"
            cells.append(f"{row['keep_values'][j]:.1f}/{row['values'][j]:.1f}{mark}".rjust(11))
        print(f"{i:>4}  {mull:>8}  " + "  ".join(cells))
    return 0
