"""Nodes and room leases: several server nodes on one database, each holding a lease on its rooms.

Frozen: a migration describes the schema as it was then, so it uses plain SQLAlchemy types and
never imports partida.storage.models.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 04:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "nodes",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("public_url", sa.String(length=255), nullable=False),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_nodes")),
    )
    op.create_table(
        "room_leases",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("code", sa.String(length=32), nullable=False),
        sa.Column("node", sa.String(length=64), nullable=False),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=False),
        sa.Column("public", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("summary", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_room_leases_game_id_games"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("game_id", name=op.f("pk_room_leases")),
        sa.UniqueConstraint("code", name=op.f("uq_room_leases_code")),
    )
    op.create_index(op.f("ix_room_leases_node"), "room_leases", ["node"], unique=False)
    op.create_index(op.f("ix_room_leases_lease_until"), "room_leases", ["lease_until"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_room_leases_lease_until"), table_name="room_leases")
    op.drop_index(op.f("ix_room_leases_node"), table_name="room_leases")
    op.drop_table("room_leases")
    op.drop_table("nodes")
