"""Flags and helpers shared by the subcommands (no `register`: this module adds no command)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

DEFAULT_SERVER = os.environ.get("PARTIDA_SERVER", "ws://127.0.0.1:8765")


def server_url(text: str) -> str:
    """`--server`'s value: a websocket URL (`partida bot` also takes several, comma-separated:
    the nodes of one deployment). The address people have at hand is the browser's
    (http://HOST:PORT/); the websocket is served on the same port, so name the URL to write."""
    for part in text.split(","):
        url = urlsplit(part.strip())
        try:
            url.port  # noqa: B018 (a port that is not a number raises)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{part.strip()!r} has a port that is not a number") from None
        if url.scheme.lower() in ("ws", "wss") and url.hostname:
            continue
        if url.scheme.lower() in ("http", "https") and url.hostname:
            secure = "s" if url.scheme.lower() == "https" else ""
            raise argparse.ArgumentTypeError(
                f"{part.strip()!r} is the address for a browser; the server's websocket URL is "
                f"ws{secure}://{url.netloc}"
            )
        raise argparse.ArgumentTypeError(f"{part.strip()!r} is not a server URL: write ws://HOST:PORT")
    return text.strip()


def add_server_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--server",
        default=DEFAULT_SERVER,
        type=server_url,
        metavar="URL",
        help="the server's websocket URL (default: $PARTIDA_SERVER or %(default)s)",
    )


# What matplotlib writes without extra packages.
IMAGE_SUFFIXES = (".png", ".svg", ".svgz", ".pdf", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".eps", ".ps")


def output_file(text: str) -> Path:
    """A file to write, checked when the command is read: a folder that is not there failed
    only once the work was done, with a traceback."""
    path = Path(text)
    if not path.parent.is_dir():
        raise argparse.ArgumentTypeError(f"cannot write {text}: the folder {path.parent} does not exist")
    return path


def image_file(text: str) -> Path:
    """`output_file`, and a kind of image a plot can be written as; a name without a suffix
    gets `.png`, as matplotlib would add, so that the file named afterwards is the one written."""
    path = output_file(text)
    if not path.suffix:
        return path.with_name(path.name + ".png")
    if path.suffix.lower() not in IMAGE_SUFFIXES:
        raise argparse.ArgumentTypeError(f"cannot draw {text} as a {path.suffix} file: name a .png, .svg or .pdf file")
    return path


def count(text: str) -> int:
    """A number of things to show, 1 or more: SQLite reads LIMIT -1 as no limit at all."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"at least 1, not {value}")
    return value


def add_game_files_flags(parser: argparse.ArgumentParser, verb: str = "know") -> None:
    """Games described in files (RECYCLE), with the same flags wherever they are given: the server
    and a ladder load them (`verb` "load"), and a client or a bot must know a game to play it."""
    parser.add_argument(
        "--game-file",
        action="append",
        type=Path,
        default=[],
        metavar="FILE",
        help=f"{verb} the game this file describes",
    )
    parser.add_argument(
        "--games-dir", action="append", type=Path, default=[], metavar="DIR", help=f"{verb} every game described here"
    )


def game_registry(args: argparse.Namespace) -> Any:
    """The games known here: the installation's and those of `--game-file`/`--games-dir`."""
    from partida.cli import CliError
    from partida.games.registry import GameLoadError, default_registry

    try:
        return default_registry(args.game_file, args.games_dir)
    except GameLoadError as exc:
        raise CliError(str(exc)) from None


def known_game(registry: Any, name: str) -> Any:
    """The game `name` as known here; an error saying how to know one a server loads from a file."""
    from partida.cli import CliError
    from partida.games.registry import UnknownGame

    try:
        return registry.get(name)
    except UnknownGame as exc:
        raise CliError(f"{exc.args[0]}; for a game the server loads from a file, give it: --game-file FILE") from None


def add_db_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        default=None,
        metavar="URL",
        help="database URL: a SQLite file path or sqlite:///FILE, or postgresql://... "
        "(default: $PARTIDA_DB or ./partida.db)",
    )


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON for programs instead of tables")


def add_log_flag(parser: argparse.ArgumentParser, default: str = "warning") -> None:
    parser.add_argument(
        "--log-level",
        default=default,
        choices=["debug", "info", "warning", "error"],
        help="how much to log to stderr (default: %(default)s)",
    )


def setup_logging(level: str) -> None:
    if level != "debug":
        logging.getLogger("alembic").setLevel(logging.WARNING)  # migrations narrate every step at INFO
        # two lines per connection at INFO: a flood of connections would be a flood of log
        logging.getLogger("websockets").setLevel(logging.WARNING)
    logging.basicConfig(
        level=level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )


def missing_sqlite_file(db_url: str | None) -> str | None:
    """The SQLite file `db_url` names when it is not there (None otherwise): a command that only
    reads must say so, not create an empty database and report it empty."""
    from partida.storage.database import default_url, sqlite_file

    database = sqlite_file(db_url or default_url())
    return str(database) if database is not None and not database.exists() else None


def parse_option_pairs(pairs: list[str] | None) -> dict[str, Any]:
    """`--option k=v` values; v is read as JSON when it parses (numbers, booleans), else text."""
    from partida.cli import CliError

    options: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CliError(f"--option takes KEY=VALUE, not {pair!r}")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


def print_json(data: Any) -> None:
    print(json.dumps(data, separators=(",", ":"), default=str), flush=True)


PIPED_WIDTH = 1000  # columns a table may take when its lines go to a file or another program


def print_table(table: Any) -> None:
    """A rich table on stdout: as wide as the terminal in one, and whole when piped (rich takes
    80 columns then, and cut names and dates for `grep` and `sort`)."""
    from rich.console import Console

    console = Console() if sys.stdout.isatty() else Console(width=PIPED_WIDTH)
    console.print(table)
