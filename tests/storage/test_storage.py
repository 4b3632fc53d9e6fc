"""The storage API against real databases: every test runs on SQLite and on PostgreSQL.

SQLite: a fresh file in the test's temporary folder. PostgreSQL: one throwaway cluster for this
module (the fixtures are in tests/fixtures/storage.py; tests/fixtures/programs.py installs and starts
it). Tests of migrations get a new empty database, as a new deployment would; the others share
one migrated database, emptied before each test (creating and migrating a PostgreSQL database per
test would cost most of this file's time)."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import pytest
from sqlalchemy import inspect, select, text

from partida.storage.database import Database, StorageError, head_revision
from partida.storage.models import Base, LabMatch, LabRun
from partida.storage.store import BadName, DuplicateAction, NameTaken, NoSuchGame, Store, StoredGame
from tests.fixtures.programs import Postgres
from tests.fixtures.storage import new_game

TABLES = {"accounts", "games", "seats", "actions", "lab_runs", "lab_matches", "alembic_version"}
TABLES |= {"ladders", "ladder_members", "ladder_games", "ladder_ratings"}


# Migrations.


async def test_opening_an_empty_database_creates_every_table(empty_url: str) -> None:
    db = await Database.open(empty_url)
    try:
        async with db.engine.connect() as conn:
            tables = await conn.run_sync(lambda sync: set(inspect(sync).get_table_names()))
        assert tables >= TABLES
        assert await db.revision() == head_revision()
    finally:
        await db.close()


async def test_the_migrations_build_exactly_the_schema_the_models_describe(empty_url: str) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    def differences(sync: Any) -> list[Any]:
        with warnings.catch_warnings():
            # SQLite cannot reflect an index on an expression (lower(name)); PostgreSQL compares it.
            warnings.filterwarnings("ignore", "autogenerate skipping metadata-specified expression-based index")
            warnings.filterwarnings("ignore", "Skipped unsupported reflection of expression-based index")
            return compare_metadata(MigrationContext.configure(sync, opts={"compare_type": True}), Base.metadata)

    db = await Database.open(empty_url)
    try:
        async with db.engine.connect() as conn:
            assert await conn.run_sync(differences) == []
    finally:
        await db.close()


async def test_opening_a_migrated_database_again_keeps_its_data(storage_url: str, store: Store) -> None:
    await store.create_user("ada", "lovelace")
    await store.db.close()
    again = await Database.open(storage_url)
    try:
        assert await again.revision() == head_revision()
        assert await Store(again).check_password("ada", "lovelace") is not None
    finally:
        await again.close()


async def test_a_database_from_a_newer_partida_is_refused_with_a_sentence(empty_url: str) -> None:
    db = await Database.open(empty_url)
    async with db.engine.begin() as conn:
        await conn.execute(text("UPDATE alembic_version SET version_num = 'from_the_future'"))
    await db.close()
    with pytest.raises(ValueError, match="newer Partida"):
        await Database.open(empty_url)


# Accounts.


@pytest.mark.slow
async def test_a_user_logs_in_with_the_right_password_only(store: Store) -> None:
    created = await store.create_user("ada", "correct horse")
    assert created.kind == "user" and created.password_hash != "correct horse"
    found = await store.check_password("ada", "correct horse")
    assert found is not None and found.id == created.id
    assert await store.check_password("ada", "wrong horse") is None
    assert await store.check_password("nobody", "correct horse") is None


@pytest.mark.slow
async def test_account_names_are_unique_across_users_and_bots(store: Store) -> None:
    await store.create_user("ada", "pass-word")
    with pytest.raises(NameTaken, match="ada"):
        await store.create_user("ada", "other-password")
    with pytest.raises(NameTaken, match="user account"):
        await store.create_bot("ada")
    await store.create_bot("robo")
    with pytest.raises(NameTaken):
        await store.create_user("robo", "pass-word")


@pytest.mark.parametrize("name", ["", " ada", "x" * 65, "tab\there"])
async def test_unusable_names_are_refused(store: Store, name: str) -> None:
    with pytest.raises(BadName):
        await store.create_user(name, "pass-word")


async def test_a_bot_logs_in_with_its_token_and_not_with_a_password(store: Store) -> None:
    bot, token = await store.create_bot("robo")
    assert bot.kind == "bot" and bot.token_hash != token and len(token) >= 40
    found = await store.check_token(token)
    assert found is not None and found.id == bot.id and found.name == "robo"
    assert await store.check_token(token + "x") is None
    assert await store.check_token("") is None
    assert await store.check_password("robo", token) is None


async def test_creating_an_existing_bot_rotates_its_token(store: Store) -> None:
    first, old_token = await store.create_bot("robo")
    second, new_token = await store.create_bot("robo")
    assert second.id == first.id and new_token != old_token
    assert await store.check_token(old_token) is None
    found = await store.check_token(new_token)
    assert found is not None and found.id == first.id


async def test_accounts_are_found_by_id(store: Store) -> None:
    user = await store.create_user("ada", "pass-word")
    found = await store.get_account(user.id)
    assert found is not None and found.name == "ada"
    assert await store.get_account(user.id + 100) is None


# Games.


async def test_a_game_goes_from_waiting_to_playing_to_finished(store: Store) -> None:
    ada = await store.create_user("ada", "pass-word")
    game_id = await new_game(store, seed=2**63 - 1, options={"variant": "ä", "n": [1, 2]})
    waiting = await store.load_game(game_id)
    assert waiting is not None
    assert (waiting.status, waiting.started_at, waiting.finished_at, waiting.result) == ("waiting", None, None, None)
    assert waiting.seed == 2**63 - 1 and waiting.options == {"variant": "ä", "n": [1, 2]}
    assert waiting.created_at.tzinfo is not None

    await store.set_seat(game_id, 1, None, "guest-7")
    await store.set_seat(game_id, 0, ada.id, "ada")
    await store.start_game(game_id)
    await store.append_action(game_id, 0, 0, 4)
    await store.append_action(game_id, 1, 1, {"cell": 0, "note": None})
    playing = await store.load_game(game_id)
    assert playing is not None and playing.status == "playing" and playing.started_at is not None
    assert playing.seat_list == [(0, ada.id, "ada"), (1, None, "guest-7")]
    assert playing.actions == [(0, 4), (1, {"cell": 0, "note": None})]

    result = {"scores": [1, 0], "ranks": [1, 2], "winners": [0]}
    await store.finish_game(game_id, result)
    finished = await store.load_game(game_id)
    assert finished is not None
    assert (finished.status, finished.result, finished.action_count) == ("finished", result, 2)
    assert finished.finished_at is not None and finished.finished_at >= finished.started_at


async def test_new_games_get_increasing_ids_and_a_restarted_server_counts_on(store: Store, storage_url: str) -> None:
    """Each new game's id is new, larger than the ones before, and its row is there to start at
    once; a restarted server's new games count on from the stored ones."""
    games = [await new_game(store) for _ in range(40)]
    assert len(set(games)) == 40 and games == sorted(games) and min(games) > 0
    await store.start_game(games[-1], [(0, None, "ann"), (1, None, "bea")])
    started = await store.load_game(games[-1])
    assert started is not None and started.status == "playing"
    assert started.seat_list == [(0, None, "ann"), (1, None, "bea")]
    await store.db.close()
    reopened = Store(await Database.open(storage_url))  # a restarted server counts on from there
    try:
        assert all([await reopened.load_game(game_id) for game_id in games])
        assert await new_game(reopened) > max(games)
    finally:
        await reopened.db.close()


