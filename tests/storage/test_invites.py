"""Sign-up invite codes in a real SQLite database, and migration 0018 (the invites' table, and the
games of tournaments played before made public)."""

from __future__ import annotations

import asyncio
import importlib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from partida.storage.database import Database
from partida.storage.invites import InviteStore
from partida.storage.store import Store
from partida.storage.tournaments import TournamentStore


async def test_a_code_is_spent_once_per_use_even_by_sign_ups_racing_for_its_last(tmp_path: Path) -> None:
    db = await Database.open(f"sqlite+aiosqlite:///{tmp_path / 'p.db'}")
    try:
        invites = InviteStore(db)
        code = await invites.create(uses=3)
        assert len(code) >= 20
        assert await invites.spend(code)
        spent = await asyncio.gather(*(invites.spend(code) for _ in range(5)))
        assert sorted(spent) == [False, False, False, True, True]  # two uses were left, for two of five
        await invites.give_back(code)
        assert await invites.spend(code) and not await invites.spend(code)
        for wrong in ("", "nope", code + "x", "x" * 10_000):
            assert not await invites.spend(wrong)
        with pytest.raises(ValueError):
            await invites.create(uses=0)
    finally:
        await db.close()


BEFORE_INVITES = importlib.import_module(
    "partida.storage.migrations.versions.0018_accounts_sign_up_invites"
).down_revision


async def test_the_migration_makes_the_games_of_earlier_tournaments_public_and_no_other(tmp_path: Path) -> None:
    db = await Database.open(f"sqlite+aiosqlite:///{tmp_path / 'old.db'}", migrate=False)
    await db.migrate(BEFORE_INVITES)  # the schema just before the migration under test
    store = Store(db)
    ada = await store.create_user("ada", "a long password")
    bo = await store.create_user("bo", "a long password")
    table_game = await store.create_game("tictactoe", {}, 1, "hash", 2, "TABLE1TABLE1", False, clock={"initial": 60})
    private_game = await store.create_game("tictactoe", {}, 2, "hash", 2, "PRIVATE1PRIV", False)
    tournaments = TournamentStore(db)
    cup = await tournaments.create(
        "cup", "tictactoe", {}, 2, {"initial": 60}, "round-robin", "people", datetime.now(UTC), rounds=1
    )
    await tournaments.open_round(cup.id, 1, [(1, [ada.id, bo.id], table_game, None)])
    await db.migrate()
    try:
        table = await store.load_game(table_game)
        private = await store.load_game(private_game)
        assert table is not None and table.public
        assert private is not None and not private.public
    finally:
        await db.close()
