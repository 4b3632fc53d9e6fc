"""What the protocol guide tells a room's creator that takes no seat ("A creator without a seat"):
the `room_created` reply and nothing more of the room, even for a game between bots that runs
to its end, until it watches; `auto_start: false`, `watch`, then `start` shows every move."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from websockets.asyncio.client import connect as ws_connect


async def _request(ws: Any, pushed: list[dict[str, Any]], **message: Any) -> dict[str, Any]:
    """Send a request and return its reply; frames without the request's id go to `pushed`."""
    await ws.send(json.dumps(message))
    while True:
        frame = json.loads(await asyncio.wait_for(ws.recv(), 20))
        if frame.get("id") == message["id"]:
            return frame
        pushed.append(frame)


async def test_a_creator_without_a_seat_hears_nothing_of_the_game_until_it_watches(server, bots) -> None:
    await bots("random")
    async with ws_connect(server.url) as ws:
        pushed: list[dict[str, Any]] = []
        await _request(ws, pushed, type="hello", id=1, version=2, name="ada")
        bots_seats = {"0": "random", "1": "random"}
        created = await _request(ws, pushed, type="create_room", id=2, game="tictactoe", public=True, bots=bots_seats)
        assert created["type"] == "room_created" and created["seat"] is None and created["token"] is None
        assert created["summary"]["status"] == "playing"
        game_id = created["summary"]["game_id"]
        # public, so that `game` shows it to a creator that did not sit in it
        for attempt in range(3, 400):  # the game between the two bots runs to its end meanwhile
            stored = await _request(ws, pushed, type="game", id=attempt, game_id=game_id)
            if stored["game"]["status"] == "finished":
                break
            await asyncio.sleep(0.05)
        assert stored["game"]["status"] == "finished" and stored["game"]["moves"] >= 5
        # The result is stored before anyone is told; the room pushes the last move and sends
        # `game_over` in the step that finishes it (the in-process event bus never waits).
        room = server.rooms[created["room"]]
        for _ in range(250):
            if room.core.status == "finished":
                break
            await asyncio.sleep(0.02)
        assert room.core.status == "finished"
        await _request(ws, pushed, type="ping", id=1000)  # answered after anything sent ada before it
        assert pushed == []

        # auto_start false, watch, start: every move, then game_over
        created = await _request(
            ws, pushed, type="create_room", id=1001, game="tictactoe", public=False, bots=bots_seats, auto_start=False
        )
        code = created["room"]
        watching = await _request(ws, pushed, type="watch", id=1002, room=code)
        assert watching["type"] == "watching" and watching["summary"]["status"] == "waiting"
        await _request(ws, pushed, type="start", id=1003, room=code)
        while not pushed or pushed[-1]["type"] != "game_over":
            pushed.append(json.loads(await asyncio.wait_for(ws.recv(), 20)))
    updates = [f for f in pushed if f["type"] == "update"]
    assert [u["seq"] for u in updates] == list(range(len(updates)))
    assert updates[0]["seat"] is None and updates[-1]["status"] == "finished"
