"""Accounts connected to each node (challenges and `add_bot` across nodes), and each ladder's
connected members and games in play as its scheduler's node sees them.

Frozen: a migration describes the schema as it was then, so it uses plain SQLAlchemy types and
never imports partida.storage.models.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "node_accounts",
        sa.Column("node", sa.String(length=64), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("agent", sa.String(length=64), nullable=True),
        sa.Column("games", sa.JSON(none_as_null=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_node_accounts_account_id_accounts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("node", "account_id", name=op.f("pk_node_accounts")),
    )
    op.create_table(
        "ladder_live",
        sa.Column("ladder_id", sa.Integer(), nullable=False),
        sa.Column("node", sa.String(length=64), nullable=False),
        sa.Column("members", sa.JSON(), nullable=False),
        sa.Column("playing", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["ladder_id"], ["ladders.id"], name=op.f("fk_ladder_live_ladder_id_ladders"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("ladder_id", name=op.f("pk_ladder_live")),
    )


def downgrade() -> None:
    op.drop_table("ladder_live")
    op.drop_table("node_accounts")
