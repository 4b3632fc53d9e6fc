"""People's ratings in the database, on SQLite and PostgreSQL: a finished rated game is rated
once (its accounts' ratings and one history row each), anything else is not; the farming verdict
flags three games of two accounts of one address and refuses the fourth; leaderboards list
established ratings first, then provisional ones, marked; the games a stop left unrated are found;
migration 0016 carries OpenSkill's stored ratings onto the 1500 scale."""

from __future__ import annotations

import time

import pytest

from partida.competition.ratings import PROVISIONAL_DEVIATION
from partida.room.clocks import ClockSpec
from partida.storage.store import Store
from tests.fixtures.storage import new_game

BLITZ = {"initial": 180, "increment": 2}
RESULT = {"scores": [1, 0], "ranks": [1, 2], "winners": [0]}


async def played(store: Store, seats: list[tuple[int | None, str]], *, rated: bool = True, result=RESULT) -> int:
    game_id = await new_game(store, clock=BLITZ, rated=rated)
    await store.start_game(game_id, [(seat, account, name) for seat, (account, name) in enumerate(seats)])
    if result is None:
        await store.finish_game(game_id, None, "aborted")
    else:
        await store.finish_game(game_id, result)
    return game_id


@pytest.mark.slow
async def test_a_finished_rated_game_is_rated_once(store: Store) -> None:
    ann = (await store.create_user("ann", "ann horse battery")).id
    bea = (await store.create_user("bea", "bea horse battery")).id
    game_id = await played(store, [(ann, "ann"), (bea, "bea")])
    assert await store.person_ratings.unrated_games() == [game_id]
    changes = await store.rate_game(game_id)
    assert [(c["name"], c["rank"], c["clock_class"]) for c in changes] == [("ann", 1, "blitz"), ("bea", 2, "blitz")]
    assert changes[0]["after"]["rating"] > 1500 > changes[1]["after"]["rating"]
    assert changes[0]["before"] == {
        "rating": 1500,
        "deviation": 500.0,
        "games": 0,
        "provisional": True,
        "shown": "1500?",
    }
    assert await store.rate_game(game_id) == []  # once
    assert await store.person_ratings.unrated_games() == []
    (line,) = await store.person_ratings.of_account(ann)
    assert (line.game, line.clock_class, line.rating.games) == ("tictactoe", "blitz", 1)
    assert line.rating.display == changes[0]["after"]["rating"]
    assert await store.person_ratings.rating_of(ann, "tictactoe", ClockSpec.parse(BLITZ)) == line.rating
    newcomer = await store.person_ratings.rating_of(ann, "othello", ClockSpec.parse(BLITZ))
    assert newcomer is not None and newcomer.shown() == "1500?"  # a newcomer's
    assert await store.person_ratings.rating_of(None, "tictactoe", ClockSpec.parse(BLITZ)) is None  # a guest
    assert await store.person_ratings.rating_of(ann, "tictactoe", None) is None  # no clock, no class
    (point,) = await store.person_ratings.history(ann, "tictactoe", "blitz")
    assert point.game_id == game_id and point.before.rating == 1500.0 and point.after.rating == line.rating.rating
    shown = await store.person_ratings.shown_ratings([ann, bea], "tictactoe", ClockSpec.parse(BLITZ))
    assert shown == {ann: line.rating.shown(), bea: changes[1]["after"]["shown"]}
    assert await store.person_ratings.shown_ratings([ann], "othello", ClockSpec.parse(BLITZ)) == {ann: "1500?"}
    assert await store.person_ratings.shown_ratings([ann], "tictactoe", None) == {}


@pytest.mark.slow
async def test_casual_aborted_and_guest_games_are_not_rated(store: Store) -> None:
    ann = (await store.create_user("ann", "ann horse battery")).id
    bea = (await store.create_user("bea", "bea horse battery")).id
    games = [
        await played(store, [(ann, "ann"), (bea, "bea")], rated=False),
        await played(store, [(ann, "ann"), (bea, "bea")], result=None),
        await played(store, [(ann, "ann"), (None, "gus")]),
    ]
    for game_id in games:
        assert await store.rate_game(game_id) == []
    assert await store.person_ratings.of_account(ann) == []


