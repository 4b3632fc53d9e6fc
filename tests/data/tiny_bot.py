"""A bot as an author writes one: a websocket, a hello with the token, a random answer to each
decision. `--crash-after N` exits with code 3 after its Nth move."""

import asyncio
import json
import os
import random
import sys

from websockets.asyncio.client import connect


async def main() -> None:
    crash_after = int(sys.argv[sys.argv.index("--crash-after") + 1]) if "--crash-after" in sys.argv else None
    moves = 0
    hello = {"type": "hello", "version": 2, "token": os.environ["PARTIDA_BOT_TOKEN"], "agent": "tiny"}
    async with connect(os.environ["PARTIDA_SERVER"]) as ws:
        await ws.send(json.dumps(hello))
        async for frame in ws:
            msg = json.loads(frame)
            decision = msg.get("decision") if msg["type"] == "update" else None
            if decision and decision["kind"] == "choose_one":
                if crash_after is not None and moves >= crash_after:
                    sys.exit(3)
                moves += 1
                action = random.choice(decision["options"])
                await ws.send(json.dumps({"type": "act", "room": msg["room"], "action": action, "seq": msg["seq"]}))


asyncio.run(main())
