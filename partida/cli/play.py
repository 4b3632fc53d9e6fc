"""`partida play` (a person in the terminal), `partida watch`, and `partida match` (bots against
bots through the server, for programs)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import shlex
import sys
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from partida.cli import CliError
from partida.cli.common import (
    DEFAULT_SERVER,
    add_game_files_flags,
    add_json_flag,
    add_server_flag,
    game_registry,
    known_game,
    parse_option_pairs,
)
from partida.cli.seeks import await_seek, rating_range, seek_clock, take_seek
from partida.match.processes import seat_command
from partida.stats.sprt import MODELS, SPRT_MOST_GAMES


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "play",
        help="play a game in the terminal",
        description="Play against a bot (--vs AGENT), join a friend's room (--room CODE), or open a private "
        "room and share its invite code.",
    )
    p.add_argument("game", nargs="?", help="game to play (see `partida rules`); not needed with --room")
    p.add_argument(
        "--vs",
        action="append",
        default=None,
        metavar="BOT",
        help="seat a bot: a built-in agent or a connected bot account's name (repeatable)",
    )
    p.add_argument("--room", default=None, metavar="CODE", help="join the room with this invite code")
    p.add_argument(
        "--challenge",
        default=None,
        metavar="ACCOUNT",
        help="challenge a person's or a bot's account to the game and play once it accepts",
    )
    p.add_argument(
        "--accept",
        action="store_true",
        help="wait for challenges to your account (log in with --name and --password) and answer them",
    )
    p.add_argument(
        "--seek",
        type=seek_clock,
        default=None,
        metavar="CLOCK",
        help="play anyone: post a seek with this clock (as --clock: 5+3 is 5 minutes and 3 s a move), "
        "paired with the first compatible seek or taken from the lobby; Ctrl-C cancels it",
    )
    p.add_argument("--rated", action="store_true", help="with --seek: a rated game (log in with --name and --password)")
    p.add_argument(
        "--range",
        type=rating_range,
        default=None,
        metavar="LOW-HIGH",
        help="with --seek: only opponents rated LOW to HIGH in the seek's clock class (1400-1600)",
    )
    p.add_argument("--bots", action="store_true", help="with --seek: bots may answer it too")
    p.add_argument(
        "--take", type=int, default=None, metavar="ID", help="take a seek listed by `partida seeks` and play it"
    )
    p.add_argument("--seat", type=int, default=None, help="the seat to take (default: the first free one)")
    p.add_argument("--token", default=None, help="seat token, to return to your seat after a disconnect (with --room)")
    p.add_argument("--option", action="append", metavar="KEY=VALUE", help="game option (repeatable)")
    p.add_argument("--seats", type=int, default=None, help="number of seats, for games of 2 or more players")
    p.add_argument("--public", action="store_true", help="list the room in the lobby")
    p.add_argument(
        "--clock",
        default=None,
        metavar="CLOCK",
        help="time control: MINUTES+SECONDS as Lichess writes it (5+3), a unit for a short clock (2s+0.05) "
        "or move:SECONDS (move:30); default none",
    )
    p.add_argument("--name", default=None, help="your display name (default: your login name)")
    p.add_argument("--password", default=None, help="log in to an account (with --name)")
    add_game_files_flags(p)
    add_server_flag(p)
    p.set_defaults(func=run_play)

    w = sub.add_parser("watch", help="watch a room as a spectator")
    w.add_argument("room", metavar="CODE")
    add_game_files_flags(w)
    add_server_flag(w)
    w.set_defaults(func=run_watch)

    m = sub.add_parser(
        "match",
        help="play bots against each other through the server",
        description="Play bots against each other: through a server, each game a private room (bot accounts, the "
        "server's built-in agents, or programs started with --seat-cmd), one line per game; or in-process with "
        "--local. With two agents, paired games (--rotate, --local) give Elo with a 95% interval and --sprt "
        "stops when the SPRT decides (docs/engine-testing.md).",
    )
    m.add_argument("game")
    m.add_argument(
        "--seat",
        action="append",
        default=[],
        metavar="AGENT",
        help="the next seat's agent: a built-in agent (with --local it takes parameters: othello-engine[depth=4]) "
        "or, through a server, a connected bot account's name",
    )
    m.add_argument(
        "--seat-cmd",
        action="append",
        dest="seat",
        type=seat_command,
        metavar="COMMAND",
        help="the next seat is this program, started by the match on a server it starts itself (a free "
        "loopback port, a temporary database, a bot account for the seat): it gets PARTIDA_SERVER, "
        "PARTIDA_BOT_TOKEN and PARTIDA_BOT_NAME in its environment, and {server}, {token} and {name} in "
        "COMMAND are replaced by them. Example: --seat-cmd 'python mybot.py --url {server}'. A program that "
        "does not connect itself, played through `partida bot`'s bridges: --seat-cmd 'stdio:python mybot.py' "
        "(one JSON line per decision on stdin and stdout) or --seat-cmd 'gtp:gtp-rhino' (docs/bots.md)",
    )
    m.add_argument(
        "--games",
        type=int,
        default=None,
        help="number of games (default 1); with --sprt the most the match plays while the test has not "
        f"decided (default {SPRT_MOST_GAMES}), rounded up to whole pairs",
    )
    m.add_argument("--option", action="append", metavar="KEY=VALUE", help="game option (repeatable)")
    m.add_argument(
        "--rotate",
        action="store_true",
        help="through a server: play games in sets, the agents rotated over the seats (for two: pairs with "
        "the seats swapped), counted in pairs for Elo and the SPRT; each room's seed is drawn by the server",
    )
    m.add_argument(
        "--clock",
        default=None,
        metavar="CLOCK",
        help="time control for every game: 5+3 (minutes+seconds), 2s+0.05 (a unit) or move:5 (default none)",
    )
    m.add_argument(
        "--parallel",
        type=int,
        default=None,
        metavar="N",
        help="games played at the same time (with --local: worker processes, default the number of CPUs; "
        "through a server: default up to 8; 1 plays them one after the other)",
    )
    m.add_argument(
        "--local",
        action="store_true",
        help="play in-process, without a server: paired games (every seat rotation of each deal), "
        "Elo with a 95%% interval, and --sprt; agents take parameters: othello-engine[depth=4]",
    )
    m.add_argument(
        "--sprt",
        default=None,
        metavar="SPEC",
        help="stop when the SPRT decides, e.g. 'elo0=0 elo1=5 alpha=0.05 beta=0.05' (with --local, --server "
        "URL or --seat-cmd; through a server it implies --rotate)",
    )
    m.add_argument("--model", choices=MODELS, default="normalized", help="SPRT Elo model (default: %(default)s)")
    m.add_argument(
        "--seed", type=int, default=1, help="the first deal's seed (--local) and the openings' order (default: 1)"
    )
    m.add_argument("--no-book", action="store_true", help="start every game from the usual position (no openings book)")
    add_game_files_flags(m)
    add_server_flag(m)
    m.set_defaults(server=None)  # whether --server was given: --seat-cmd starts a server otherwise
    add_json_flag(m)
    m.set_defaults(func=run_match)


def comeback_command(code: str, token: str, server: str = "") -> str:
    """The command that takes a held seat back. The token goes after `=`: a token may begin with
    a dash, which would otherwise read as an option."""
    return f"partida play --room {code} --token={token}{server}"


def browser_link(server: str, code: str) -> str:
    """The room's page on the server's own web client (it serves HTTP on its websocket port)."""
    url = urlsplit(server)
    scheme = "https" if url.scheme.lower() == "wss" else "http"
    return f"{scheme}://{url.netloc}/r/{code}"


def replay_command(game_id: int, server: str, visible: bool, files: str = "") -> str:
    """How to replay a finished game from where this client is: through the server when anyone
    may see the game there (`visible`: it was played in a public room; `replay --server` does not
    log in); otherwise only from the server's database, on the server's machine."""
    if visible:
        return f"partida replay {game_id} --server {server}{files}"
    local = urlsplit(server).hostname in ("127.0.0.1", "localhost", "::1")
    return f"partida replay {game_id}{files}" + ("" if local else " on the server's machine")


def game_files_flags(args: argparse.Namespace) -> str:
    """The `--game-file`/`--games-dir` flags given, for the commands printed for later."""
    flags = [f" --game-file {shlex.quote(str(p))}" for p in args.game_file]
    return "".join(flags + [f" --games-dir {shlex.quote(str(p))}" for p in args.games_dir])


def _clock(text: str | None) -> dict[str, Any] | None:
    """`--clock` as the protocol's clock spec (None: no clock)."""
    if text is None:
        return None
    from partida.room.clock_notation import BadClockText, clock_data

    try:
        return clock_data(text)
    except BadClockText as exc:
        raise CliError(f"--clock: {exc}") from None


