"""A server restarted on the same database resumes unfinished games: no acknowledged move is lost,
players return to their seats (guests with their seat token, bots by their account)."""

from __future__ import annotations

import contextlib
import sqlite3

import pytest

from partida.client import Client, ServerError
from partida.server.app import Server, ServerConfig
from tests.fixtures.storage import fresh_database
from tests.helpers import sqlite_path, store_behind_the_back, two_players


async def test_restart_mid_game_loses_no_acknowledged_move(db_url: str) -> None:
    first = Server(ServerConfig(port=0, db_url=db_url))
    await first.start()
    alice = await Client.connect(first.url, name="alice")
    bob = await Client.connect(first.url, name="bob")
    created = await alice.create_room("tictactoe", seat=0, public=False)
    code, alice_token = created["room"], created["token"]
    bob_token = (await bob.join(code))["token"]
    await alice.act(code, 0)
    await bob.act(code, 4)
    await alice.act(code, 8)  # acknowledged: the reply came back
    await alice.close()
    await bob.close()
    await first.stop()

    second = Server(ServerConfig(port=0, db_url=db_url))
    await second.start()
    try:
        room = second.rooms[code]
        assert room.core.seq == 3
        assert room.core.state.view(None)["board"] == [0, -1, -1, -1, 1, -1, -1, -1, 0]
        alice = await Client.connect(second.url, name="alice")
        bob = await Client.connect(second.url, name="bob")
        await alice.join(code, seat=0, token=alice_token)
        await bob.join(code, seat=1, token=bob_token)
        update = await bob.next_update(code)
        assert update["seq"] == 3 and update["decision"] is not None
        await bob.act(code, 2)
        await alice.act(code, 6)
        await bob.act(code, 1)
        await alice.act(code, 7)  # X completes the bottom row 6-7-8
        stored = await second.store.load_game(room.core.game_id)
        assert stored.status == "finished"
        assert [a for _, a in stored.actions] == [0, 4, 8, 2, 6, 1, 7]
        assert stored.result["winners"] == [0]
        await alice.close()
        await bob.close()
    finally:
        await second.stop()


@pytest.mark.slow
async def test_the_players_are_what_they_were_after_a_restart(db_url: str) -> None:
    """A resumed room called every account's seat "account": a bot was no longer a bot to the
    clients (`kind` is guest, user or bot)."""
    first = Server(ServerConfig(port=0, db_url=db_url))
    await first.start()
    await first.store.create_user("ada", "correct horse battery")
    _, token = await first.store.create_bot("robo")
    ada = await Client.connect(first.url, name="ada", password="correct horse battery")
    robo = await Client.connect(first.url, token=token, agent="random")
    code = (await ada.create_room("tictactoe", seats=2, seat=0, public=False, bots={1: "robo"}))["room"]
    kinds = [s["kind"] for s in first.rooms[code].summary()["seats"]]
    for client in (ada, robo):
        await client.close()
    await first.stop()

    second = Server(ServerConfig(port=0, db_url=db_url))
    await second.start()
    try:
        assert kinds == ["user", "bot"]
        assert [s["kind"] for s in second.rooms[code].summary()["seats"]] == kinds
    finally:
        await second.stop()


async def test_a_wrong_seat_token_does_not_reclaim(db_url: str) -> None:
    server = Server(ServerConfig(port=0, db_url=db_url))
    await server.start()
    try:
        alice = await Client.connect(server.url, name="alice")
        bob = await Client.connect(server.url, name="bob")
        code = (await alice.create_room("tictactoe", seat=0, public=False))["room"]
        await bob.join(code)
        mallory = await Client.connect(server.url, name="mallory")
        with pytest.raises(ServerError) as exc:
            await mallory.join(code, seat=0, token="0" * 32)
        assert exc.value.code == "auth_failed"
        for client in (alice, bob, mallory):
            await client.close()
    finally:
        await server.stop()


@pytest.mark.slow
async def test_a_game_that_cannot_be_resumed_keeps_no_other_from_playing(db_url: str) -> None:
    """A game whose resume fails (here its result, stored at the start because its last action
    ended it, is refused by the database) is left as it is for the next start; the server starts
    and resumes the others. It used to stop the server's start."""
    first = Server(ServerConfig(port=0, db_url=db_url))
    await first.start()
    playing = await two_players(first)  # Bob to move
    ending = await two_players(first)
    alice, bob, stuck = ending
    await bob.act(stuck, 0)
    await alice.act(stuck, 4)
    await bob.act(stuck, 1)
    stuck_id = first.rooms[stuck].core.game_id
    store_behind_the_back(db_url, stuck_id, 4, 0, 5)  # X completes 3-4-5; no result stored
    for client in (*playing[:2], *ending[:2]):
        await client.close()
    await first.stop()
    with contextlib.closing(sqlite3.connect(sqlite_path(db_url))) as conn:
        conn.execute(
            f"CREATE TRIGGER refuse_result BEFORE UPDATE ON games WHEN OLD.id = {stuck_id} "
            "BEGIN SELECT RAISE(ABORT, 'refused for the test'); END"
        )
        conn.commit()

    second = Server(ServerConfig(port=0, db_url=db_url))
    await second.start()
    try:
        assert stuck not in second.rooms
        assert second.rooms[playing[2]].core.seq == 1 and second.rooms[playing[2]].core.status == "playing"
        stored = await second.store.load_game(stuck_id)
        assert stored is not None and stored.status == "playing" and len(stored.actions) == 5
    finally:
        await second.stop()

    with contextlib.closing(sqlite3.connect(sqlite_path(db_url))) as conn:
        conn.execute("DROP TRIGGER refuse_result")
        conn.commit()
    third = Server(ServerConfig(port=0, db_url=db_url))
    await third.start()  # the next start resumes it, and stores its result
    try:
        stored = await third.store.load_game(stuck_id)
        assert stored is not None and stored.status == "finished" and stored.result["winners"] == [0]
    finally:
        await third.stop()


async def test_restart_on_postgresql(postgres) -> None:  # type: ignore[no-untyped-def]
    """The same guarantee on PostgreSQL, the deployment database."""
    url = fresh_database(postgres, "server_restart")
    first = Server(ServerConfig(port=0, db_url=url))
    await first.start()
    alice = await Client.connect(first.url, name="alice")
    bob = await Client.connect(first.url, name="bob")
    created = await alice.create_room("tictactoe", seat=0, public=False)
    code = created["room"]
    bob_token = (await bob.join(code))["token"]
    await alice.act(code, 4)
    await alice.close()
    await bob.close()
    await first.stop()
    second = Server(ServerConfig(port=0, db_url=url))
    await second.start()
    try:
        assert second.rooms[code].core.seq == 1
        bob = await Client.connect(second.url, name="bob")
        await bob.join(code, seat=1, token=bob_token)
        await bob.act(code, 0)
        stored = await second.store.load_game(second.rooms[code].core.game_id)
        assert [a for _, a in stored.actions] == [4, 0]
        await bob.close()
    finally:
        await second.stop()
