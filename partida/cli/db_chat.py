"""`partida db chat`, `partida db chat-remove` and `partida db silence`: the operator's hand on
chat. They write the database only; a running server reads removals and silences back within
seconds (`partida/server/services/chat.py`), so no command has to reach it."""

from __future__ import annotations

import argparse
import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from partida.cli import CliError
from partida.cli.common import add_db_flag

if TYPE_CHECKING:
    from partida.storage.chat import ChatLine
    from partida.storage.database import Database

_SPAN = re.compile(r"^(\d+(?:\.\d+)?)\s*([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    listing = sub.add_parser("chat", help="list chat lines with their ids (of a game, a tournament or an account)")
    where = listing.add_mutually_exclusive_group(required=True)
    where.add_argument("--game", type=int, metavar="ID", help="a game's lines, both channels")
    where.add_argument("--tournament", metavar="NAME", help="a tournament's lines")
    where.add_argument("--account", metavar="NAME", help="an account's newest lines")
    add_db_flag(listing)
    listing.set_defaults(func=run_chat)

    remove = sub.add_parser("chat-remove", help="remove a chat line from live views and replays")
    remove.add_argument("id", type=int, help="the line's id (see `partida db chat`)")
    add_db_flag(remove)
    remove.set_defaults(func=run_chat_remove)

    silence = sub.add_parser("silence", help="stop an account from chatting (for good, or until a time)")
    silence.add_argument("name", nargs="?", help="the account's name")
    silence.add_argument(
        "--until", default=None, metavar="WHEN", help="a time (2026-12-01T18:00, UTC) or a span from now (30m, 12h, 7d)"
    )
    silence.add_argument("--lift", action="store_true", help="let the account chat again")
    silence.add_argument("--list", action="store_true", help="list the silenced accounts")
    add_db_flag(silence)
    silence.set_defaults(func=run_silence)


def parse_until(text: str, now: datetime) -> datetime:
    """`--until`: a span from `now` (`30m`, `12h`, `7d`, `2w`) or an ISO time (UTC unless it
    says otherwise)."""
    span = _SPAN.match(text.strip())
    if span:
        return now + timedelta(**{_UNITS[span.group(2)]: float(span.group(1))})
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise CliError(f"--until takes a span (30m, 12h, 7d, 2w) or a time (2026-12-01T18:00), not {text!r}") from None
    when = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    if when <= now:
        raise CliError(f"--until {text} is already past")
    return when


def line_text(line: ChatLine) -> str:
    kind, ident = line.where
    where = f"game {ident}" if kind == "game" else f"tournament {ident}"
    removed = "  [removed]" if line.removed else ""
    return f"{line.id:>7}  {line.at:%Y-%m-%d %H:%M}  {where} {line.channel:<10} {line.name}: {line.text}{removed}"


def run_chat(args: argparse.Namespace) -> int:
    from partida.cli.db import with_db
    from partida.room.chat import ROOM_CHANNELS, TOURNAMENT
    from partida.storage.chat import ChatStore
    from partida.storage.store import Store

    async def work(db: Database) -> list[ChatLine]:
        chat = ChatStore(db)
        if args.game is not None:
            return await chat.history(("game", args.game), ROOM_CHANNELS, limit=10_000, removed=True)
        if args.tournament is not None:
            tournament_id = await chat.tournament_id(args.tournament)
            if tournament_id is None:
                raise CliError(f"there is no tournament named {args.tournament!r}")
            return await chat.history(("tournament", tournament_id), (TOURNAMENT,), limit=10_000, removed=True)
        account = await Store(db).get_account_by_name(args.account)
        if account is None:
            raise CliError(f"there is no account named {args.account!r}")
        return await chat.by_account(account.id, limit=200)

    lines = with_db(args.db, work)
    for line in lines:
        print(line_text(line))
    if not lines:
        print("No chat lines.")
    return 0


def run_chat_remove(args: argparse.Namespace) -> int:
    from partida.cli.db import with_db
    from partida.storage.chat import ChatStore

    async def work(db: Database) -> ChatLine | None:
        return await ChatStore(db).remove(args.id)

    line = with_db(args.db, work)
    if line is None:
        raise CliError(f"there is no chat line {args.id}")
    print(f"Removed: {line_text(line)}")
    print("A running server takes it out of live views within seconds; replays no longer show it.")
    return 0


def run_silence(args: argparse.Namespace) -> int:
    from partida.cli.db import with_db
    from partida.storage.chat import ChatStore
    from partida.storage.models import utcnow
    from partida.storage.store import Store

    if args.list:

        async def listing(db: Database) -> list[tuple[str, datetime | None]]:
            return await ChatStore(db).silences()

        silenced = with_db(args.db, listing)
        for name, until in silenced:
            print(f"{name}: {'for good' if until is None else f'until {until:%Y-%m-%d %H:%M} UTC'}")
        if not silenced:
            print("No account is silenced.")
        return 0
    if not args.name:
        raise CliError("name the account to silence (or --list)")
    until = None if args.until is None else parse_until(args.until, utcnow())

    async def work(db: Database) -> bool:
        account = await Store(db).get_account_by_name(args.name)
        if account is None:
            raise CliError(f"there is no account named {args.name!r}")
        chat = ChatStore(db)
        if args.lift:
            return await chat.unsilence(account.id)
        await chat.silence(account.id, until)
        return True

    done = with_db(args.db, work)
    if args.lift:
        print(f"{args.name} may chat again." if done else f"{args.name} was not silenced.")
    else:
        span = "for good" if until is None else f"until {until:%Y-%m-%d %H:%M} UTC"
        print(f"{args.name} is silenced {span}; a running server refuses its chat within seconds.")
    return 0
