"""People's ratings on the 1500-centred scale: `person_ratings` and `person_rating_changes` hold a
rating and a deviation in rating points (Glicko-2's, and OpenSkill's mapped onto it) plus
Glicko-2's volatility, where they held OpenSkill's mu and sigma.

The stored ratings are converted, not reset: each mu and sigma becomes a rating and deviation by
the documented mapping (`partida.competition.ratings.openskill_to_scale`, written out here:
rating = 1500 + 29.4809 (mu - 25), deviation = 29.4809 sigma), so every account keeps its place
and its certainty. Games of more than two seats go on with OpenSkill from exactly where they were;
two-seat games go on with Glicko-2 from there, with lichess's starting volatility (0.09). The
history rows are converted the same way, so a plot reads on one scale from the first game.
Downgrading converts back.

Frozen: plain SQLAlchemy types, never partida.storage.models.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-29 06:20:00
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# 173.7178 / (sqrt(2) * beta), beta = 25/6: one unit of OpenSkill's mu in rating points.
POINTS = 173.7178 / (math.sqrt(2.0) * 25.0 / 6.0)

RENAMES = {
    "person_ratings": [("mu", "rating"), ("sigma", "deviation")],
    "person_rating_changes": [
        ("mu_before", "rating_before"),
        ("sigma_before", "deviation_before"),
        ("mu", "rating"),
        ("sigma", "deviation"),
    ],
}


def _convert(table: str, pairs: list[tuple[str, str]], forward: bool) -> None:
    sets = []
    for location, spread in pairs:
        if forward:
            sets += [f"{location} = 1500.0 + {POINTS!r} * ({location} - 25.0)", f"{spread} = {POINTS!r} * {spread}"]
        else:
            sets += [f"{location} = 25.0 + ({location} - 1500.0) / {POINTS!r}", f"{spread} = {spread} / {POINTS!r}"]
    op.execute(sa.text(f"UPDATE {table} SET {', '.join(sets)}"))


def upgrade() -> None:
    # RENAME COLUMN in place (PostgreSQL, SQLite 3.25+): no copy of the tables.
    for table, renames in RENAMES.items():
        for old, new in renames:
            op.execute(sa.text(f"ALTER TABLE {table} RENAME COLUMN {old} TO {new}"))
        op.add_column(table, sa.Column("volatility", sa.Float(), server_default=sa.text("0.09"), nullable=False))
    _convert("person_ratings", [("rating", "deviation")], forward=True)
    _convert("person_rating_changes", [("rating_before", "deviation_before"), ("rating", "deviation")], forward=True)


def downgrade() -> None:
    _convert("person_ratings", [("rating", "deviation")], forward=False)
    _convert("person_rating_changes", [("rating_before", "deviation_before"), ("rating", "deviation")], forward=False)
    for table, renames in RENAMES.items():
        op.execute(sa.text(f"ALTER TABLE {table} DROP COLUMN volatility"))
        for old, new in renames:
            op.execute(sa.text(f"ALTER TABLE {table} RENAME COLUMN {new} TO {old}"))
