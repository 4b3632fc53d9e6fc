"""Seeks across nodes: one list and one pairing for the whole deployment (three nodes on loopback
ports, real PostgreSQL and Mosquitto). A seek posted on one node is listed and pushed on the
others, taken from any of them, paired with a compatible seek of another node, exactly once when
two nodes take it at the same moment; the per-owner cap counts every node's seeks, and a seek
goes with its poster's connection."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from partida.client import Client, ServerError
from partida.server.app import Server
from tests.fixtures.nodes import PASSWORD, user_on

CLOCK = {"initial": 60, "increment": 1}
pytestmark = pytest.mark.slow


def play_randomly(seed: int):  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    return lambda update, prompt: prompt.random_answer(rng)


async def listed_on(client: Client, seek_id: int, present: bool = True, within: float = 10.0) -> None:
    """Until `client`'s node lists the seek (or no longer does)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        ids = [s["id"] for s in await client.list_seeks()]
        if (seek_id in ids) == present:
            return
        if loop.time() > deadline:
            raise AssertionError(f"seek {seek_id} {'not ' if present else ''}listed after {within} s: {ids}")
        await asyncio.sleep(0.05)


async def count_on(client: Client, game: str, count: int, within: float = 10.0) -> None:
    """Until `client`'s node lists `count` seeks of `game` (other nodes' come through the broker)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while (found := len(await client.list_seeks(game))) != count:
        if loop.time() > deadline:
            raise AssertionError(f"{found} seeks of {game} listed after {within} s, not {count}")
        await asyncio.sleep(0.05)


async def next_of(queue: asyncio.Queue[dict[str, Any]], kind: str, within: float = 10.0) -> dict[str, Any]:
    async with asyncio.timeout(within):
        while True:
            message = await queue.get()
            if message["type"] == kind:
                return message


async def test_two_people_on_different_nodes_pair_by_seek_and_play(three: list[Server]) -> None:
    a, b, c = three
    alice = await user_on(a, "alice")
    bob = await user_on(b, "bob")
    carol = await user_on(c, "carol")
    try:
        await carol.list_seeks(watch=True)
        posted = await alice.seek("tictactoe", clock=CLOCK)
        assert posted["paired"] is False
        seek_id = posted["seek"]["id"]
        pushed = await next_of(carol.lobby_events, "lobby_seeks")  # a watcher on a third node is told
        assert [s["id"] for s in pushed["added"]] == [seek_id]
        assert pushed["added"][0]["by"]["name"] == "alice"
        await listed_on(bob, seek_id)

        answered = await bob.seek("tictactoe", clock=CLOCK)
        assert answered["paired"] is True
        mine = await next_of(bob.seek_events, "seek_paired")
        theirs = await next_of(alice.seek_events, "seek_paired")
        code = mine["room"]
        assert theirs["room"] == code and {mine["seat"], theirs["seat"]} == {0, 1}
        assert code in b.rooms and code not in a.rooms  # opened by the node that paired
        assert theirs["url"] == b.cluster.public_url  # type: ignore[union-attr]
        assert (mine["opponent"], theirs["opponent"]) == ("alice", "bob")
        gone = await next_of(carol.lobby_events, "lobby_seeks")
        assert gone["removed"] == [seek_id]

        results = await asyncio.wait_for(
            asyncio.gather(alice.play(code, play_randomly(1)), bob.play(code, play_randomly(2))), 30
        )
        assert all(r["status"] == "finished" for r in results)
        stored = await b.store.load_game(b.rooms[code].core.game_id)
        assert stored is not None and stored.status == "finished"
        assert sorted(n for _, _, n in stored.seat_list) == ["alice", "bob"]
        for client in (alice, bob, carol):
            assert await client.list_seeks() == []
    finally:
        for client in (alice, bob, carol):
            await client.close()


async def test_a_seek_is_taken_from_another_node_and_goes_with_its_poster(three: list[Server]) -> None:
    a, b, c = three
    alice = await user_on(a, "alice")
    bob = await user_on(b, "bob")
    try:
        first = (await alice.seek("tictactoe", clock=CLOCK))["seek"]["id"]
        await listed_on(bob, first)
        taken = await bob.seek_take(first)
        assert taken["room"] in b.rooms
        told = await next_of(alice.seek_events, "seek_paired")
        assert told["room"] == taken["room"] and told["url"] == b.cluster.public_url  # type: ignore[union-attr]
        with pytest.raises(ServerError) as again:
            await bob.seek_take(first)
        assert again.value.code == "no_such_seek"

        # The cap counts every node's seeks of one account: three on two nodes, a fourth refused.
        second = await Client.connect(c.url, name="alice", password=PASSWORD)
        try:
            for client in (alice, second, alice):
                await client.seek("othello", clock=CLOCK)
            with pytest.raises(ServerError) as capped:
                await second.seek("othello", clock=CLOCK)
            assert capped.value.code == "too_many_seeks"
            await count_on(bob, "othello", 3)
            await second.close()  # its seek goes with it, on every node
            await count_on(bob, "othello", 2)
            await count_on(alice, "othello", 2)
        finally:
            await second.close()
    finally:
        await alice.close()
        await bob.close()


async def test_two_takers_on_two_nodes_never_both_get_a_seek(three: list[Server]) -> None:
    """The race, 200 times: a seek posted on node A, taken at the same moment by two bot
    accounts, one on B and one on C; exactly one takes each seek, the other is told it is gone."""
    a, b, c = three
    for server in three:  # 200 games at once for the bots: the race is the subject, not the bounds
        server.limiter.limits.games_per_bot = 1000
        server.limiter.limits.bot_games_per_address = 1000
        server.limiter.limits.games_per_bot_per_address = 1000
        server.limiter.limits.waiting_rooms_per_address = 1000
    alice = await user_on(a, "alice")
    _, token_b = await b.store.create_bot("takerb")
    _, token_c = await c.store.create_bot("takerc")
    bots = [await Client.connect(b.url, token=token_b), await Client.connect(c.url, token=token_c)]
    wins = [0, 0]
    rooms: set[str] = set()
    try:
        for _ in range(200):
            seek_id = (await alice.seek("tictactoe", clock=CLOCK, allow_bots=True))["seek"]["id"]
            answers = await asyncio.gather(*(bot.seek_take(seek_id) for bot in bots), return_exceptions=True)
            taken = [(i, r) for i, r in enumerate(answers) if isinstance(r, dict)]
            refused = [r for r in answers if isinstance(r, ServerError)]
            assert len(taken) == 1 and len(refused) == 1, answers
            assert refused[0].code == "no_such_seek"
            told = await next_of(alice.seek_events, "seek_paired")
            assert told["room"] == taken[0][1]["room"] and told["room"] not in rooms
            rooms.add(told["room"])
            wins[taken[0][0]] += 1
            await alice.resign(told["room"])
        assert len(rooms) == 200
        held = [s for s in (b, c) for r in s.rooms.values() if r.code in rooms]
        assert len(held) == 200  # every room on one node, the taker's
    finally:
        await alice.close()
        for bot in bots:
            await bot.close()


async def test_compatible_seeks_posted_at_once_on_two_nodes_pair_once(three: list[Server]) -> None:
    """Two people post compatible seeks on two nodes at the same moment, 30 times: each time they
    are paired together, in one room."""
    a, b, _ = three
    alice = await user_on(a, "alice")
    bob = await user_on(b, "bob")
    try:
        for _ in range(30):
            posted = await asyncio.gather(alice.seek("tictactoe", clock=CLOCK), bob.seek("tictactoe", clock=CLOCK))
            assert sorted(p["paired"] for p in posted) in ([False, True], [True, True], [False, False])
            one = await next_of(alice.seek_events, "seek_paired")
            two = await next_of(bob.seek_events, "seek_paired")
            assert one["room"] == two["room"]
            await alice.resign(one["room"])
            assert await alice.list_seeks() == [] and await bob.list_seeks() == []
    finally:
        await alice.close()
        await bob.close()


async def test_a_room_opened_on_one_node_is_pushed_to_the_lobby_watchers_of_the_others(three: list[Server]) -> None:
    a, b, c = three
    alice = await user_on(a, "alice")
    bob = await user_on(b, "bob")
    carol = await user_on(c, "carol")
    try:
        await carol.rooms_page(watch=True)
        await bob.rooms_page(game="othello", watch=True)
        code = (await alice.create_room("tictactoe", public=True, seat=0))["room"]
        pushed = await next_of(carol.lobby_events, "lobby")
        assert [r["code"] for r in pushed["rooms"]] == [code] and pushed["rooms"][0]["status"] == "waiting"
        await bob.join(code)  # through node B, which sends bob on to A: the game starts
        async with asyncio.timeout(10):
            while not any(r["code"] == code and r["status"] == "playing" for r in pushed["rooms"]):
                pushed = await next_of(carol.lobby_events, "lobby")
        await alice.resign(code)  # finished: gone from every lobby
        async with asyncio.timeout(10):
            while code not in pushed["removed"]:
                pushed = await next_of(carol.lobby_events, "lobby")
        # A watcher of another game's rooms is told of no room, only of codes gone from its filter.
        for message in [bob.lobby_events.get_nowait() for _ in range(bob.lobby_events.qsize())]:
            assert message.get("rooms", []) == []
    finally:
        for client in (alice, bob, carol):
            await client.close()


async def test_answer_seeks_bots_on_two_nodes_take_each_seek_once_and_play(three: list[Server]) -> None:
    """`partida bot --answer-seeks` on nodes B and C, a person posting seeks on node A: each seek
    is answered by one bot (the person is told once per seek), and the games are played."""
    from tests.fixtures.nodes import bot_on

    a, _, _ = three
    alice = await user_on(a, "alice")
    bots = [await bot_on(three[i], f"answer{i}", games=["tictactoe"], answer_seeks=True) for i in (1, 2)]
    try:
        rooms = []
        for n in range(10):
            posted = await alice.seek("tictactoe", clock=CLOCK, allow_bots=True)
            told = await next_of(alice.seek_events, "seek_paired", within=15)
            assert told["seek"] == posted["seek"]["id"] and told["room"] not in rooms
            rooms.append(told["room"])
            final = await asyncio.wait_for(alice.play(told["room"], play_randomly(n)), 30)
            assert final["status"] == "finished"
        await asyncio.sleep(1.0)
        assert alice.seek_events.empty()  # nobody answered a seek twice
        opponents = {
            s.name
            for server in three
            for code in rooms
            if code in server.rooms
            for s in server.rooms[code].core.seats
            if s is not None and s.name != "alice"
        }
        assert opponents <= {"answer1", "answer2"} and opponents
    finally:
        await alice.close()
        for bot in bots:
            bot.cancel()
        await asyncio.gather(*bots, return_exceptions=True)


async def test_a_tournament_created_on_one_node_is_pushed_to_the_watchers_of_the_others(three: list[Server]) -> None:
    a, _, c = three
    alice = await user_on(a, "alice")
    carol = await user_on(c, "carol")
    try:
        assert (await carol.tournaments_page(watch=True))["tournaments"] == []
        await alice.tournament_create("spring", "tictactoe", "swiss", CLOCK, rounds=1, starts_in=3600)
        told = await next_of(carol.lobby_events, "lobby_tournaments")
        assert told["changed"] is True
        assert [t["name"] for t in (await carol.tournaments_page())["tournaments"]] == ["spring"]
    finally:
        await alice.close()
        await carol.close()
