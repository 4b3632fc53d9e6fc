"""`partida bot AGENT`: one bot process that plays wherever the server seats it."""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex

from partida.cli import CliError
from partida.cli.common import add_game_files_flags, add_log_flag, add_server_flag, game_registry, setup_logging


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bot",
        help="run one bot process",
        description="Run a bot that logs in with a bot account (token from --token or $PARTIDA_BOT_TOKEN; "
        "create one with `partida db create-bot NAME`) and plays in every room it is seated in or "
        "challenged to (with --answer-seeks, also the seeks allowing bots that it takes). Only bot accounts "
        "are seated as bots: a token is required.",
    )
    p.add_argument("agent", nargs="?", help="agent to run (see `partida agents`); or --gtp / --cmd")
    bridge = p.add_mutually_exclusive_group()
    bridge.add_argument(
        "--gtp",
        metavar="COMMAND",
        default=None,
        help="play Othello through this GTP engine (e.g. '/usr/games/gtp-rhino -l 2'), one process per game "
        "and seat, restarted with back-off if it crashes; an illegal move, no move in time or a crash it "
        "does not recover from resigns the game, the reason kept in its record (docs/bots.md)",
    )
    bridge.add_argument(
        "--cmd",
        metavar="COMMAND",
        default=None,
        help="play through this program (e.g. 'python mybot.py'): it reads one JSON line per decision on "
        "stdin and writes one JSON answer line on stdout; bad JSON, an illegal answer, no answer in time "
        "or a crash resigns the game, the reason kept in its record (docs/bots.md)",
    )
    p.add_argument(
        "--move-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="with --gtp or --cmd: the longest one decision may take when the game has no clock (default 60)",
    )
    p.add_argument("--game", action="append", default=None, help="only accept these games (repeatable)")
    p.add_argument("--name", default=None, help="the bot account's name, for the log (the token says who it is)")
    p.add_argument("--token", default=os.environ.get("PARTIDA_BOT_TOKEN"), help="bot account token")
    p.add_argument("--seconds", type=float, default=None, help="time budget per decision for search agents")
    p.add_argument("--depth", type=int, default=None, help="fixed search depth for agents that take one")
    p.add_argument(
        "--ladder",
        action="append",
        default=None,
        metavar="NAME",
        help="join this ladder and play whatever it seats the bot in (repeatable; needs a bot token)",
    )
    p.add_argument("--max-games", type=int, default=None, help="ladder games at a time (default: 1, at most 16)")
    p.add_argument(
        "--tournament",
        action="append",
        default=None,
        metavar="NAME",
        help="enter this tournament (waiting for it to be created) and play its games (repeatable; needs a bot token)",
    )
    p.add_argument(
        "--answer-seeks",
        action="store_true",
        help="take the lobby's seeks that allow bots, for the games the bot plays, as they appear",
    )
    add_game_files_flags(p)
    add_server_flag(p)
    add_log_flag(p, "info")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    setup_logging(args.log_level)
    from partida.bots.runner import BotRunner
    from partida.client import ServerError

    agent, params = args.agent, {"seconds": args.seconds, "depth": args.depth}
    command = args.gtp or args.cmd
    if command is not None:
        if agent is not None:
            raise CliError(f"--gtp and --cmd run a program of yours: give either them or an agent ({agent!r})")
        try:
            if not shlex.split(command):
                raise ValueError("an empty command")
        except ValueError as exc:
            raise CliError(f"cannot split {command!r} into words: {exc}") from None
        agent = "gtp" if args.gtp else "stdio"
        params = {"command": command, "move_timeout": args.move_timeout}
    elif agent is None:
        raise CliError("give an agent (see `partida agents`), or a program: --gtp COMMAND or --cmd COMMAND")
    try:
        runner = BotRunner(
            args.server,
            agent,
            name=args.name,
            token=args.token,
            games=args.game,
            params=params,
            ladders=args.ladder,
            max_games=args.max_games,
            tournaments=args.tournament,
            answer_seeks=args.answer_seeks,
            registry=game_registry(args),
        )
    except ValueError as exc:
        raise CliError(str(exc)) from None
    try:
        asyncio.run(runner.run())
    except ServerError as exc:
        raise CliError(f"the server refused the bot: {exc.message} ({exc.code})") from None
    return 0
