"""Reads sent straight to the driver (`storage/lookups.py`) on a SQLite file: a registered query
answers its first column for its parameters, sees what was committed since it last ran, and can
never write."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import bindparam, insert, select, text
from sqlalchemy.exc import DBAPIError

from partida.storage.database import Database
from partida.storage.lookups import Lookups
from partida.storage.models import Account

NAMED = Lookups.query("named", select(Account.name).where(Account.name_key == bindparam("key")))


async def add_account(db: Database, name: str, key: str) -> None:
    async with db.engine.begin() as conn:
        await conn.execute(insert(Account).values(name=name, kind="user", name_key=key, shape_key=key))


async def test_a_query_answers_its_first_column_and_sees_later_commits(tmp_path: Path) -> None:
    db = await Database.open(f"sqlite+aiosqlite:///{tmp_path / 'partida.db'}")
    try:
        lookups = Lookups(db)
        assert await lookups.column(NAMED, {"key": "k1"}) == []
        await add_account(db, "ann", "k1")
        await add_account(db, "Ann2", "k1")
        await add_account(db, "bob", "k2")
        assert sorted(await lookups.column(NAMED, {"key": "k1"})) == ["Ann2", "ann"]
        assert await lookups.column(NAMED, {"key": "k2"}) == ["bob"]
    finally:
        await db.close()


async def test_a_lookup_never_writes(tmp_path: Path) -> None:
    db = await Database.open(f"sqlite+aiosqlite:///{tmp_path / 'partida.db'}")
    try:
        lookups = Lookups(db)
        await lookups.column(NAMED, {"key": "k"})  # its connection opened, read-only
        sneaky = Lookups.query("sneaky", text("DELETE FROM accounts RETURNING name"))  # type: ignore[arg-type]
        await add_account(db, "ann", "k")
        with pytest.raises(DBAPIError) as refused:
            await lookups.column(sneaky, {})
        assert "readonly" in str(refused.value)  # refused for writing, not for anything else
        assert await lookups.column(NAMED, {"key": "k"}) == ["ann"]
    finally:
        await db.close()
