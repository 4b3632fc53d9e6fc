"""The group writer's batches on PostgreSQL, straight on one asyncpg connection (see `batching`).

The writer keeps one connection of the engine's pool for itself
(`postgres_connection.KeptConnection`) and sends each batch on the driver itself, not through
SQLAlchemy, whose work per execution costs more than the rows and which would check a
must-change UPDATE one row per round trip (asyncpg's executemany gives no row count):

- each statement's rows as one asyncpg executemany, which pipelines them (one round trip for
  the group), with the SQL SQLAlchemy's asyncpg dialect compiled once (`writes.Planner`);
- a returning INSERT (a new game) and a must-change UPDATE (compiled to return a row per changed
  row) with asyncpg's fetchmany, pipelined the same way: the new ids come back in the order of
  the rows, and the rows returned are the rows changed;
- a batch of one statement with no UPDATE to count needs no BEGIN and COMMIT: one pipeline is
  atomic by itself (PostgreSQL runs it as one implicit transaction, committed before it
  answers), so the batch is one round trip.

A hook (rating a ladder game, which takes a SQLAlchemy connection) is called only if its guard
query, sent on the driver for each of its steps in one pipeline, finds a row (most finished games
are no ladder's). The guard's query is not sent where the must-change UPDATE of the same writes
answered it in what it returns (the finish of a game says whether it is a ladder game to rate):
a game's end is then one statement, as its start is (`Store.start_game`). A hook that is called,
or a statement that needs what only SQLAlchemy supplies, runs through SQLAlchemy on the same
connection, inside the writer's transaction: SQLAlchemy sees that connection in autocommit mode,
so it never begins or commits on it, and the writer begins and commits on the driver.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

import asyncpg
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from partida.storage.backend import Outcome
from partida.storage.postgres_connection import KeptConnection
from partida.storage.writes import MissingRow, Op, Planner, Statement, Step, plan_alone, run_group


class PostgresWriter:
    """Runs the group writer's transactions on one connection of `engine`'s pool, kept open
    between batches and opened again after it failed. Its batches go one at a time, from the
    group writer's task (`transaction`): a connection runs one transaction at a time."""

    takes_batches_as_they_come = False

    def __init__(self, engine: AsyncEngine, next_needs_transaction: Callable[[], bool] = lambda: False) -> None:
        self.planner = Planner(engine.dialect, count_by_returning=True)
        self.kept = KeptConnection(engine)
        # Asked as a transaction commits: whether the writes waiting for the next one need a
        # BEGIN (more than one plain statement), which then goes with this COMMIT.
        self.next_needs_transaction = next_needs_transaction

    async def transaction(self, writes: Sequence[Sequence[Step]]) -> list[Any]:
        """One transaction for `writes`, committed when this returns; the value each write's
        returning step gave (None for the others). After a failure of the server or the
        connection (or the writer cancelled mid-batch) the next batch starts on a new
        connection; a constraint's error rolled the batch back and leaves the connection fine."""
        ops = plan_alone(self.planner, writes)
        count = len(writes)
        return await self.kept.run(
            lambda conn, driver: self._run(conn, driver, ops, count), (IntegrityError, MissingRow)
        )

    def hand_over(self, writes: Sequence[Sequence[Step]], done: Outcome) -> bool:
        """Never: every batch waits its turn (`transaction`)."""
        return False

    async def close(self) -> None:
        await self.kept.close()

    async def _run(self, conn: AsyncConnection, driver: asyncpg.Connection, ops: list[Op], count: int) -> list[Any]:
        results: list[Any] = [None] * count
        begun = driver.is_in_transaction()  # BEGIN went with the last batch's COMMIT
        if not begun and len(ops) == 1 and ops[0].rows is not None and not ops[0].statement.must_change:
            await self._send(driver, ops[0], results, {})  # one pipeline: its own transaction
            return results
        if not begun:
            await self.kept.guard("BEGIN", driver.execute("BEGIN"))
        answers: dict[Statement, dict[int, bool]] = {}  # each answering UPDATE's, by write
        try:
            for op in ops:
                if op.when is not None and op.when_rows is not None:
                    found = _answered(op, answers)
                    if found is None:
                        found = bool(await self.kept.guard(op.when.sql, driver.fetchmany(op.when.sql, op.when_rows)))
                    if not found:
                        continue  # nothing for the hook to do in this batch
                if op.rows is None:
                    await conn.run_sync(run_group, op.statement, op.group, results)
                else:
                    await self._send(driver, op, results, answers)
        except BaseException:
            if not driver.is_closed():
                with contextlib.suppress(Exception):
                    await driver.execute("ROLLBACK")
            raise
        finally:
            if conn.in_transaction():
                # SQLAlchemy's bookkeeping only, nothing reaches the server; after a failure it
                # must not hide the error being raised.
                with contextlib.suppress(Exception):
                    await conn.rollback()
        # The next batch's BEGIN in the same round trip, when the writes waiting for it need
        # one: a round trip fewer for it (a simple query may hold several statements).
        commit = "COMMIT; BEGIN" if self.next_needs_transaction() else "COMMIT"
        await self.kept.guard("COMMIT", driver.execute(commit))
        return results

    async def _send(
        self, driver: asyncpg.Connection, op: Op, results: list[Any], answers: dict[Statement, dict[int, bool]]
    ) -> None:
        prepared, rows, statement = op.prepared, op.rows, op.statement
        assert prepared is not None and rows is not None
        if statement.returning:
            records = await self.kept.guard(prepared.sql, driver.fetchmany(prepared.sql, rows))
            if len(records) != len(rows):
                raise RuntimeError(f"{statement.name} returned {len(records)} rows for {len(rows)}")
            for (position, _), record in zip(op.group, records, strict=True):
                results[position] = record[0]
        elif prepared.counted:
            records = await self.kept.guard(prepared.sql, driver.fetchmany(prepared.sql, rows))
            if len(records) != len(rows):
                raise MissingRow(statement)
            if statement.answer is not None:
                answers[statement] = {
                    position: bool(record[0]) for (position, _), record in zip(op.group, records, strict=True)
                }
        else:
            assert not statement.must_change  # the Planner compiles those counted
            await self.kept.guard(prepared.sql, driver.executemany(prepared.sql, rows))


def _answered(op: Op, answers: dict[Statement, dict[int, bool]]) -> bool | None:
    """Whether the guard of hook `op` finds a row for any of its steps, as the UPDATEs it is
    `answered_by` returned it, or None where none of them answered for every step (none was in
    the batch for that write, or it went through SQLAlchemy): the guard's query is sent."""
    told: dict[int, bool] = {}
    for statement in op.statement.answered_by:
        told.update(answers.get(statement, {}))
    if any(position not in told for position, _ in op.group):
        return None
    return any(told[position] for position, _ in op.group)