def _connect_error(exc: Exception) -> CliError:
    return CliError(f"{exc}. Is the server running? Start one with `partida serve`.")


CHALLENGE_WAIT = 310.0  # seconds to wait for an answer: the server lets a challenge lapse after 300


def from_invite_link(args: argparse.Namespace) -> None:
    """`--room`/`watch` given the browser's invite link (http://HOST:PORT/r/CODE), which is what a
    friend sends: its code, and its server unless --server named one ("no room 'http://...'")."""
    link = urlsplit(args.room or "")
    if link.scheme.lower() not in ("http", "https") or "/r/" not in link.path:
        return
    args.room = link.path.rstrip("/").rsplit("/r/", 1)[1]
    if args.server == DEFAULT_SERVER:
        args.server = f"ws{'s' if link.scheme.lower() == 'https' else ''}://{link.netloc}"


def run_play(args: argparse.Namespace) -> int:
    from_invite_link(args)
    ways = (args.room, args.challenge, args.accept, args.seek, args.take is not None)
    if sum(map(bool, ways)) > 1:
        raise CliError("--room, --challenge, --accept, --seek and --take are different ways in: give one of them")
    if args.room is None and args.game is None and not args.accept and args.take is None:
        raise CliError("name a game to play, or --room CODE to join a friend's room, or --accept to await challenges")
    if not args.seek and (args.rated or args.range or args.bots):
        raise CliError("--rated, --range and --bots describe a seek: give --seek CLOCK too")
    if (args.seek or args.take is not None) and (args.vs or args.clock or args.public):
        raise CliError(
            "a seek's room is private, its clock is --seek's, its opponent whoever answers: "
            "--vs, --clock and --public do not go with --seek or --take"
        )
    if args.challenge and args.vs:
        raise CliError("a challenge seats you and the account you challenge: --vs does not go with it")
    return asyncio.run(_play(args))


