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


async def test_a_rematch_with_a_bot_counts_as_a_game_with_a_bot(server, connect, bots) -> None:
    """A rematch opens a room nobody created: it was not counted, so rematches let an address
    keep more games with bots going than its limit."""
    server.limiter.limits.bot_games_per_address = 1
    await bots("random")
    guest = await connect(name="ann")
    code = (await guest.create_room("tictactoe", seat=0, bots={1: "random"}))["room"]
    await guest.resign(code)
    offered = await guest.rematch(code)
    assert offered["rematch"] is not None  # the bot accepts by itself
    with pytest.raises(ServerError) as refused:
        await guest.create_room("tictactoe", seat=0, bots={1: "random"})
    assert refused.value.code == "rate_limited"


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
        if server.rooms[code].core.status == "finished":
            break
        await asyncio.sleep(0.05)
    assert server.rooms[code].core.status == "finished" and server.rooms[code].core.result["reason"] == "time"


async def test_thinking_goes_to_each_party_in_turn() -> None:
    """One party queues twenty decisions while one of its searches runs on the only core;
    another party's decision comes then, and runs next: it waits for the search running when it
    came, never for one started after it (it ran third before: one more of the hog's first)."""
    thinking = FairThinking(cores=1)
    order: list[str] = []
    lock = threading.Lock()
    first = threading.Event()

    def think(party: str, wait: bool = False) -> None:
        with lock:
            order.append(party)
        if wait:
            first.wait(10)

    greedy = [asyncio.create_task(thinking.run("greedy", think, "greedy", i == 0)) for i in range(20)]
    while not order:  # the hog's first search has its core
        await asyncio.sleep(0.01)
    other = asyncio.create_task(thinking.run("other", think, "other"))
    await asyncio.sleep(0.05)
    first.set()
    await asyncio.gather(*greedy, other)
    assert order[:2] == ["greedy", "other"] and len(order) == 21


async def test_never_more_searches_than_cores_nor_one_party_on_every_core() -> None:
    """Three parties queue searches at once on two cores: never more than two run together, and
    never two of one party's (its second waits though a core is free), so another party's
    decision always finds a core."""
    thinking = FairThinking(cores=2)
    lock = threading.Lock()
    running: dict[str, int] = {"all": 0}
    most: dict[str, int] = {"all": 0}

    def think(party: str) -> None:
        with lock:
            for key in ("all", party):
                running[key] = running.get(key, 0) + 1
                most[key] = max(most.get(key, 0), running[key])
        time.sleep(0.005)
        with lock:
            for key in ("all", party):
                running[key] -= 1

    parties = ["hog"] * 30 + ["ann"] * 5 + ["bea"] * 5
    await asyncio.gather(*(thinking.run(p, think, p) for p in parties))
    assert most == {"all": 2, "hog": 1, "ann": 1, "bea": 1}
    alone = FairThinking(cores=2)
    blocker = threading.Event()
    hog = [asyncio.create_task(alone.run("hog", blocker.wait, 10)) for _ in range(3)]
    await asyncio.sleep(0.05)
    assert alone.running == 1  # the hog alone still leaves a core for whoever comes
    assert await asyncio.wait_for(alone.run("ann", lambda: "ann"), 10) == "ann"
    blocker.set()
    assert await asyncio.gather(*hog) == [True] * 3


async def test_a_search_given_up_on_keeps_its_core_until_it_ends() -> None:
    """A decision answered at random when its clock ran short is no longer awaited, but its
    thread still computes: the next search waits for it rather than run beside it."""
    thinking = FairThinking(cores=1)
    release = threading.Event()
    given_up = asyncio.create_task(thinking.run("a", release.wait, 10))
    await asyncio.sleep(0.05)
    given_up.cancel()
    started = threading.Event()
    after = asyncio.create_task(thinking.run("b", started.set))
    await asyncio.sleep(0.05)
    assert thinking.running == 1 and not started.is_set()
    release.set()
    await asyncio.wait_for(after, 10)
    assert started.is_set() and thinking.running == 0


async def test_a_cancelled_decision_gives_its_turn_away() -> None:
    thinking = FairThinking(cores=1)
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
