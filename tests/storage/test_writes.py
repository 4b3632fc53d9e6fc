"""How the group writer plans a batch (`storage/writes.py`), on a table of its own and SQLite's
dialect: steps grouped by statement in rank order, rows converted exactly as SQLAlchemy would,
what must go through SQLAlchemy instead, and the failures a batch is retried for write by write."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy import JSON, Column, DateTime, Integer, MetaData, String, Table, create_engine, insert, select, update
from sqlalchemy.dialects import sqlite

from partida.storage.writes import MissingRow, Planner, Statement, Step, Unplannable, grouped, plan_alone, run_group

meta = MetaData()
moves = Table(
    "moves",
    meta,
    Column("id", Integer, primary_key=True),
    Column("game", Integer, nullable=False),
    Column("action", JSON),
    Column("at", DateTime(timezone=True)),
    Column("status", String(16)),
    Column("stamped", DateTime, default=lambda: datetime(2000, 1, 1)),
)
ADD = Statement("add", insert(moves).values(stamped=None), rank=1)  # every column given: straight to the driver
ADD_STAMPED = Statement("add_stamped", insert(moves), rank=2)  # `stamped` left to its Python default
FINISH = Statement("finish", update(moves).where(moves.c.game == 1).values(status="over"), rank=3)
HOOK = Statement("hook", None, rank=0, hook=lambda conn, params: [None] * len(params))
DIALECT = sqlite.dialect()


def add(game: int, action: Any, at: datetime | None = None) -> Step:
    return Step(ADD, {"game": game, "action": action, "at": at, "status": "live"})


def test_steps_are_grouped_by_statement_in_rank_order_keeping_their_writes_positions() -> None:
    finish = Step(FINISH, {})
    hook = Step(HOOK, {"x": 1})
    groups = grouped([[add(1, 0), finish], [add(2, 1)], [hook, add(3, 2)]])
    assert [(statement.name, [position for position, _ in group]) for statement, group in groups] == [
        ("hook", [2]),
        ("add", [0, 1, 2]),
        ("finish", [0]),
    ]


@pytest.mark.parametrize(
    "action", [0, 7, -(2**70), 2**64 - 1, True, None, "e4", [1, [2, 3]], {"to": [1, 2], "piece": "q"}, 1.5]
)
def test_a_planned_row_is_what_sqlalchemy_itself_would_send(action: Any) -> None:
    at = datetime(2026, 11, 27, 7, 4, 5, 60, tzinfo=UTC)
    [op] = Planner(DIALECT).plan([[add(1, action, at)]])
    assert op.prepared is not None and op.rows is not None
    compiled = ADD.sql.compile(dialect=DIALECT, column_keys=["game", "action", "at", "status"])  # type: ignore[union-attr]
    expected = []
    for name in op.prepared.names:
        value = {"game": 1, "action": action, "at": at, "status": "live"}.get(name)
        process = compiled.binds[name].type.dialect_impl(DIALECT).bind_processor(DIALECT)
        expected.append(process(value) if process is not None else value)
    assert op.rows == [tuple(expected)]


@pytest.mark.parametrize(
    "at",
    [
        datetime(2026, 1, 1, tzinfo=UTC),
        datetime(2026, 1, 1, 12, 0, 0, 5),  # naive
        datetime(2026, 1, 1, 12, tzinfo=timezone(timedelta(hours=2))),  # another zone
        datetime(1, 1, 1, tzinfo=UTC),
    ],
)
def test_times_are_written_as_sqlalchemy_writes_them_in_every_zone(at: datetime) -> None:
    [op] = Planner(DIALECT).plan([[add(1, 0, at)]])
    assert op.prepared is not None and op.rows is not None
    index = op.prepared.names.index("at")
    process = DateTime(timezone=True).dialect_impl(DIALECT).bind_processor(DIALECT)
    assert process is not None and op.rows[0][index] == process(at)


def test_a_statement_that_needs_what_only_sqlalchemy_supplies_goes_through_it() -> None:
    planner = Planner(DIALECT)
    stamped = Step(ADD_STAMPED, {"game": 1, "action": 0, "at": None, "status": "live"})
    [op] = planner.plan([[stamped]])
    assert op.prepared is None  # its Python-side default
    mixed = [[add(1, 0)], [Step(ADD, {"game": 2, "action": 0, "at": None})]]
    [op] = planner.plan(mixed)
    assert op.prepared is None  # rows of different columns cannot share one compiled statement
    [op] = planner.plan([[Step(HOOK, {"x": 1})]])
    assert op.prepared is None and op.rows is None


def test_a_statements_fixed_values_fill_its_row() -> None:
    [op] = Planner(DIALECT).plan([[Step(FINISH, {})]])
    assert op.prepared is not None and op.rows == [("over", 1)]
    assert op.prepared.sql.startswith("UPDATE moves SET status=?")


def test_a_must_change_update_returns_its_rows_where_the_driver_cannot_count_them() -> None:
    must = Statement("must", update(moves).where(moves.c.id == 5).values(status="x"), rank=1, must_change=True)
    [counted] = Planner(DIALECT, count_by_returning=True).plan([[Step(must, {})]])
    [plain] = Planner(DIALECT).plan([[Step(must, {})]])
    assert counted.prepared is not None and counted.prepared.counted and "RETURNING" in counted.prepared.sql
    assert plain.prepared is not None and not plain.prepared.counted and "RETURNING" not in plain.prepared.sql


def test_a_value_its_column_cannot_take_fails_its_batch_as_unplannable_and_alone_as_itself() -> None:
    planner = Planner(DIALECT)
    bad = [add(1, {1, 2})]  # a set in a JSON column
    with pytest.raises(Unplannable) as batch:
        plan_alone(planner, [[add(2, 0)], bad])
    assert isinstance(batch.value.error, TypeError)
    with pytest.raises(TypeError):
        plan_alone(planner, [bad])


def test_through_sqlalchemy_a_must_change_update_of_no_row_is_a_missing_row_and_new_ids_come_back() -> None:
    engine = create_engine("sqlite://")
    meta.create_all(engine)
    adding = Statement("adding", insert(moves).returning(moves.c.id), rank=1, returning=True)
    gone = Statement("gone", update(moves).where(moves.c.id == 99).values(status="x"), rank=2, must_change=True)
    with engine.begin() as conn:
        results: list[Any] = [None, None]
        group = [(1, {"game": 1, "action": 0}), (0, {"game": 1, "action": 1})]
        run_group(conn, adding, group, results)
        assert results == [2, 1]  # each new id at its own write's position
        assert conn.execute(select(moves.c.stamped)).scalars().all() == [datetime(2000, 1, 1)] * 2
        with pytest.raises(MissingRow) as missing:
            run_group(conn, gone, [(0, {})], [None])
        assert missing.value.statement is gone
