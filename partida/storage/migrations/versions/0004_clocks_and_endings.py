"""Clocks and endings: the game's time control and ending bookkeeping, and each action's clock.

Frozen: a migration describes the schema as it was then, so it uses plain SQLAlchemy types and
never imports partida.storage.models.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23 02:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("clock", sa.JSON(none_as_null=True), nullable=True))
        batch.add_column(sa.Column("endings", sa.JSON(none_as_null=True), nullable=True))
    with op.batch_alter_table("actions") as batch:
        batch.add_column(sa.Column("clock", sa.JSON(none_as_null=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("actions") as batch:
        batch.drop_column("clock")
    with op.batch_alter_table("games") as batch:
        batch.drop_column("endings")
        batch.drop_column("clock")
