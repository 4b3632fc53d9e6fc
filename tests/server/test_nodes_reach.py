"""Challenges and `add_bot` across nodes: an account connected to one node is challenged, or a
named bot seated, from another (three nodes on loopback ports, real PostgreSQL and Mosquitto).
A bot is summoned to the room's node over the broker and seated there; a person's challenge is
pushed through the person's node, accepted on the challenger's node (the SDK follows `moved`),
and a decline or a lapse comes back to the challenger."""

from __future__ import annotations

import asyncio
import random

import pytest

from partida.client import Client, ServerError
from partida.server import challenges
from partida.server.app import Server
from tests.fixtures.nodes import bot_on, user_on


def play_randomly(seed: int):  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    return lambda update, prompt: prompt.random_answer(rng)


async def test_a_challenge_to_a_bot_on_another_node_is_played_to_the_end(three: list[Server]) -> None:
    a, b, _ = three
    bot = await bot_on(b, "otto", games=["tictactoe"])
    alice = await user_on(a, "alice")
    try:
        sent = await alice.challenge("OTTO", "tictactoe")
        assert sent["to"] == "otto"
        accepted = await asyncio.wait_for(alice.challenges.get(), 15)
        assert accepted["type"] == "challenge_accepted" and accepted["seat"] == 0
        code = accepted["room"]
        assert code in a.rooms and code not in b.rooms  # the room is on the challenger's node
        assert accepted["summary"]["seats"][0]["name"] == "alice"
        final = await asyncio.wait_for(alice.play(code, play_randomly(1)), 30)
        assert final["status"] == "finished"
        room = a.rooms[code]
        assert [s.name for s in room.core.seats if s is not None] == ["alice", "otto"]
        stored = await a.store.load_game(room.core.game_id)
        assert stored is not None and stored.status == "finished"

        # It declared tic-tac-toe only. Summoned here for the first game, it is connected to this
        # node too, and so refused at once; from the other node only, the challenge is declined.
        try:
            refused = await alice.challenge("otto", "othello")
        except ServerError as exc:
            assert exc.code == "bot_declines" and "does not play othello" in exc.message
        else:
            answer = await asyncio.wait_for(alice.challenges.get(), 15)
            assert (answer["type"], answer["challenge"]) == ("challenge_declined", refused["id"])
            assert "does not play othello" in answer["reason"]
    finally:
        await alice.close()
        bot.cancel()
        await asyncio.gather(bot, return_exceptions=True)


async def test_add_bot_seats_a_named_bot_connected_to_another_node(three: list[Server]) -> None:
    a, _, c = three
    bot = await bot_on(c, "tessa", games=["tictactoe"])
    alice = await Client.connect(a.url, name="alice-guest")
    try:
        created = await alice.create_room("tictactoe", seat=0, public=False)
        code = created["room"]
        added = await alice.add_bot(code, "Tessa", seat=1)
        assert added["seat"] == 1
        final = await asyncio.wait_for(alice.play(code, play_randomly(2)), 30)
        assert final["status"] == "finished"
        assert [s.name for s in a.rooms[code].core.seats if s is not None] == ["alice-guest", "tessa"]

        with pytest.raises(ServerError) as refused:  # it declared tic-tac-toe only
            room = (await alice.create_room("othello", seat=0, public=False))["room"]
            await alice.add_bot(room, "tessa")
        assert refused.value.code == "bot_declines" and "does not play othello" in refused.value.message
        with pytest.raises(ServerError) as unknown:
            await alice.create_room("tictactoe", seat=0, bots={1: "nobody-at-all"})
        assert unknown.value.code == "unknown_agent"

        seated = await alice.create_room("tictactoe", seat=0, public=False, bots={1: "tessa"})  # create_room's bots
        final = await asyncio.wait_for(alice.play(seated["room"], play_randomly(3)), 30)
        assert final["status"] == "finished"
    finally:
        await alice.close()
        bot.cancel()
        await asyncio.gather(bot, return_exceptions=True)


