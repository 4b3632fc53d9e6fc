"""What a bridge costs: the same Othello player (the built-in `othello-engine` at a fixed depth)
behind each of the three ways in of docs/bots.md, playing the server's pool `random` bot:

- `websocket`: `partida bot othello-engine --depth D`, the agent in the bot process;
- `stdio`: `partida bot --cmd "python stdio_engine.py D"`, a program reading a JSON line per
  decision that runs the same agent on the view it is sent;
- `gtp`: `partida bot --gtp "python gtp_engine.py D"`, a GTP engine that keeps its own board
  from `play` and answers `genmove` with the same agent.

One JSON line per way in: the server's CPU milliseconds per move (all moves; its /proc CPU time,
the pool bot being a process of its own), the bot process's CPU milliseconds per move of its own
(the runner, and for a bridge the bridge: the agent's search for the websocket bot), the engine
processes' (started and reaped by the bridge, once per game: /proc's cutime; their start, a
Python importing Partida, included), and the bot's turn
time as the watcher sees it (from the update that gives it the move to the update with its
move applied: server, network, bridge and engine), median and 90th percentile in milliseconds.

    python bench/bridge_cost.py --games 20 --depth 2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from server_process import cpu_seconds, served  # bench/server_process.py, beside this script

STDIO_ENGINE = """
import json, sys
from partida.bots.base import Turn
from partida.bots.registry import make_agent
from partida.games.prompts import prompt_from_data
from partida.games.registry import default_registry

game = default_registry().get("othello")
agent = make_agent("othello-engine", game, depth=int(sys.argv[1]))
for line in sys.stdin:
    msg = json.loads(line)
    turn = Turn(game, msg["seat"], prompt_from_data(msg["decision"]), msg["view"])
    print(json.dumps({"action": agent.act(turn)}), flush=True)
"""

GTP_ENGINE = """
import sys
from partida.bots.base import Turn
from partida.bots.registry import make_agent
from partida.games.othello.board import parse_square
from partida.games.othello.rules import OthelloState
from partida.games.registry import default_registry

game = default_registry().get("othello")
agent = make_agent("othello-engine", game, depth=int(sys.argv[1]))
state = OthelloState()
for line in sys.stdin:
    words = line.split()
    command, reply = (words[0] if words else ""), ""
    if command == "clear_board":
        state = OthelloState()
    elif command == "play" and words[2].lower() != "pass":  # passes are automatic here
        state.play(parse_square(words[2].lower()))
    elif command == "genmove":
        decision = state.pending()[0]
        move = agent.act(Turn(game, decision.seat, decision.prompt, lambda: state.view(decision.seat)))
        state.apply(decision.seat, move)
        reply = move.upper()
    print(f"= {reply}\\n", flush=True)
    if command == "quit":
        break
"""


def bot_argv(way: str, depth: int, folder: Path) -> list[str]:
    bot = [sys.executable, "-m", "partida", "bot"]
    if way == "websocket":
        return [*bot, "othello-engine", "--depth", str(depth)]
    script = folder / f"{way}_engine.py"
    script.write_text(STDIO_ENGINE if way == "stdio" else GTP_ENGINE)
    return [*bot, "--cmd" if way == "stdio" else "--gtp", f"{sys.executable} {script} {depth}", "--game", "othello"]


async def play(url: str, name: str, games: int) -> dict[str, object]:
    """`games` games of `name` against the pool's random bot, seats alternating: the moves, the
    bot's moves and its turn times."""
    from partida.client import Client, ServerError

    client = await Client.connect(url, name="bench-watcher")
    moves = mine = 0
    turns: list[float] = []
    try:
        for index in range(games):
            seat = index % 2
            bots = {seat: name, 1 - seat: "random"}
            while True:  # the bot may still be logging in
                try:
                    code = (await client.create_room("othello", {}, seats=2, bots=bots, auto_start=False))["room"]
                    break
                except ServerError as exc:
                    if exc.code not in ("unknown_agent", "no_bot_available"):
                        raise
                    await asyncio.sleep(0.2)
            await client.watch(code)
            await client.start(code)
            asked: float | None = None
            while True:
                update = await client.next_message(code)
                if update["type"] != "update":
                    continue
                now = time.perf_counter()
                last = update.get("last") or {}
                if last.get("seat") is not None:
                    moves += 1
                    if last["seat"] == seat:
                        mine += 1
                        if asked is not None:
                            turns.append(now - asked)
                asked = now if seat in (update.get("to_act") or []) else None
                if update["status"] == "finished":
                    break
            await client.leave(code)
    finally:
        await client.close()
    return {"moves": moves, "bot_moves": mine, "turns": turns}