async def test_a_game_can_end_aborted_without_a_result(store: Store) -> None:
    game_id = await new_game(store)
    await store.start_game(game_id)
    await store.finish_game(game_id, None, status="aborted")
    aborted = await store.load_game(game_id)
    assert aborted is not None and (aborted.status, aborted.result) == ("aborted", None)
    with pytest.raises(ValueError, match="finished"):
        await store.finish_game(game_id, None, status="paused")


async def test_a_seat_can_change_hands_and_be_freed(store: Store) -> None:
    bot, _ = await store.create_bot("robo")
    game_id = await new_game(store)
    await store.set_seat(game_id, 0, None, "guest")
    await store.set_seat(game_id, 0, bot.id, "robo")
    await store.set_seat(game_id, 1, None, "someone")
    await store.set_seat(game_id, 1, None, "")
    stored = await store.load_game(game_id)
    assert stored is not None and stored.seat_list == [(0, bot.id, "robo"), (1, None, "")]


async def test_a_start_stores_new_seats_and_refuses_one_stored_already(store: Store) -> None:
    """The server stores a game's seats once, at its start, as new rows (no DELETE first): a
    seat stored before by `set_seat` makes the start fail whole, and the game stays waiting."""
    game_id = await new_game(store)
    await store.set_seat(game_id, 1, None, "early")
    with pytest.raises(StorageError):
        await store.start_game(game_id, [(0, None, "ann"), (1, None, "bea")], tokens={0: "t0", 1: "t1"})
    stored = await store.load_game(game_id)
    assert stored is not None and stored.status == "waiting" and stored.seat_list == [(1, None, "early")]
    other = await new_game(store)
    await store.start_game(other, [(0, None, "ann"), (1, None, "bea")], tokens={0: "t0", 1: "t1"})
    started = await store.load_game(other)
    assert started is not None and started.status == "playing"
    assert started.seat_list == [(0, None, "ann"), (1, None, "bea")] and started.seat_tokens == {0: "t0", 1: "t1"}