async def _send_challenge(client: Any, args: argparse.Namespace, clock: dict[str, Any] | None) -> dict[str, Any]:
    """Challenge an account and wait for its answer: the `challenge_accepted` message (room,
    seat, token), or an error saying it was declined or lapsed."""
    challenge = await client.challenge(
        args.challenge, args.game, parse_option_pairs(args.option) or None, seats=args.seats, clock=clock
    )
    print(f"Challenged {challenge['to']} to {args.game}; waiting for an answer (Ctrl-C gives up)...", flush=True)
    deadline = asyncio.get_running_loop().time() + CHALLENGE_WAIT
    while True:
        left = deadline - asyncio.get_running_loop().time()
        try:
            message = await asyncio.wait_for(client.challenges.get(), max(left, 0.01))
        except TimeoutError:
            raise CliError(f"{challenge['to']} did not answer the challenge") from None
        if message.get("challenge") != challenge["id"]:
            continue  # news of another challenge
        if message["type"] == "challenge_declined":
            who, reason = message.get("by") or challenge["to"], message.get("reason")
            if reason == "left":
                raise CliError(f"{who} left without answering the challenge")
            if reason == "expired":
                raise CliError(f"{who} did not answer the challenge in time")
            reason = f" ({reason})" if reason not in (None, "", "declined") else ""
            raise CliError(f"{who} declined the challenge{reason}")
        if message["type"] == "challenge_accepted":
            return message


