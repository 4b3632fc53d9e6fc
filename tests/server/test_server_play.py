"""Games played to the end through a real server by real clients."""

from __future__ import annotations

import asyncio

import pytest

from partida.cli.play import play_bot_game
from partida.protocol import Encoding
from partida.room.seed import seed_hash
from tests.helpers import Raw, play_two, random_decider


@pytest.mark.parametrize("encoding", [Encoding.MSGPACK, Encoding.JSON])
async def test_two_clients_play_tictactoe_to_the_end(connect, server, encoding) -> None:
    alice = await connect(name="alice", encoding=encoding)
    bob = await connect(name="bob", encoding=encoding)
    final_a, final_b = await play_two(alice, bob, "tictactoe")
    assert final_a["status"] == final_b["status"] == "finished"
    assert final_a["result"] == final_b["result"]
    assert final_a["seq"] == final_b["seq"] >= 5
    # provably fair: the revealed seed matches the hash published at the start
    assert isinstance(final_a["seed"], str)  # decimal: a JSON number would round above 2^53
    assert seed_hash(final_a["seed"]) == (await server.store.load_game(final_a["game_id"])).seed_hash


async def test_stored_game_replays_to_the_same_result(connect, server) -> None:
    from partida.cli.records import replay_stored

    alice, bob = await connect(name="alice"), await connect(name="bob")
    final, _ = await play_two(alice, bob, "tictactoe")
    stored = await server.store.load_game(final["game_id"])
    assert stored.status == "finished"
    assert len(stored.actions) == final["seq"]
    replayed = replay_stored(stored)
    assert replayed["result"] == final["result"]
    assert replayed["seed_verified"]


async def test_two_clients_play_othello_to_the_end(connect, server) -> None:
    assert "othello" in server.registry  # shipped with the server: a dropped game fails here
    alice, bob = await connect(name="alice"), await connect(name="bob")
    final, _ = await play_two(alice, bob, "othello")
    assert final["status"] == "finished"
    assert sum(final["result"]["scores"][:2]) <= 64


async def test_replay_prints_the_othello_transcript(connect, server) -> None:
    from partida.cli.records import replay_stored

    alice, bob = await connect(name="alice"), await connect(name="bob")
    final, _ = await play_two(alice, bob, "othello")
    replayed = replay_stored(await server.store.load_game(final["game_id"]))
    squares = [m["action"] for m in replayed["moves"]]
    assert replayed["transcript"] == "".join(squares)
    assert replayed["result"] == final["result"]


@pytest.mark.slow
async def test_a_duel_replay_reads_as_a_game(connect, server) -> None:
    """Once a game is over nothing is hidden: the replay names the cards each seat played, and
    tells attacks and blocks in words, never as raw ids or 'play a card'."""
    from partida.cli.records import replay_stored

    alice, bob = await connect(name="alice"), await connect(name="bob")
    final, _ = await play_two(alice, bob, "duel")
    replayed = replay_stored(await server.store.load_game(final["game_id"]))
    texts = [m["text"] for m in replayed["moves"]]
    assert not any(text in ("play a card", "cast a card") or "{" in text for text in texts), texts
    played = [t for t in texts if t.startswith("plays ")]
    assert played and all(t.split(" ", 1)[1] in ("Plains", "Mountain", "Island", "Forest", "Swamp") for t in played)
    assert any(t.startswith(("keeps ", "mulligans to ")) for t in texts)
    assert any(t.startswith("casts ") and "a card" not in t for t in texts)


@pytest.mark.realtime
async def test_bot_against_bot_through_the_server(connect, server, bots) -> None:
    await bots("random", "alphabeta", seconds=0.05)
    watcher = await connect(name="watcher")
    records = [await play_bot_game(watcher, "tictactoe", {}, ["alphabeta", "random"]) for _ in range(4)]
    for record in records:
        assert record["result"]["ranks"][0] == 1, "alpha-beta never loses tic-tac-toe"
    stored = await server.store.list_games(10, "tictactoe", "finished")
    assert len(stored) == 4