async def test_unknown_games_are_reported(store: Store) -> None:
    assert await store.load_game(404) is None
    with pytest.raises(NoSuchGame):
        await store.start_game(404)
    with pytest.raises(NoSuchGame):
        await store.append_action(404, 0, 0, 1)
    with pytest.raises(NoSuchGame):
        await store.set_seat(404, 0, None, "ghost")


# The action log.


async def test_actions_come_back_in_index_order(store: Store) -> None:
    game_id = await new_game(store)
    for index in (2, 0, 3, 1):
        await store.append_action(game_id, index, index % 2, f"move-{index}")
    stored = await store.load_game(game_id)
    assert stored is not None
    assert stored.actions == [(0, "move-0"), (1, "move-1"), (0, "move-2"), (1, "move-3")]


async def test_a_duplicate_action_index_is_refused_and_the_log_is_unchanged(store: Store) -> None:
    game_id = await new_game(store)
    await store.append_action(game_id, 0, 0, "first")
    with pytest.raises(DuplicateAction, match="number 0"):
        await store.append_action(game_id, 0, 1, "second")
    await store.append_action(game_id, 1, 1, "next")
    stored = await store.load_game(game_id)
    assert stored is not None and stored.actions == [(0, "first"), (1, "next")]


async def test_plain_values_survive_the_log_unchanged(store: Store) -> None:
    values: list[Any] = [None, True, 0, -7, 2.5, "pass", "ünï", [], [1, [2, 3]], {"b": 1, "a": [None, {"z": "y"}]}]
    game_id = await new_game(store)
    for index, value in enumerate(values):
        await store.append_action(game_id, index, 0, value)
    stored = await store.load_game(game_id)
    assert stored is not None and [action for _, action in stored.actions] == values


async def test_concurrent_rooms_append_without_losing_an_action(store: Store) -> None:
    games = [await new_game(store, room_code=f"R{i}") for i in range(20)]

    async def play(game_id: int) -> None:
        for index in range(10):
            await store.append_action(game_id, index, index % 2, index)

    await asyncio.gather(*(play(game_id) for game_id in games))
    for game_id in games:
        stored = await store.load_game(game_id)
        assert stored is not None and [a for _, a in stored.actions] == list(range(10))


async def test_one_bad_append_among_concurrent_ones_fails_alone(store: Store) -> None:
    games = [await new_game(store, room_code=f"R{i}") for i in range(8)]
    await store.append_action(games[3], 0, 0, "already there")
    outcomes = await asyncio.gather(
        *(store.append_action(game_id, 0, 0, f"first in {game_id}") for game_id in games), return_exceptions=True
    )
    assert [type(o).__name__ for o in outcomes] == ["NoneType"] * 3 + ["DuplicateAction"] + ["NoneType"] * 4
    for game_id in games:
        stored = await store.load_game(game_id)
        expected = "already there" if game_id == games[3] else f"first in {game_id}"
        assert stored is not None and stored.actions == [(0, expected)]


@pytest.mark.slow
async def test_closing_the_database_commits_the_appends_already_queued(storage_url: str, store: Store) -> None:
    game_id = await new_game(store)
    appends = [asyncio.create_task(store.append_action(game_id, i, 0, i)) for i in range(5)]
    await asyncio.sleep(0)  # the appends are queued, not yet committed
    await store.db.close()
    await asyncio.gather(*appends)
    again = await Database.open(storage_url)
    try:
        stored = await Store(again).load_game(game_id)
        assert stored is not None and [a for _, a in stored.actions] == [0, 1, 2, 3, 4]
    finally:
        await again.close()


async def test_when_the_database_fails_every_queued_append_gets_a_sentence(empty_url: str) -> None:
    db = await Database.open(empty_url)
    try:
        store = Store(db)
        game_id = await new_game(store)
        async with db.engine.begin() as conn:
            await conn.execute(text("DROP TABLE actions"))
        outcomes = await asyncio.gather(
            *(store.append_action(game_id, i, 0, i) for i in range(5)), return_exceptions=True
        )
        assert all(isinstance(o, StorageError) and "could not store action" in str(o) for o in outcomes)
    finally:
        await db.close()


# Listings.


