"""Two honest hosted bots on a ladder with built-in bots, for a while: does every game finish?

A server (SQLite in a temporary directory) with the hosting supervisor and its runner process,
every program in the sandbox; two people submit the examples of examples/hosted/ (a Python bot
and a JavaScript one, both Othello) over the protocol, and a ladder pairs them with built-in
bots (random, alpha-beta at depth 1) for --seconds. Then the ladder pairs no more, the games in
play end, and the owners read their logs. One JSON line:

    {"seconds": ..., "games": N, "finished": N, "not_finished": N, "hosted_games": {BOT: N},
     "verdicts": {VERDICT: N}, "forfeits": N, "versions_recorded": N, "logs_read": {BOT: N}}

    python bench/hosted_ladder.py --seconds 300
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from partida.bots.runner import BotRunner
from partida.client import Client
from partida.hosting.bundles import pack
from partida.hosting.sandbox import sandbox_missing
from partida.hosting.supervisor import HostingPlan, HostingSupervisor
from partida.server.app import Server, ServerConfig
from partida.server.services.hosted_bots import HostingSettings
from partida.storage.hosted import HostedStore

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples" / "hosted"
BOTS = {  # bot -> (owner, password, example, command)
    "ada-greedy": ("ada", "ada lovelace", "python-greedy", "python3 bot.py"),
    "bo-weights": ("bo", "bo diddley", "js-weights", "node bot.js"),
}


async def run(seconds: float, folder: Path) -> dict[str, Any]:
    bundles = folder / "bundles"
    bundles.mkdir()
    server = Server(ServerConfig(port=0, db_url=f"sqlite:///{folder / 'partida.db'}", hosting=HostingSettings(bundles)))
    await server.start()
    built_in: list[asyncio.Task[None]] = []
    supervisor = None
    try:
        ladder = await server.store.ladders.create("hosted", "othello", {}, 2, {"initial": 30, "increment": 0.5}, 3)
        for owner, password, _, _ in BOTS.values():
            await server.store.create_user(owner, password)

        async def new_token(name: str) -> str:
            return (await server.store.create_bot(name))[1]

        async def ladder_game(name: str) -> str | None:
            found = await server.store.ladders.get(name)
            return None if found is None else found.game

        supervisor = HostingSupervisor(
            server.url, HostingPlan(bundles, ladders=["hosted"]), HostedStore(server.db), new_token, ladder_game
        )
        server.hosted_bots.on_change(supervisor.changed)
        supervisor.start()
        for bot, (owner, password, example, command) in BOTS.items():
            client = await Client.connect(server.url, name=owner, password=password)
            await client.bot_submit(bot, ["othello"], command, pack(EXAMPLES / example))
            await client.close()
        for name, agent, params in (("builtin-random", "random", {}), ("builtin-alphabeta", "alphabeta", {"depth": 1})):
            _, token = await server.store.create_bot(name)
            runner = BotRunner(server.url, agent, name=name, token=token, ladders=["hosted"], params=params)
            built_in.append(asyncio.create_task(runner.run()))
        started = time.monotonic()
        await asyncio.sleep(seconds)
        await server.ladder_director.stop()  # no more pairings: the games in play end by themselves
        for _ in range(1200):
            if not await server.store.list_games(1000, status="playing"):
                break
            await asyncio.sleep(0.1)
        elapsed = time.monotonic() - started
        games = await server.store.list_games(100_000)
        hosted_games: collections.Counter[str] = collections.Counter()
        forfeits = versions = 0
        for game in games:
            for seat, _, name in game.seat_list:
                if name in BOTS:
                    hosted_games[name] += 1
                    versions += seat in game.seat_versions
            forfeits += bool((game.result or {}).get("notes"))
        verdicts: collections.Counter[str] = collections.Counter()
        logs_read: dict[str, int] = {}
        for bot, (owner, password, _, _) in BOTS.items():
            client = await Client.connect(server.url, name=owner, password=password)
            logs = await client.bot_logs(bot, limit=100)
            await client.close()
            logs_read[bot] = len(logs["logs"])
            verdicts.update(entry["verdict"] for entry in logs["logs"] if entry["verdict"] != "finished")
        standings = await server.store.ladders.standings(ladder.id)
        return {
            "seconds": round(elapsed, 1),
            "games": len(games),
            "finished": sum(g.status == "finished" for g in games),
            "not_finished": sum(g.status != "finished" for g in games),
            "hosted_games": dict(hosted_games),
            "verdicts": dict(verdicts),
            "forfeits": forfeits,
            "versions_recorded": versions,
            "logs_read": logs_read,
            "standings": [{"name": s.name, "games": s.games, "wins": s.wins, "losses": s.losses} for s in standings],
        }
    finally:
        for task in built_in:
            task.cancel()
        await asyncio.gather(*built_in, return_exceptions=True)
        if supervisor is not None:
            await supervisor.stop()
        await server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=300.0, help="how long the ladder pairs (default: 300)")
    args = parser.parse_args()
    missing = sandbox_missing()
    if missing is not None:
        sys.exit(f"hosted_ladder: {missing}")
    folder = Path(tempfile.mkdtemp(prefix="partida-hosted-ladder-"))
    folder.chmod(0o755)  # the sandbox runs programs as nobody: the bundles must be reachable
    try:
        print(json.dumps(asyncio.run(run(args.seconds, folder))), flush=True)
    finally:
        for root, dirs, _ in os.walk(folder):
            for name in dirs:
                os.chmod(os.path.join(root, name), 0o755)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
