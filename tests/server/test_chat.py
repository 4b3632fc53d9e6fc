"""Chat through a real server: players' and spectators' channels, the caps, the rate limit,
refusals that change nothing, history on join and watch (and after a reconnect), the operator's
removal and silence as a running server sees them, tournaments' chat, and a game's record."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import pytest
from websockets.asyncio.client import connect as ws_connect

from partida.client import Client, ServerError
from partida.room.chat import MAX_CHARS
from partida.server.app import Server, ServerConfig
from partida.storage.models import utcnow
from tests.helpers import XSS_PAYLOADS, Raw, random_decider

XSS = " ".join(XSS_PAYLOADS[:2])  # a script element and an image's onerror, in one line


@pytest.fixture
async def chatty(db_url: str) -> Any:
    """A server whose sweep of the operator's removals and silences runs often."""
    srv = Server(ServerConfig(host="127.0.0.1", port=0, db_url=db_url, chat_sweep=0.05))
    await srv.start()
    clients: list[Client] = []

    async def connect(**kwargs: Any) -> Client:
        client = await Client.connect(srv.url, **kwargs)
        clients.append(client)
        return client

    try:
        yield srv, connect
    finally:
        for client in clients:
            await client.close()
        await srv.stop()


async def next_of(client: Client, room: str, kind: str, timeout: float = 10.0) -> dict[str, Any]:
    while True:
        message = await client.next_message(room, timeout)
        if message["type"] == kind:
            return message


async def no_more_chat(client: Client, room: str) -> list[dict[str, Any]]:
    """The chat pushes queued for `client` about `room` once a ping has gone round (a push sent
    before the ping's reply is queued before it)."""
    await client.request("ping")
    seen = []
    while not client._rooms[room].empty():
        message = client._rooms[room].get_nowait()
        if message["type"].startswith("chat"):
            seen.append(message)
    return seen


async def two_players_and_a_spectator(connect: Any, game: str = "tictactoe") -> tuple[Client, Client, Client, str]:
    alice, bob, sam = await connect(name="alice"), await connect(name="bob"), await connect(name="sam")
    code = (await alice.create_room(game, seat=0, public=True))["room"]
    await bob.join(code)
    await sam.watch(code)
    return alice, bob, sam, code


async def test_a_room_opened_here_is_joined_and_watched_without_reading_chat_from_the_database(chatty) -> None:
    """Every line of a game opened on this server is said through it: its players' joins (one
    a game, on the move path's doorstep) cost no read of the chat table. A room resumed from
    storage reads its lines back (the restart test below)."""
    srv, connect = chatty
    reads: list[Any] = []
    history = srv.store.chat.history

    async def counted(*args: Any, **kwargs: Any) -> Any:
        reads.append(args)
        return await history(*args, **kwargs)

    srv.store.chat.history = counted  # type: ignore[method-assign]
    alice, bob, sam, code = await two_players_and_a_spectator(connect)
    await alice.chat("hello", room=code)
    assert [m["text"] for m in await bob.chat_history(room=code)] == ["hello"]
    assert [m["text"] for m in await sam.chat_history(room=code)] == ["hello"]
    assert reads == []


async def test_players_talk_and_the_spectator_reads_them(chatty) -> None:
    _, connect = chatty
    alice, bob, sam, code = await two_players_and_a_spectator(connect)
    line = await alice.chat(f"hi bob {XSS}", room=code)
    assert line["channel"] == "players" and line["name"] == "alice" and line["seat"] == 0
    assert line["text"] == f"hi bob {XSS}"  # stored and sent as it was said: the clients show text
    for reader in (bob, sam):
        pushed = await next_of(reader, code, "chat")
        assert pushed["message"] == line