async def _await_challenge(client: Any, registry: Any, reader: Any) -> dict[str, Any]:
    """Show each challenge pushed to this account and ask whether to take it (on `reader`, the
    terminal's one line reader, which goes on to read the moves); the `accept` reply (room, seat,
    token) of the first one taken."""
    from partida.client import ServerError
    from partida.room.clocks import ClockSpec

    you = client.welcome["you"]
    if you.get("kind") == "guest":  # nobody can challenge a guest: waiting would be forever
        raise CliError("only accounts are challenged: log in with --name and --password to receive challenges")
    print(f"Waiting for challenges to {you['name']} (Ctrl-C stops)...", flush=True)
    while True:
        message = await client.challenges.get()
        if message["type"] != "challenge":
            continue
        offer = message["challenge"]
        known = offer["game"] in registry
        title = registry.get(offer["game"]).title if known else offer["game"]
        terms = ", ".join(f"{k}={v}" for k, v in (offer.get("options") or {}).items())
        spec = ClockSpec.parse(offer.get("clock")) if offer.get("clock") else None
        print(
            f"{offer['from']['name']} challenges you to {title}"
            + (f" ({terms})" if terms else "")
            + (f", clock {spec.describe()}" if spec else ", no clock")
        )
        if not known:
            print("This client does not know that game; declining.")
            await client.decline(offer["id"])
            continue
        try:
            answer = (await reader.ask("accept? (Y/n)> ")).strip().lower()
        except EOFError:
            await client.decline(offer["id"])
            raise CliError("input closed: the challenge was declined") from None
        try:
            if answer in ("", "y", "yes"):
                return await client.accept(offer["id"])
            await client.decline(offer["id"])
        except ServerError as exc:  # it lapsed meanwhile (its challenger left)
            print(exc.message)


