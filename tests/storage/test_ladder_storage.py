"""Ladders in the database, on SQLite and PostgreSQL: a finished ladder game is rated in the
transaction that stores its result, aborted games are not, and `rerate` rebuilds the live table
bit for bit from the stored results."""

from __future__ import annotations

import asyncio
import random

import pytest
from sqlalchemy import update

from partida.competition.ratings import Rating, rate
from partida.storage.database import StorageError
from partida.storage.ladders import LadderExists
from partida.storage.models import LadderMember
from partida.storage.store import Store

CLOCK = {"per_move": 1.0}


async def play(store: Store, ladder_id: int, accounts: list[tuple[int, str]], ranks: list[int] | None) -> int:
    """Store one ladder game with these seats; finish it with `ranks`, or abort it (None)."""
    game_id = await store.create_game("tictactoe", {}, 1, "h", len(accounts), "LADDER", True)
    await store.ladders.add_game(ladder_id, game_id)
    await store.start_game(game_id, [(seat, a, name) for seat, (a, name) in enumerate(accounts)])
    if ranks is None:
        assert await store.finish_game(game_id, None, "aborted") == []
    else:
        await store.finish_game(game_id, {"scores": [0.0] * len(ranks), "ranks": ranks})
    return game_id


async def bots(store: Store, *names: str) -> list[tuple[int, str]]:
    return [((await store.create_bot(name))[0].id, name) for name in names]


async def test_create_and_list_ladders(store: Store) -> None:
    ladder = await store.ladders.create("main", "othello", {}, 2, CLOCK, 2)
    assert (ladder.name, ladder.game, ladder.seats, ladder.clock, ladder.concurrency) == (
        "main",
        "othello",
        2,
        CLOCK,
        2,
    )
    assert ladder.pairing == "rating" and ladder.rated_games == 0
    await store.ladders.create("hearts.4", "hearts", {"rounds": 1}, 4, CLOCK, 1, "random")
    assert [x.name for x in await store.ladders.all()] == ["hearts.4", "main"]
    with pytest.raises(LadderExists):
        await store.ladders.create("main", "tictactoe", {}, 2, CLOCK, 1)
    for bad in ("", "a/b", "x" * 33, "+", "-x"):
        with pytest.raises(StorageError, match="ladder name"):
            await store.ladders.create(bad, "tictactoe", {}, 2, CLOCK, 1)
    with pytest.raises(StorageError, match="at least one game"):
        await store.ladders.create("zero", "tictactoe", {}, 2, CLOCK, 0)
    with pytest.raises(StorageError, match="pairing"):
        await store.ladders.create("odd", "tictactoe", {}, 2, CLOCK, 1, "swiss")
    assert [x.name for x in await store.ladders.all()] == ["hearts.4", "main"]


@pytest.mark.realtime
async def test_a_finished_ladder_game_is_rated_with_its_result(store: Store) -> None:
    ladder = await store.ladders.create("main", "tictactoe", {}, 2, CLOCK, 1)
    (a, an), (b, bn) = await bots(store, "alpha", "beta")
    for account, _ in ((a, an), (b, bn)):
        await store.ladders.join(ladder.id, account)
    standings = await store.ladders.standings(ladder.id)
    assert [(s.name, s.games, s.rating) for s in standings] == [("alpha", 0, Rating()), ("beta", 0, Rating())]
    game_id = await play(store, ladder.id, [(b, bn), (a, an)], [2, 1])
    changes = await store.ladders.game_ratings(game_id)
    expected = rate([Rating(), Rating()], [2, 1])
    assert [(c.name, c.seat, c.rank, c.seq, c.after) for c in changes] == [
        ("beta", 0, 2, 1, expected[0]),
        ("alpha", 1, 1, 1, expected[1]),
    ]
    top, bottom = await store.ladders.standings(ladder.id)
    assert (top.name, top.games, top.wins, top.losses, top.rating) == ("alpha", 1, 1, 0, expected[1])
    assert (bottom.name, bottom.games, bottom.wins, bottom.losses) == ("beta", 1, 0, 1)
    assert (await store.ladders.require("main")).rated_games == 1


