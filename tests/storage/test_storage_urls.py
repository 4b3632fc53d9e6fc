"""Database URLs as people type them, and the one-sentence errors for the ones that cannot work."""

from __future__ import annotations

from pathlib import Path

import pytest

from partida.storage.database import Database, StorageError, default_url, mask_url, normalize_url
from tests.fixtures.programs import free_port


@pytest.mark.parametrize(
    ("typed", "normalized"),
    [
        ("sqlite:///games.db", "sqlite+aiosqlite:///games.db"),
        ("sqlite:////var/lib/partida.db", "sqlite+aiosqlite:////var/lib/partida.db"),
        ("sqlite+aiosqlite:///games.db", "sqlite+aiosqlite:///games.db"),
        ("games.db", "sqlite+aiosqlite:///games.db"),
        ("/srv/partida/games.db", "sqlite+aiosqlite:////srv/partida/games.db"),
        (":memory:", "sqlite+aiosqlite://"),
        ("postgresql://u:p@db.example:5433/partida", "postgresql+asyncpg://u:p@db.example:5433/partida"),
        ("postgres://u:p@db/partida", "postgresql+asyncpg://u:p@db/partida"),
        ("postgresql+asyncpg://u@db/partida", "postgresql+asyncpg://u@db/partida"),
        ("postgresql://u:p@db/partida?sslmode=require", "postgresql+asyncpg://u:p@db/partida?ssl=require"),
    ],
)
def test_typed_urls_become_async_driver_urls(typed: str, normalized: str) -> None:
    assert normalize_url(typed) == normalized


@pytest.mark.parametrize(
    "garbage", ["", "   ", "mysql://u:secret@db/x", "http://example.org/", "postgresql+nope://db/x"]
)
def test_unsupported_urls_are_refused_with_a_sentence(garbage: str) -> None:
    with pytest.raises(StorageError) as caught:
        normalize_url(garbage)
    assert "secret" not in str(caught.value)
    assert str(caught.value).endswith(".")


def test_storage_errors_are_value_errors() -> None:
    assert issubclass(StorageError, ValueError)


def test_the_default_is_a_sqlite_file_here_unless_partida_db_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PARTIDA_DB", raising=False)
    assert default_url() == "sqlite+aiosqlite:///partida.db"
    monkeypatch.setenv("PARTIDA_DB", "postgres://u:p@db/partida")
    assert default_url() == "postgres://u:p@db/partida"


def test_passwords_are_masked_for_people() -> None:
    assert mask_url("postgresql+asyncpg://u:hunter2@db/partida") == "postgresql+asyncpg://u:***@db/partida"
    assert mask_url("sqlite+aiosqlite:///games.db") == "sqlite+aiosqlite:///games.db"


async def test_opening_a_database_creates_the_sqlite_file(tmp_path: Path) -> None:
    db = await Database.open(str(tmp_path / "new.db"))
    await db.close()
    assert (tmp_path / "new.db").is_file()
    assert db.url_for_people == f"sqlite+aiosqlite:///{tmp_path / 'new.db'}"


@pytest.mark.parametrize("migrate", [True, False])
async def test_an_unreachable_postgres_server_is_one_sentence_naming_the_url(migrate: bool) -> None:
    url = f"postgresql://partida:hunter2@127.0.0.1:{free_port()}/partida"
    with pytest.raises(StorageError) as caught:
        await Database.open(url, migrate=migrate)
    message = str(caught.value)
    assert message.startswith("cannot open the database at postgresql+asyncpg://partida:***@127.0.0.1:")
    assert "refused" in message and "hunter2" not in message


async def test_a_sqlite_file_in_a_missing_folder_is_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match=r"folder .* does not exist"):
        await Database.open(str(tmp_path / "no" / "such" / "folder" / "games.db"))


async def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("these are not the tables you are looking for\n" * 100)
    with pytest.raises(StorageError, match="not a database"):
        await Database.open(str(path))
    assert path.read_text().startswith("these are not")
