"""The databases storage tests write to (a pytest plugin, registered in conftest.py): `storage_url`,
`db` and `store` run each test on SQLite and on PostgreSQL; PostgreSQL is the session's throwaway
cluster (`pg_cluster`, tests/services.py installs and starts it), on which a module's data tests
share one migrated database emptied before each test (`pg_shared`); `empty_url` and `create_pg_database`
give a new empty one, `fresh_database` one of a given name on the session's cluster."""

from __future__ import annotations

import asyncio
import secrets
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from partida.storage.database import Database
from partida.storage.store import Store
from tests.services import Postgres

BACKENDS = ["sqlite", "postgresql"]


DATA_TABLES = (
    "accounts, games, seats, actions, lab_runs, lab_matches, ladders, ladder_members, ladder_games, ladder_ratings, "
    "nodes, room_leases, node_accounts, ladder_live, tournaments, tournament_entries, tournament_pairings,"
    " person_ratings, person_rating_changes"
)


@pytest.fixture(scope="session")
def pg_cluster(postgres: Postgres) -> Postgres:
    """The session's cluster: each module's data tests and each empty database take a database of
    their own on it, so one cluster (per pytest-xdist worker) serves them all."""
    return postgres


def psql(cluster: Postgres, database: str, statement: str) -> None:
    """Run one statement as the cluster's superuser, over its private socket."""
    command = [str(cluster.bin_dir / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", str(cluster.directory)]
    command += ["-p", str(cluster.port), "-U", "postgres", "-d", database, "-c", statement]
    subprocess.run(command, check=True, capture_output=True)


def create_pg_database(cluster: Postgres) -> str:
    """A new empty database owned by the cluster's test user; returns its postgresql:// URL."""
    name = f"t_{secrets.token_hex(6)}"
    psql(cluster, "postgres", f"CREATE DATABASE {name} OWNER {cluster.user}")
    return cluster.url.rsplit("/", 1)[0] + "/" + name


@pytest.fixture(scope="module")
def pg_shared(pg_cluster: Postgres) -> str:
    """A migrated database that the data tests share."""
    url = create_pg_database(pg_cluster)

    async def migrate() -> None:
        await (await Database.open(url)).close()

    asyncio.run(migrate())
    return url


@pytest.fixture(params=BACKENDS)
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of a new empty database, as a person would type it (normalised by `Database.open`)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'partida.db'}"
    return create_pg_database(request.getfixturevalue("pg_cluster"))


@pytest.fixture(params=BACKENDS)
def storage_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of a migrated database holding no rows."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'partida.db'}"
    url = request.getfixturevalue("pg_shared")
    psql(request.getfixturevalue("pg_cluster"), url.rsplit("/", 1)[1], f"TRUNCATE {DATA_TABLES} RESTART IDENTITY")
    return url


@pytest.fixture
async def db(storage_url: str) -> AsyncIterator[Database]:
    database = await Database.open(storage_url)
    try:
        yield database
    finally:
        await database.close()


@pytest.fixture
def store(db: Database) -> Store:
    return Store(db)


async def new_game(store: Store, game: str = "tictactoe", seats: int = 2, **kwargs: Any) -> int:
    args: dict[str, Any] = {
        "options": {"size": 3},
        "seed": 12345,
        "seed_hash": "abc",
        "seats": seats,
        "room_code": "ROOM1",
        "public": True,
    }
    args.update(kwargs)
    return await store.create_game(game, **args)


def fresh_database(pg, name: str) -> str:  # type: ignore[no-untyped-def]
    """A new, empty database on the test cluster, so that this test sees only its own games."""
    import subprocess

    command = [str(pg.bin_dir / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", str(pg.directory)]
    command += ["-p", str(pg.port), "-U", "postgres", "-d", "postgres"]
    command += ["-c", f"DROP DATABASE IF EXISTS {name}", "-c", f"CREATE DATABASE {name} OWNER {pg.user}"]
    subprocess.run(command, check=True, capture_output=True)
    return pg.url.rsplit("/", 1)[0] + f"/{name}"
