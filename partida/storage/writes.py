"""What the group writer's batches are made of, and how a batch is planned for a driver.

A write is a short list of `Step`s (a registered `Statement` and its parameters). A batch's steps
are grouped by statement, in the order the statements were registered (`grouped`). Each group
then runs either through SQLAlchemy (`run_group`: hooks, and statements that need what only
SQLAlchemy supplies) or straight on the driver, with the SQL SQLAlchemy compiled once per
statement and parameter names (`Planner`): SQLAlchemy's work per execution (cache keys, parameter
processing, result set-up) costs more than the rows themselves. The per-driver writers
(`sqlite_writer`, `postgres_writer`) share this planning and differ only in how they send it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from operator import itemgetter
from typing import Any

from sqlalchemy import JSON, DateTime, literal_column
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.sql import ColumnElement, Executable, Insert
from sqlalchemy.sql.dml import UpdateBase
from sqlalchemy.types import TypeEngine


class MissingRow(LookupError):
    """An UPDATE that must change a row changed none (the row does not exist)."""

    def __init__(self, statement: Statement) -> None:
        super().__init__(f"no row for {statement.name}")
        self.statement = statement


class Unplannable(Exception):
    """A batch of several writes that could not be planned: one of them holds a value its column
    cannot take (a JSON column given a set). Like a constraint's failure, it is retried write by
    write, so that only that write fails, with the value's own error (`plan_alone`)."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


def plan_alone(planner: Planner, writes: Sequence[Sequence[Step]]) -> list[Op]:
    """`planner.plan(writes)`, its failure raised as `Unplannable` if the batch holds more than
    one write (the others should not fail with it)."""
    try:
        return planner.plan(writes)
    except Exception as exc:
        if len(writes) == 1:
            raise
        raise Unplannable(exc) from exc


@dataclass(eq=False, frozen=True)
class Statement:
    """A Core statement registered with a writer: `rank` orders it within a batch; `returning`
    says it yields one value per row (a new id); `must_change` says each UPDATE must change a
    row. A hook has no statement but a function, called once per batch with the transaction's
    connection and its steps' parameters (a list, one dict per write, in the batch's order); it
    returns one value per write, the write's result (None for no result)."""

    name: str
    sql: Executable | None
    rank: int
    returning: bool = False
    must_change: bool = False
    hook: Callable[..., Any] | None = None
    # A hook's guard: a query the writers that send statements to the driver run there for each
    # of the hook's steps; they call the hook only for a batch where it finds a row (most
    # finished games are no ladder's, and the hook's own queries go through SQLAlchemy).
    when: Statement | None = None
    # A must-change UPDATE's answer to a hook's guard: what it returns for each changed row
    # where the driver counts the rows by RETURNING (PostgreSQL), true where the guard of the
    # hook step in the same write would find a row; that hook names it in `answered_by`, and
    # its guard's query is not sent for a batch whose every step of the hook has an answer.
    answer: ColumnElement[Any] | None = None
    answered_by: tuple[Statement, ...] = ()


@dataclass(frozen=True, slots=True)
class Step:
    statement: Statement
    params: dict[str, Any]


Group = list[tuple[int, dict[str, Any]]]  # a statement's rows, each with its write's position


def grouped(writes: Sequence[Sequence[Step]]) -> list[tuple[Statement, Group]]:
    """The steps of `writes` by statement, in the statements' order, each row with the
    position of its write."""
    groups: dict[Statement, Group] = {}
    for position, steps in enumerate(writes):
        for step in steps:
            groups.setdefault(step.statement, []).append((position, step.params))
    return sorted(groups.items(), key=lambda item: item[0].rank)


def run_group(conn: Connection, statement: Statement, group: Group, results: list[Any]) -> None:
    """One statement's rows (or a hook's calls) through SQLAlchemy; a returning statement's
    values (a hook's) go into `results` at their write's position."""
    if statement.hook is not None:
        values = statement.hook(conn, [one for _, one in group])
        for (position, _), value in zip(group, values, strict=True):
            if value is not None:
                results[position] = value
        return
    values = _run_core(conn, statement, [p for _, p in group])
    if statement.returning:
        for (position, _), value in zip(group, values, strict=True):
            results[position] = value