async def test_a_person_against_a_bot_by_name(connect, server, bots) -> None:
    await bots("random")
    alice = await connect(name="alice")
    created = await alice.create_room("tictactoe", seat=0, bots={1: "random"}, public=False)
    final = await alice.play(created["room"], random_decider(3))
    assert final["status"] == "finished"
    names = [s["name"] for s in created["summary"]["seats"]]
    assert names == ["alice", "test-random"]


async def test_private_room_is_joined_by_code_and_not_listed(connect) -> None:
    alice, bob = await connect(name="alice"), await connect(name="bob")
    created = await alice.create_room("tictactoe", seat=0, public=False)
    assert all(r["code"] != created["room"] for r in await bob.list_rooms())
    public = await alice.create_room("tictactoe", seat=0, public=True)
    assert any(r["code"] == public["room"] for r in await bob.list_rooms())
    joined = await bob.join(created["room"].lower())
    assert joined["seat"] == 1


async def test_lobby_lists_games_with_options(connect) -> None:
    alice = await connect()
    games = {g["name"]: g for g in await alice.list_games()}
    assert "tictactoe" in games
    assert games["tictactoe"]["min_seats"] == 2


async def test_spectator_sees_every_move(connect) -> None:
    alice, bob, carol = await connect(name="alice"), await connect(name="bob"), await connect(name="carol")
    created = await alice.create_room("tictactoe", seat=0, public=True)
    code = created["room"]
    await carol.watch(code)
    await bob.join(code)
    play = asyncio.gather(alice.play(code, random_decider(5)), bob.play(code, random_decider(6)))
    seen = []
    while True:
        update = await carol.next_update(code, timeout=10)
        assert update["seat"] is None and update["decision"] is None
        seen.append(update["seq"])
        if update["status"] == "finished":
            break
    final, _ = await play
    assert seen == list(range(0, final["seq"] + 1))


async def test_the_creators_seat_comes_in_room_created_and_a_later_seat_as_a_room_push(server) -> None:
    from websockets.asyncio.client import connect as ws_connect

    ann, bea = Raw(await ws_connect(server.url)), Raw(await ws_connect(server.url))
    for raw, name in ((ann, "ann"), (bea, "bea")):
        await raw.request("hello", version=2, name=name)
    created = await ann.request("create_room", game="tictactoe", seat=0, public=False, auto_start=False)
    assert created["summary"]["seats"][0]["name"] == "ann"
    assert [m["type"] for m in ann.seen] == ["welcome", "room_created"]  # no `room` push saying the same
    await bea.request("join", room=created["room"])
    pushed = await ann.next()
    assert pushed["type"] == "room" and [s["name"] for s in pushed["summary"]["seats"]] == ["ann", "bea"]
    await ann.ws.close()
    await bea.ws.close()


async def test_a_games_end_is_the_final_update_and_game_over_with_no_room_push(server) -> None:
    """The end changes only the summary's status, which the final update and `game_over` say: no
    `room` push follows them (a ping's answer, written after anything the last move pushed,
    shows that nothing else came)."""
    from websockets.asyncio.client import connect as ws_connect

    ann, bea = Raw(await ws_connect(server.url)), Raw(await ws_connect(server.url))
    for raw, name in ((ann, "ann"), (bea, "bea")):
        await raw.request("hello", version=2, name=name)
    code = (await ann.request("create_room", game="tictactoe", seat=0, public=False))["room"]
    await bea.request("join", room=code)
    for cell, raw in zip((0, 3, 1, 4, 2), (ann, bea, ann, bea, ann), strict=True):
        await raw.request("act", room=code, action=cell)
    for raw in (ann, bea):
        await raw.request("ping")
        ending = [m for m in raw.seen if m.get("type") in ("update", "game_over", "room")][-2:]
        assert [m["type"] for m in ending] == ["update", "game_over"]
        assert ending[0]["status"] == "finished" and ending[0]["result"] == ending[1]["result"]
    summary = (await ann.request("watch", room=code))["summary"]
    assert summary["status"] == "finished"  # asked for, the summary says so
    await ann.ws.close()
    await bea.ws.close()
