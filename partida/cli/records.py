"""`partida games` (stored games), `partida replay` (re-run one from its seed and actions),
`partida rules` (the games this installation knows) and `partida agents`."""

from __future__ import annotations

import argparse
import asyncio
from types import SimpleNamespace
from typing import Any

from partida.cli import CliError
from partida.cli.common import (
    add_db_flag,
    add_game_files_flags,
    add_json_flag,
    count,
    game_registry,
    known_game,
    missing_sqlite_file,
    print_json,
    server_url,
)


def register(sub: argparse._SubParsersAction) -> None:
    g = sub.add_parser("games", help="list stored games", description="List the games stored in the database.")
    g.add_argument("--game", default=None, help="only games of this kind")
    g.add_argument("--status", default=None, choices=["waiting", "playing", "finished", "aborted"])
    g.add_argument("--limit", type=count, default=50, help="at most this many (default: %(default)s)")
    g.add_argument("--player", default=None, help="only games where a seat bore this name (with --server)")
    add_db_flag(g)
    _add_remote_flag(g)
    add_json_flag(g)
    g.set_defaults(func=run_games)

    r = sub.add_parser(
        "replay",
        help="re-run a stored game",
        description="Re-run a stored game from its seed and actions, check the seed against the hash "
        "published at its start, and print the moves and the final position.",
    )
    r.add_argument("game_id", type=int)
    add_db_flag(r)
    _add_remote_flag(r)
    add_game_files_flags(r)
    add_json_flag(r)
    r.set_defaults(func=run_replay)

    k = sub.add_parser(
        "rules",
        help="list the games this installation can play, or show one game's rules",
        description="Without a game: one line per game. With one: its rules text, seats and options.",
    )
    k.add_argument("game", nargs="?", default=None, help="show this game's rules")
    add_json_flag(k)
    k.set_defaults(func=run_rules)

    a = sub.add_parser("agents", help="list the bot agents")
    add_json_flag(a)
    a.set_defaults(func=run_agents)


def _add_remote_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--server",
        default=None,
        type=server_url,
        metavar="URL",
        help="ask a running server (ws://HOST:PORT) instead of reading a database on this machine",
    )


async def _ask_server(url: str, work):  # type: ignore[no-untyped-def]
    from partida.client import Client, ConnectionLost, ServerError

    try:
        async with await Client.connect(url, name=None) as client:
            return await work(client)
    except ConnectionLost as exc:
        raise CliError(str(exc)) from None
    except ServerError as exc:
        raise CliError(exc.message) from None


async def with_store(db_url: str | None, work, remote: bool = True):  # type: ignore[no-untyped-def]
    from partida.storage.database import Database, StorageError, default_url, normalize_url
    from partida.storage.store import Store

    url = normalize_url(db_url or default_url())
    missing = missing_sqlite_file(url)
    if missing is not None:
        instead = ", or ask the server with --server ws://HOST:PORT" if remote else ""
        raise CliError(
            f"there is no database at {missing} (reading one must not create it): "
            f"give --db the server's database{instead}"
        )
    try:
        db = await Database.open(url)
    except StorageError as exc:
        raise CliError(str(exc)) from None
    try:
        return await work(Store(db))
    finally:
        await db.close()


def run_games(args: argparse.Namespace) -> int:
    if args.server is not None:
        listed = asyncio.run(
            _ask_server(args.server, lambda c: c.games(args.player, args.game, args.status, args.limit))
        )
        rows = [
            {
                "id": g["game_id"],
                "game": g["game"],
                "status": g["status"],
                "room": g["room"] or "(private)",
                "seats": [s["name"] for s in g["seats"]],
                "kinds": [s.get("kind") for s in g["seats"]],
                "moves": g["moves"],
                "result": g["result"],
                "created_at": g["created_at"],
            }
            for g in listed
        ]
    else:
        rows = _stored_rows(args)
    if args.json:
        print_json(rows)
        return 0
    _print_games(rows)
    return 0


