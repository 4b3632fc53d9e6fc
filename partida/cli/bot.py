"""`partida bot AGENT`: one bot process that plays wherever the server seats it."""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex

from partida.cli import CliError
from partida.cli.common import add_game_files_flags, add_log_flag, add_server_flag, game_registry, setup_logging
from partida.protocol.accepts import Accepts


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
        "--sandbox",
        action="store_true",
        help="with --cmd: run the program as the server runs a hosted bot, under bubblewrap with the hosted "
        "limits (no network, no files but its own directory, read-only; docs/hosted-bots.md)",
    )
    p.add_argument(
        "--dir",
        default=None,
        metavar="DIR",
        help="with --sandbox: the program's directory, mounted read-only as its working directory (default: here)",
    )
    p.add_argument(
        "--move-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="with --gtp or --cmd: the longest one decision may take when the game has no clock (default 60); "
        "with --sandbox: default 5, and under a clock the smaller of it and the time left",
    )
    p.add_argument(
        "--game",
        action="append",
        default=None,
        metavar="GAME[:SEATS]",
        help="only accept these games (repeatable); GAME:3,4 accepts it with 3 or 4 seats only",
    )
    p.add_argument(
        "--perfect-information-only",
        action="store_true",
        help="decline games where seats hide things (cards in hand), whatever the agent could play",
    )
    p.add_argument(
        "--clock-min", type=float, default=None, metavar="S", help="decline clocks giving a first move under S seconds"
    )
    p.add_argument(
        "--clock-max",
        type=float,
        default=None,
        metavar="S",
        help="decline clocks giving a first move over S seconds, and untimed games",
    )
    p.add_argument(
        "--per-opponent",
        type=int,
        default=None,
        metavar="N",
        help="games at once against one opponent, at most (gtp2ogs's default is 3; default: no bound)",
    )
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
    p.add_argument(
        "--max-games",
        type=int,
        default=None,
        help="games at once, declared to the server; also the ladder games at a time (ladder default: 1, at most 16)",
    )
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
    p.add_argument(
        "--greet",
        default=None,
        metavar="TEXT",
        help="say TEXT in each game's chat as the bot sits down (plain text, at most 300 characters)",
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
        if args.cmd and not args.game:  # declaring every game would get it offered games it cannot play
            raise CliError("say which games your program plays: --game GAME (repeatable), e.g. --game tictactoe")
        agent = "gtp" if args.gtp else "stdio"
        params = {"command": command, "move_timeout": args.move_timeout}
        if args.sandbox:
            agent, params["dir"] = "sandboxed", _sandbox_dir(args)
    elif agent is None:
        raise CliError("give an agent (see `partida agents`), or a program: --gtp COMMAND or --cmd COMMAND")
    if (args.sandbox and not args.cmd) or (args.dir is not None and not args.sandbox):
        raise CliError("--sandbox runs the program of --cmd, and --dir goes with --sandbox")
    try:
        terms, games = _terms(args)
        runner = BotRunner(
            args.server,
            agent,
            name=args.name,
            token=args.token,
            games=games,
            terms=terms,
            params=params,
            ladders=args.ladder,
            max_games=args.max_games,
            tournaments=args.tournament,
            answer_seeks=args.answer_seeks,
            registry=game_registry(args),
            greet=args.greet,
        )
    except ValueError as exc:
        raise CliError(str(exc)) from None
    try:
        asyncio.run(runner.run())
    except ServerError as exc:
        raise CliError(f"the server refused the bot: {exc.message} ({exc.code})") from None
    return 0


def _sandbox_dir(args: argparse.Namespace) -> str:
    """The program's directory, once the sandbox is known to work here (never run unsandboxed)."""
    from partida.hosting.sandbox import sandbox_missing

    why = sandbox_missing()
    if why is not None:
        raise CliError(f"--sandbox: {why}")
    directory = os.path.abspath(args.dir or ".")
    if not os.path.isdir(directory):
        raise CliError(f"--dir {args.dir!r} is not a directory")
    return directory


def _terms(args: argparse.Namespace) -> tuple[Accepts, list[str] | None]:
    """The flags' narrowing of the agent's declaration, and the games named (None: all)."""
    seats: dict[str, list[int] | None] = {}
    for text in args.game or []:
        name, _, counts = text.partition(":")
        try:
            seats[name.strip()] = [int(n) for n in counts.split(",")] if counts else None
        except ValueError:
            raise ValueError(f"--game {text!r}: seat counts are numbers, like hearts:4 or crazyeights:3,4") from None
    for flag, value in (("--max-games", args.max_games), ("--per-opponent", args.per_opponent)):
        if value is not None and value < 1:
            raise ValueError(f"{flag} must be at least 1")
    terms = Accepts.from_hello(
        seats if args.game else None,
        False if args.perfect_information_only else None,
        args.clock_min,
        args.clock_max,
        args.max_games,
        args.per_opponent,
    )
    return terms, list(seats) if args.game else None