async def ready(url: str, name: str) -> None:
    """Until the bot under test and the pool's random bot are both connected: the bot's start
    (Python importing Partida) is not a cost per move. A bridged bot is known by its account's
    name only, so the probe is a room that seats both and never starts (it costs nothing)."""
    from partida.client import Client, ServerError

    client = await Client.connect(url, name="bench-ready")
    try:
        while True:
            try:
                await client.create_room("othello", public=False, bots={0: name, 1: "random"}, auto_start=False)
                return
            except ServerError as exc:
                if exc.code not in ("no_bot_available", "unknown_agent"):
                    raise
            await asyncio.sleep(0.1)
    finally:
        await client.close()


def one_way(way: str, games: int, depth: int) -> dict[str, object]:
    from partida.match.processes import create_bot_accounts

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        db = f"sqlite:///{folder / 'partida.db'}"
        token = asyncio.run(create_bot_accounts(db, ["bench-bot"]))["bench-bot"]
        with served(db, "--bots", "random") as server:
            env = {**os.environ, "PARTIDA_BOT_TOKEN": token}
            argv = [*bot_argv(way, depth, folder), "--server", server.url, "--log-level", "warning"]
            bot = subprocess.Popen(argv, env=env)
            try:
                asyncio.run(asyncio.wait_for(ready(server.url, "bench-bot"), 60))
                server_before = cpu_seconds(server.pid)
                bot_before = cpu_seconds(bot.pid)
                all_before = cpu_seconds(bot.pid, children=True)
                played = asyncio.run(play(server.url, "bench-bot", games))
                time.sleep(1.5)  # the last game's engine is closed (and reaped) after its game
                server_cpu = cpu_seconds(server.pid) - server_before
                bot_cpu = cpu_seconds(bot.pid) - bot_before
                engine_cpu = cpu_seconds(bot.pid, children=True) - all_before - bot_cpu
            finally:
                bot.terminate()
                bot.wait(10)
    turns = sorted(played["turns"])  # type: ignore[arg-type]
    moves, mine = int(played["moves"]), int(played["bot_moves"])  # type: ignore[call-overload]
    return {
        "way": way,
        "games": games,
        "depth": depth,
        "moves": moves,
        "bot_moves": mine,
        "server_cpu_ms_per_move": round(1000 * server_cpu / moves, 3),
        "bot_cpu_ms_per_bot_move": round(1000 * bot_cpu / mine, 3),
        "engine_cpu_ms_per_bot_move": round(1000 * engine_cpu / mine, 3),
        "turn_ms_median": round(1000 * statistics.median(turns), 2),
        "turn_ms_p90": round(1000 * turns[int(0.9 * (len(turns) - 1))], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=20, help="games per way in (default: %(default)s)")
    parser.add_argument("--depth", type=int, default=2, help="othello-engine's search depth (default: %(default)s)")
    parser.add_argument(
        "--ways", default="websocket,stdio,gtp", help="which ways in, comma-separated (default: %(default)s)"
    )
    args = parser.parse_args()
    for way in args.ways.split(","):
        print(json.dumps(one_way(way.strip(), args.games, args.depth)), flush=True)


if __name__ == "__main__":
    main()
