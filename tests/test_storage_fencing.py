"""Fencing: every game write of a node is refused once its lease may have lapsed, before anything
reaches the database; the writes a single server makes are never fenced."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from partida.storage.database import Database, NotWritten
from partida.storage.fencing import Fence
from partida.storage.models import ActionRecord, GameRecord, SeatRecord
from partida.storage.store import GAME_WRITES, Store

# Every other public method of `Store`: reads, and accounts (not a game's rows, so no node owns
# them). A method added to `Store` must be named in `GAME_WRITES` or here.
NOT_GAME_WRITES = {
    "create_user",
    "check_password",
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


async def contents(db: Database) -> tuple[Any, ...]:
    async with db.session() as session:
        games = list(await session.execute(select(GameRecord.id, GameRecord.status, GameRecord.endings)))
        seats = await session.scalar(select(func.count()).select_from(SeatRecord))
        actions = await session.scalar(select(func.count()).select_from(ActionRecord))
    return tuple(map(tuple, games)), seats, actions


def test_every_public_method_of_the_store_is_a_game_write_or_known_not_to_be_one() -> None:
    public = {name for name, _ in inspect.getmembers(Store, inspect.iscoroutinefunction) if not name.startswith("_")}
    assert set(GAME_WRITES) <= public
    unknown = public - set(GAME_WRITES) - NOT_GAME_WRITES
    assert not unknown, f"name {sorted(unknown)} in GAME_WRITES (if it writes a game) or in NOT_GAME_WRITES"
    assert set(GAME_WRITES) == set(arguments(0))


@pytest.mark.parametrize("write", GAME_WRITES)
async def test_each_game_write_is_refused_past_the_fence_and_changes_nothing(db: Database, write: str) -> None:
    game_id = await new_game(Store(db))
    before = await contents(db)
    fence = Fence(lease=10.0)  # never renewed: lapsed
    fenced = Store(db, fence)
    with pytest.raises(NotWritten, match="could not renew its lease"):
        await getattr(fenced, write)(*arguments(game_id)[write])
    assert await contents(db) == before
    fence.renewed(asyncio.get_running_loop().time())  # renewed: the same write goes through
    await getattr(fenced, write)(*arguments(game_id)[write])
    assert await contents(db) != before


async def test_a_store_without_a_fence_writes_whenever_asked(db: Database) -> None:
    store = Store(db)
    game_id = await new_game(store)
    for write, args in arguments(game_id).items():
        await getattr(store, write)(*args)
    games, seats, actions = await contents(db)
    assert len(games) == 2 and seats == 2 and actions == 1