@pytest.mark.slow
async def test_farming_is_flagged_three_times_then_refused(store: Store) -> None:
    ann = (await store.create_user("ann", "ann horse battery")).id
    bea = (await store.create_user("bea", "bea horse battery")).id
    cy = (await store.create_user("cy", "cy horse battery")).id
    verdicts = []
    for _ in range(4):
        game_id = await new_game(store, clock=BLITZ, rated=True)
        await store.start_game(game_id, [(0, ann, "ann"), (1, bea, "bea")])
        verdicts.append(await store.judge_farming(game_id, [ann, bea], ["10.0.0.1", "10.0.0.1"], time.time()))
        await store.finish_game(game_id, RESULT)
        await store.rate_game(game_id)
    assert verdicts == ["flag", "flag", "flag", "refuse"]
    assert (await store.load_game(game_id)).rated is False  # the refused game was played casual
    (line,) = await store.person_ratings.of_account(ann)
    assert line.rating.games == 3
    # another pair on the same address starts afresh; an unknown address (a bot) is never shared
    other = await new_game(store, clock=BLITZ, rated=True)
    await store.start_game(other, [(0, ann, "ann"), (1, cy, "cy")])
    assert await store.judge_farming(other, [ann, cy], ["10.0.0.1", "10.0.0.1"], time.time()) == "flag"
    assert await store.judge_farming(other, [ann, cy], ["10.0.0.1", None], time.time()) == "ok"
    # a day later the window is clear
    later = await new_game(store, clock=BLITZ, rated=True)
    await store.start_game(later, [(0, ann, "ann"), (1, bea, "bea")])
    tomorrow = time.time() + 25 * 3600
    assert await store.judge_farming(later, [ann, bea], ["10.0.0.1", "10.0.0.1"], tomorrow) == "flag"


@pytest.mark.slow
async def test_the_leaderboard_lists_provisional_ratings_after_established_ones(store: Store) -> None:
    ann = (await store.create_user("ann", "ann horse battery")).id
    bea = (await store.create_user("bea", "bea horse battery")).id
    cy = (await store.create_user("cy", "cy horse battery")).id
    dee = (await store.create_user("dee", "dee horse battery")).id
    for n in range(30):
        first, second = [(ann, "ann"), (bea, "bea")][:: 1 if n % 3 else -1]
        await store.rate_game(await played(store, [first, second]))
    await store.rate_game(await played(store, [(cy, "cy"), (dee, "dee")]))
    board = await store.person_ratings.leaderboard("tictactoe", "blitz")
    # ann won 2 of every 3; cy won his one game and is rated above bea, but provisional
    assert [line.name for line in board] == ["ann", "bea", "cy", "dee"]
    assert [line.rating.provisional for line in board] == [False, False, True, True]
    assert all(line.rating.deviation <= PROVISIONAL_DEVIATION for line in board[:2])
    assert board[0].rating.display > board[1].rating.display
    assert board[2].rating.display > board[1].rating.display and board[2].to_data()["shown"].endswith("?")
    assert await store.person_ratings.leaderboard("tictactoe", "bullet") == []


