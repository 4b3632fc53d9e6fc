"""Takebacks through a real server: asked, shown to the other seat, accepted or declined, lapsing
with a move; the stored log keeps the move and its takeback, and the record still verifies from
its seed; refused with a stable code against a bot and in a game with hidden cards."""

from __future__ import annotations

from typing import Any

import pytest

from partida.cli.records import replay_stored
from partida.client import Client, ServerError
from partida.server.app import Server, ServerConfig
from tests.helpers import final_update, update_at

START = "---------------------------OX------XO---------------------------"


async def refused(code: str, call: Any) -> None:
    with pytest.raises(ServerError) as exc:
        await call
    assert exc.value.code == code, exc.value.message


async def othello_room(connect) -> tuple[Client, Client, str]:  # type: ignore[no-untyped-def]
    """Alice (black) and Bob in a casual Othello room, after f5 and d6."""
    alice, bob = await connect(name="alice"), await connect(name="bob")
    created = await alice.create_room("othello", seat=0, public=True)
    code = created["room"]
    await bob.join(code)
    await alice.act(code, "f5", seq=0)
    await bob.act(code, "d6", seq=1)
    for client in (alice, bob):
        await update_at(client, code, 2)
    return alice, bob, code


async def test_a_takeback_accepted_goes_back_and_the_record_keeps_it(connect, server: Server) -> None:
    alice, bob, code = await othello_room(connect)
    assert server.rooms[code].summary()["takebacks"] is True
    await alice.offer_takeback(code)
    offered = await bob.next_update(code, 5)
    assert offered["takeback_offer"] == 0 and offered["seq"] == 2
    await bob.accept_takeback(code)
    back = await update_at(alice, code, 3)
    assert back["view"]["board"] == START and back["decision"] is not None  # black to play again
    assert back["last"] == {"seat": 0, "action": None, "text": "takes back 2 moves", "takeback": 2, "undone": [1, 2]}
    assert back["takeback_offer"] is None
    await alice.act(code, "c4", seq=3)
    await bob.resign(code)
    final = await final_update(alice, code)
    stored = await server.store.load_game(final["game_id"])
    assert stored.actions == [(0, "f5"), (1, "d6"), (-1, {"takeback": 2, "by": 0}), (0, "c4")]
    checked = replay_stored(stored)
    assert checked["seed_verified"] is True and checked["transcript"] == "c4"
    assert [m.get("taken_back", False) for m in checked["moves"]] == [True, True, False, False]
    replay = await bob.game(final["game_id"], steps=True)
    assert replay["steps"][3]["view"]["board"] == START and replay["steps"][3]["last"]["undone"] == [1, 2]
    assert replay["log"][2] == {"seat": -1, "action": {"takeback": 2, "by": 0}, "by": 0, "text": "takes back 2 moves"}


async def test_a_takeback_declined_waits_for_a_move_and_an_offer_lapses(connect, server: Server) -> None:
    alice, bob, code = await othello_room(connect)
    await refused("no_takeback_offer", bob.accept_takeback(code))
    await alice.offer_takeback(code)
    await bob.decline_takeback(code)
    declined = await update_at(alice, code, 2)
    while declined["takeback_offer"] is not None:
        declined = await alice.next_update(code, 5)
    await refused("takeback_wait", alice.offer_takeback(code))
    await alice.act(code, "c3", seq=2)
    await bob.offer_takeback(code)  # bob asks for d6 back...
    room = server.rooms[code]
    assert room.core.endings.takeback_offer == 1
    await bob.act(code, "d3", seq=3)  # ...then moves instead: the offer lapses
    await refused("no_takeback_offer", alice.accept_takeback(code))
    assert room.core.seq == 4 and room.core.endings.takeback_offer is None


async def test_takebacks_are_refused_against_a_bot_and_with_hidden_cards(connect, bots, server: Server) -> None:
    await bots("random")
    alice = await connect(name="alice")
    code = (await alice.create_room("tictactoe", seat=0, public=False, bots={1: "random"}))["room"]
    await alice.act(code, 4, seq=0)
    await refused("takeback_unavailable", alice.offer_takeback(code))
    assert server.rooms[code].summary()["takebacks"] is False
    carol, dave = await connect(name="carol"), await connect(name="dave")
    duel = (await carol.create_room("duel", seat=0, public=False))["room"]
    await dave.join(duel)
    await refused("takeback_unavailable", carol.offer_takeback(duel))
    assert server.rooms[duel].core.endings.takeback_offer is None


async def test_a_restarted_room_keeps_its_takebacks_and_its_log(db_url: str) -> None:
    first = Server(ServerConfig(port=0, db_url=db_url))
    await first.start()
    alice, bob = await Client.connect(first.url, name="alice"), await Client.connect(first.url, name="bob")
    created = await alice.create_room("tictactoe", seat=0, public=False)
    code, alice_token = created["room"], created["token"]
    bob_token = (await bob.join(code))["token"]
    await alice.act(code, 4, seq=0)
    await bob.act(code, 0, seq=1)
    await alice.offer_takeback(code)
    await bob.accept_takeback(code)  # acknowledged: stored
    for client in (alice, bob):
        await client.close()
    await first.stop()

    second = Server(ServerConfig(port=0, db_url=db_url))
    await second.start()
    try:
        room = second.rooms[code]
        assert room.core.seq == 3 and room.core.state.view(None)["board"] == [-1] * 9
        assert room.summary()["takebacks"] is True
        alice, bob = await Client.connect(second.url, name="alice"), await Client.connect(second.url, name="bob")
        await alice.join(code, seat=0, token=alice_token)
        await bob.join(code, seat=1, token=bob_token)
        update = await update_at(alice, code, 3)
        assert update["decision"] is not None and update["last"]["undone"] == [1, 2]
        await alice.act(code, 8, seq=3)
        await bob.act(code, 0, seq=4)
        await bob.offer_takeback(code)
        await alice.accept_takeback(code)
        assert room.core.state.view(None)["board"] == [-1, -1, -1, -1, -1, -1, -1, -1, 0]
        for client in (alice, bob):
            await client.close()
    finally:
        await second.stop()