async def test_a_person_on_another_node_declines_accepts_or_lets_a_challenge_lapse(
    three: list[Server], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, c = three
    alice = await user_on(a, "alice")
    bob = await user_on(b, "bob")
    try:
        sent = await alice.challenge("bob", "tictactoe")
        pushed = await asyncio.wait_for(bob.challenges.get(), 10)
        assert pushed["type"] == "challenge" and pushed["challenge"]["id"] == sent["id"]
        assert pushed["challenge"]["from"] == {"name": "alice", "kind": "user"}
        declined = await bob.decline(sent["id"])
        assert declined["challenge"] == sent["id"]
        answer = await asyncio.wait_for(alice.challenges.get(), 10)
        assert (answer["type"], answer["challenge"], answer["by"]) == ("challenge_declined", sent["id"], "bob")
        assert sent["id"] not in a.challenges.open

        sent = await alice.challenge("Bob", "tictactoe", clock={"initial": 300, "increment": 2})
        pushed = await asyncio.wait_for(bob.challenges.get(), 10)
        accepted = await bob.accept(pushed["challenge"]["id"])  # answered `moved`: accepted on node a
        assert accepted["seat"] == 1 and accepted["token"]
        theirs = await asyncio.wait_for(alice.challenges.get(), 10)
        assert theirs["type"] == "challenge_accepted" and theirs["room"] == accepted["room"]
        code = accepted["room"]
        assert code in a.rooms and [s["name"] for s in accepted["summary"]["seats"]] == ["alice", "bob"]
        finals = await asyncio.wait_for(
            asyncio.gather(alice.play(code, play_randomly(4)), bob.play(code, play_randomly(5))), 30
        )
        assert all(final["status"] == "finished" for final in finals)
        with pytest.raises(ServerError) as again:
            await bob.accept(sent["id"])
        assert again.value.code == "no_such_challenge"

        carol = await user_on(c, "carol")  # a third party cannot answer it on its own node
        sent = await alice.challenge("bob", "tictactoe")
        await asyncio.wait_for(bob.challenges.get(), 10)
        with pytest.raises(ServerError) as refused:
            await carol.accept(sent["id"])
        assert refused.value.code == "no_such_challenge"
        await carol.close()

        monkeypatch.setattr(challenges, "CHALLENGE_TTL", 0.3)
        sent = await alice.challenge("bob", "tictactoe")
        lapsed = await asyncio.wait_for(alice.challenges.get(), 10)
        assert (lapsed["type"], lapsed["challenge"], lapsed["reason"]) == ("challenge_declined", sent["id"], "expired")

        await bob.close()
        for _ in range(200):  # bob's node lets the directory know he left
            if not await a.cluster.presence.elsewhere("bob"):  # type: ignore[union-attr]
                break
            await asyncio.sleep(0.02)
        with pytest.raises(ServerError) as gone:
            await alice.challenge("bob", "tictactoe")
        assert gone.value.code == "no_such_player"
    finally:
        await alice.close()


async def test_a_person_connected_to_two_other_nodes_is_told_on_both(three: list[Server]) -> None:
    a, b, c = three
    alice = await user_on(a, "alice")
    bob_b = await user_on(b, "bob")
    bob_c = await user_on(c, "bob")
    try:
        sent = await alice.challenge("bob", "tictactoe")
        for bob in (bob_b, bob_c):
            pushed = await asyncio.wait_for(bob.challenges.get(), 10)
            assert pushed["challenge"]["id"] == sent["id"]
        accepted = await bob_c.accept(sent["id"])
        assert accepted["seat"] == 1 and accepted["room"] in a.rooms
        theirs = await asyncio.wait_for(alice.challenges.get(), 10)
        assert theirs["type"] == "challenge_accepted" and theirs["room"] == accepted["room"]
        await alice.resign(accepted["room"])

        # A node that finds the person gone answers `not connected`; the challenge stands while
        # another node still has the person, and is declined once none has.
        assert a.cluster is not None and a.cluster.directory is not None
        await bob_c.close()
        for _ in range(200):
            if [w.node for w in await a.cluster.presence.elsewhere("bob")] == ["b"]:
                break
            await asyncio.sleep(0.02)
        (where,) = await a.cluster.presence.elsewhere("bob")
        await a.cluster.directory.arrived("c", where.account_id, "bob", "user", None, None)  # a stale row
        sent = await alice.challenge("bob", "tictactoe")
        pushed = await asyncio.wait_for(bob_b.challenges.get(), 10)
        assert pushed["challenge"]["id"] == sent["id"]
        for _ in range(100):
            if a.challenges.open.get(sent["id"]) is not None and a.challenges.open[sent["id"]].nodes == {"b"}:
                break
            await asyncio.sleep(0.02)
        assert a.challenges.open[sent["id"]].nodes == {"b"}  # c answered `not connected`; b has bob
        await alice.request("ping")  # answered after any decline a sent alice on c's answer
        assert alice.challenges.empty()
        await bob_b.decline(sent["id"])
        assert (await asyncio.wait_for(alice.challenges.get(), 10))["reason"] == "declined"

        await bob_b.close()
        for _ in range(200):
            if [w.node for w in await a.cluster.presence.elsewhere("bob")] == ["c"]:
                break
            await asyncio.sleep(0.02)
        sent = await alice.challenge("bob", "tictactoe")  # only the stale row is left
        gone = await asyncio.wait_for(alice.challenges.get(), 10)
        assert (gone["type"], gone["challenge"], gone["reason"]) == ("challenge_declined", sent["id"], "not connected")
    finally:
        for client in (alice, bob_b, bob_c):
            await client.close()