async def test_migration_0016_carries_openskill_ratings_onto_the_1500_scale(empty_url: str) -> None:
    """A rating stored as OpenSkill's mu 30, sigma 3.5 before 0016 reads after it as the mapping says
    (1500 + 29.48 x 5, deviation 29.48 x 3.5), with lichess's starting volatility, in its place on
    the leaderboard, established (deviation under 110)."""
    from sqlalchemy import text

    from partida.competition.ratings import POINTS_PER_MU, openskill_to_scale
    from partida.storage.database import Database

    db = await Database.open(empty_url, migrate=False)
    await db.migrate("0013")
    async with db.engine.begin() as conn:
        await conn.execute(
            text("INSERT INTO accounts (name, kind, created_at) VALUES ('ann', 'user', '2026-01-01 00:00:00')")
        )
        await conn.execute(
            text(
                "INSERT INTO person_ratings (account_id, game, clock_class, mu, sigma, games, updated_at) "
                "VALUES (1, 'othello', 'blitz', 30.0, 3.5, 40, '2026-01-01 00:00:00')"
            )
        )
    await db.migrate()
    store = Store(db)
    try:
        (line,) = await store.person_ratings.of_account(1)
        rating, deviation = openskill_to_scale(30.0, 3.5)
        assert line.rating.rating == pytest.approx(rating) == pytest.approx(1500 + 5 * POINTS_PER_MU)
        assert line.rating.deviation == pytest.approx(deviation) and line.rating.volatility == pytest.approx(0.09)
        assert line.rating.games == 40 and line.rating.shown() == str(round(rating))
        (place,) = await store.person_ratings.leaderboard("othello", "blitz")
        assert place.name == "ann" and not place.rating.provisional
    finally:
        await db.close()


async def test_migration_0016_downgrades_back_to_openskills_numbers(empty_url: str) -> None:
    """Down to 0013, a rating on the scale is OpenSkill's mu and sigma again (the inverse
    mapping), and its columns are as 0011 made them."""
    from alembic import command
    from sqlalchemy import text

    from partida.competition.ratings import openskill_to_scale
    from partida.storage.database import Database, alembic_config

    db = await Database.open(empty_url)
    rating, deviation = openskill_to_scale(27.0, 2.5)
    try:
        async with db.engine.begin() as conn:
            await conn.execute(
                text("INSERT INTO accounts (name, kind, created_at) VALUES ('ann', 'user', '2026-01-01 00:00:00')")
            )
            await conn.execute(
                text(
                    "INSERT INTO person_ratings (account_id, game, clock_class, rating, deviation, volatility, games,"
                    " updated_at) VALUES (1, 'othello', 'blitz', :r, :d, 0.09, 9, '2026-01-01 00:00:00')"
                ),
                {"r": rating, "d": deviation},
            )
        async with db.engine.connect() as conn:
            await conn.run_sync(lambda sync: command.downgrade(alembic_config(sync), "0013"))
            await conn.commit()
        async with db.engine.connect() as conn:
            row = (await conn.execute(text("SELECT mu, sigma, games FROM person_ratings"))).one()
        assert row.mu == pytest.approx(27.0) and row.sigma == pytest.approx(2.5) and row.games == 9
    finally:
        await db.close()


@pytest.mark.slow
async def test_a_year_away_widens_a_two_seat_rating_before_its_next_game(store: Store) -> None:
    """The deviation a game starts from is the last one aged by the days since it (Glicko-2's
    step 6 per rating period, as lichess ages it): the history's `before` says so."""
    from datetime import UTC, datetime, timedelta

    from sqlalchemy import update

    from partida.competition.ratings import PersonRating, aged
    from partida.storage.models import PersonRating as RatingRow

    ann = (await store.create_user("ann", "ann horse battery")).id
    bea = (await store.create_user("bea", "bea horse battery")).id
    await store.rate_game(await played(store, [(ann, "ann"), (bea, "bea")]))
    (last,) = await store.person_ratings.of_account(ann)
    a_year_ago = datetime.now(UTC) - timedelta(days=365)
    async with store.db.session() as session:
        await session.execute(update(RatingRow).where(RatingRow.account_id == ann).values(updated_at=a_year_ago))
        await session.commit()
    await store.rate_game(await played(store, [(ann, "ann"), (bea, "bea")]))
    first, second = await store.person_ratings.history(ann, "tictactoe", "blitz")
    expected = aged(PersonRating(last.rating.rating, last.rating.deviation, last.rating.volatility), 365)
    assert second.before.deviation == pytest.approx(expected.deviation, rel=1e-3)
    assert second.before.deviation > first.after.deviation and second.before.rating == first.after.rating
    (bea_first, bea_second) = await store.person_ratings.history(bea, "tictactoe", "blitz")
    assert bea_second.before.deviation == pytest.approx(bea_first.after.deviation, rel=1e-4)  # bea played on