async def test_a_spectators_line_never_reaches_a_player_while_the_game_runs(chatty) -> None:
    server, connect = chatty
    alice, bob, sam, code = await two_players_and_a_spectator(connect, "hearts")
    other = await connect(name="olga")
    await other.watch(code)
    said = await sam.chat("alice holds the queen of spades", room=code)
    assert said["channel"] == "spectators"
    assert (await next_of(other, code, "chat"))["message"]["id"] == said["id"]
    for player in (alice, bob):
        assert not [m for m in await no_more_chat(player, code) if m["type"] == "chat"]
        history = await player.chat_history(room=code)
        assert said["id"] not in [m["id"] for m in history]
    with pytest.raises(ServerError) as refused:  # a spectator cannot post in the players' channel
        await sam.chat("psst", room=code, channel="players")
    assert refused.value.code == "chat_not_allowed"
    with pytest.raises(ServerError) as refused:
        await alice.chat("hello watchers", room=code, channel="spectators")
    assert refused.value.code == "chat_not_allowed"
    # the game's record, asked by a player while it runs, leaves the spectators out too
    record = await alice.request("game", game_id=server.rooms[code].core.game_id)
    assert said["id"] not in [m["id"] for m in record["game"]["chat"]]


async def test_a_player_watching_from_another_tab_is_still_a_player(chatty) -> None:
    server, connect = chatty
    await server.store.create_user("ada", "long enough password")
    ada = await connect(name="ada", password="long enough password")
    bob = await connect(name="bob")
    code = (await ada.create_room("tictactoe", seat=0))["room"]
    await bob.join(code)
    second_tab = await connect(name="ada", password="long enough password")
    await second_tab.watch(code)
    sam = await connect(name="sam")
    await sam.watch(code)
    said = await sam.chat("ada, take the corner", room=code)
    assert not [m for m in await no_more_chat(second_tab, code) if m["type"] == "chat"]
    assert said["id"] not in [m["id"] for m in await second_tab.chat_history(room=code)]
    line = await second_tab.chat("typed in my other tab", room=code)
    assert line["channel"] == "players" and line["seat"] == 0
    assert (await next_of(bob, code, "chat"))["message"]["id"] == line["id"]


async def test_after_the_game_players_read_the_spectators_and_the_replay_shows_both(chatty) -> None:
    server, connect = chatty
    alice, bob, sam, code = await two_players_and_a_spectator(connect)
    game_id = server.rooms[code].core.game_id
    mine = await alice.chat("good luck", room=code)
    theirs = await sam.chat("alice wins this", room=code)
    finals = await asyncio.gather(alice.play(code, random_decider(1)), bob.play(code, random_decider(2)))
    assert finals[0]["status"] == "finished"
    history = await bob.chat_history(room=code)
    assert [m["id"] for m in history] == [mine["id"], theirs["id"]]
    after = await sam.chat("well played", room=code)  # after the game a spectator's line reaches the players
    assert (await next_of(alice, code, "chat"))["message"]["id"] == after["id"]
    record = (await sam.request("game", game_id=game_id))["game"]
    assert [m["text"] for m in record["chat"]] == ["good luck", "alice wins this", "well played"]


async def test_history_is_sent_on_join_and_watch_and_after_a_reconnect(chatty) -> None:
    server, connect = chatty
    alice, bob, sam, code = await two_players_and_a_spectator(connect)
    first = await alice.chat("first", room=code)
    second = await sam.chat("from the stands", room=code)
    late = await connect(name="late")
    await late.watch(code)
    pushed = await next_of(late, code, "chat_history")
    assert [m["id"] for m in pushed["messages"]] == [first["id"], second["id"]]
    # bob's connection drops; back with his seat's token, he is sent the players' channel
    token = server.rooms[code].core.token_for(1)
    await bob.close()
    bob_again = await connect(name="bob")
    await bob_again.join(code, seat=1, token=token)
    pushed = await next_of(bob_again, code, "chat_history")
    assert [m["id"] for m in pushed["messages"]] == [first["id"]]
    # and a server that restarts reads it back from the database
    server.chat._kept.clear()
    assert [m["id"] for m in await late.chat_history(room=code)] == [first["id"], second["id"]]


