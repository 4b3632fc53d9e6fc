"""Every game ends: resign, draw offers (agreed, declined, lapsed), abort, rematch with colours
swapped, abandonment after the grace period, and every bad request refused with a stable code
and nothing changed. Real server, real clients."""

from __future__ import annotations

from typing import Any

import pytest

from partida.client import Client, ServerError
from partida.server.app import Server
from tests.helpers import final_update


async def two_player_room(connect, **create: Any) -> tuple[Client, Client, str]:  # type: ignore[no-untyped-def]
    alice, bob = await connect(name="alice"), await connect(name="bob")
    code = (await alice.create_room("tictactoe", seat=0, public=False, **create))["room"]
    await bob.join(code)
    return alice, bob, code


async def refused(code: str, call: Any) -> None:
    with pytest.raises(ServerError) as exc:
        await call
    assert exc.value.code == code, exc.value.message


async def test_resign_gives_the_other_seat_the_game(connect, server: Server) -> None:
    alice, bob, code = await two_player_room(connect)
    await alice.act(code, 4)
    await bob.resign(code)
    final = await final_update(alice, code)
    assert final["result"]["reason"] == "resign" and final["result"]["winners"] == [0]
    stored = await server.store.load_game(final["game_id"])
    assert stored.status == "finished" and stored.result["reason"] == "resign"


async def test_finished_games_reach_their_subscribers_once_stored(connect, server: Server) -> None:
    """Ladders and tournaments learn of a finished game from `Rooms.on_finished`, in order,
    once, after its result is stored."""
    told: list[tuple[str, str, str | None]] = []

    def subscriber(room: Any) -> None:
        told.append((room.code, room.core.status, room.core.result and room.core.result["reason"]))

    server.rooms.on_finished(subscriber)
    try:
        alice, bob, code = await two_player_room(connect)
        await bob.resign(code)
        await final_update(alice, code)
        assert told == [(code, "finished", "resign")]
        await refused("game_over", alice.resign(code))
        assert len(told) == 1
    finally:
        server.rooms.ports.finished.remove(subscriber)


async def test_a_draw_agreed(connect, server: Server) -> None:
    alice, bob, code = await two_player_room(connect)
    await alice.offer_draw(code)
    offered = await bob.next_update(code, 5)
    while offered["draw_offer"] != 0:
        offered = await bob.next_update(code, 5)
    await bob.accept_draw(code)
    final = await final_update(alice, code)
    assert final["result"] == {"scores": [0.5, 0.5], "ranks": [1, 1], "winners": [0, 1], "reason": "draw_agreed"}


async def test_a_draw_declined_and_a_draw_offer_lapsing(connect, server: Server) -> None:
    alice, bob, code = await two_player_room(connect)
    await alice.offer_draw(code)
    await bob.decline_draw(code)
    await refused("no_draw_offer", bob.accept_draw(code))  # declined: nothing left to accept
    await alice.act(code, 4)
    await alice.offer_draw(code)
    await bob.act(code, 0)  # the offerer's opponent moves: the offer lapses
    await refused("no_draw_offer", bob.accept_draw(code))
    room = server.rooms[code]
    assert room.core.status == "playing" and room.core.seq == 2 and room.core.endings.draw_offer is None


async def test_abort_before_every_seat_has_moved(connect, server: Server) -> None:
    alice, bob, code = await two_player_room(connect)
    await alice.act(code, 4)
    await bob.abort(code)  # bob has not moved yet
    final = await final_update(alice, code)
    assert final["result"]["reason"] == "aborted" and final["result"]["winners"] == []
    stored = await server.store.load_game(final["game_id"])
    assert stored.status == "aborted" and stored.result is None


