"""`partida ratings` and `partida leaderboard`: people's ratings, read from the server's database
(read-only: neither creates a database that is not there).

    partida ratings [ACCOUNT] [--game G] [--json]
    partida ratings history ACCOUNT --game G --class C [--plot FILE.png] [--json]
    partida ratings evaluate [--plot FILE.png] [--json]
    partida leaderboard GAME [--class C] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from partida.cli import CliError
from partida.cli.common import add_db_flag, add_game_files_flags, add_json_flag, count, image_file, print_json

if TYPE_CHECKING:
    from partida.storage.person_ratings import HistoryPoint, RatingLine
    from partida.storage.store import Store

T = TypeVar("T")
# competition.ratings.ClockClass, kept here: importing the rules would load OpenSkill at every start
CLASSES = ["bullet", "blitz", "rapid", "classical", "correspondence"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    r = sub.add_parser(
        "ratings",
        help="people's ratings per game and clock class, and one account's rating history (with a plot)",
        description="`partida ratings [ACCOUNT]`: an account's ratings (without ACCOUNT: everyone's). "
        "`partida ratings history ACCOUNT --game G --class C [--plot FILE.png]`: its rating before and "
        "after each rated game. `partida ratings evaluate`: replay the stored rated games through "
        "Glicko-2, OpenSkill and Elo and compare their predictions. Ratings are on the 1500 scale; "
        "'?' marks a provisional one (deviation above 110).",
    )
    r.add_argument(
        "words",
        nargs="*",
        metavar="ACCOUNT | history ACCOUNT | evaluate",
        help="an account, `history ACCOUNT`, or `evaluate`",
    )
    r.add_argument("--game", default=None, help="only this game (required with history)")
    r.add_argument("--class", dest="clock_class", choices=CLASSES, default=None, help="the clock class (history)")
    r.add_argument(
        "--plot",
        type=image_file,
        default=None,
        metavar="FILE",
        help="history: draw it to this image; evaluate: each model's running log loss",
    )
    r.add_argument("--limit", type=count, default=1000, help="at most this many rows (default: %(default)s)")
    add_db_flag(r)
    add_json_flag(r)
    r.set_defaults(func=run_ratings)

    b = sub.add_parser(
        "leaderboard",
        help="a game's best ratings, per clock class (provisional ones after, marked ?)",
        description="The accounts with the best ratings in GAME, one table per clock class: the "
        "established ones first, then those still provisional (deviation above 110), marked '?'.",
    )
    b.add_argument("game")
    b.add_argument("--class", dest="clock_class", choices=CLASSES, default=None, help="only this clock class")
    b.add_argument("--limit", type=count, default=50, help="places per class (default: %(default)s)")
    add_game_files_flags(b)
    add_db_flag(b)
    add_json_flag(b)
    b.set_defaults(func=run_leaderboard)


def _read(db_url: str | None, work: Callable[[Store], Awaitable[T]]) -> T:
    from partida.cli.records import with_store

    result: T = asyncio.run(with_store(db_url, work, remote=False))
    return result


async def _account_id(store: Store, name: str) -> int:
    account = await store.get_account_by_name(name)
    if account is None:
        raise CliError(f"there is no account {name!r}")
    return account.id


def run_ratings(args: argparse.Namespace) -> int:
    words = list(args.words)
    if words and words[0] == "history":
        if len(words) != 2:
            raise CliError("usage: partida ratings history ACCOUNT --game G --class C [--plot FILE.png]")
        return run_history(args, words[1])
    if words and words[0] == "evaluate":
        if len(words) != 1 or args.game is not None or args.clock_class is not None:
            raise CliError("usage: partida ratings evaluate [--plot FILE.png] [--json] [--db URL]")
        return run_evaluate(args)
    if len(words) > 1:
        raise CliError(f"one account at a time, not {len(words)}: partida ratings [ACCOUNT]")
    if args.plot is not None or args.clock_class is not None:
        raise CliError("--plot and --class go with history: partida ratings history ACCOUNT --game G --class C")
    name = words[0] if words else None

    async def work(store: Store) -> list[RatingLine]:
        if name is None:
            return await store.person_ratings.everyone(args.game, args.limit)
        return await store.person_ratings.of_account(await _account_id(store, name), args.game)

    lines = _read(args.db, work)
    if args.json:
        print_json([line.to_data() for line in lines])
        return 0
    if not lines:
        print(f"No ratings yet{f' for {name}' if name else ''}{f' in {args.game}' if args.game else ''}.")
        return 0
    from rich.table import Table

    table = Table("account", "game", "class", "rating", "deviation", "games", caption="? = provisional")
    for line in lines:
        r = line.rating
        table.add_row(line.name, line.game, line.clock_class, r.shown(), f"{r.deviation:.0f}", str(r.games))
    _print(table)
    return 0


def run_history(args: argparse.Namespace, name: str) -> int:
    if args.game is None or args.clock_class is None:
        raise CliError("history needs --game G and --class C (one of " + ", ".join(CLASSES) + ")")

    async def work(store: Store) -> list[HistoryPoint]:
        return await store.person_ratings.history(await _account_id(store, name), args.game, args.clock_class)

    points = _read(args.db, work)
    if args.plot is not None:
        if not points:
            raise CliError(f"{name} has no rated {args.clock_class} games of {args.game}: nothing to plot")
        try:
            plot_history(points, args.plot, f"{name}: {args.game}, {args.clock_class}")
        except OSError as exc:
            raise CliError(f"cannot write {args.plot}: {exc.strerror or exc}") from None
    if args.json:
        print_json([p.to_data() for p in points])
        return 0
    if args.plot is not None:
        print(f"Wrote {args.plot} ({len(points)} rated games).")
        return 0
    if not points:
        print(f"{name} has no rated {args.clock_class} games of {args.game} yet.")
        return 0
    from rich.table import Table

    table = Table("game id", "when (UTC)", "place", "before", "after", title=f"{name}: {args.game}, {args.clock_class}")
    for p in points:
        when = p.rated_at.strftime("%Y-%m-%d %H:%M")
        table.add_row(str(p.game_id), when, str(p.rank), p.before.shown(), p.after.shown())
    _print(table)
    return 0


def run_evaluate(args: argparse.Namespace) -> int:
    """Replay the stored rated games through each model (`competition.rating_evaluation`)."""
    from partida.competition.rating_evaluation import evaluate

    async def work(store: Store) -> Any:
        return await store.person_ratings.rated_results()

    results = _read(args.db, work)
    found = evaluate(results)
    if args.plot is not None and found.two_seat:
        try:
            plot_evaluation(found.curves, args.plot)
        except OSError as exc:
            raise CliError(f"cannot write {args.plot}: {exc.strerror or exc}") from None
    if args.json:
        print_json(found.to_data())
        return 0
    if not found.two_seat and not found.more_seats:
        print("No rated games to replay.")
        return 0
    from rich.table import Table

    table = Table(
        "model",
        "predicted",
        "log loss",
        "predicted, 2nd half",
        "log loss, 2nd half",
        title=f"{found.two_seat} rated games of two seats ({found.draws} draws), replayed in order",
        caption="predicted: decisive games the favourite won; log loss: lower is better (a coin: 0.693)",
    )
    for name, tally in found.every.items():
        every, late = tally.to_data(), found.second_half[name].to_data()
        table.add_row(name, _share(every["predicted"]), _loss(every["log_loss"]), _share(late["predicted"]),
                      _loss(late["log_loss"]))  # fmt: skip
    _print(table)
    if found.more_seats:
        tables = found.tables.to_data()
        print(
            f"{found.more_seats} games of more seats, OpenSkill alone: winner predicted "
            f"{_share(tables['predicted'])}, log loss {_loss(tables['log_loss'])}"
        )
    if found.chosen is not None:
        print(f"Chosen by log loss over every two-seat game: {found.chosen}.")
        print("The server rates two-seat games with glicko2 and games of more seats with openskill.")
    if args.plot is not None and found.two_seat:
        print(f"Wrote {args.plot}.")
    return 0


def _share(value: Any) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _loss(value: Any) -> str:
    return "-" if value is None else f"{value:.4f}"


def plot_evaluation(curves: dict[str, list[float]], path: Path) -> None:
    """Each model's mean log loss over the games replayed so far (matplotlib, Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5))
    for name, curve in curves.items():
        ax.plot(range(1, len(curve) + 1), curve, linewidth=1.6, label=f"{name} ({curve[-1]:.4f})")
    ax.axhline(0.6931, color="grey", linestyle=":", label="a coin (0.6931)")
    ax.set_title("Rated games replayed in order: each model's mean log loss so far")
    ax.set_xlabel("two-seat rated games")
    ax.set_ylabel("mean log loss (lower is better)")
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def plot_history(points: list[HistoryPoint], path: Path, title: str) -> None:
    """The rating after each rated game, shaded rating +- 2 deviations (the 95% interval, as
    Glickman reads the deviation), from the newcomer's 1500 (matplotlib, Agg: no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    games = [points[0].before.games] + [p.after.games for p in points]
    ratings = [points[0].before] + [p.after for p in points]
    fig, ax = plt.subplots(figsize=(9, 5))
    ax.fill_between(
        games,
        [r.rating - 2 * r.deviation for r in ratings],
        [r.rating + 2 * r.deviation for r in ratings],
        alpha=0.15,
        linewidth=0,
        label="rating ± 2 deviations",
    )
    ax.plot(games, [r.rating for r in ratings], linewidth=2, label="rating")
    settled = next((p.after.games for p in points if not p.after.provisional), None)
    if settled is not None:
        ax.axvline(settled, color="grey", linestyle=":", label="no longer provisional")
    ax.set_title(title)
    ax.set_xlabel("rated games")
    ax.set_ylabel("rating")
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def run_leaderboard(args: argparse.Namespace) -> int:
    from partida.cli.common import game_registry, known_game

    game = known_game(game_registry(args), args.game).name
    kinds = CLASSES if args.clock_class is None else [args.clock_class]

    async def work(store: Store) -> dict[str, list[RatingLine]]:
        return {kind: await store.person_ratings.leaderboard(game, kind, args.limit) for kind in kinds}

    boards = _read(args.db, work)
    if args.json:
        from partida.storage.person_ratings import board_data

        print_json(
            {
                "game": game,
                "boards": {kind: board_data(lines) for kind, lines in boards.items()},
            }
        )
        return 0
    shown = {kind: lines for kind, lines in boards.items() if lines}
    if not shown:
        which = f" {args.clock_class}" if args.clock_class else ""
        print(f"No rated{which} games of {game} yet.")
        return 0
    from rich.table import Table

    for kind, lines in shown.items():
        table = Table(
            "#", "account", "rating", "deviation", "games", title=f"{game}, {kind}", caption="? = provisional"
        )
        for place, line in enumerate(lines, start=1):
            r = line.rating
            table.add_row(str(place), line.name, r.shown(), f"{r.deviation:.0f}", str(r.games))
        _print(table)
    return 0


def _print(table: Any) -> None:
    from rich.console import Console

    Console().print(table)
