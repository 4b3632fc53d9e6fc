"""Fencing: every game write of a node is refused once its lease may have lapsed, before anything
reaches the database; the writes a single server makes are never fenced."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from partida.storage.database import Database, NotWritten
from partida.storage.fencing import Fence
from partida.storage.models import ActionRecord, GameRecord, PersonRatingChange, SeatRecord
from partida.storage.store import GAME_WRITES, Store

# Every other public method of `Store`: reads, and accounts (not a game's rows, so no node owns
# them). A method added to `Store` must be named in `GAME_WRITES` or here.
NOT_GAME_WRITES = {
    "create_user",
    "check_password",
    "set_password",
    "create_bot",
    "check_token",
    "get_account",
    "reserved_name",
    "get_account_by_name",
    "load_game",
    "unfinished_games",
    "ended_games",
    "list_games",
}


def arguments(game_id: int) -> dict[str, tuple[Any, ...]]:
    """For each game write, arguments that would change game `game_id` (or add a game)."""
    return {
        "create_game": ("tictactoe", {}, 1, "hash", 2, "ROOM2", True),
        "set_seat": (game_id, 1, None, "bea"),
        "start_game": (game_id, [(0, None, "ann")]),
        "append_action": (game_id, 0, 0, 4),
        "finish_game": (game_id, {"scores": [1, 0], "ranks": [1, 2], "winners": [0]}),
        "save_endings": (game_id, {"resigned": [0]}),
        "judge_farming": (game_id, [1, 2], ["10.0.0.1", "10.0.0.1"], time.time()),
        "rate_game": (game_id,),
    }


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = await Database.open(f"sqlite:///{tmp_path / 'fenced.db'}")
    try:
        yield database
    finally:
        await database.close()


async def new_game(store: Store) -> int:
    return await store.create_game("tictactoe", {}, 1, "hash", 2, "ROOM1", True)


async def rated_finished_game(store: Store) -> int:
    """A finished rated game of two accounts: what `rate_game` changes."""
    ann = await store.create_user("ann", "ann horse battery")
    bea = await store.create_user("bea", "bea horse battery")
    clock = {"initial": 180, "increment": 2}
    game_id = await store.create_game("tictactoe", {}, 2, "hash", 2, "ROOM3", True, clock=clock, rated=True)
    await store.start_game(game_id, [(0, ann.id, "ann"), (1, bea.id, "bea")])
    await store.finish_game(game_id, {"scores": [1, 0], "ranks": [1, 2], "winners": [0]})
    return game_id


async def contents(db: Database) -> tuple[Any, ...]:
    async with db.session() as session:
        columns = (GameRecord.id, GameRecord.status, GameRecord.endings, GameRecord.rated, GameRecord.farming)
        games = list(await session.execute(select(*columns)))
        seats = await session.scalar(select(func.count()).select_from(SeatRecord))
        actions = await session.scalar(select(func.count()).select_from(ActionRecord))
        ratings = await session.scalar(select(func.count()).select_from(PersonRatingChange))
    return tuple(map(tuple, games)), seats, actions, ratings


def test_every_public_method_of_the_store_is_a_game_write_or_known_not_to_be_one() -> None:
    public = {name for name, _ in inspect.getmembers(Store, inspect.iscoroutinefunction) if not name.startswith("_")}
    assert set(GAME_WRITES) <= public
    unknown = public - set(GAME_WRITES) - NOT_GAME_WRITES
    assert not unknown, f"name {sorted(unknown)} in GAME_WRITES (if it writes a game) or in NOT_GAME_WRITES"
    assert set(GAME_WRITES) == set(arguments(0))


@pytest.mark.slow
@pytest.mark.parametrize("write", GAME_WRITES)
async def test_each_game_write_is_refused_past_the_fence_and_changes_nothing(db: Database, write: str) -> None:
    game_id = await new_game(Store(db))
    if write == "rate_game":
        game_id = await rated_finished_game(Store(db))
    before = await contents(db)
    fence = Fence(lease=10.0)  # never renewed: lapsed
    fenced = Store(db, fence)
    with pytest.raises(NotWritten, match="could not renew its lease"):
        await getattr(fenced, write)(*arguments(game_id)[write])
    assert await contents(db) == before
    fence.renewed(asyncio.get_running_loop().time())  # renewed: the same write goes through
    await getattr(fenced, write)(*arguments(game_id)[write])
    assert await contents(db) != before


@pytest.mark.realtime
async def test_a_store_without_a_fence_writes_whenever_asked(db: Database) -> None:
    store = Store(db)
    game_id = await new_game(store)
    for write, args in arguments(game_id).items():
        await getattr(store, write)(*args)
    games, seats, actions, _ = await contents(db)
    assert len(games) == 2 and seats == 2 and actions == 1
