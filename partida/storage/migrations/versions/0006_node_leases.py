"""One lease per node: a room is held under its node's lease, so renewing costs one row per node
rather than one per room (room_leases.lease_until goes).

Frozen: a migration describes the schema as it was then, so it uses plain SQLAlchemy types and
never imports partida.storage.models.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23 04:45:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_index(op.f("ix_room_leases_lease_until"), table_name="room_leases")
    with op.batch_alter_table("room_leases") as batch:
        batch.drop_column("lease_until")


def downgrade() -> None:
    with op.batch_alter_table("room_leases") as batch:
        batch.add_column(
            sa.Column("lease_until", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now())
        )
    op.create_index(op.f("ix_room_leases_lease_until"), "room_leases", ["lease_until"], unique=False)
