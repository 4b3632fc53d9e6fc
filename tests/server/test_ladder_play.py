"""Ladders under the conditions a long-running ladder meets: a bot that drops out mid-game, a game of
four seats, and the accounts that may not join (people, a second connection of the same bot)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from partida.bots.runner import BotRunner
from partida.client import Client, ServerError
from partida.server.app import Server
from tests.helpers import make_bot, wait_for


@pytest.mark.realtime
async def test_a_bot_that_disconnects_mid_game_loses_on_time_and_the_ladder_goes_on(
    server: Server, runners: Callable[..., Awaitable[BotRunner]]
) -> None:
    ladder = await server.store.ladders.create("drop", "tictactoe", {}, 2, {"per_move": 0.5}, 2)
    quitter = await Client.connect(server.url, token=await make_bot(server, "quitter"), agent="random")
    await quitter.ladder_join("drop")
    for name in ("stay-a", "stay-b"):
        await runners(name, ladders=["drop"])
    notice = await asyncio.wait_for(quitter.ladder_events.get(), 30)
    assert notice["type"] == "ladder_game"
    quitter_game = notice["game_id"]
    await quitter.close()  # gone mid-game, without a word: its clock runs out

    async def lost_on_time() -> bool:
        stored = await server.store.load_game(quitter_game)
        return stored.status == "finished"

    await wait_for(lost_on_time, "the quitter's game to end on time", timeout=30)
    stored = await server.store.load_game(quitter_game)
    seat = [name for _, _, name in stored.seat_list].index("quitter")
    assert stored.result["reason"] == "time" and stored.result["ranks"][seat] == 2
    changes = await server.store.ladders.game_ratings(quitter_game)
    assert [c.name for c in changes if c.rank == 2] == ["quitter"]  # rated like any other loss

    rated_then = (await server.store.ladders.require("drop")).rated_games

    async def others_played_on() -> bool:
        return (await server.store.ladders.require("drop")).rated_games >= rated_then + 4

    await wait_for(others_played_on, "four more rated games without the quitter")
    later = [g for g in await server.store.ladders.games(ladder.id) if g.game_id > quitter_game]
    seated_later = {name for g in later for _, _, name in g.seats}
    assert "quitter" not in seated_later and seated_later == {"stay-a", "stay-b"}
    assert (await server.store.ladders.rerate(ladder.id)).differences == []


@pytest.mark.slow
async def test_a_four_seat_hearts_ladder_rates_every_seat(
    server: Server, runners: Callable[..., Awaitable[BotRunner]]
) -> None:
    ladder = await server.store.ladders.create("hearts", "hearts", {"target": 1}, 4, {"per_move": 10.0}, 1)
    for name, agent in (("ism-1", "ismcts"), ("ism-2", "ismcts"), ("rnd-1", "random"), ("rnd-2", "random")):
        await runners(name, agent, ladders=["hearts"], params={"seconds": 0.02})

    async def two_rated() -> bool:
        return (await server.store.ladders.require("hearts")).rated_games >= 2

    await wait_for(two_rated, "two rated Hearts games", timeout=120)
    history = await server.store.ladders.history(ladder.id)
    by_game: dict[int, list[Any]] = {}
    for change in history:
        by_game.setdefault(change.game_id, []).append(change)
    for game_id, changes in by_game.items():
        stored = await server.store.load_game(game_id)
        assert sorted(c.seat for c in changes) == [0, 1, 2, 3]  # all four seats rated
        assert [c.rank for c in sorted(changes, key=lambda c: c.seat)] == stored.result["ranks"]
        assert len({c.name for c in changes}) == 4
    table = await server.store.ladders.standings(ladder.id)
    assert {s.name for s in table} == {"ism-1", "ism-2", "rnd-1", "rnd-2"}
    assert len({s.games for s in table}) == 1  # everyone plays every game of a four-bot, four-seat ladder
    assert (await server.store.ladders.rerate(ladder.id)).differences == []


@pytest.mark.slow
async def test_people_and_second_connections_cannot_join_and_change_nothing(
    server: Server, connect: Callable[..., Awaitable[Client]]
) -> None:
    ladder = await server.store.ladders.create("solo", "tictactoe", {}, 2, {"per_move": 5.0}, 1)
    await server.store.create_user("ada", "a long password")
    ada = await connect(name="ada", password="a long password")
    with pytest.raises(ServerError) as info:
        await ada.ladder_join("solo")
    assert info.value.code == "bots_only"

    token = await make_bot(server, "twin")
    first = await connect(token=token, agent="random")
    await first.ladder_join("solo")
    second = await connect(token=token, agent="random")
    with pytest.raises(ServerError) as info:
        await second.ladder_join("solo")
    assert info.value.code == "ladder_joined_elsewhere"
    # the first connection is still the member: the refused twin leaving changes nothing, the first
    # one leaving ends the membership
    assert [s.name for s in await server.store.ladders.standings(ladder.id)] == ["twin"]
    live = await server.ladder_director.ladder("solo")
    assert len(live.members) == 1 and live.rooms == {}
    connected = len(server.sessions)
    await second.close()

    async def second_gone() -> bool:  # the server forgets a session and leaves its ladders in one step
        return len(server.sessions) == connected - 1

    await wait_for(second_gone, "the server to hear the refused twin leave", timeout=10)
    assert len(live.members) == 1
    await first.close()

    async def gone() -> bool:
        return not live.members

    await wait_for(gone, "the member to leave with its connection", timeout=10)
    await ada.close()
