"""`partida db chat`, `chat-remove` and `silence`, run as an operator would (in-process, SQLite),
on lines a store wrote: what each prints, and what it leaves in the database."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from partida.cli import CliError, main
from partida.cli.db_chat import parse_until
from partida.storage.chat import ChatLine
from partida.storage.database import Database
from partida.storage.store import Store

NOW = datetime(2026, 11, 29, 6, 0, tzinfo=UTC)


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'partida.db'}"


def said(url: str) -> tuple[int, list[ChatLine]]:
    """A game with two lines (one by the account `rude`), as the server stores them."""

    async def work() -> tuple[int, list[ChatLine]]:
        db = await Database.open(url)
        try:
            store = Store(db)
            account = await store.create_user("rude", "long enough password")
            game_id = await store.create_game("tictactoe", {}, 1, "h", 2, "ROOM", True)
            lines = [
                await store.chat.add(("game", game_id), "players", account.id, "rude", "user", 0, "<b>rude</b>"),
                await store.chat.add(("game", game_id), "spectators", None, "sam", "guest", None, "hello"),
            ]
            return game_id, lines
        finally:
            await db.close()

    return asyncio.run(work())


def test_the_operator_lists_removes_and_silences(url: str, capsys) -> None:
    game_id, (rude, kind) = said(url)
    assert main(["db", "chat", "--game", str(game_id), "--db", url]) == 0
    out = capsys.readouterr().out
    assert f"{rude.id}" in out and "rude: <b>rude</b>" in out and "sam: hello" in out
    assert main(["db", "chat-remove", str(rude.id), "--db", url]) == 0
    assert "Removed" in capsys.readouterr().out
    assert main(["db", "chat", "--account", "rude", "--db", url]) == 0
    assert "[removed]" in capsys.readouterr().out
    assert main(["db", "chat-remove", "999", "--db", url]) == 2
    assert main(["db", "silence", "rude", "--until", "2h", "--db", url]) == 0
    assert "silenced until" in capsys.readouterr().out
    assert main(["db", "silence", "--list", "--db", url]) == 0
    assert "rude: until" in capsys.readouterr().out
    assert main(["db", "silence", "rude", "--lift", "--db", url]) == 0
    assert "may chat again" in capsys.readouterr().out
    assert main(["db", "silence", "nobody", "--db", url]) == 2

    async def left() -> list[ChatLine]:
        db = await Database.open(url)
        try:
            store = Store(db)
            assert await store.chat.silenced() == {}
            return await store.chat.history(("game", game_id), ("players", "spectators"))
        finally:
            await db.close()

    assert [line.id for line in asyncio.run(left())] == [kind.id]  # the removed line is out of the replay


def test_until_takes_a_span_or_a_time() -> None:
    assert parse_until("30m", NOW) == NOW + timedelta(minutes=30)
    assert parse_until("7d", NOW) == NOW + timedelta(days=7)
    assert parse_until("2026-12-01T18:00", NOW) == datetime(2026, 12, 1, 18, 0, tzinfo=UTC)
    for bad in ("soon", "2020-01-01", "-3h"):
        with pytest.raises(CliError):
            parse_until(bad, NOW)