def _run_core(conn: Connection, statement: Statement, params: list[dict[str, Any]]) -> list[Any]:
    """One statement's rows through SQLAlchemy: the new ids of a returning statement, else []."""
    assert statement.sql is not None
    if statement.returning:
        return list(conn.execute(statement.sql, params).scalars().all())
    if statement.must_change and (len(params) == 1 or not conn.dialect.supports_sane_multi_rowcount):
        # Without a total row count for executemany (asyncpg), each row is checked on its own;
        # still one transaction.
        for one in params:
            if conn.execute(statement.sql, one).rowcount == 0:
                raise MissingRow(statement)
        return []
    changed = conn.execute(statement.sql, params)
    if statement.must_change and changed.rowcount != len(params):
        raise MissingRow(statement)
    return []


@dataclass(frozen=True, slots=True)
class Prepared:
    """A statement compiled once for a driver: its SQL, and for each placeholder in order the
    parameter's name, its fixed value when the statement holds one, and the type's converter.
    `plain_insert`: an INSERT that returns nothing (its rows may go in one statement);
    `counted`: an UPDATE that must change a row, compiled to return one row per changed row
    where the driver cannot count the rows of an executemany."""

    sql: str
    names: tuple[str, ...]
    fixed: dict[str, Any]
    convert: tuple[Callable[[Any], Any] | None, ...]
    plain_insert: bool = False
    counted: bool = False
    row: Callable[[dict[str, Any]], tuple[Any, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "row", _row_reader(self.names, self.fixed, self.convert))


def _row_reader(
    names: tuple[str, ...], fixed: dict[str, Any], convert: tuple[Callable[[Any], Any] | None, ...]
) -> Callable[[dict[str, Any]], tuple[Any, ...]]:
    """The function from a step's parameters to its row for the driver, in the placeholders'
    order. Every write makes a row of the busiest statement (an action), so its common form is
    built for speed: the parameters picked by one C call (`itemgetter`) and only the columns
    whose type converts (JSON, timestamps) converted. A statement that holds fixed values
    takes the general loop."""
    conversions = tuple((i, c) for i, c in enumerate(convert) if c is not None)
    if fixed or len(names) < 2:

        def general(params: dict[str, Any]) -> tuple[Any, ...]:
            return tuple(
                (params[name] if name in params else fixed[name])
                if convert is None
                else convert(params[name] if name in params else fixed[name])
                for name, convert in zip(names, convert, strict=True)
            )

        return general
    pick = itemgetter(*names)
    if not conversions:
        return pick

    def converted(params: dict[str, Any]) -> tuple[Any, ...]:
        values = list(pick(params))
        for i, convert in conversions:
            values[i] = convert(values[i])
        return tuple(values)

    return converted


def _with_integers_fast(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A JSON column's converter that turns an integer into its text directly (what the JSON
    encoder gives, checked here on one) rather than through the encoder: an action is most
    often one integer."""
    probe = -(2**70) + 1
    if convert(probe) != str(probe):
        return convert

    def fast(value: Any) -> Any:
        return str(value) if type(value) is int else convert(value)

    return fast


# Times a timestamp converter is checked on before `_with_utc_text_fast` stands in for it: the
# first years, a midnight without microseconds, leap days and the largest value.
_TIME_PROBES = (
    datetime(1, 1, 1, tzinfo=UTC),
    datetime(999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    datetime(2026, 11, 27, 7, 4, 5, 60, tzinfo=UTC),
    datetime(2028, 2, 29, tzinfo=UTC),
    datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
)


def _with_utc_text_fast(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A timestamp column's converter that writes a UTC time's text in one C call (what the
    dialect's processors give, checked here on `_TIME_PROBES`) rather than through SQLAlchemy's
    chain of processors: every action row carries a time. Where the dialect's form is not that
    text (a driver that takes `datetime` objects), the converter stays as it is."""

    def text(value: datetime) -> str:
        return value.isoformat(" ", "microseconds")[:26]  # without the zone: "+00:00"

    if any(convert(probe) != text(probe) for probe in _TIME_PROBES):
        return convert

    def fast(value: Any) -> Any:
        return text(value) if type(value) is datetime and value.tzinfo is UTC else convert(value)

    return fast


@dataclass(slots=True)
class Op:
    """One statement's rows in a planned batch: `prepared` and `rows` when they go straight
    to the driver, else None (through SQLAlchemy: a hook, or a statement it must complete)."""

    statement: Statement
    group: Group
    prepared: Prepared | None = None
    rows: list[tuple[Any, ...]] | None = None
    when: Prepared | None = None  # a hook's guard, to run for `when_rows` before calling it
    when_rows: list[tuple[Any, ...]] | None = None


class Planner:
    """Plans batches for one dialect's driver: each statement compiled once per set of parameter
    names, rows converted by the types' bind processors (JSON, timestamps) where the plan is
    made, on the event loop. `count_by_returning`: the driver's executemany gives no row count
    (asyncpg), so a must-change UPDATE returns a row per changed row, to be counted (its
    `answer`, if it has one)."""

    def __init__(self, dialect: Dialect, *, count_by_returning: bool = False) -> None:
        self.dialect = dialect
        self.count_by_returning = count_by_returning
        self._prepared: dict[tuple[Statement, tuple[str, ...]], Prepared | None] = {}

    def plan(self, writes: Sequence[Sequence[Step]]) -> list[Op]:
        ops = []
        for statement, group in grouped(writes):
            if statement.hook is not None:
                guard = statement.when and self._prepared_rows(statement.when, group)
                ops.append(Op(statement, group, when=guard and guard[0], when_rows=guard and guard[1]))
                continue
            prepared_rows = self._prepared_rows(statement, group)
            if prepared_rows is None:
                ops.append(Op(statement, group))  # through SQLAlchemy
                continue
            ops.append(Op(statement, group, *prepared_rows))
        return ops

    def prepared_row(self, statement: Statement, params: dict[str, Any]) -> tuple[str, tuple[Any, ...]] | None:
        """One statement's SQL for the driver and its row for `params` (a lookup's), or None if
        it must go through SQLAlchemy."""
        planned = self._prepared_rows(statement, [(0, params)])
        return None if planned is None else (planned[0].sql, planned[1][0])

    def _prepared_rows(self, statement: Statement, group: Group) -> tuple[Prepared, list[tuple[Any, ...]]] | None:
        """`statement` compiled for the driver and `group`'s rows for it, or None if it must go
        through SQLAlchemy."""
        keys = tuple(group[0][1])
        key = (statement, keys)
        prepared = self._prepared[key] if key in self._prepared else self._prepare(statement, keys)
        first = group[0][1].keys()
        if prepared is None or any(p.keys() != first for _, p in group):
            return None
        return prepared, [prepared.row(p) for _, p in group]

    def _prepare(self, statement: Statement, keys: tuple[str, ...]) -> Prepared | None:
        sql = statement.sql
        assert sql is not None
        dialect = self.dialect
        counted = self.count_by_returning and statement.must_change and isinstance(sql, UpdateBase)
        if counted:
            returned = literal_column("1") if statement.answer is None else statement.answer
            sql = sql.returning(returned)  # type: ignore[attr-defined]
        # Compiled as SQLAlchemy compiles for executemany (a plain INSERT would otherwise return
        # its new primary key, which nobody reads).
        query = not isinstance(sql, UpdateBase)  # a hook's guard
        compiled = sql.compile(
            dialect=dialect, column_keys=list(keys), for_executemany=not (statement.returning or query)
        )
        names = tuple(compiled.positiontup or ())
        prefetch = [*compiled.insert_prefetch, *compiled.update_prefetch]
        fixed: dict[str, Any] = {}
        for name in names:
            bind = compiled.binds[name]
            if name not in keys:
                fixed[name] = bind.value
                if bind.required or bind.callable is not None:
                    prefetch.append(bind)
        if any(column.key not in keys for column in prefetch):
            self._prepared[(statement, keys)] = None  # a value only SQLAlchemy can supply
            return None
        convert = tuple(_converter(compiled.binds[name].type, dialect) for name in names)
        plain_insert = isinstance(statement.sql, Insert) and not statement.returning
        prepared = Prepared(str(compiled), names, fixed, convert, plain_insert, counted)
        self._prepared[(statement, keys)] = prepared
        return prepared


def _converter(type_: TypeEngine[Any], dialect: Dialect) -> Callable[[Any], Any] | None:
    """The conversion SQLAlchemy itself applies for `dialect`: the dialect's own form of the
    type, so that a decorated type ends in its backend's conversion too (a timestamp becomes
    SQLite's text, not a `datetime` left for the sqlite3 module's deprecated adapter, which
    the writer process would also have to unpickle)."""
    convert = type_.dialect_impl(dialect).bind_processor(dialect)
    if convert is not None and isinstance(type_, JSON):
        return _with_integers_fast(convert)
    if convert is not None and type_._type_affinity is DateTime:
        return _with_utc_text_fast(convert)
    return convert
