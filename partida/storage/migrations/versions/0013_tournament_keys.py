"""Tournaments: their names' keys (`accounts.name_keys`, as the accounts' since 0009), so that
`PEOPLE1` cannot stand beside `people1`; the creator's address, so that an address holds a
bounded number of live tournaments; and an index in `tournament_list`'s order (soonest first),
so that a page is found from its cursor rather than by reading every tournament.

Existing tournaments get their keys here; twins already stored stay (a key is indexed, not
unique): the check is on new names. Their address is unknown (NULL): they count for no address.

Frozen otherwise: plain SQLAlchemy types, never partida.storage.models.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-29 00:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from partida.storage.accounts import name_keys

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("tournaments", sa.Column("name_key", sa.String(64), nullable=True))
    op.add_column("tournaments", sa.Column("shape_key", sa.String(64), nullable=True))
    op.add_column("tournaments", sa.Column("created_from", sa.String(64), nullable=True))
    tournaments = sa.table(
        "tournaments",
        sa.column("id", sa.Integer),
        sa.column("name", sa.String),
        sa.column("name_key"),
        sa.column("shape_key"),
    )
    conn = op.get_bind()
    for tournament_id, name in conn.execute(sa.select(tournaments.c.id, tournaments.c.name)).all():
        folded, shaped = name_keys(name)
        conn.execute(
            tournaments.update().where(tournaments.c.id == tournament_id).values(name_key=folded, shape_key=shaped)
        )
    op.create_index("ix_tournaments_name_key", "tournaments", ["name_key"])
    op.create_index("ix_tournaments_shape_key", "tournaments", ["shape_key"])
    op.create_index("ix_tournaments_starts", "tournaments", ["starts_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_tournaments_starts", table_name="tournaments")
    op.drop_index("ix_tournaments_shape_key", table_name="tournaments")
    op.drop_index("ix_tournaments_name_key", table_name="tournaments")
    op.drop_column("tournaments", "created_from")
    op.drop_column("tournaments", "shape_key")
    op.drop_column("tournaments", "name_key")