def _stored_rows(args: argparse.Namespace) -> list[dict[str, Any]]:
    games = asyncio.run(
        with_store(args.db, lambda s: s.list_games(args.limit, args.game, args.status, player=args.player))
    )
    return [
        {
            "id": g.id,
            "game": g.game,
            "status": g.status,
            "room": g.room_code,
            "seats": [name for _, _, name in g.seat_list],
            "kinds": [g.seat_kinds.get(seat, "guest") for seat, _, _ in g.seat_list],
            "versions": [g.seat_versions.get(seat) for seat, _, _ in g.seat_list],  # a hosted bot's version
            "moves": g.action_count,
            "result": g.result,
            "created_at": g.created_at.isoformat() if g.created_at else None,
        }
        for g in games
    ]


def winners_text(result: dict[str, Any] | None, names: list[str | None] | dict[int, str]) -> str:
    """Who won, by name: "ada", "ada, bob", "draw" (every seat first), "" (no result)."""
    winners = (result or {}).get("winners") or []
    if not winners:
        return ""
    seats = len((result or {}).get("ranks") or names)
    if len(winners) == seats > 1:
        return "draw"
    known = dict(enumerate(names)) if isinstance(names, list) else names
    return ", ".join(known.get(seat) or f"seat {seat}" for seat in winners)


def _print_games(rows: list[dict[str, Any]]) -> None:
    from rich.table import Table

    from partida.cli.common import print_table
    from partida.client.terminal import SEAT_MARKS

    table = Table("id", "game", "status", "room", "players", "moves", "winners", "created")
    for row in rows:
        winners = winners_text(row["result"], row["seats"])
        table.add_row(
            str(row["id"]),
            row["game"],
            row["status"],
            row["room"],
            " vs ".join(
                (n or "-") + SEAT_MARKS.get(kind, "") for n, kind in zip(row["seats"], row["kinds"], strict=False)
            ),
            str(row["moves"]),
            winners,
            (row["created_at"] or "")[:19],
        )
    print_table(table)


def replay_stored(stored: Any, registry: Any = None) -> dict[str, Any]:
    """Re-run a stored game through the rules and check it (`partida.room.record.verify`);
    `registry`: the games known here, default the installation's."""
    from partida.games.registry import default_registry
    from partida.room.record import Unreplayable, verify

    try:
        return verify(known_game(registry or default_registry(), stored.game), stored)
    except Unreplayable as exc:
        raise CliError(str(exc)) from None


def run_replay(args: argparse.Namespace) -> int:
    async def load(store):  # type: ignore[no-untyped-def]
        stored = await store.load_game(args.game_id)
        if stored is None:
            return None, []
        # its chat as its replay shows it (partida/room/chat.py)
        channels = replay_channels(stored.status in ("finished", "aborted"))
        return stored, [line.to_data() for line in await store.chat.history(("game", stored.id), channels)]

    from partida.room.chat import replay_channels

    stored, chat = asyncio.run(
        _ask_server(args.server, _fetch_finished(args.game_id)) if args.server else with_store(args.db, load)
    )
    if stored is None:
        raise CliError(f"there is no game {args.game_id} in the database")
    data = replay_stored(stored, game_registry(args))
    data["chat"] = chat
    # A seed that does not match the hash published at the start, or a stored result the rules do
    # not give, means the record is not the game that was played: say so in the exit status.
    failed = not data["seed_verified"] or data["result_verified"] is False
    if args.json:
        print_json(data)
        return 1 if failed else 0
    print(f"Game {data['id']}: {data['game']} ({data['status']}), options {data['options']}")
    if data["seed"] is not None:
        check = "matches" if data["seed_verified"] else "DOES NOT MATCH"
        print(f"Seed {data['seed']} {check} the hash published at the start ({data['seed_hash'][:16]}...)")
    names = {seat: name for seat, _, name in stored.seat_list}
    if names:
        print("Players: " + ", ".join(f"seat {seat} {names[seat]}" for seat in sorted(names)))
    for i, move in enumerate(data["moves"], 1):
        seat = move.get("by", move["seat"])  # a takeback (seat -1) is told after its asker
        who = f"seat {seat} ({names[seat]})" if seat in names else f"seat {seat}"
        mark = " (taken back)" if move.get("taken_back") else ""
        print(f"{i:4d}. {who}: {move['text']}{mark}")
    if "transcript" in data:
        print(f"Transcript: {data['transcript']}")
    print(data["picture"])
    if data["result"]:
        won = winners_text(data["result"], names)
        print(f"Result: scores {data['result']['scores']}, " + ("a draw" if won == "draw" else f"won by {won}"))
    elif data["result_verified"] is False:
        print(f"The stored moves DO NOT END THE GAME its stored result says the rules ended: {stored.result}")
    elif stored.result or stored.status == "aborted":
        ended = stored.result or {"reason": "aborted", "winners": []}
        won = winners_text(ended, names)
        print(f"Ended ({ended['reason']}): " + ("a draw" if won == "draw" else f"won by {won}" if won else "no result"))
    if data["result_verified"] is False and data["result"]:
        print(f"The STORED RESULT DIFFERS from the replay: {data['stored_result']}")
    if not data["seed_verified"] and data["seed"] is None:
        print("The stored seed DOES NOT MATCH the hash published at the start.")
    for line in data["chat"]:
        print(f"Chat ({line['channel']}) {line['name']}: {line['text']}")
    return 1 if failed else 0


