"""`partida db`: bring a database's schema up to date and create accounts.

Each handler is a plain function that runs one coroutine with `asyncio.run`, and turns storage
problems (bad URL, unreachable server, taken name) into `CliError`, so people see one sentence.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import shlex
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from partida.cli import CliError
from partida.cli.common import add_db_flag

if TYPE_CHECKING:
    from partida.storage.database import Database

T = TypeVar("T")


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    db = subparsers.add_parser("db", help="create or upgrade the database, create accounts")
    sub = db.add_subparsers(dest="db_command", metavar="DB_COMMAND", required=True)

    up = sub.add_parser("upgrade", help="apply the schema migrations (the server also does this when it starts)")
    add_db_flag(up)
    up.set_defaults(func=run_upgrade)

    bot = sub.add_parser("create-bot", help="create a bot account, or give an existing bot a new token")
    bot.add_argument("name", help="the bot's account name")
    add_db_flag(bot)
    bot.set_defaults(func=run_create_bot)

    user = sub.add_parser("create-user", help="create an account for a person")
    user.add_argument("name", help="the account name")
    user.add_argument("--password", default=None, help="the password (default: ask for it without echoing)")
    user.add_argument(
        "--password-stdin",
        action="store_true",
        help="read the password from the first line of standard input (for scripts; nothing is echoed)",
    )
    add_db_flag(user)
    user.set_defaults(func=run_create_user)

    invite = sub.add_parser(
        "invite", help="make a sign-up invite code (for `partida serve --sign-up invite`); printed once"
    )
    invite.add_argument("--uses", type=int, default=1, help="how many accounts the code may make (default: 1)")
    add_db_flag(invite)
    invite.set_defaults(func=run_invite)
    from partida.cli import db_chat  # chat's removals and silences (its own module)

    db_chat.register(sub)


def with_db(db_url: str | None, work: Callable[[Database], Awaitable[T]]) -> T:
    """Open (and migrate) the database, run `work`, close it; storage errors become `CliError`."""
    from partida.storage.database import Database, StorageError

    async def main() -> T:
        db = await Database.open(db_url)
        try:
            return await work(db)
        finally:
            await db.close()

    try:
        return asyncio.run(main())
    except StorageError as exc:
        raise CliError(str(exc)) from None


def run_upgrade(args: argparse.Namespace) -> int:
    async def work(db: Database) -> str | None:
        return await db.revision()

    from partida.storage.database import default_url, mask_url, normalize_url

    url = args.db or default_url()
    revision = with_db(url, work)
    print(f"The database at {mask_url(normalize_url(url))} is at schema revision {revision} (the newest).")
    return 0


def run_create_bot(args: argparse.Namespace) -> int:
    from partida.storage.store import Store

    async def work(db: Database) -> tuple[str, bool]:
        store = Store(db)
        existed = await store.get_account_by_name(args.name) is not None
        _, token = await store.create_bot(args.name)
        return token, existed

    token, existed = with_db(args.db, work)
    verb = "has a new token (the old one no longer works)" if existed else "is created"
    print(f"Bot {args.name!r} {verb}. Its token is shown only this once; keep it secret:")
    print(token)
    print("Run it with: PARTIDA_BOT_TOKEN=<token> partida bot AGENT --name " + shlex.quote(args.name))
    return 0


def run_create_user(args: argparse.Namespace) -> int:
    from partida.storage.store import Store

    password = args.password
    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    elif password is None:
        if not sys.stdin.isatty():
            raise CliError(
                "no terminal to ask for the password: pass --password-stdin (or --password); nothing was created."
            )
        try:
            password = getpass.getpass(f"Password for {args.name}: ")
            again = getpass.getpass("Repeat it: ")
        except EOFError:  # Ctrl-D at the prompt
            raise CliError("no password was typed; nothing was created.") from None
        if password != again:
            raise CliError("the two passwords differ; nothing was created.")
    from partida.storage.accounts import check_password_rule

    problem = check_password_rule(password)
    if problem is not None:
        raise CliError(f"{problem}; nothing was created.")

    async def work(db: Database) -> int:
        account = await Store(db).create_user(args.name, password)
        return account.id

    account_id = with_db(args.db, work)
    print(f"User {args.name!r} is created (account {account_id}).")
    return 0


def run_invite(args: argparse.Namespace) -> int:
    from partida.storage.invites import MAX_USES, InviteStore

    if not 1 <= args.uses <= MAX_USES:
        raise CliError(f"--uses is 1 to {MAX_USES}; no code was made.")

    async def work(db: Database) -> str:
        return await InviteStore(db).create(args.uses)

    code = with_db(args.db, work)
    uses = "one sign-up" if args.uses == 1 else f"{args.uses} sign-ups"
    print(f"An invite code for {uses} (shown only this once; only its hash is kept):")
    print(code)
    print("The person enters it in the browser's sign-up form (or a client's hello sends it as `invite`).")
    return 0