async def test_rematch_swaps_colours(connect, server: Server) -> None:
    alice, bob, code = await two_player_room(connect, clock={"initial": 60, "increment": 1})
    await alice.act(code, 4)
    await bob.resign(code)
    await final_update(alice, code)
    first = await alice.rematch(code)
    assert first["rematch"] is None  # bob has not asked yet
    second = await bob.rematch(code)
    new = second["rematch"]
    assert new["code"] != code and new["clock"] == {"initial": 60.0, "increment": 1.0, "timeouts": 3}
    assert [s["name"] for s in new["seats"]] == ["bob", "alice"]
    notice = await alice.next_message(code, 5)
    while notice["type"] != "rematch":
        notice = await alice.next_message(code, 5)
    assert notice["seat"] == 1 and notice["new_room"]["code"] == new["code"]
    update = await bob.next_update(new["code"], 5)
    assert update["seat"] == 0 and update["decision"] is not None  # bob moves first now
    await bob.act(new["code"], 0)
    await alice.act(new["code"], 4)
    # the token from the rematch notice reclaims alice's new seat
    again = await connect(name="alice")
    assert (await again.join(new["code"], seat=1, token=notice["token"]))["seat"] == 1


async def test_a_bot_accepts_a_rematch_by_itself(connect, server: Server, bots) -> None:  # type: ignore[no-untyped-def]
    await bots("random")
    alice = await connect(name="alice")
    code = (await alice.create_room("tictactoe", seat=0, public=False, bots={1: "random"}))["room"]
    await alice.resign(code)
    await final_update(alice, code)
    new = (await alice.rematch(code))["rematch"]
    assert new is not None and new["seats"][1]["name"] == "alice"
    update = await alice.next_update(new["code"], 5)  # the bot opens the new game
    while update["seq"] == 0:
        update = await alice.next_update(new["code"], 5)
    assert update["last"]["seat"] == 0


async def test_an_abandoned_game_is_lost_by_the_absent_seat(connect, server: Server) -> None:
    alice, bob, code = await two_player_room(connect, abandon_after=0.3)
    await alice.act(code, 4)
    await bob.act(code, 0)
    await bob.close()
    seen_away = False
    while True:
        message = await alice.next_message(code, 5)
        if message["type"] == "room":
            seen_away = seen_away or message["summary"]["seats"][1].get("connected") is False
        if message["type"] == "update" and message["status"] == "finished":
            break
    assert seen_away
    assert message["result"]["reason"] == "abandoned" and message["result"]["winners"] == [0]


async def test_an_abandoned_game_before_two_moves_is_aborted(connect, server: Server) -> None:
    alice, bob, code = await two_player_room(connect, abandon_after=0.2)
    await bob.close()
    final = await final_update(alice, code)
    assert final["result"]["reason"] == "aborted"


async def test_a_seat_back_within_the_grace_period_plays_on(connect, server: Server) -> None:
    alice, bob, code = await two_player_room(connect, abandon_after=0.5)
    token = server.rooms[code].core.token_for(1)
    await bob.close()
    bob = await connect(name="bob")
    await bob.join(code, seat=1, token=token)
    await alice.act(code, 4)
    await bob.act(code, 0)
    assert server.rooms[code].core.status == "playing" and not server.rooms[code].core.endings.away


async def test_bad_requests_change_nothing(connect, server: Server) -> None:
    alice, bob, code = await two_player_room(connect)
    room = server.rooms[code]
    await refused("game_not_over", alice.rematch(code))
    await refused("not_seated", alice.resign(code, seat=1))  # resigning for another seat
    await refused("no_draw_offer", bob.accept_draw(code))
    await refused("no_draw_offer", alice.decline_draw(code))
    await alice.offer_draw(code)
    await refused("no_draw_offer", alice.accept_draw(code))  # one's own offer
    await alice.act(code, 4)
    await bob.act(code, 0)
    await refused("abort_too_late", alice.abort(code))
    watcher = await connect(name="watcher")
    await refused("not_seated", watcher.resign(code))
    await refused("no_such_room", alice.resign("NOSUCH"))
    assert room.core.status == "playing" and room.core.seq == 2 and room.core.result is None
    await alice.act(code, 8)  # the game goes on
    for clock in (
        {"initial": -5, "increment": 1},
        {"initial": 0, "increment": 2},
        {"initial": 100000},
        {"per_move": 0},
        {"per_move": 90000},
        {"initial": 60, "per_move": 5},
        {"hours": 1},
    ):
        await refused("bad_clock", alice.create_room("tictactoe", seat=0, clock=clock))
    await refused("bad_field", alice.request("create_room", game="tictactoe", clock="5+3"))
    await refused("bad_options", alice.create_room("tictactoe", seat=0, abandon_after=-1))