async def test_caps_and_bad_lines_are_refused_and_change_nothing(chatty) -> None:
    server, connect = chatty
    alice, bob, _sam, code = await two_players_and_a_spectator(connect)
    stranger = await connect(name="stranger")
    cases = [
        (alice, {"text": "x" * (MAX_CHARS + 1), "room": code}, "chat_too_long"),
        (alice, {"text": " \n\t\x07\x1b\u202e ", "room": code}, "chat_empty"),
        (alice, {"text": "hi", "room": code, "tournament": "cup"}, "bad_field"),
        (alice, {"text": "hi"}, "bad_field"),
        (alice, {"text": "hi", "room": code, "channel": "everyone"}, "bad_field"),
        (alice, {"text": 5, "room": code}, "bad_field"),
        (stranger, {"text": "hi", "room": code}, "chat_not_allowed"),
        (alice, {"text": "hi", "room": "NOSUCH"}, "no_such_room"),
        (alice, {"text": "hi", "tournament": "nosuch"}, "no_such_tournament"),
    ]
    for client, fields, code_expected in cases:
        with pytest.raises(ServerError) as refused:
            await client.request("chat", **fields)
        assert refused.value.code == code_expected, fields
    assert not await no_more_chat(bob, code)
    assert await alice.chat_history(room=code) == []
    line = await alice.chat("a\x1bb\u202ec\n\nd " + "y" * (MAX_CHARS - 6), room=code)
    assert line["text"] == "abc d " + "y" * (MAX_CHARS - 6)  # control characters out, white space folded
    assert server.rooms[code].core.status == "playing"  # the room survives every refusal


async def test_bad_chat_frames_get_their_codes_and_the_room_plays_on(chatty) -> None:
    """Frames no SDK would send, straight on the socket: each gets its error, the connection
    stays, nothing is stored, and the room's players go on talking and playing."""
    server, connect = chatty
    alice, bob, _sam, code = await two_players_and_a_spectator(connect)
    async with ws_connect(server.url) as ws:
        raw = Raw(ws)
        assert (await raw.request("hello", version=2, name="raw"))["type"] == "welcome"
        assert (await raw.request("watch", room=code))["type"] == "watching"
        frames = [
            ('{"type": "chat", "room": "' + code + '", "text": "unterminated', "bad_frame"),
            (json.dumps({"type": "chat", "id": 90, "room": code, "text": {"$ne": ""}}), "bad_field"),
            (json.dumps({"type": "chat", "id": 91, "room": [code], "text": "hi"}), "bad_field"),
            (json.dumps({"type": "chat", "id": 92, "room": code, "text": "hi", "as": "alice"}), "bad_field"),
            (json.dumps({"type": "chat", "id": 93, "room": code, "text": "\u0000" * 3}), "bad_frame"),
        ]
        for frame, expected in frames:
            await ws.send(frame)
            while (reply := await raw.next())["type"] != "error":
                pass
            assert reply["code"] == expected, frame
        assert (await raw.request("chat", room=code, text="still here"))["type"] == "chat_sent"
    assert [m["text"] for m in await sam_history(connect, code)] == ["still here"]
    await alice.chat("and we play on", room=code)
    final = await asyncio.gather(alice.play(code, random_decider(5)), bob.play(code, random_decider(6)))
    assert final[0]["status"] == "finished"


async def sam_history(connect: Any, code: str) -> list[dict[str, Any]]:
    late = await connect(name="late")
    await late.watch(code)
    return await late.chat_history(room=code)


async def test_the_rate_limit_refuses_with_retry_after(limited) -> None:
    server = await limited(chat_burst=3, chat_lines_per_second=0.01)
    alice = await Client.connect(server.url, name="alice")
    bob = await Client.connect(server.url, name="bob")
    try:
        code = (await alice.create_room("tictactoe", seat=0))["room"]
        await bob.join(code)
        for n in range(3):
            await alice.chat(f"line {n}", room=code)
        with pytest.raises(ServerError) as refused:
            await alice.chat("one too many", room=code)
        assert refused.value.code == "rate_limited" and refused.value.retry_after > 1
        await bob.chat("bob still may", room=code)  # the limit is alice's, not the room's
        texts = [m["text"] for m in await bob.chat_history(room=code)]
        assert texts == ["line 0", "line 1", "line 2", "bob still may"]
    finally:
        await alice.close()
        await bob.close()


