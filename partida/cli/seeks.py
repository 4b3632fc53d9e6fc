"""Quick pairing from the terminal: `partida seeks` lists the lobby's seeks, and the helpers
`partida play --seek` and `--take` use to post a seek (or take one) and wait for the room."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from typing import Any

from partida.cli import CliError
from partida.cli.common import add_json_flag, add_server_flag

CANCEL_WAIT = 3.0  # seconds Ctrl-C waits for the server to confirm a cancelled seek


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "seeks",
        help="list the lobby's seeks (games people are looking for)",
        description="List the open seeks of a server, oldest first: who seeks which game, with which clock, "
        "rated or casual, the rating range they accept and whether bots may answer. Take one with "
        "`partida play --take ID`, or post your own with `partida play GAME --seek 5+3`.",
    )
    p.add_argument("--game", default=None, help="only this game's seeks")
    add_server_flag(p)
    add_json_flag(p)
    p.set_defaults(func=run_seeks)


def seek_clock(text: str) -> dict[str, Any]:
    """`--seek`'s time control, in the notation of every clock (room/clock_notation.py): `5+3` is
    5 minutes and 3 seconds a move."""
    from partida.room.clock_notation import BadClockText, clock_data

    try:
        return clock_data(text)
    except BadClockText as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def rating_range(text: str) -> tuple[float, float]:
    """`--range 1400-1600`: the ratings an opponent may have, bounds included."""
    low, dash, high = text.strip().partition("-")
    try:
        if not dash:
            raise ValueError(text)
        bounds = float(low), float(high)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a rating range: write LOW-HIGH (1400-1600)") from None
    if bounds[0] > bounds[1]:
        raise argparse.ArgumentTypeError(f"the range {text} is empty: write the lower rating first")
    return bounds


def describe(seek: dict[str, Any]) -> str:
    """A seek in a few words: `rated 5+3 othello (blitz), 1400-1600, bots welcome`."""
    clock = _clock_words(seek)
    kind = f" ({seek['class']})" if seek.get("class") else ""
    words = [f"{'rated' if seek.get('rated') else 'casual'} {clock} {seek['game']}{kind}"]
    if seek.get("range"):
        low, high = seek["range"]
        words.append(f"ratings {low:g}-{high:g}")
    if seek.get("allow_bots"):
        words.append("bots welcome")
    return ", ".join(words)


def _clock_words(seek: dict[str, Any]) -> str:
    """A seek's clock as every clock is written (5+3: minutes and seconds a move); a clock per
    move in words, which read better in a sentence than `move:30`."""
    from partida.room.clock_notation import clock_text

    clock = seek.get("clock") or {}
    return f"{clock['per_move']:g} s a move" if clock.get("per_move") else clock_text(seek.get("clock"))


async def await_seek(client: Any, args: argparse.Namespace, console: Any) -> dict[str, Any]:
    """Post the seek `args` describe and wait for its room: the `seek_paired` message (room,
    summary, seat, token, opponent). Ctrl-C cancels the seek on the server before leaving."""
    from partida.client import ServerError

    options = _options(args)
    try:
        posted = await client.seek(
            args.game,
            options or None,
            seats=args.seats,
            clock=args.seek,
            rated=args.rated,
            rating_range=args.range,
            allow_bots=args.bots,
        )
    except ServerError as exc:
        raise CliError(exc.message) from None
    seek = posted["seek"]
    if not posted["paired"]:
        console.print(
            f"Seeking a {describe(seek)} (seek {seek['id']}): waiting for an opponent. Ctrl-C cancels the seek.",
            soft_wrap=True,
        )
    try:
        message = await _paired(client, seek["id"], console)
        console.print(f"Paired with {message['opponent']}.")
        return message
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.seek_cancel(seek["id"]), CANCEL_WAIT)
        print("\nSeek cancelled.", file=sys.stderr, flush=True)
        raise


async def _paired(client: Any, seek_id: int, console: Any) -> dict[str, Any]:
    """The `seek_paired` of seek `seek_id`; on a terminal, a spinner counts the wait meanwhile."""

    async def paired() -> dict[str, Any]:
        while True:
            message = await client.seek_events.get()
            if message.get("seek") == seek_id:
                return message

    if not console.is_terminal:
        return await paired()
    started = time.monotonic()
    waiting = asyncio.ensure_future(paired())
    try:
        with console.status("") as status:
            while not waiting.done():
                seconds = int(time.monotonic() - started)
                status.update(f"waiting for an opponent: {seconds // 60}:{seconds % 60:02d}")
                await asyncio.wait({waiting}, timeout=1.0)
        return waiting.result()
    finally:
        waiting.cancel()


async def take_seek(client: Any, seek_id: int, console: Any) -> dict[str, Any]:
    from partida.client import ServerError

    try:
        reply = await client.seek_take(seek_id)
    except ServerError as exc:
        raise CliError(exc.message) from None
    console.print(f"Took seek {seek_id}. Paired with {reply['opponent']}.")
    return reply


def _options(args: argparse.Namespace) -> dict[str, Any]:
    from partida.cli.common import parse_option_pairs

    return parse_option_pairs(args.option)


def run_seeks(args: argparse.Namespace) -> int:
    return asyncio.run(_list(args))


async def _list(args: argparse.Namespace) -> int:
    from partida.client import Client, ConnectionLost, ServerError

    try:
        client = await Client.connect(args.server)
    except ConnectionLost as exc:
        raise CliError(f"{exc}. Is the server running? Start one with `partida serve`.") from None
    async with client:
        try:
            seeks = await client.list_seeks(args.game)
        except ServerError as exc:
            raise CliError(exc.message) from None
    if args.json:
        print(json.dumps(seeks, indent=2))
        return 0
    if not seeks:
        where = f" for {args.game}" if args.game else ""
        print(f"No open seeks{where}. Post one: partida play GAME --seek 5+3")
        return 0
    from rich import box
    from rich.table import Table

    from partida.cli.common import print_table

    table = Table(box=box.SIMPLE_HEAD)
    for column in ("id", "by", "rating", "game", "terms", "range", "bots"):
        table.add_column(column, no_wrap=True)
    for seek in seeks:
        kind = seek["by"]["kind"]
        by = seek["by"]["name"] + (f" ({kind})" if kind in ("bot", "guest") else "")  # a user is no mark
        rating = "-" if seek.get("rating") is None else f"{seek['rating']:.0f}{'?' if seek.get('provisional') else ''}"
        terms = f"{'rated' if seek['rated'] else 'casual'} {_clock_words(seek)}"
        terms += f" {seek['class']}" if seek.get("class") else ""
        bounds = "-" if not seek.get("range") else "{:g}-{:g}".format(*seek["range"])
        table.add_row(str(seek["id"]), by, rating, seek["game"], terms, bounds, "yes" if seek["allow_bots"] else "no")
    print_table(table)
    print("Take one: partida play --take ID")
    return 0