async def test_draws_are_for_two_seat_games(connect, server: Server) -> None:
    alice, bob, carol = [await connect(name=n) for n in ("alice", "bob", "carol")]
    code = (await alice.create_room("crazyeights", seats=3, seat=0, public=False))["room"]
    await bob.join(code)
    await carol.join(code)
    await refused("draw_unavailable", alice.offer_draw(code))
    await refused("draw_unavailable", bob.accept_draw(code))
    assert server.rooms[code].core.result is None


async def test_resign_in_a_three_seat_game_drops_the_seat_out(connect, server: Server) -> None:
    alice, bob, carol = [await connect(name=n) for n in ("alice", "bob", "carol")]
    code = (await alice.create_room("crazyeights", seats=3, seat=0, public=False))["room"]
    await bob.join(code)
    await carol.join(code)
    await carol.resign(code)
    await refused("already_resigned", carol.resign(code))
    assert server.rooms[code].core.result is None  # the game goes on, the server's bot plays carol's seat
    await bob.resign(code)  # one seat left: alice wins
    final = await final_update(alice, code)
    assert final["result"]["reason"] == "resign"
    assert final["result"]["winners"] == [0] and final["result"]["ranks"] == [1, 2, 3]


async def test_a_resignation_says_why_in_the_stored_result(connect, server: Server) -> None:
    """A bot whose engine failed resigns with a note: every seat's, to the end of the game, is
    in the result that is stored and told (a three-seat game goes on after the first)."""
    alice, bob, carol = [await connect(name=n) for n in ("alice", "bob", "carol")]
    code = (await alice.create_room("crazyeights", seats=3, seat=0, public=False))["room"]
    await bob.join(code)
    await carol.join(code)
    await refused("bad_field", carol.resign(code, note=""))
    await refused("bad_field", carol.resign(code, note="x" * 301))
    assert server.rooms[code].core.endings.resigned == []  # a refused note resigns nothing
    await carol.resign(code, note="stdio bot 'python bot.py': bad JSON: 'hello'")
    await bob.resign(code)  # no note: none recorded for bob
    final = await final_update(alice, code)
    notes = {"2": "stdio bot 'python bot.py': bad JSON: 'hello'"}
    assert final["result"]["reason"] == "resign" and final["result"]["notes"] == notes
    stored = await server.store.load_game(final["game_id"])
    assert stored.result["notes"] == notes


@pytest.mark.realtime
async def test_a_game_nobody_returns_to_after_a_restart_ends(db_url: str) -> None:
    from partida.server.app import ServerConfig

    first = Server(ServerConfig(port=0, db_url=db_url))
    await first.start()
    alice = await Client.connect(first.url, name="alice")
    bob = await Client.connect(first.url, name="bob")
    code = (await alice.create_room("tictactoe", seat=0, public=False, abandon_after=0.3))["room"]
    await bob.join(code)
    for seat, (player, square) in enumerate([(alice, 4), (bob, 0), (alice, 8)]):
        await player.act(code, square, seq=seat)
    game_id = first.rooms[code].core.game_id
    await alice.close()
    await bob.close()
    await first.stop()

    second = Server(ServerConfig(port=0, db_url=db_url))
    await second.start()
    try:
        assert second.rooms[code].core.result is None  # resumed, waiting for its players
        watcher = await Client.connect(second.url, name="watcher")
        await watcher.watch(code)
        final = await final_update(watcher, code, 10)
        assert final["result"]["reason"] == "abandoned" and final["result"]["ranks"] == [1, 1]
        assert (await second.store.load_game(game_id)).status == "finished"
        assert not [g for g in await second.store.unfinished_games() if g.id == game_id]
        await watcher.close()
    finally:
        await second.stop()