async def test_the_operator_removes_a_line_and_silences_an_account(chatty) -> None:
    server, connect = chatty
    await server.store.create_user("rude", "long enough password")
    rude = await connect(name="rude", password="long enough password")
    alice = await connect(name="alice")
    code = (await alice.create_room("tictactoe", seat=0))["room"]
    await rude.join(code)
    bad = await rude.chat("something rude", room=code)
    assert (await next_of(alice, code, "chat"))["message"]["id"] == bad["id"]
    removed = await server.store.chat.remove(bad["id"])  # what `partida db chat-remove` does
    assert removed is not None and removed.text == "something rude"
    gone = await next_of(alice, code, "chat_removed")
    assert gone["id"] == bad["id"]
    assert await alice.chat_history(room=code) == []
    game_id = server.rooms[code].core.game_id
    assert (await alice.request("game", game_id=game_id))["game"]["chat"] == []
    account = await server.store.get_account_by_name("rude")
    await server.store.chat.silence(account.id, utcnow() + timedelta(hours=1))  # `partida db silence rude`
    for _ in range(200):
        try:
            await rude.chat("still here", room=code)
        except ServerError as refused:
            assert refused.code == "silenced" and "until" in refused.message
            break
        await asyncio.sleep(0.05)
    else:
        pytest.fail("the silence never reached the server")
    await server.store.chat.unsilence(account.id)
    for _ in range(200):
        try:
            await rude.chat("sorry", room=code)
            break
        except ServerError:
            await asyncio.sleep(0.05)
    else:
        pytest.fail("the end of the silence never reached the server")


async def test_a_removed_spectators_line_is_told_to_spectators_only_while_the_game_runs(chatty) -> None:
    server, connect = chatty
    alice, bob, sam, code = await two_players_and_a_spectator(connect)
    line = await sam.chat("b2 wins it", room=code)
    await server.store.chat.remove(line["id"])
    assert (await next_of(sam, code, "chat_removed"))["id"] == line["id"]
    for player in (alice, bob):  # not a word of the spectators' channel, not even its removals
        assert await no_more_chat(player, code) == []


async def test_a_tournaments_chat_reaches_its_watchers(chatty) -> None:
    server, connect = chatty
    await server.store.create_user("carol", "long enough password")
    carol = await connect(name="carol", password="long enough password")
    await carol.tournament_create("cup", "tictactoe", "swiss", {"initial": 60.0}, starts_in=3600)
    guest = await connect(name="guest")
    assert await guest.chat_history(tournament="cup") == []
    line = await carol.chat("welcome to the cup", tournament="cup")
    pushed = await asyncio.wait_for(guest.chat_events.get(), 10)
    assert pushed["type"] == "chat" and pushed["tournament"] == "cup" and pushed["message"]["id"] == line["id"]
    assert [m["text"] for m in await connect_and_read(connect)] == ["welcome to the cup"]


async def connect_and_read(connect: Any) -> list[dict[str, Any]]:
    reader = await connect(name="reader")
    return await reader.chat_history(tournament="cup")


async def test_chat_survives_a_server_restart(db_url: str) -> None:
    """The lines are the database's: a restarted server resumes the game, and a player back in
    their seat is sent the room's chat read from there."""
    first = Server(ServerConfig(host="127.0.0.1", port=0, db_url=db_url))
    await first.start()
    alice, bob = await Client.connect(first.url, name="alice"), await Client.connect(first.url, name="bob")
    code = (await alice.create_room("tictactoe", seat=0))["room"]
    await bob.join(code)
    await alice.next_update(code)
    await alice.act(code, 4, seq=0)  # a game in play is resumed after a restart
    said = [await alice.chat("before the restart", room=code), await bob.chat("see you on the other side", room=code)]
    token = first.rooms[code].core.token_for(1)
    await alice.close()
    await bob.close()
    await first.stop()

    second = Server(ServerConfig(host="127.0.0.1", port=0, db_url=db_url))
    await second.start()
    try:
        bob = await Client.connect(second.url, name="bob")
        await bob.join(code, seat=1, token=token)
        pushed = await next_of(bob, code, "chat_history")
        assert [m["id"] for m in pushed["messages"]] == [line["id"] for line in said]
        await bob.close()
    finally:
        await second.stop()
