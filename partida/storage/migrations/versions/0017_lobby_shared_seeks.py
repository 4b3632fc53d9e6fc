"""The open seeks of a deployment of several nodes (`shared_seeks`): every node lists them and
any node may pair them, each exactly once (a conditional UPDATE of `claimed_by`). A single
server (SQLite or PostgreSQL without `--node`) never writes here.

Frozen: a migration describes the schema as it was then, so it uses plain SQLAlchemy types and
never imports partida.storage.models.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-29 06:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "shared_seeks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("node", sa.String(length=64), nullable=False),
        sa.Column("owner", sa.String(length=80), nullable=False),
        sa.Column("address", sa.String(length=64), nullable=False),
        sa.Column("terms_key", sa.String(length=64), nullable=False),
        sa.Column("party", sa.JSON(), nullable=False),
        sa.Column("terms", sa.JSON(), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("claimed_by", sa.String(length=64), nullable=True),
        sa.Column("paired", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("posted_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_shared_seeks")),
    )
    op.create_index(op.f("ix_shared_seeks_node"), "shared_seeks", ["node"], unique=False)
    op.create_index(op.f("ix_shared_seeks_owner"), "shared_seeks", ["owner"], unique=False)
    op.create_index("ix_shared_seeks_terms_open", "shared_seeks", ["terms_key", "id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_shared_seeks_terms_open", table_name="shared_seeks")
    op.drop_index(op.f("ix_shared_seeks_owner"), table_name="shared_seeks")
    op.drop_index(op.f("ix_shared_seeks_node"), table_name="shared_seeks")
    op.drop_table("shared_seeks")
