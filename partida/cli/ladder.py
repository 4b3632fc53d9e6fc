"""`partida ladder`: the operator's side of bot ladders, on the server's database.

`create` writes a ladder the running server picks up (it loads ladders it does not know when a
bot joins one); the other subcommands only read, so they never create a database that is not
there. Ratings are checked here against the game's rules before anything is stored: a ladder
with options or a clock its game would refuse would seat bots in rooms that cannot open.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from partida.cli import CliError
from partida.cli.common import (
    add_db_flag,
    add_game_files_flags,
    add_json_flag,
    count,
    image_file,
    parse_option_pairs,
    print_json,
)

if TYPE_CHECKING:
    from partida.storage.ladders import LadderInfo
    from partida.storage.store import Store


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    ladder = sub.add_parser(
        "ladder",
        help="create bot ladders and read their standings, games, head-to-head and rating plots",
        description="Bot ladders: the server keeps pairing the connected bots of a ladder and rates "
        "every result with OpenSkill. Bots join with `partida bot AGENT --name BOT --ladder NAME`.",
    )
    lsub = ladder.add_subparsers(dest="ladder_command", metavar="LADDER_COMMAND", required=True)

    c = lsub.add_parser(
        "create",
        help="create a ladder",
        description="Create a ladder of GAME. Every ladder game runs under its clock, so a bot that "
        "hangs or disconnects loses on time and the ladder goes on.",
    )
    c.add_argument("name", help="the ladder's name: letters, digits, '.', '_' or '-' (it is an MQTT topic level)")
    c.add_argument("--game", required=True, help="the game (see `partida rules`)")
    c.add_argument("--option", action="append", metavar="KEY=VALUE", help="a game option (repeatable)")
    c.add_argument(
        "--clock",
        required=True,
        metavar="CLOCK",
        help="time control of every game: 10s+0.1 (10 seconds, 0.1 s a move), 5+3 (minutes+seconds) or move:5",
    )
    c.add_argument("--seats", type=int, default=None, help="players per game (default: the game's least)")
    c.add_argument(
        "--concurrency", type=int, default=1, metavar="K", help="games in play at once (default: %(default)s)"
    )
    c.add_argument(
        "--pairing",
        choices=["rating", "random"],
        default="rating",
        help="rating: close ratings and high uncertainty first; random: the baseline (default: %(default)s)",
    )
    add_game_files_flags(c, "load")
    add_db_flag(c)
    add_json_flag(c)
    c.set_defaults(func=run_create)

    li = lsub.add_parser("list", help="list the ladders")
    add_db_flag(li)
    add_json_flag(li)
    li.set_defaults(func=run_list)

    st = lsub.add_parser("standings", help="a ladder's table: rating (mu - 3 sigma), mu, sigma, games, results")
    st.add_argument("name")
    add_db_flag(st)
    add_json_flag(st)
    st.set_defaults(func=run_standings)

    p = lsub.add_parser("plot", help="draw each bot's rating over its games, with its uncertainty band")
    p.add_argument("name")
    p.add_argument("-o", "--output", type=image_file, default=None, help="the image file (default: NAME-ratings.png)")
    add_db_flag(p)
    p.set_defaults(func=run_plot)

    g = lsub.add_parser("games", help="a ladder's games, newest first")
    g.add_argument("name")
    g.add_argument("--limit", type=count, default=50, help="at most this many (default: %(default)s)")
    add_db_flag(g)
    add_json_flag(g)
    g.set_defaults(func=run_games)

    h = lsub.add_parser(
        "h2h",
        help="head-to-head table: each pair's results (ahead-level-behind)",
        description="Each cell is the row bot's record against the column bot: games it finished "
        "ahead, level and behind. In games of more than two seats every pair of seats counts.",
    )
    h.add_argument("name")
    add_db_flag(h)
    add_json_flag(h)
    h.set_defaults(func=run_h2h)

    r = lsub.add_parser(
        "rerate",
        help="recompute every rating from the stored results and report any difference from the live table",
        description="Replays the ladder's stored results in rating order from fresh ratings and compares "
        "with the live table and the rating history. Exits 1 when anything differs.",
    )
    r.add_argument("name")
    add_db_flag(r)
    add_json_flag(r)
    r.set_defaults(func=run_rerate)


def _read(db_url: str | None, work):  # type: ignore[no-untyped-def]
    """Run `work(store)` on an existing database; a missing ladder is one line, not a traceback."""
    from partida.cli.records import with_store
    from partida.storage.database import StorageError

    async def guarded(store: Store):  # type: ignore[no-untyped-def]
        try:
            return await work(store)
        except StorageError as exc:
            raise CliError(str(exc)) from None

    return asyncio.run(with_store(db_url, guarded, remote=False))


# create


def check_ladder(args: argparse.Namespace) -> dict[str, Any]:
    """The ladder's game, options, seats and clock as the rules and the clock accept them, or a
    `CliError` saying which is wrong; nothing is stored before this passes."""
    from partida.games.base import BadOptions
    from partida.games.registry import GameLoadError, UnknownGame, default_registry
    from partida.room.clock_notation import BadClockText, clock_data

    try:
        registry = default_registry(args.game_file, args.games_dir)
    except GameLoadError as exc:
        raise CliError(str(exc)) from None
    try:
        game = registry.get(args.game)
    except UnknownGame:
        raise CliError(f"unknown game {args.game!r} (games: {', '.join(registry.names())})") from None
    try:
        options = game.resolve_options(parse_option_pairs(args.option))
        seats = game.check_seats(args.seats)
    except BadOptions as exc:
        raise CliError(f"{exc}; no ladder was created.") from None
    try:
        clock = clock_data(args.clock)
    except BadClockText as exc:
        raise CliError(f"--clock: {exc}; no ladder was created.") from None
    if args.concurrency < 1:
        raise CliError(f"--concurrency is at least 1 (games at a time), not {args.concurrency}")
    return {"game": game.name, "options": options, "seats": seats, "clock": clock}


def run_create(args: argparse.Namespace) -> int:
    from partida.cli.db import with_db
    from partida.storage.store import Store

    checked = check_ladder(args)

    async def work(db: Any) -> LadderInfo:
        return await Store(db).ladders.create(
            args.name,
            checked["game"],
            checked["options"],
            checked["seats"],
            checked["clock"],
            args.concurrency,
            args.pairing,
        )

    ladder = with_db(args.db, work)
    if args.json:
        print_json(ladder.to_data())
        return 0
    print(
        f"Ladder {ladder.name!r} is created: {ladder.game}, {ladder.seats} seats, clock {args.clock}, "
        f"{ladder.concurrency} game(s) at a time, {ladder.pairing} pairing."
    )
    print(f"Bots join it with: PARTIDA_BOT_TOKEN=<token> partida bot AGENT --name BOT --ladder {ladder.name}")
    return 0


# list and standings


def run_list(args: argparse.Namespace) -> int:
    ladders = _read(args.db, lambda store: store.ladders.all())
    if args.json:
        print_json([ladder.to_data() for ladder in ladders])
        return 0
    if not ladders:
        print("No ladders yet: create one with `partida ladder create NAME --game GAME --clock 10s+0.1`.")
        return 0
    from rich.table import Table

    table = Table("ladder", "game", "seats", "clock", "at once", "pairing", "members", "rated games")
    for ladder in ladders:
        options = ",".join(f"{k}={v}" for k, v in ladder.options.items())
        table.add_row(
            ladder.name,
            ladder.game + (f" ({options})" if options else ""),
            str(ladder.seats),
            _clock_text(ladder.clock),
            str(ladder.concurrency),
            ladder.pairing,
            str(ladder.members),
            str(ladder.rated_games),
        )
    _print(table)
    return 0


def _clock_text(clock: dict[str, Any]) -> str:
    from partida.room.clocks import BadClock, ClockSpec

    try:
        spec = ClockSpec.parse(clock)
    except BadClock:
        return str(clock)
    return spec.describe() if spec is not None else "none"


def run_standings(args: argparse.Namespace) -> int:
    async def work(store: Store) -> tuple[LadderInfo, list[Any]]:
        ladder = await store.ladders.require(args.name)
        return ladder, await store.ladders.standings(ladder.id)

    ladder, standings = _read(args.db, work)
    if args.json:
        print_json({"ladder": ladder.to_data(), "standings": [s.to_data() for s in standings]})
        return 0
    from rich.table import Table

    table = Table(
        "#", "bot", "rating", "mu", "sigma", "games", "won", "drawn", "lost",
        title=f"{ladder.name}: {ladder.game}, {ladder.rated_games} rated games",
        caption="rating = mu - 3 sigma: where the bot stands with high confidence",
    )  # fmt: skip
    for place, line in enumerate(standings, start=1):
        table.add_row(
            str(place),
            line.name,
            f"{line.rating.display:.2f}",
            f"{line.mu:.2f}",
            f"{line.sigma:.2f}",
            str(line.games),
            str(line.wins),
            str(line.draws),
            str(line.losses),
        )
    _print(table)
    return 0


# plot


def run_plot(args: argparse.Namespace) -> int:
    from partida.competition.ladder_plot import plot_ratings
    from partida.competition.ladder_report import rating_series

    async def work(store: Store) -> tuple[LadderInfo, list[Any], list[Any]]:
        ladder = await store.ladders.require(args.name)
        return ladder, await store.ladders.standings(ladder.id), await store.ladders.history(ladder.id)

    ladder, standings, history = _read(args.db, work)
    if not history:
        raise CliError(f"ladder {ladder.name!r} has no rated games yet: nothing to plot")
    series = rating_series((c.name, c.before, c.after) for c in history)
    ordered = {s.name: series[s.name] for s in standings if s.name in series}
    output = args.output or Path(f"{ladder.name}-ratings.png")
    try:
        plot_ratings(ordered, output, f"{ladder.name}: {ladder.game}, {ladder.rated_games} rated games")
    except OSError as exc:
        raise CliError(f"cannot write {output}: {exc.strerror or exc}") from None
    print(f"Wrote {output} ({len(ordered)} bots, {ladder.rated_games} rated games).")
    return 0


# games and head-to-head


def run_games(args: argparse.Namespace) -> int:
    async def work(store: Store) -> tuple[LadderInfo, list[Any]]:
        ladder = await store.ladders.require(args.name)
        return ladder, await store.ladders.games(ladder.id, limit=args.limit)

    ladder, games = _read(args.db, work)
    rows = [
        {
            "id": g.game_id,
            "room": g.room_code,
            "status": g.status,
            "rated": g.rated_seq,
            "seats": [name for _, _, name in g.seats],
            "ranks": (g.result or {}).get("ranks"),
            "reason": (g.result or {}).get("reason"),
            "created_at": g.created_at.isoformat() if g.created_at else None,
        }
        for g in games
    ]
    if args.json:
        print_json(rows)
        return 0
    from rich.table import Table

    table = Table("id", "status", "rated #", "players (rank)", "ended by", "created", title=f"{ladder.name}: games")
    for row in rows:
        ranks = row["ranks"] or [None] * len(row["seats"])
        named = zip(row["seats"], ranks, strict=False)
        players = " vs ".join(f"{n} ({r})" if r is not None else str(n) for n, r in named)
        table.add_row(
            str(row["id"]),
            row["status"],
            str(row["rated"] or ""),
            players,
            row["reason"] or "",
            (row["created_at"] or "")[:19],
        )
    _print(table)
    return 0


def run_h2h(args: argparse.Namespace) -> int:
    from partida.competition.ladder_report import head_to_head

    async def work(store: Store) -> tuple[LadderInfo, list[Any], list[Any]]:
        ladder = await store.ladders.require(args.name)
        return ladder, await store.ladders.standings(ladder.id), await store.ladders.games(ladder.id)

    ladder, standings, games = _read(args.db, work)
    played = [
        ([name for _, _, name in g.seats], [int(r) for r in g.result["ranks"]])
        for g in reversed(games)
        if g.status == "finished" and g.rated_seq is not None and g.result and g.result.get("ranks")
    ]
    if not played and not args.json:
        raise CliError(f"ladder {ladder.name!r} has no rated games yet: no head-to-head to show")
    h2h = head_to_head(played, [s.name for s in standings])
    if args.json:
        print_json(
            {
                "ladder": ladder.name,
                "bots": h2h.names,
                "records": {
                    a: {b: [r.ahead, r.level, r.behind] for b, r in row.items()} for a, row in h2h.records.items()
                },
            }
        )
        return 0
    from rich.table import Table

    table = Table(
        "bot \\ against",
        *h2h.names,
        title=f"{ladder.name}: head to head",
        caption="each cell: the row bot's games ahead-level-behind the column bot",
    )
    for a in h2h.names:
        table.add_row(a, *("·" if a == b else h2h.record(a, b).text() for b in h2h.names))
    _print(table)
    return 0


# rerate


def run_rerate(args: argparse.Namespace) -> int:
    async def work(store: Store) -> tuple[LadderInfo, Any]:
        ladder = await store.ladders.require(args.name)
        return ladder, await store.ladders.rerate(ladder.id)

    ladder, rerate = _read(args.db, work)
    if args.json:
        print_json(
            {
                "ladder": ladder.name,
                "games": rerate.games,
                "differences": rerate.differences,
                "standings": [s.to_data() for s in rerate.standings],
            }
        )
    elif rerate.differences:
        print(f"Ladder {ladder.name!r}: {len(rerate.differences)} difference(s) after re-rating {rerate.games} games:")
        for line in rerate.differences:
            print(f"  {line}")
    else:
        print(
            f"Ladder {ladder.name!r}: re-rated {rerate.games} games from their stored results; "
            "the live table and the rating history agree bit for bit."
        )
    return 1 if rerate.differences else 0


def _print(table: Any) -> None:
    from partida.cli.common import print_table

    print_table(table)