async def test_unfinished_games_are_those_in_play_with_seats_and_logs(store: Store) -> None:
    waiting = await new_game(store, room_code="WAIT")
    done = await new_game(store, room_code="DONE")
    await store.start_game(done)
    await store.finish_game(done, {"winners": [0]})
    in_play = []
    for code in ("PLAY1", "PLAY2"):
        game_id = await new_game(store, room_code=code)
        await store.set_seat(game_id, 0, None, "a")
        await store.set_seat(game_id, 1, None, "b")
        await store.start_game(game_id)
        await store.append_action(game_id, 0, 0, code)
        in_play.append(game_id)

    unfinished = await store.unfinished_games()
    assert [g.id for g in unfinished] == in_play
    assert all(isinstance(g, StoredGame) for g in unfinished)
    assert unfinished[1].room_code == "PLAY2" and unfinished[1].actions == [(0, "PLAY2")]
    assert unfinished[1].seat_list == [(0, None, "a"), (1, None, "b")]
    assert waiting not in {g.id for g in unfinished}


async def test_listing_is_newest_first_with_filters_and_move_counts(store: Store) -> None:
    first = await new_game(store, game="tictactoe")
    second = await new_game(store, game="othello")
    third = await new_game(store, game="tictactoe")
    for index in range(3):
        await store.append_action(first, index, 0, index)
    await store.start_game(first)
    await store.finish_game(first, {"winners": [1]})

    assert [g.id for g in await store.list_games()] == [third, second, first]
    assert [g.id for g in await store.list_games(limit=2)] == [third, second]
    assert [g.id for g in await store.list_games(game="tictactoe")] == [third, first]
    finished = await store.list_games(status="finished")
    assert [(g.id, g.action_count, g.actions) for g in finished] == [(first, 3, [])]
    assert await store.list_games(game="chess") == []


# Lab tables.


async def test_lab_runs_and_their_matches_are_stored(db: Database) -> None:
    async with db.session() as session:
        run = LabRun(game="recycle", options={"deck": 2}, agents=["random", "mcts"], seats=2, seed=7, n=2)
        session.add(run)
        await session.flush()
        session.add_all(
            LabMatch(run_id=run.id, index=i, seed=100 + i, result={"ranks": [1, 2]}, rounds=[[1, 0]], metrics={})
            for i in range(2)
        )
        await session.commit()
        run_id = run.id
    async with db.session() as session:
        stored = await session.get(LabRun, run_id)
        matches = list(
            await session.scalars(select(LabMatch).where(LabMatch.run_id == run_id).order_by(LabMatch.index))
        )
    assert stored is not None and stored.agents == ["random", "mcts"] and stored.summary == {}
    assert stored.created_at.tzinfo is not None
    assert [(m.index, m.seed, m.rounds) for m in matches] == [(0, 100, [[1, 0]]), (1, 101, [[1, 0]])]


# Errors a person sees.


async def test_a_wrong_postgres_password_gives_a_sentence_that_hides_it(pg_cluster: Postgres) -> None:
    url = pg_cluster.url.replace(pg_cluster.password, "not-the-password")
    with pytest.raises(StorageError) as caught:
        await Database.open(url)
    message = str(caught.value)
    assert "password authentication failed" in message and f":{pg_cluster.port}/partida" in message
    assert "not-the-password" not in message and "***" in message


async def test_the_name_keys_migration_gives_existing_accounts_their_keys(tmp_path) -> None:
    """Accounts made before the name keys get them on upgrade, and their twins are refused."""
    from sqlalchemy import text

    from partida.storage.database import Database
    from partida.storage.store import NameTaken, Store

    url = f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"
    db = await Database.open(url, migrate=False)
    await db.migrate("0008")
    async with db.engine.begin() as conn:
        await conn.execute(
            text("INSERT INTO accounts (name, kind, created_at) VALUES ('Alice', 'user', '2026-01-01 00:00:00')")
        )
    await db.migrate()
    store = Store(db)
    try:
        assert await store.reserved_name("\u0410LICE") == "Alice"
        with pytest.raises(NameTaken):
            await store.create_user("\uff21lice", "long enough")
    finally:
        await db.close()


async def test_an_in_memory_database_is_written_as_a_file_is_and_leaves_nothing_behind() -> None:
    """`:memory:` takes the write path of a SQLite file (a file in a folder of its own), so what
    runs on it is what runs on a file; the folder goes when the database closes."""
    db = await Database.open(":memory:")
    folder = db.temporary
    assert folder is not None and folder.is_dir()
    store = Store(db)
    game_id = await new_game(store)
    await store.start_game(game_id, [(0, None, "ann"), (1, None, "bea")])
    await store.append_action(game_id, 0, 0, 4)
    await store.create_user("ada", "lovelace")
    assert await store.reserved_name("ADA") == "ada"  # the lookups' own connection sees the same file
    stored = await store.load_game(game_id)
    assert stored is not None and stored.actions == [(0, 4)]
    await db.close()
    assert not folder.exists()