def _fetch_finished(game_id: int):  # type: ignore[no-untyped-def]
    """Read a finished game from a server, in the shape of a stored one, so that it is re-run and
    its seed checked here, on the player's machine, not taken on the server's word."""

    async def fetch(client):  # type: ignore[no-untyped-def]
        record = await client.game(game_id)
        if record["status"] != "finished":
            raise CliError(f"game {game_id} is {record['status']}: only finished games replay (watch a live one)")
        return as_stored(record), list(record.get("chat", []))

    return fetch


def as_stored(record: dict[str, Any]) -> SimpleNamespace:
    """A finished game as a server's `game` request sends it, in the shape of a stored one
    (what `replay_stored` and `partida.room.record.verify` read)."""
    return SimpleNamespace(
        id=record["game_id"],
        game=record["game"],
        options=record["options"],
        seats=record["seats_count"],
        seed=int(record["seed"]),
        seed_hash=record["seed_hash"],
        status=record["status"],
        result=record["result"],
        actions=[(move["seat"], move["action"]) for move in record["log"]],
        seat_list=[(s["seat"], None, s["name"]) for s in record["seats"] if s.get("name")],
    )


def run_rules(args: argparse.Namespace) -> int:
    from partida.games.registry import default_registry

    games = [g.describe() for g in default_registry().games()]
    if args.game is not None:
        chosen = [g for g in games if g["name"] == args.game.lower()]
        if not chosen:
            raise CliError(f"unknown game {args.game!r} (known: {', '.join(g['name'] for g in games)})")
        games = chosen
    if args.json:
        print_json(games)
        return 0
    if args.game is not None:
        import textwrap

        g = games[0]
        seats = g["min_seats"] if g["min_seats"] == g["max_seats"] else f"{g['min_seats']}-{g['max_seats']}"
        print(f"{g['title']} ({g['name']}, {seats} players)\n")
        print(textwrap.fill(g["description"] or "(no rules text)", 88) + "\n")
        for o in g["options"]:
            print(f"  --option {o['name']}=VALUE   {o.get('help', '')} (default {o['default']})")
        return 0
    for g in games:
        seats = g["min_seats"] if g["min_seats"] == g["max_seats"] else f"{g['min_seats']}-{g['max_seats']}"
        options = ", ".join(f"{o['name']}={o['default']}" for o in g["options"])
        print(f"{g['name']:20} {g['title']} ({seats} players){'; options: ' + options if options else ''}")
    return 0


def run_agents(args: argparse.Namespace) -> int:
    from partida.bots.registry import all_agents

    specs = all_agents().values()
    rows = [{"name": s.name, "help": s.help, "games": sorted(s.games) if s.games else None} for s in specs]
    if args.json:
        print_json(rows)
        return 0
    for row in sorted(rows, key=lambda r: r["name"]):
        games = f" [{', '.join(row['games'])}]" if row["games"] else ""
        print(f"{row['name']:20} {row['help']}{games}")
    return 0
