"""`partida export`: a stored game as a file (its text record, Othello's GGF, or the JSON its
replay loads), read from the database as `partida games` does or asked of a server; and a
tournament's games as one file."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from partida.cli import CliError
from partida.cli.common import add_db_flag, known_game, server_url


def register(sub: argparse._SubParsersAction) -> None:
    e = sub.add_parser(
        "export",
        help="write a stored game (or a tournament's games) as a file",
        description="Write a stored game as a file: its record as text (Othello: GGF, which NBoard reads; other "
        "games: PGN-style tags and one line per move) or the JSON a replay loads. From this machine's database, "
        "or from a server with --server (a public game, or your own).",
    )
    e.add_argument("game_id", type=int, nargs="?", default=None, help="the game's id (partida games lists them)")
    e.add_argument("--tournament", default=None, metavar="NAME", help="every game of this tournament, in one file")
    e.add_argument("--format", choices=["text", "json"], default="text", help="text (default) or json")
    e.add_argument("-o", "--output", default=None, metavar="FILE", help="write here instead of to standard output")
    add_db_flag(e)
    e.add_argument(
        "--server",
        default=None,
        type=server_url,
        metavar="URL",
        help="ask a running server (ws://HOST:PORT) instead of reading a database on this machine",
    )
    e.set_defaults(func=run_export)


def run_export(args: argparse.Namespace) -> int:
    if (args.game_id is None) == (args.tournament is None):
        raise CliError("name one game (GAME_ID) or --tournament NAME")
    if args.server is not None:
        if args.tournament is not None:
            raise CliError("--tournament reads the database: run it where the server's database is (--db)")
        content = asyncio.run(_from_server(args.server, args.game_id, args.format))
    else:
        from partida.cli.records import with_store

        content = asyncio.run(with_store(args.db, lambda store: _from_store(store, args)))
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(content)
    else:
        sys.stdout.write(content)
    return 0


async def _from_server(url: str, game_id: int, fmt: str) -> str:
    from partida.cli.records import _ask_server

    async def ask(client: Any) -> str:
        return (await client.export(game_id, fmt))["content"]

    return await _ask_server(url, ask)


async def _from_store(store: Any, args: argparse.Namespace) -> str:
    if args.tournament is None:
        stored = await store.load_game(args.game_id)
        if stored is None:
            raise CliError(f"there is no game {args.game_id} in the database")
        return exported(stored, args.format)
    from partida.storage.tournaments import TournamentStore

    tournaments = TournamentStore(store.db)
    info = await tournaments.get(args.tournament)
    if info is None:
        raise CliError(f"there is no tournament {args.tournament!r}")
    parts = []
    for table in await tournaments.tables(info.id):
        if table.game_id is None:
            continue  # a bye: no game
        stored = await store.load_game(table.game_id)
        if stored is not None:
            parts.append((table.round, stored))
    if args.format == "json":
        import json

        records = [_record(stored) for _, stored in parts]
        return json.dumps({"tournament": info.name, "games": records}, ensure_ascii=False, indent=1) + "\n"
    return "\n".join(exported(stored, "text", event=info.name, round=round) for round, stored in parts)


def _record(stored: Any) -> dict[str, Any]:
    from partida.games.registry import default_registry
    from partida.protocol import ProtocolError
    from partida.server import history

    game = known_game(default_registry(), stored.game)
    try:
        return history.record(stored, game, None, steps=True)
    except ProtocolError as exc:  # a log its game's rules, changed since, refuse
        raise CliError(exc.message) from None


def exported(stored: Any, fmt: str, *, event: str | None = None, round: int | None = None) -> str:
    """One stored game as its file: the record a `game` request with steps sends (the operator
    reads the database, as `partida games` does), as text or JSON."""
    from partida.games.registry import default_registry
    from partida.room import export

    record = _record(stored)
    if fmt == "json":
        return export.as_json(record)
    game = known_game(default_registry(), stored.game)
    return export.text(record, game, event=event, round=round, rated=stored.rated)
