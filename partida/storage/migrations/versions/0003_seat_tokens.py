"""Seat tokens drawn per seating and stored with the seat (they were derived from the seed, so a
token kept from an earlier seating took the seat from its new holder).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23 01:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("seats") as batch:
        batch.add_column(sa.Column("token", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("seats") as batch:
        batch.drop_column("token")
