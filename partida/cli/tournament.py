"""`partida tournament`: create, enter and follow tournaments on a running server, over the same
protocol as every client. Creating and entering need an account: a person logs in with --name
and --password, a bot account with --token (or $PARTIDA_BOT_TOKEN); reading needs none.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from datetime import UTC, datetime
from typing import Any

from partida.cli import CliError
from partida.cli.common import add_game_files_flags, add_json_flag, add_server_flag, parse_option_pairs, print_json

FORMATS = ("round-robin", "swiss", "arena")
ENTRIES = ("people", "bots", "both")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    t = sub.add_parser(
        "tournament",
        help="create, enter and follow tournaments (round robin, Swiss, arena) on a server",
        description="Tournaments on a running server. Bots enter with `partida bot AGENT --tournament NAME`; "
        "a person enters here or in the browser and is pushed each game as it is paired.",
    )
    tsub = t.add_subparsers(dest="tournament_command", metavar="TOURNAMENT_COMMAND", required=True)

    c = tsub.add_parser("create", help="create a tournament (needs an account)")
    c.add_argument("name", help="letters, digits, '.', '_' or '-', at most 32")
    c.add_argument("--game", required=True, help="the game (see `partida rules`)")
    c.add_argument("--format", required=True, choices=FORMATS, help="how players are paired")
    c.add_argument(
        "--clock", required=True, metavar="CLOCK", help="every game's clock: 5+3 (minutes+seconds), 2s+0.05 or move:30"
    )
    c.add_argument(
        "--entry", choices=ENTRIES, default="both", help="who may enter; shown to all (default: %(default)s)"
    )
    c.add_argument(
        "--rounds",
        type=int,
        default=None,
        metavar="N",
        help="Swiss: rounds (default 4); round robin: 1 single, 2 double (default 1)",
    )
    c.add_argument("--duration", type=float, default=None, metavar="SECONDS", help="an arena's length")
    c.add_argument(
        "--start",
        default="60",
        metavar="TIME",
        help="when it starts: seconds from now, or an ISO time such as 2026-12-01T18:00Z (default: in 60 s)",
    )
    c.add_argument("--option", action="append", metavar="KEY=VALUE", help="a game option (repeatable)")
    c.add_argument("--seats", type=int, default=None, help="players per game (default: the game's least)")
    c.add_argument(
        "--db",
        default=None,
        metavar="URL",
        help="as the operator: write it straight into the server's database (no account needed; "
        "the running server picks it up within a second)",
    )
    add_game_files_flags(c, "load")
    _account_flags(c)
    c.set_defaults(func=lambda args: asyncio.run(_create(args)))

    li = tsub.add_parser("list", help="the tournaments, soonest first")
    li.add_argument("--status", choices=("registering", "running", "finished"), default=None)
    _reader_flags(li)
    li.set_defaults(func=lambda args: asyncio.run(_list(args)))

    for verb, helptext in (("join", "enter a tournament (needs an account)"), ("withdraw", "leave a tournament")):
        j = tsub.add_parser(verb, help=helptext)
        j.add_argument("name")
        _account_flags(j)
        j.set_defaults(func=lambda args, verb=verb: asyncio.run(_enter(args, verb)))

    st = tsub.add_parser("standings", help="points and tie-breaks (Buchholz, Sonneborn-Berger, direct encounter)")
    st.add_argument("name")
    _reader_flags(st)
    st.set_defaults(func=lambda args: asyncio.run(_standings(args)))

    for verb, helptext in (("pairings", "every table of every round"), ("games", "the games played, with results")):
        p = tsub.add_parser(verb, help=helptext)
        p.add_argument("name")
        p.add_argument("--round", type=int, default=None, help="one round only")
        _reader_flags(p)
        p.set_defaults(func=lambda args, verb=verb: asyncio.run(_pairings(args, games_only=verb == "games")))


def _reader_flags(parser: argparse.ArgumentParser) -> None:
    add_server_flag(parser)
    add_json_flag(parser)


def _account_flags(parser: argparse.ArgumentParser) -> None:
    _reader_flags(parser)
    parser.add_argument("--name", default=None, help="your account's name (with --password)")
    parser.add_argument("--password", default=None, help="your account's password")
    parser.add_argument(
        "--token", default=os.environ.get("PARTIDA_BOT_TOKEN"), help="a bot account's token ($PARTIDA_BOT_TOKEN)"
    )


async def _connect(args: argparse.Namespace, account: bool) -> Any:
    from partida.client import Client, ConnectionLost, ServerError

    token = getattr(args, "token", None)
    password = getattr(args, "password", None)
    if account and not token and not (args.name and password):
        raise CliError("this needs an account: --name and --password, or a bot's --token")
    try:
        if token:
            return await Client.connect(args.server, token=token)
        if password:
            return await Client.connect(args.server, name=args.name, password=password)
        return await Client.connect(args.server, name="tournament-reader")
    except ConnectionLost as exc:
        raise CliError(f"cannot reach the server at {args.server}: {exc}") from None
    except ServerError as exc:
        raise CliError(str(exc)) from None


async def _ask(args: argparse.Namespace, account: bool, call: Any) -> Any:
    from partida.client import ServerError

    client = await _connect(args, account)
    try:
        return await call(client)
    except ServerError as exc:
        raise CliError(str(exc)) from None
    finally:
        await client.close()


def _starts_in(text: str) -> float:
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise CliError(f"--start: {text!r} is neither seconds from now nor an ISO time") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


async def _create(args: argparse.Namespace) -> int:
    from partida.room.clock_notation import BadClockText, clock_data

    try:
        clock = clock_data(args.clock)
    except BadClockText as exc:
        raise CliError(f"--clock: {exc}") from None
    if args.db is not None:
        info = await _create_in_database(args, clock)
        print_json(info) if args.json else print(f"Created {_describe(info)}.")
        return 0
    fields: dict[str, Any] = {
        "entry": args.entry,
        "options": parse_option_pairs(args.option) or None,
        "seats": args.seats,
        "rounds": args.rounds,
        "duration": args.duration,
        "starts_in": _starts_in(args.start),
    }
    info = await _ask(args, True, lambda c: c.tournament_create(args.name, args.game, args.format, clock, **fields))
    if args.json:
        print_json(info)
    else:
        print(f"Created {_describe(info)}.")
    return 0


async def _create_in_database(args: argparse.Namespace, clock: dict[str, Any]) -> dict[str, Any]:
    """The operator's way: the same checks as the server's (`TournamentService.on_create`), then
    the row, which the running server reads within `RESCAN` seconds (30), or at once when it is joined."""
    from datetime import timedelta

    from partida.games.base import BadOptions
    from partida.games.registry import GameLoadError, UnknownGame, default_registry
    from partida.storage.database import Database, StorageError
    from partida.storage.tournaments import TournamentStore

    try:
        registry = default_registry(args.game_file, args.games_dir)
        game = registry.get(args.game)
        options = game.resolve_options(parse_option_pairs(args.option))
        seats = game.check_seats(args.seats)
    except (GameLoadError, UnknownGame, BadOptions) as exc:
        raise CliError(f"{exc}; no tournament was created") from None
    if args.format == "arena" and not args.duration:
        raise CliError("an arena needs --duration SECONDS")
    if args.format != "arena" and args.duration is not None:
        raise CliError("only an arena has a --duration; a round robin or Swiss has --rounds")
    rounds = args.rounds if args.rounds is not None else (4 if args.format == "swiss" else None)
    starts_at = datetime.now(UTC) + timedelta(seconds=_starts_in(args.start))
    try:
        db = await Database.open(args.db)
    except StorageError as exc:
        raise CliError(str(exc)) from None
    try:
        info = await TournamentStore(db).create(
            args.name,
            game.name,
            options,
            seats,
            clock,
            args.format,
            args.entry,
            starts_at,
            rounds=rounds,
            duration=args.duration,
        )
    except StorageError as exc:
        raise CliError(str(exc)) from None
    finally:
        await db.close()
    return info.to_data()


async def _list(args: argparse.Namespace) -> int:
    found = await _ask(args, False, lambda c: c.tournament_list(args.status))
    if args.json:
        print_json(found)
    elif not found:
        print("No tournaments.")
    else:
        for info in found:
            print(_describe(info))
    return 0


async def _enter(args: argparse.Namespace, verb: str) -> int:
    if verb == "join":
        info = await _ask(args, True, lambda c: c.tournament_join(args.name))
        if args.json:
            print_json(info)
        else:
            print(f"Entered {_describe(info)}. Your games are pushed to you as they are paired.")
        return 0
    reply = await _ask(args, True, lambda c: c.tournament_withdraw(args.name))
    if args.json:
        print_json(reply)
    else:
        print(f"Withdrew from {args.name}; your games so far still count.")
    return 0


async def _standings(args: argparse.Namespace) -> int:
    rows = await _ask(args, False, lambda c: c.tournament_standings(args.name))
    if args.json:
        print_json(rows)
        return 0
    from rich.table import Table

    from partida.cli.common import print_table

    # the tie-breaks the format ranks by, in its order (a round robin has no Buchholz)
    names = {"buchholz_cut1": "BH-1", "buchholz": "BH", "sonneborn_berger": "SB", "direct_encounter": "DE"}
    meanings = {
        "buchholz_cut1": "BH-1: Buchholz less the lowest",
        "buchholz": "BH: Buchholz",
        "sonneborn_berger": "SB: Sonneborn-Berger",
        "direct_encounter": "DE: direct encounter",
    }
    breaks = [key for key in names if rows and key in rows[0]]
    # only the columns shown are explained: a round robin ranks by no Buchholz
    caption = "; ".join(meanings[key] for key in breaks) or None
    table = Table(title=f"Tournament {args.name}", caption=caption)
    for column in ("#", "name", "points", "games", "W", "D", "L", "byes", *(names[k] for k in breaks)):
        table.add_column(column, justify="left" if column == "name" else "right", no_wrap=column == "name")
    for row in rows:
        name = row["name"] + (" (bot)" if row["bot"] else "") + (" (withdrew)" if row["withdrawn"] else "")
        numbers = [row["points"], row["games"], row["wins"], row["draws"], row["losses"], row["byes"]]
        table.add_row(str(row["rank"]), name, *(f"{n:g}" for n in numbers), *(f"{row[k]:.4g}" for k in breaks))
    print_table(table)
    return 0


async def _pairings(args: argparse.Namespace, games_only: bool) -> int:
    tables = await _ask(args, False, lambda c: c.tournament_pairings(args.name, args.round))
    if games_only:
        tables = [t for t in tables if t["game_id"] is not None]
    if args.json:
        print_json(tables)
        return 0
    if not tables:
        print("No tables yet.")
    for t in tables:
        players = " vs ".join(t["players"])
        where = f"room {t['room']}, game {t['game_id']}" if t["game_id"] is not None else "bye"
        outcome = _outcome(t)
        print(f"round {t['round']} table {t['table']}: {players} ({where}) {outcome}".rstrip())
    return 0


def _outcome(table: dict[str, Any]) -> str:
    result = table.get("result")
    if table["status"] == "bye" or result is None:
        return "" if table["status"] in ("bye", "finished") else f"[{table['status']}]"
    ranks = result.get("ranks") or []
    if result.get("void"):
        return "[not played]"
    # ranks start at 1: the seats ranked first won, and all of them ranked first is a draw
    best = min(ranks, default=1)
    winners = [p for p, r in zip(table["players"], ranks, strict=False) if r == best]
    if len(winners) == len(ranks):
        return "[draw]"
    note = " (no-show)" if result.get("reason") == "no_show" else ""
    return f"[{', '.join(winners)} won{note}]"


def _describe(info: dict[str, Any]) -> str:
    starts = datetime.fromtimestamp(info["starts_at"], UTC).strftime("%Y-%m-%d %H:%M UTC")
    length = f"{info['duration']:g} s" if info["format"] == "arena" else f"rounds {info['rounds'] or 1}"
    from partida.room.clock_notation import clock_text

    clock = clock_text(info["clock"])
    return (
        f"{info['name']}: {info['game']} {info['format']} ({length}), {info['entry']} may enter, "
        f"clock {clock}, {info['entrants']} entrants, {info['status']}, starts {starts}"
    )
