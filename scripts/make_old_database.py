"""Write a small SQLite database the way a given release of Partida writes it, for
tests/storage/test_old_database.py, which serves it with the code under test.

Run it with the Python of the checkout whose server should write the file (that checkout's
`partida` is imported and started; nothing of the current checkout is used):

    git worktree add ../partida-a582e9b a582e9b
    cd ../partida-a582e9b && python3 -m venv .venv && .venv/bin/pip install -e .
    .venv/bin/python ../partida/scripts/make_old_database.py ../partida/tests/data/partida-a582e9b.db

It starts that checkout's `partida serve` (no bot pool) on a new SQLite file and, through the
websocket like any client: creates a person with a password (ada) and bot accounts with tokens
(robo; left and right, in the tic-tac-toe ladder `arena`), plays finished games (Othello,
tic-tac-toe against the bot account, Duel and Crazy Eights, whose hands are hidden, one of them
private), plays one rated ladder game, and leaves an Othello game under a clock mid-play. The
server is stopped as an operator stops it (SIGINT), and the file is compacted (VACUUM keeps every
row). What the test needs to know and cannot read from the file (the password, the tokens, the
unfinished room's code and seat tokens, the clocks when the server stopped) goes to a JSON file
beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from partida.client import Client

PASSWORD = "correct horse battery staple"
LADDER = "arena"
UNFINISHED_MOVES = 6  # Othello moves played before the server stops


def partida(*args: str, stdin: str | None = None) -> str:
    """Run this checkout's CLI; its standard output."""
    done = subprocess.run(
        [sys.executable, "-m", "partida", *args], input=stdin, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"partida {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def create_bot(name: str, db: Path) -> str:
    """A bot account; its token (the line after the one that says it is shown once)."""
    lines = partida("db", "create-bot", name, "--db", str(db)).splitlines()
    return lines[1].strip()


def decider(seed: int):  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    return lambda update, prompt: prompt.random_answer(rng)


class Enough(Exception):
    """Raised by a decider to stop playing, leaving the decision unanswered."""


async def finished_game(first: Client, second: Client, game: str, public: bool, seed: int) -> dict[str, Any]:
    """`first` opens a room of `game` in seat 0, `second` joins, both play at random to the end."""
    code = (await first.create_room(game, seat=0, public=public))["room"]
    await second.join(code)
    final, _ = await asyncio.gather(first.play(code, decider(seed)), second.play(code, decider(seed + 1)))
    return {"game": game, "game_id": final["game_id"], "public": public, "result": final["result"]}


async def ladder_game(url: str, tokens: list[str]) -> dict[str, Any]:
    """Two bot accounts join the ladder, play what it pairs them in, and leave; the first rated game."""
    bots = [await Client.connect(url, token=token, agent="random") for token in tokens]
    try:
        for bot in bots:
            await bot.ladder_join(LADDER)
        notice = await asyncio.wait_for(bots[0].ladder_events.get(), 30)
        room = notice["room"]
        await asyncio.gather(*(bot.play(room, decider(7 + i)) for i, bot in enumerate(bots)))
        rating = await asyncio.wait_for(bots[0].ladder_events.get(), 30)
        assert rating["type"] == "rating" and rating["game_id"] == notice["game_id"], rating
        for bot in bots:
            await bot.ladder_leave(LADDER)
        # A game the ladder opened before both had left is played out too: none stays unfinished.
        with contextlib.suppress(TimeoutError):
            while True:
                more = await asyncio.wait_for(bots[0].ladder_events.get(), 2)
                if more["type"] == "ladder_game":
                    await asyncio.gather(*(bot.play(more["room"], decider(9)) for bot in bots))
        return {"game": "tictactoe", "game_id": notice["game_id"], "public": True, "ladder": LADDER}
    finally:
        for bot in bots:
            await bot.close()


async def play_everything(url: str, robo_token: str, ladder_tokens: list[str]) -> dict[str, Any]:
    ada = await Client.connect(url, name="ada", password=PASSWORD)
    bob = await Client.connect(url, name="bob")
    carol = await Client.connect(url, name="carol")
    robo = await Client.connect(url, token=robo_token, agent="random")
    games = [
        await finished_game(bob, carol, "othello", public=True, seed=1),
        await finished_game(ada, bob, "duel", public=False, seed=3),
        await finished_game(carol, bob, "crazyeights", public=True, seed=5),
    ]
    # tic-tac-toe against the bot account, seated by its name
    code = (await ada.create_room("tictactoe", seat=0, public=True, bots={1: "robo"}))["room"]
    seated = await asyncio.wait_for(robo.seated.get(), 10)
    assert seated["room"] == code, seated
    final, _ = await asyncio.gather(ada.play(code, decider(11)), robo.play(code, decider(12)))
    games.append({"game": "tictactoe", "game_id": final["game_id"], "public": True, "result": final["result"]})
    games.append(await ladder_game(url, ladder_tokens))

    # The unfinished game: Othello under a clock, ada (by password) against bob (a guest). Both
    # answer at random until UNFINISHED_MOVES are acknowledged; the update asking for the next
    # one (its clocks included) is kept, and the server is stopped with it unanswered.
    clock = {"initial": 3600, "increment": 5}
    created = await ada.create_room("othello", seat=0, public=True, clock=clock)
    code = created["room"]
    joined = await bob.join(code)
    rng = random.Random(13)
    asked: list[dict[str, Any]] = []

    def decide(update: dict[str, Any], prompt: Any) -> Any:
        if update["seq"] == UNFINISHED_MOVES:
            asked.append(update)
            raise Enough
        return prompt.random_answer(rng)

    plays = [asyncio.create_task(client.play(code, decide)) for client in (ada, bob)]
    await asyncio.wait(plays, return_when=asyncio.FIRST_EXCEPTION)
    for task in plays:
        task.cancel()
    await asyncio.gather(*plays, return_exceptions=True)
    (update,) = asked
    unfinished = {
        "game": "othello",
        "game_id": update["game_id"],
        "room": code,
        "moves": UNFINISHED_MOVES,
        "to_move": update["seat"],
        "tokens": [created["token"], joined["token"]],
        "clock": update["clock"],
    }
    for client in (ada, bob, carol, robo):
        await client.close()
    return {"games": games, "unfinished": unfinished}


def serve(db: Path) -> tuple[subprocess.Popen[str], str]:
    """This checkout's server on `db` (no bot pool) on a free port; the process and its URL."""
    command = [sys.executable, "-m", "partida", "serve", "--db", str(db), "--port", "0", "--no-bots"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    for line in process.stdout:
        if "serving on " in line:
            return process, line.split("serving on ", 1)[1].split()[0]
    raise SystemExit(f"the server did not start (exit status {process.wait()})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the SQLite file to write (must not exist); its facts go to OUT.json")
    args = parser.parse_args(argv)
    db: Path = args.out
    if db.exists():
        parser.error(f"{db} exists: remove it first")
    db.parent.mkdir(parents=True, exist_ok=True)
    partida("db", "upgrade", "--db", str(db))
    partida("db", "create-user", "ada", "--password-stdin", "--db", str(db), stdin=PASSWORD + "\n")
    robo = create_bot("robo", db)
    ladder_tokens = [create_bot(name, db) for name in ("left", "right")]
    partida("ladder", "create", LADDER, "--game", "tictactoe", "--clock", "1+1", "--db", str(db))
    process, url = serve(db)
    try:
        facts = asyncio.run(play_everything(url, robo, ladder_tokens))
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(60)
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("VACUUM")
    checkout = Path(sys.modules["partida"].__file__ or ".").parent  # the checkout that wrote it
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=checkout, capture_output=True, text=True, check=False
    ).stdout.strip()
    facts = {
        "written_by": commit,
        "password": {"name": "ada", "password": PASSWORD},
        "bots": {"robo": robo, "left": ladder_tokens[0], "right": ladder_tokens[1]},
        "ladder": LADDER,
        **facts,
    }
    db.with_suffix(".json").write_text(json.dumps(facts, indent=2) + "\n")
    print(f"{db}: {db.stat().st_size} bytes, {len(facts['games'])} finished games, one unfinished")
    return 0


if __name__ == "__main__":
    sys.exit(main())
