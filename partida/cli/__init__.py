"""The `partida` command. Each module in this package adds its subcommands through
`register(subparsers)`, so a part of the system brings its own commands without touching this file.
Handlers return an exit code; errors a user can fix are raised as `CliError` and printed as one
line, never as a traceback."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence


class CliError(Exception):
    """A problem the user can fix (bad flag value, unknown game, unreachable server)."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="partida",
        description="Partida: play turn-based games online, with friends and bots.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    import partida.cli as package

    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"partida.cli.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except CliError as exc:
        print(f"partida: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
