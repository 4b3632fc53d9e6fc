"""Pool bots are shared: one requester cannot take a bot's every game, a bot plays a bounded
number at once, its thinking goes to the people it plays in turn, and a game left without a
move ends on its clock."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from partida.bots.thinking import FairThinking
from partida.client import ServerError


async def test_one_address_keeps_a_bounded_number_of_games_with_bots(server, connect, bots) -> None:
    server.limiter.limits.bot_games_per_address = 3
    await bots("random")
    guest = await connect(name="greedy")
    for _ in range(3):
        await guest.create_room("tictactoe", seat=0, bots={1: "random"})
    with pytest.raises(ServerError) as refused:
        await guest.create_room("tictactoe", seat=0, bots={1: "random"})
    assert refused.value.code == "rate_limited" and "games with bots" in refused.value.message
    room = (await guest.create_room("tictactoe", seat=0))["room"]
    with pytest.raises(ServerError) as added:
        await guest.request("add_bot", room=room, agent="random")
    assert added.value.code == "rate_limited"


async def test_a_bot_plays_a_bounded_number_of_games_at_once(server, connect, bots) -> None:
    server.limiter.limits.games_per_bot = 2
    await bots("random")
    for name in ("ann", "bea"):
        player = await connect(name=name)
        await player.create_room("tictactoe", seat=0, bots={1: "random"})
    late = await connect(name="cid")
    with pytest.raises(ServerError) as busy:
        await late.create_room("tictactoe", seat=0, bots={1: "random"})
    assert busy.value.code == "no_bot_available" and "its most" in busy.value.message


async def test_a_game_with_a_bot_and_no_clock_gets_one_per_move(server, connect, bots) -> None:
    await bots("random")
    player = await connect(name="ann")
    created = await player.create_room("tictactoe", seat=0, bots={1: "random"})
    assert created["summary"]["clock"]["per_move"] == server.limiter.limits.bot_move_seconds
    timed = await player.create_room("tictactoe", seat=0, bots={1: "random"}, clock={"initial": 60, "increment": 1})
    assert timed["summary"]["clock"]["initial"] == 60
    friends = await player.create_room("tictactoe", seat=0)
    assert friends["summary"]["clock"] is None  # people among themselves: no clock unless asked


async def test_a_game_left_without_a_move_ends_on_the_bots_clock(server, connect, bots) -> None:
    server.limiter.limits.bot_move_seconds = 0.5
    await bots("random")
    player = await connect(name="ann")
    code = (await player.create_room("tictactoe", seat=0, bots={1: "random"}))["room"]
    for _ in range(100):
        if server.rooms[code].status == "finished":
            break
        await asyncio.sleep(0.05)
    assert server.rooms[code].status == "finished" and server.rooms[code].result["reason"] == "time"


async def test_thinking_goes_to_each_party_in_turn() -> None:
    """One party queues twenty decisions, another one; with one worker the second party's
    decision runs second, not twenty-first."""
    thinking = FairThinking(workers=1)
    order: list[str] = []
    lock = threading.Lock()

    def think(party: str) -> None:
        time.sleep(0.01)
        with lock:
            order.append(party)

    greedy = [asyncio.create_task(thinking.run("greedy", think, "greedy")) for _ in range(20)]
    await asyncio.sleep(0)
    other = asyncio.create_task(thinking.run("other", think, "other"))
    await asyncio.gather(*greedy, other)
    assert order.index("other") <= 2 and len(order) == 21


async def test_a_cancelled_decision_gives_its_turn_away() -> None:
    thinking = FairThinking(workers=1)
    release = threading.Event()
    first = asyncio.create_task(thinking.run("a", release.wait, 5))
    await asyncio.sleep(0)  # its first step: it takes the one worker, and waits on its thread
    waiting = asyncio.create_task(thinking.run("b", lambda: "b"))
    third = asyncio.create_task(thinking.run("c", lambda: "c"))
    await asyncio.sleep(0)  # their first steps: both queued behind it
    waiting.cancel()
    release.set()
    assert await first is True
    assert await asyncio.wait_for(third, 5) == "c"
