"""Who is who: account names cannot be borrowed by guests, only bot accounts are seated as bots,
and a custom bot (any agent name of its own, any language) can be asked for by its account."""

from __future__ import annotations

import asyncio
import random

import pytest

from partida.client import ServerError
from partida.server.app import Server


async def test_a_guest_cannot_take_an_account_name_in_any_case(server: Server, connect) -> None:
    await server.store.create_user("Alice", "correct horse battery")
    await server.store.create_bot("mybot")
    # the pool's prefix also in look-alike letters (full-width p, Cyrillic o): the server's own
    for name in ("Alice", "alice", "MYBOT", "pool-alphabeta", "Pool-Random", "\uff50ool-mcts", "p\u043e\u043el-x"):
        with pytest.raises(ServerError) as refused:
            await connect(name=name)
        assert refused.value.code == "name_reserved", name
    guest = await connect(name="alice2")
    assert guest.welcome["you"] == {"name": "alice2", "kind": "guest", "agent": None}


async def test_only_a_bot_account_may_declare_an_agent(server: Server, connect) -> None:
    for fields in ({"agent": "alphabeta"}, {"games": ["othello"]}, {"name": "pool-x", "agent": "random"}):
        with pytest.raises(ServerError) as refused:
            await connect(**fields)
        assert refused.value.code in ("not_a_bot", "name_reserved"), fields
    assert server.bot_sessions() == []
    await server.store.create_user("carol", "correct horse battery")
    with pytest.raises(ServerError) as refused:
        await connect(name="carol", password="correct horse battery", agent="random")
    assert refused.value.code == "not_a_bot"


async def test_guests_are_marked_as_guests_in_room_summaries(connect, bots) -> None:
    await bots("random")
    guest = await connect(name="dora")
    created = await guest.create_room("tictactoe", seat=0, bots={1: "random"})
    seats = created["summary"]["seats"]
    assert (seats[0]["name"], seats[0]["kind"]) == ("dora", "guest")
    assert (seats[1]["kind"], seats[1]["agent"]) == ("bot", "random")


async def test_list_games_names_the_connected_bots(connect, bots) -> None:
    await bots("random", "alphabeta")
    games = {g["name"]: g for g in await (await connect(name="eve")).list_games()}
    assert {"random", "alphabeta"} <= set(games["tictactoe"]["bots"])


async def _play_seated_games(bot) -> None:  # type: ignore[no-untyped-def]
    """A custom bot written against the bare SDK: plays every room it is seated in at random."""
    rng = random.Random(7)
    games: set[asyncio.Task[dict]] = set()
    while True:
        notice = await bot.seated.get()
        game = asyncio.create_task(bot.play(notice["room"], lambda update, prompt: prompt.random_answer(rng)))
        games.add(game)
        game.add_done_callback(games.discard)


async def test_a_custom_bot_is_seated_by_its_account_name(server: Server, connect) -> None:
    _, token = await server.store.create_bot("Deep-Tac")
    bot = await connect(token=token, agent="my-own-brain", games=["tictactoe"])
    assert bot.welcome["you"] == {"name": "Deep-Tac", "kind": "bot", "agent": "my-own-brain"}
    player = asyncio.create_task(_play_seated_games(bot))
    try:
        frank = await connect(name="frank")
        created = await frank.create_room("tictactoe", seat=0, bots={1: "deep-tac"})
        assert created["summary"]["seats"][1]["name"] == "Deep-Tac"
        final = await asyncio.wait_for(frank.play(created["room"], lambda u, p: p.random_answer(random.Random(1))), 20)
        assert final["status"] == "finished"
        # The same bot by its agent name, and a game it did not declare.
        room = await frank.create_room("tictactoe", seat=0, auto_start=False)
        added = await frank.add_bot(room["room"], "my-own-brain")
        assert added["summary"]["seats"][1]["name"] == "Deep-Tac"
        with pytest.raises(ServerError) as refused:
            await frank.create_room("othello", seat=0, bots={1: "Deep-Tac"})
        assert refused.value.code == "bot_declines" and "it plays tictactoe" in refused.value.message
        with pytest.raises(ServerError) as refused:
            await frank.create_room("tictactoe", seat=0, bots={1: "nobody-at-all"})
        assert refused.value.code == "unknown_agent"
    finally:
        player.cancel()


async def test_an_agent_name_seats_the_servers_own_bot_before_someones_account(server: Server, connect) -> None:
    """`--vs random` means the built-in bot: someone's account running the random agent (here
    connected first, and as idle) is seated only by its account name."""
    players = []
    for name in ("mybot", "pool-random"):
        _, token = await server.store.create_bot(name)
        bot = await connect(token=token, agent="random", games=["tictactoe"])
        players.append(asyncio.create_task(_play_seated_games(bot)))
    try:
        frank = await connect(name="frank")
        created = await frank.create_room("tictactoe", seat=0, bots={1: "random"}, auto_start=False)
        assert created["summary"]["seats"][1]["name"] == "pool-random"
        created = await frank.create_room("tictactoe", seat=0, bots={1: "mybot"}, auto_start=False)
        assert created["summary"]["seats"][1]["name"] == "mybot"
    finally:
        for player in players:
            player.cancel()