async def _play(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from partida.client import Client, ConnectionLost, ServerError
    from partida.client.keyboard import LineReader
    from partida.client.terminal import TerminalPlayer

    registry = game_registry(args)
    clock = _clock(args.clock)
    game = None if args.room or args.accept or args.take is not None else known_game(registry, args.game)
    if args.vs and game is not None:
        seats = args.seats or game.min_seats
        if len(args.vs) >= seats:  # one --vs per other seat: a surplus is refused, never dropped
            raise CliError(f"{args.game} has {seats} seats here: at most {seats - 1} --vs, one for each other seat")
    name = args.name or getpass.getuser()
    try:
        client = await Client.connect(args.server, name=name, password=args.password)
    except ConnectionLost as exc:
        raise _connect_error(exc) from None
    except ServerError as exc:
        raise CliError(exc.message) from None
    reader = LineReader()  # one for the whole session: it may hold lines piped ahead
    server = "" if args.server == DEFAULT_SERVER else f" --server {args.server}"
    async with client:
        try:
            if args.room:
                try:
                    reply = await client.join(args.room, seat=args.seat, token=args.token)
                except ServerError as exc:
                    if exc.code not in ("already_started", "room_full"):
                        raise
                    raise CliError(f"{exc.message} (partida watch {args.room}{server})") from None
            elif args.accept:
                reply = await _await_challenge(client, registry, reader)
            elif args.challenge:
                reply = await _send_challenge(client, args, clock)
            elif args.seek:
                from rich.console import Console

                reply = await await_seek(client, args, Console())
            elif args.take is not None:
                from rich.console import Console

                reply = await take_seek(client, args.take, Console())
            else:
                assert game is not None  # known above: neither --room nor --accept
                seats = args.seats or game.min_seats
                me = args.seat if args.seat is not None else 0
                others = [s for s in range(seats) if s != me]
                bots = dict(zip(others, args.vs or [], strict=False))
                reply = await client.create_room(
                    args.game,
                    parse_option_pairs(args.option),
                    seats=args.seats,
                    public=args.public,
                    seat=me,
                    bots=bots,
                    clock=clock,
                )
        except ServerError as exc:
            raise CliError(exc.message) from None
        room = reply["summary"]
        game = known_game(registry, room["game"])
        player = TerminalPlayer(client, game, ask=reader.ask)
        player.on_room(room)
        player.console.print(
            f"Room [bold]{room['code']}[/bold]: {game.title}, you are {escape(player.seat_text(reply['seat']))}. "
            f"Seat token (to come back after a disconnect): {reply['token']}"
        )
        paired = args.challenge or args.seek or args.take is not None  # the other seat is someone's
        free = len(room["seats"]) - 1 - len(args.vs or []) - (1 if paired else 0)
        if room["status"] == "waiting" and free > 0 and not args.room and not args.accept:
            player.console.print(
                f"Waiting for players. Invite a friend: [bold]partida play --room {room['code']}{server}[/bold]"
                f" or in a browser: [bold]{browser_link(args.server, room['code'])}[/bold]",
                soft_wrap=True,  # a command to copy: on one line
            )
        elif room["status"] == "waiting":
            player.console.print("Waiting for the other players to take their seats...")
        code, seat, token, public = room["code"], reply["seat"], reply["token"], room["public"]
        player.console.print(escape(player.players_line([seat])))
        while True:
            comeback = comeback_command(code, token, server)
            try:
                final = await client.play(
                    code,
                    player.decide,
                    on_update=player.on_update,
                    on_error=player.on_error,
                    on_message=player.on_message,
                )
            except ConnectionLost:
                raise CliError(f"the connection to the server was lost; come back with: {comeback}") from None
            except EOFError:
                raise CliError(f"input closed; your seat is held; come back with: {comeback}") from None
            except asyncio.CancelledError:  # Ctrl-C: leave at once, say how to come back
                player.stop_countdown()
                print(f"\nYou left; your seat is held. Come back with: {comeback}", file=sys.stderr, flush=True)
                raise
            replay = replay_command(final["game_id"], args.server, public, game_files_flags(args))
            player.show_result(final, [seat], replay)
            rematch = await _ask_rematch(client, player, code)
            if rematch is None:
                return 0
            new_room, seat, token = rematch["new_room"], rematch["seat"], rematch["token"]
            code, public = new_room["code"], new_room["public"]
            player.on_room(new_room)
            player.console.print(f"Rematch in room [bold]{code}[/bold]: you are {escape(player.seat_text(seat))} now.")


async def _ask_rematch(client: Any, player: Any, code: str) -> dict[str, Any] | None:
    """Offer a rematch if the person wants one; the `rematch` message once everyone agreed."""
    from rich.markup import escape

    from partida.client import ServerError

    gone = [player.who(s) for s, connected in enumerate(player.connected) if connected is False]
    if gone:  # nobody would answer: a rematch offered to them waited for good
        player.console.print(f"[dim]{escape(', '.join(gone))} left: no rematch.[/dim]")
        return None
    try:
        answer = await player.ask("play again? (y/N)> ")
    except EOFError:
        return None
    if answer.strip().lower() not in ("y", "yes"):
        return None
    try:
        reply = await client.rematch(code)
    except ServerError as exc:
        player.console.print(f"[red]{exc.message}[/red]")
        return None
    if reply.get("rematch") is None:
        player.console.print("[dim]rematch offered; waiting for the other players to accept...[/dim]")
    while True:
        message = await client.next_message(code)
        if message["type"] == "rematch":
            return message
        if message["type"] == "room":
            player.on_room(message["summary"])


def run_watch(args: argparse.Namespace) -> int:
    from_invite_link(args)
    return asyncio.run(_watch(args))


async def _watch(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from partida.client import Client, ConnectionLost, ServerError
    from partida.client.terminal import TerminalPlayer

    try:
        client = await Client.connect(args.server)
    except ConnectionLost as exc:
        raise _connect_error(exc) from None
    async with client:
        try:
            reply = await client.watch(args.room)
        except ServerError as exc:
            raise CliError(exc.message) from None
        room = reply["summary"]
        player = TerminalPlayer(client, known_game(game_registry(args), room["game"]))
        player.on_room(room)
        player.console.print(f"Watching room [bold]{room['code']}[/bold]: {player.game.title}")
        player.console.print(escape(player.players_line([])))
        if room["status"] == "waiting":
            player.console.print("[dim]waiting for players to take the free seats...[/dim]")
        while True:
            message = await client.next_message(room["code"])
            if message["type"] != "update":
                player.on_message(message)  # players joining and leaving: names, not seat numbers
                continue
            player.on_update(message)
            if message["status"] == "finished":
                replay = replay_command(message["game_id"], args.server, room["public"], game_files_flags(args))
                player.show_result(message, [], replay)
                return 0


def run_match(args: argparse.Namespace) -> int:
    if args.games is None:
        # with --sprt the test says when to stop: the number of games is only its cap
        args.games = SPRT_MOST_GAMES if args.sprt is not None else 1
    if args.games < 1:
        raise CliError("--games must be at least 1")
    if args.parallel is not None and args.parallel < 1:
        raise CliError("--parallel must be at least 1")
    if not args.seat:
        raise CliError("give the agents: one --seat or --seat-cmd per seat, in seat order")
    args.server_given = args.server is not None
    args.server = args.server or DEFAULT_SERVER
    commands = [s for s in args.seat if not isinstance(s, str)]
    if args.local:
        if commands or args.server_given:
            raise CliError("--local plays in-process: --seat-cmd and --server play through a server")
        from partida.cli.match_local import run_local_match

        return run_local_match(args)
    if args.sprt is not None and not args.server_given and not commands:
        raise CliError(
            "--sprt needs --local (paired games in-process), --server URL (bots connected to a server) "
            "or --seat-cmd (bot programs on a server the match starts)"
        )
    from partida.cli.match_server import run_server_match

    return asyncio.run(run_server_match(args))


async def play_bot_game(
    client: Any,
    game: str,
    options: dict[str, Any],
    agents: list[str],
    clock: dict[str, Any] | None = None,
    on_room: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """One game between bots through the server, watched from `client`: the room is created
    unstarted so that the watcher sees every move, then started. `clock`: a time control;
    `on_room`: called with the room's summary whenever the server pushes it (seats that come
    and go)."""
    started = time.perf_counter()
    reply = await client.create_room(
        game, options, seats=len(agents), public=False, bots=dict(enumerate(agents)), auto_start=False, clock=clock
    )
    code = reply["room"]
    await client.watch(code)
    await client.start(code)
    while True:
        update = await client.next_message(code)
        if update["type"] == "room" and on_room is not None:
            on_room(update["summary"])
        if update["type"] == "update" and update["status"] == "finished":
            break
    from partida.client import ServerError

    with contextlib.suppress(ServerError):  # a connection watches a bounded number of rooms at once
        await client.leave(code)
    return {
        "game_id": update["game_id"],
        "room": code,
        "game": game,
        "seats": [{"seat": i, "agent": a} for i, a in enumerate(agents)],
        "result": update["result"],
        "moves": update["seq"],
        "seconds": round(time.perf_counter() - started, 3),
        "seed": update["seed"],
    }


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    agents: dict[str, dict[str, int]] = {}
    for record in records:
        ranks = record["result"]["ranks"]
        draw = len(record["result"]["winners"]) > 1
        for seat in record["seats"]:
            row = agents.setdefault(seat["agent"], {"games": 0, "wins": 0, "draws": 0, "losses": 0})
            row["games"] += 1
            if ranks[seat["seat"]] == 1:
                row["draws" if draw else "wins"] += 1
            else:
                row["losses"] += 1
    seconds = [r["seconds"] for r in records]
    return {
        "games": len(records),
        "agents": agents,
        "mean_seconds": round(sum(seconds) / len(seconds), 3) if seconds else 0.0,
        "mean_moves": round(sum(r["moves"] for r in records) / len(records), 1) if records else 0.0,
    }
