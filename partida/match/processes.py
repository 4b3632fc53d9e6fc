"""The processes a match starts, as cutechess starts engines: a bot author's own program for a
seat (`--seat-cmd`), logged in with a bot account made for the run, and the server they play on
when the match brings its own (`partida serve` on a free loopback port with a temporary database).

A seat's program learns where to connect and who it is from its environment (PARTIDA_SERVER,
PARTIDA_BOT_TOKEN, PARTIDA_BOT_NAME) or from `{server}`, `{token}` and `{name}` written in its
command line."""

from __future__ import annotations

import asyncio
import os
import shlex
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

# `--seat-cmd "stdio:python mybot.py"`, `--seat-cmd "gtp:gtp-rhino"`: a program that does not
# connect itself, played through `partida bot`'s bridge for its protocol (docs/bots.md).
BRIDGES = {"stdio": "--cmd", "gtp": "--gtp"}


@dataclass(frozen=True)
class SeatCommand:
    """`--seat-cmd`'s value: a command line a shell would split the same way; `bridge`: the
    protocol it speaks when it is not a websocket bot (`stdio`, `gtp`)."""

    command: str
    bridge: str = ""

    def __str__(self) -> str:
        return f"{self.bridge}:{self.command}" if self.bridge else self.command

    def argv(self, server: str, token: str, name: str, game: str) -> list[str]:
        if self.bridge:  # the bridge logs in (the token comes from the environment) and runs it
            bot = [sys.executable, "-m", "partida", "bot", BRIDGES[self.bridge], self.command, "--game", game]
            return [*bot, "--server", server, "--name", name, "--log-level", "warning"]
        fields = {"{server}": server, "{token}": token, "{name}": name}
        out = []
        for word in shlex.split(self.command):
            for key, value in fields.items():
                word = word.replace(key, value)
            out.append(word)
        return out


def seat_command(text: str) -> SeatCommand:
    """Checked when the command is read: a quote left open would only fail once a server ran."""
    import argparse

    bridge, colon, rest = text.partition(":")
    if colon and bridge in BRIDGES:
        text = rest
    else:
        bridge = ""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"cannot split {text!r} into words: {exc}") from None
    if not words:
        raise argparse.ArgumentTypeError("an empty command")
    return SeatCommand(text, bridge)


def free_port() -> int:
    """A loopback TCP port that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def create_bot_accounts(db_url: str, names: list[str]) -> dict[str, str]:
    """Bot accounts in a fresh database: name -> token."""
    from partida.storage.database import Database
    from partida.storage.store import Store

    db = await Database.open(db_url)
    try:
        store = Store(db)
        return {name: (await store.create_bot(name))[1] for name in names}
    finally:
        await db.close()


async def start_server(
    folder: Path, db_url: str, pool: list[str], game_files: list[Path], games_dirs: list[Path]
) -> tuple[asyncio.subprocess.Process, str]:
    """`partida serve` on a free loopback port, its log in `folder`; returns it and its URL (the
    caller waits until it answers). `pool`: built-in agents its bot pool runs."""
    port = free_port()
    argv = [sys.executable, "-m", "partida", "serve", "--host", "127.0.0.1", "--port", str(port), "--db", db_url]
    argv += ["--bots", ",".join(pool)] if pool else ["--no-bots"]
    for path in game_files:
        argv += ["--game-file", str(path)]
    for path in games_dirs:
        argv += ["--games-dir", str(path)]
    log = open(folder / "serve.log", "wb")
    try:
        process = await asyncio.create_subprocess_exec(*argv, stdout=log, stderr=log, stdin=asyncio.subprocess.DEVNULL)
    finally:
        log.close()
    return process, f"ws://127.0.0.1:{port}"


async def start_seat(command: SeatCommand, server: str, token: str, name: str, game: str) -> asyncio.subprocess.Process:
    """The seat's program; what it prints goes to this process's stderr, so that stdout stays
    the match's results."""
    env = {**os.environ, "PARTIDA_SERVER": server, "PARTIDA_BOT_TOKEN": token, "PARTIDA_BOT_NAME": name}
    return await asyncio.create_subprocess_exec(
        *command.argv(server, token, name, game),
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=sys.stderr.fileno(),
        stderr=sys.stderr.fileno(),
    )


async def stop(process: asyncio.subprocess.Process, grace: float = 10.0) -> None:
    """Terminate, then kill if it does not go within `grace` seconds."""
    if process.returncode is not None:
        return
    try:
        process.terminate()
        await asyncio.wait_for(process.wait(), grace)
    except ProcessLookupError:
        return
    except TimeoutError:
        process.kill()
        await process.wait()


def exit_text(code: int) -> str:
    if code < 0:
        import signal

        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"
