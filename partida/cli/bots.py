"""`partida bots`: submit a bot's program for the server to run, and look after it.

Every command logs in as the person who owns the bot (`--name`, `--password` or
$PARTIDA_PASSWORD) and speaks the protocol's hosted-bot requests (docs/hosted-bots.md); the
server must be started with `--host-bots` for a submission to be taken.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from partida.cli import CliError
from partida.cli.common import add_json_flag, add_server_flag, print_json

PASSWORD_ENV = "PARTIDA_PASSWORD"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    bots = sub.add_parser(
        "bots",
        help="submit a bot for the server to run (hosted bots), and see its versions and logs",
        description=__doc__,
    )
    commands = bots.add_subparsers(dest="bots_command", metavar="BOTS_COMMAND", required=True)

    submit = commands.add_parser(
        "submit",
        help="upload a directory (or a .zip, .tar, .tar.gz) as the next version of your hosted bot",
        description="Pack the directory and submit it as the next version of the bot NAME, which you own (it is "
        "created on the first submission). It becomes the version that plays, and lifts a pause.",
    )
    submit.add_argument("bot", metavar="NAME", help="the bot account's name")
    where = submit.add_mutually_exclusive_group(required=True)
    where.add_argument("--dir", type=Path, default=None, help="the directory of the bot's files")
    where.add_argument("--archive", type=Path, default=None, help="a .zip, .tar or .tar.gz of the bot's files")
    submit.add_argument(
        "--run", required=True, metavar="COMMAND", help="the command run in that directory, e.g. 'python3 bot.py'"
    )
    submit.add_argument(
        "--game", action="append", required=True, metavar="GAME", help="a game the bot plays (repeatable)"
    )
    _account_flags(submit)
    submit.set_defaults(func=run_submit)

    listing = commands.add_parser("list", help="your hosted bots: versions, the one that plays, paused and why")
    _account_flags(listing)
    listing.set_defaults(func=run_list)

    logs = commands.add_parser("logs", help="a hosted bot's verdicts (with its stderr) and its latest games")
    logs.add_argument("bot", metavar="NAME")
    logs.add_argument("--limit", type=int, default=None, help="how many of each (default 20, at most 100)")
    _account_flags(logs)
    logs.set_defaults(func=run_logs)

    activate = commands.add_parser("activate", help="make an earlier (or later) version the one that plays")
    activate.add_argument("bot", metavar="NAME")
    activate.add_argument("version", type=int, metavar="VERSION")
    _account_flags(activate)
    activate.set_defaults(func=run_activate)

    withdraw = commands.add_parser("withdraw", help="stop a hosted bot playing (its versions are kept)")
    withdraw.add_argument("bot", metavar="NAME")
    _account_flags(withdraw)
    withdraw.set_defaults(func=run_withdraw)


def _account_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--name", default=None, help="your account's name")
    parser.add_argument(
        "--password", default=os.environ.get(PASSWORD_ENV), help=f"your account's password (default: ${PASSWORD_ENV})"
    )
    add_server_flag(parser)
    add_json_flag(parser)


def _ask(args: argparse.Namespace, call: Callable[[Any], Awaitable[Any]]) -> Any:
    from partida.client import Client, ConnectionLost, ServerError

    if not args.name or not args.password:
        raise CliError(f"hosted bots belong to people: log in with --name and --password (or ${PASSWORD_ENV})")

    async def main() -> Any:
        client = await Client.connect(args.server, name=args.name, password=args.password)
        try:
            return await call(client)
        finally:
            await client.close()

    try:
        return asyncio.run(main())
    except ConnectionLost as exc:
        raise CliError(f"cannot reach the server at {args.server}: {exc}") from None
    except ServerError as exc:
        raise CliError(f"{exc.message} ({exc.code})") from None


def _archive(args: argparse.Namespace) -> bytes:
    from partida.hosting.bundles import MAX_PACKED, BundleRefused, pack

    if args.archive is not None:
        try:
            data = args.archive.read_bytes()
        except OSError as exc:
            raise CliError(f"cannot read {args.archive}: {exc.strerror or exc}") from None
        if len(data) > MAX_PACKED:
            raise CliError(f"{args.archive} passes {MAX_PACKED >> 20} MiB; a submission is at most that packed")
        return data
    try:
        return pack(args.dir)
    except BundleRefused as refused:
        raise CliError(f"{refused.message} ({refused.code})") from None
    except OSError as exc:
        raise CliError(f"cannot pack {args.dir}: {exc.strerror or exc}") from None


def run_submit(args: argparse.Namespace) -> int:
    archive = _archive(args)
    reply = _ask(args, lambda client: client.bot_submit(args.bot, args.game, args.run, archive))
    if args.json:
        print_json(reply)
        return 0
    bot = reply["bot"]
    print(
        f"{bot['name']}: version {reply['version']} submitted ({len(archive)} bytes packed) and playing "
        f"{', '.join(bot['games'])}."
    )
    return 0


def run_list(args: argparse.Namespace) -> int:
    bots = _ask(args, lambda client: client.bot_list())
    if args.json:
        print_json(bots)
        return 0
    if not bots:
        print("You have no hosted bots; submit one with `partida bots submit NAME --dir DIR --run CMD --game GAME`.")
    for bot in bots:
        print(_describe(bot))
        for version in bot["versions"]:
            mark = "*" if version["version"] == bot["active_version"] else " "
            print(
                f"  {mark} v{version['version']}  {version['created_at'][:19]}  {version['run']!r}  "
                f"{', '.join(version['games'])}  {version['files']} files, {version['packed_bytes']} bytes"
            )
    return 0


def _describe(bot: dict[str, Any]) -> str:
    state = bot["status"]
    if bot.get("reason") and state != "active":
        state += f": {bot['reason']}"
    version = f"v{bot['active_version']}" if bot["active_version"] else "no version"
    return f"{bot['name']} ({version}, {state})"


def run_logs(args: argparse.Namespace) -> int:
    logs = _ask(args, lambda client: client.bot_logs(args.bot, args.limit))
    if args.json:
        print_json(logs)
        return 0
    print(_describe(logs["bot"]))
    print("Its log (newest first):" if logs["logs"] else "Nothing logged: no verdict, nothing on stderr.")
    for failure in logs["logs"]:
        game = f"game {failure['game_id']}" if failure["game_id"] is not None else "no game"
        print(f"  {failure['at'][:19]}  v{failure['version']}  {game}  {failure['verdict']}: {failure['detail']}")
        for line in failure["stderr_tail"]:
            print(f"    | {line}")
    if logs["games"]:
        print("Latest games:")
    for game in logs["games"]:
        ended = f"place {game['rank']}" if game["rank"] is not None else game["status"]
        version = f"v{game['version']}" if game["version"] is not None else "v?"
        note = f"  ({game['note']})" if game.get("note") else ""
        print(f"  game {game['game_id']}  {game['game']}  seat {game['seat']}  {version}  {ended}{note}")
    return 0


def run_activate(args: argparse.Namespace) -> int:
    bot = _ask(args, lambda client: client.bot_activate(args.bot, args.version))
    if args.json:
        print_json(bot)
        return 0
    print(_describe(bot))
    return 0


def run_withdraw(args: argparse.Namespace) -> int:
    bot = _ask(args, lambda client: client.bot_withdraw(args.bot))
    if args.json:
        print_json(bot)
        return 0
    print(_describe(bot))
    return 0
