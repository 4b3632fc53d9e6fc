"""Clocks through a real server: updates carry them, a two-seat game is lost on time, a seat of a
three-seat game that never answers is answered for and then played by the server's random bot,
a restart charges its outage to nobody, and the bot runner answers within the room's clock.
Time is driven by clocks of fractions of a second."""

from __future__ import annotations

import asyncio
import time

import pytest

from partida.client import Client, ServerError
from partida.server.app import Server, ServerConfig
from tests.helpers import final_update, random_decider


async def test_updates_carry_the_clock(connect, server) -> None:
    alice, bob = await connect(name="alice"), await connect(name="bob")
    created = await alice.create_room("tictactoe", seat=0, public=False, clock={"initial": 30, "increment": 2})
    code = created["room"]
    assert created["summary"]["clock"] == {"initial": 30.0, "increment": 2.0, "timeouts": 3}
    await bob.join(code)
    first = await alice.next_update(code, 5)
    assert first["clock"]["remaining"] == [30.0, 30.0]
    assert first["clock"]["deadline"][1] is None
    assert 29 < first["clock"]["deadline"][0] - time.time() <= 30.5
    await alice.act(code, 4, seq=0)
    second = await bob.next_update(code, 5)
    while second["seq"] != 1:
        second = await bob.next_update(code, 5)
    assert 31 < second["clock"]["remaining"][0] <= 32.0  # the increment was added
    assert second["clock"]["deadline"][0] is None and second["clock"]["deadline"][1] is not None


async def test_a_two_seat_game_is_lost_on_time_at_the_deadline(connect, server) -> None:
    alice, bob = await connect(name="alice"), await connect(name="bob")
    code = (await alice.create_room("tictactoe", seat=0, public=False, clock={"initial": 0.4}))["room"]
    await bob.join(code)
    first = await alice.next_update(code, 5)
    deadline = first["clock"]["deadline"][0]
    final = await final_update(bob, code, 5)
    assert abs(time.time() - deadline) < 1.0
    assert final["result"]["reason"] == "time" and final["result"]["winners"] == [1]
    assert final["to_act"] == [] and final["clock"]["remaining"][0] == 0.0
    stored = await server.store.load_game(final["game_id"])
    assert stored.status == "finished" and stored.result["reason"] == "time"
    with pytest.raises(ServerError) as exc:
        await alice.act(code, 4)
    assert exc.value.code == "game_over"


@pytest.mark.realtime
async def test_a_silent_seat_of_a_three_seat_game_does_not_stop_it(connect, server) -> None:
    alice, bob, carol = [await connect(name=n) for n in ("alice", "bob", "carol")]
    created = await alice.create_room("crazyeights", seats=3, seat=0, public=False, clock={"per_move": 0.5})
    code = created["room"]
    await bob.join(code)
    await carol.join(code)  # carol never answers
    final_a, final_b = await asyncio.wait_for(
        asyncio.gather(alice.play(code, random_decider(1)), bob.play(code, random_decider(2))), 120
    )
    assert final_a["result"]["reason"] == "normal" and final_a["result"] == final_b["result"]
    stored = await server.store.load_game(final_a["game_id"])
    assert stored.endings["timeouts"][2] == 3 and stored.endings["auto"] == [2]
    assert any(seat == 2 for seat, _ in stored.actions)  # answered for, then played by the bot


@pytest.mark.realtime
async def test_a_restart_charges_the_outage_to_nobody(db_url: str) -> None:
    first = Server(ServerConfig(port=0, db_url=db_url))
    await first.start()
    alice = await Client.connect(first.url, name="alice")
    bob = await Client.connect(first.url, name="bob")
    created = await alice.create_room("tictactoe", seat=0, public=False, clock={"initial": 2.0})
    code = created["room"]
    bob_token = (await bob.join(code))["token"]
    await alice.act(code, 4, seq=0)
    await alice.close()
    await bob.close()
    await first.stop()
    stored = await first_store_snapshot(db_url, code)
    await asyncio.sleep(2.1)  # the server is down longer than bob had left

    second = Server(ServerConfig(port=0, db_url=db_url))
    await second.start()
    try:
        room = second.rooms[code]
        assert room.core.clock.remaining == stored and room.core.result is None
        bob = await Client.connect(second.url, name="bob")
        await bob.join(code, seat=1, token=bob_token)
        update = await bob.next_update(code, 5)
        assert update["decision"] is not None and 0 < update["clock"]["remaining"][1] <= 2.0
        await bob.act(code, 0, seq=1)
        await bob.close()
    finally:
        await second.stop()


async def first_store_snapshot(db_url: str, code: str) -> list[float]:
    from partida.storage.database import Database
    from partida.storage.store import Store

    db = await Database.open(db_url)
    try:
        games = await Store(db).unfinished_games()
        (game,) = [g for g in games if g.room_code == code]
        assert game.clock == {"initial": 2.0, "increment": 0.0, "timeouts": 3}
        return game.clock_state
    finally:
        await db.close()


@pytest.mark.slow
async def test_the_bot_runner_answers_within_the_rooms_clock(connect, server, bots) -> None:
    await bots("mcts", seconds=5.0)  # it would think five seconds a move without a clock
    alice = await connect(name="alice")
    created = await alice.create_room("tictactoe", seat=0, public=False, bots={1: "mcts"}, clock={"per_move": 0.6})
    code = created["room"]
    final = await asyncio.wait_for(alice.play(code, random_decider(3)), 30)
    assert final["result"]["reason"] == "normal"