@pytest.mark.realtime
async def test_aborted_and_unladdered_games_are_not_rated(store: Store) -> None:
    ladder = await store.ladders.create("main", "tictactoe", {}, 2, CLOCK, 1)
    players = await bots(store, "alpha", "beta")
    await play(store, ladder.id, players, None)
    casual = await store.create_game("tictactoe", {}, 1, "h", 2, "CASUAL", True)
    await store.start_game(casual, [(seat, a, name) for seat, (a, name) in enumerate(players)])
    assert await store.finish_game(casual, {"scores": [1.0, 0.0], "ranks": [1, 2]}) == []
    assert await store.ladders.history(ladder.id) == []
    assert (await store.ladders.require("main")).rated_games == 0
    assert all(s.games == 0 for s in await store.ladders.standings(ladder.id))
    games = await store.ladders.games(ladder.id)
    assert [(g.status, g.rated_seq) for g in games] == [("aborted", None)]


@pytest.mark.realtime
async def test_ladder_games_ending_together_are_each_rated_once_in_order(store: Store) -> None:
    ladder = await store.ladders.create("main", "tictactoe", {}, 2, CLOCK, 3)
    players = await bots(store, "a", "b", "c", "d", "e", "f")
    games = []
    for pair in (players[0:2], players[2:4], players[4:6]):
        game_id = await store.create_game("tictactoe", {}, 1, "h", 2, "LADDER", True)
        await store.ladders.add_game(ladder.id, game_id)
        await store.start_game(game_id, [(seat, a, name) for seat, (a, name) in enumerate(pair)])
        games.append(game_id)
    casual = await store.create_game("tictactoe", {}, 1, "h", 2, "CASUAL", True)
    # One batch of the group writer ends the three ladder games and a casual one.
    changes = await asyncio.gather(
        *(store.finish_game(g, {"scores": [1.0, 0.0], "ranks": [1, 2]}) for g in games),
        store.finish_game(casual, {"scores": [1.0, 0.0], "ranks": [1, 2]}),
    )
    assert changes[3] == []
    assert [[c.game_id for c in game] for game in changes[:3]] == [[g, g] for g in games]
    assert sorted(c.seq for game in changes[:3] for c in game) == [1, 1, 2, 2, 3, 3]
    assert (await store.ladders.require("main")).rated_games == 3
    assert sorted(s.games for s in await store.ladders.standings(ladder.id)) == [1] * 6
    report = await store.ladders.rerate(ladder.id)
    assert report.differences == [] and report.games == 3


@pytest.mark.realtime
async def test_rerate_rebuilds_the_live_table_bit_for_bit(store: Store) -> None:
    ladder = await store.ladders.create("three", "tictactoe", {}, 3, CLOCK, 2)
    players = await bots(store, "a", "b", "c", "d", "e")
    rng = random.Random(7)
    for _ in range(25):
        seated = rng.sample(players, 3)
        ranks = None if rng.random() < 0.1 else [rng.randint(1, 3) for _ in range(3)]
        await play(store, ladder.id, seated, ranks)
    report = await store.ladders.rerate(ladder.id)
    assert report.differences == []
    live = await store.ladders.standings(ladder.id)
    assert [s.record() for s in report.standings] == [s.record() for s in live]
    assert report.games == (await store.ladders.require("three")).rated_games > 15
    history = await store.ladders.history(ladder.id)
    assert [c.seq for c in history] == sorted(c.seq for c in history)

    # a live number changed behind the ladder's back is reported
    async with store.db.write() as conn:
        await conn.execute(update(LadderMember).where(LadderMember.account_id == players[0][0]).values(mu=1.0))
    report = await store.ladders.rerate(ladder.id)
    assert len(report.differences) == 1 and report.differences[0].startswith("a: live")
