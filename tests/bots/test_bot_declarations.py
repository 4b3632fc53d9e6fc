"""A bot is offered and seated only where its hello's declaration allows (protocol/accepts.py):
the issue's repros (mcts and alphabeta offered for card games, seated, and never moving) are
refused at once with `bot_declines`, naming what the bot plays, on every path that seats a bot."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from partida.client import Client, ServerError
from partida.protocol.accepts import Accepts
from partida.server.app import Server

CLOCK = {"per_move": 10.0}


async def _declines(request: Awaitable[Any]) -> str:
    with pytest.raises(ServerError) as refused:
        await request
    assert refused.value.code == "bot_declines", refused.value.message
    return refused.value.message


async def _bot(server: Server, connect: Callable[..., Awaitable[Client]], name: str, **hello: Any) -> Client:
    _, token = await server.store.create_bot(name)
    return await connect(token=token, **hello)


async def test_search_agents_are_neither_listed_nor_seated_for_hidden_information_games(
    server: Server, connect: Callable[..., Awaitable[Client]], bots: Any
) -> None:
    await bots("mcts", "alphabeta", "random")
    listed = {g["name"]: set(g["bots"]) for g in await (await connect(name="lister")).list_games()}
    for game in ("hearts", "duel", "agram", "crazyeights", "simplehearts", "throwdicematchcard"):
        assert listed[game] == {"random"}, game
    assert listed["tictactoe"] == {"mcts", "alphabeta", "random"}

    ada = await connect(name="ada")
    message = await _declines(ada.create_room("hearts", seat=0, bots={1: "mcts"}))
    assert "mcts does not play hearts, a game of hidden information" in message
    assert "it plays dicepoints, othello, tictactoe; perfect-information games only" in message
    room = await ada.create_room("crazyeights", seat=0, auto_start=False)
    message = await _declines(ada.add_bot(room["room"], "alphabeta"))
    assert "alphabeta does not play crazyeights" in message
    assert [s.name for s in server.rooms[room["room"]].core.seats if s is not None] == ["ada"]  # nothing seated
    assert all(not s.rooms for s in server.bot_sessions())
    # the same bot where it can play: seated
    added = await ada.create_room("tictactoe", seat=0, bots={1: "mcts"}, clock=CLOCK)
    assert added["summary"]["seats"][1]["agent"] == "mcts"


async def test_challenges_seeks_and_tournaments_refuse_a_bot_at_once(
    server: Server, connect: Callable[..., Awaitable[Client]]
) -> None:
    searcher = await _bot(server, connect, "searcher", agent="mcts")  # an old hello: no games named
    await server.store.create_user("bea", "a long password")
    bea = await connect(name="bea", password="a long password")
    message = await _declines(bea.challenge("searcher", "hearts"))
    assert "the bot searcher does not play hearts" in message
    assert bea.challenges.empty()  # no challenge was sent, none will be declined later
    await _declines(searcher.seek("crazyeights", allow_bots=True, clock=CLOCK))
    seek = (await bea.seek("crazyeights", allow_bots=True, clock=CLOCK))["seek"]
    await _declines(searcher.seek_take(seek["id"]))
    assert [s["id"] for s in await bea.list_seeks()] == [seek["id"]]  # still open
    await bea.tournament_create("cards", "hearts", "swiss", {"initial": 60.0}, entry="both", rounds=1, starts_in=600)
    await _declines(searcher.tournament_join("cards"))
    assert {t["name"]: t for t in await bea.tournament_list()}["cards"]["entrants"] == 0
    ladder = await server.store.ladders.create("eights", "crazyeights", {}, 2, CLOCK, 1)
    assert ladder is not None
    with pytest.raises(ServerError) as refused:
        await searcher.ladder_join("eights")
    assert refused.value.code == "wrong_game" and "hidden information" in refused.value.message


async def test_a_declaration_of_seats_clock_and_games_at_once_is_held_to(
    server: Server, connect: Callable[..., Awaitable[Client]]
) -> None:
    terms = Accepts.from_hello({"crazyeights": [3], "tictactoe": None}, clock_min=5, max_games_per_opponent=1)
    bot = await _bot(server, connect, "picky", agent="picky-brain", accepts=terms)
    ada = await connect(name="ada")
    listed = {g["name"]: g["bots"] for g in await ada.list_games()}
    assert listed["crazyeights"] == ["picky-brain"] and listed["hearts"] == []
    message = await _declines(ada.create_room("crazyeights", seats=2, seat=0, bots={1: "picky"}))
    assert "does not play crazyeights with 2 seats: it plays crazyeights (3 seats), tictactoe" in message
    message = await _declines(ada.create_room("crazyeights", seats=3, seat=0, bots={1: "picky"}, clock={"per_move": 2}))
    assert "2-second clock" in message and "clocks of 5 to any seconds" in message
    await ada.create_room("crazyeights", seats=3, seat=0, bots={1: "picky"}, clock=CLOCK, auto_start=False)
    message = await _declines(ada.create_room("tictactoe", seat=0, bots={1: "picky"}, clock=CLOCK))
    assert "is playing 1 games against you" in message
    ben = await connect(name="ben")  # another opponent: a game of its own
    created = await ben.create_room("tictactoe", seat=0, bots={1: "picky"}, clock=CLOCK, auto_start=False)
    assert created["summary"]["seats"][1]["name"] == "picky"
    assert not bot.closed.is_set()


async def test_a_declaration_that_makes_no_sense_is_a_bad_field(
    server: Server, connect: Callable[..., Awaitable[Client]]
) -> None:
    _, token = await server.store.create_bot("muddled")
    for nonsense in (
        Accepts(clock_min=10.0, clock_max=5.0),
        Accepts(max_games=0),
        Accepts({"crazyeights": frozenset({0})}),
    ):
        with pytest.raises(ServerError) as refused:
            await Client.connect(server.url, token=token, accepts=nonsense)
        assert refused.value.code == "bad_field", nonsense
    with pytest.raises(ServerError) as refused:
        await connect(name="guest", accepts=Accepts(hidden_information=False))
    assert refused.value.code == "not_a_bot"


async def test_partida_bots_flags_narrow_what_its_runner_declares(
    server: Server, connect: Callable[..., Awaitable[Client]], runners: Any
) -> None:
    import argparse

    from partida.cli import bot as bot_cli

    parser = argparse.ArgumentParser()
    bot_cli.register(parser.add_subparsers())
    args = parser.parse_args(
        ["bot", "random", "--game", "crazyeights:3", "--game", "tictactoe", "--clock-max", "60", "--per-opponent", "1"]
    )
    terms, games = bot_cli._terms(args)
    await runners("narrow", "random", games=games, terms=terms)
    ada = await connect(name="ada")
    async with asyncio.timeout(10):
        while "random" not in {b for g in await ada.list_games() for b in g["bots"]}:
            await asyncio.sleep(0.05)
    listed = {g["name"]: g["bots"] for g in await ada.list_games()}
    assert listed["crazyeights"] == listed["tictactoe"] == ["random"] and listed["othello"] == []
    message = await _declines(ada.create_room("tictactoe", seat=0, bots={1: "narrow"}))  # the 900 s default clock
    assert "does not play under a 900-second clock" in message
    message = await _declines(ada.create_room("crazyeights", seat=0, bots={1: "narrow"}, clock=CLOCK))
    assert "with 2 seats" in message
    created = await ada.create_room("tictactoe", seat=0, bots={1: "narrow"}, clock=CLOCK)
    assert created["summary"]["seats"][1]["name"] == "narrow"
    assert "against you" in await _declines(ada.create_room("tictactoe", seat=0, bots={1: "narrow"}, clock=CLOCK))


async def test_the_refusal_carries_the_bots_declaration(server: Server, bots: Any) -> None:
    import json

    import websockets

    await bots("mcts")
    async with websockets.connect(server.url) as ws:
        await ws.send(json.dumps({"type": "hello", "version": 2, "name": "raw"}))
        assert json.loads(await ws.recv())["type"] == "welcome"
        await ws.send(json.dumps({"type": "create_room", "id": 1, "game": "hearts", "seat": 0, "bots": {"1": "mcts"}}))
        error = json.loads(await ws.recv())
    assert (error["type"], error["code"], error["id"]) == ("error", "bot_declines", 1)
    accepts = error["accepts"]
    assert accepts["hidden_information"] is False and "hearts" not in accepts["games"]
    assert accepts["games"]["tictactoe"] is None  # any seat count
