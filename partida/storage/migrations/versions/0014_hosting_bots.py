"""Hosted bots: a bot account's owner (the person who submitted it), its versions (each a bundle
on disk named by its digest, the command run in it, the games it declares), the bot's state
(active version; active, paused or withdrawn), the verdicts on its program and its stderr, and which version
played each seat of a game.

Frozen: plain SQLAlchemy types, never partida.storage.models.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-29 06:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # No reference constraint: SQLite adds one to an existing table only by rebuilding it, and a
    # rebuild of `accounts` drops the table, and with it every seat's account (ON DELETE SET NULL).
    op.add_column("accounts", sa.Column("owner_id", sa.Integer(), nullable=True))
    op.create_index("ix_accounts_owner_id", "accounts", ["owner_id"])
    op.add_column("seats", sa.Column("bot_version", sa.Integer(), nullable=True))
    op.create_table(
        "hosted_bots",
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("active_version", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.String(300), nullable=True),
        sa.Column("failures_in_row", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name="fk_hosted_bots_account_id_accounts", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("account_id", name="pk_hosted_bots"),
    )
    op.create_table(
        "hosted_versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("run", sa.String(1000), nullable=False),
        sa.Column("games", sa.JSON(), nullable=False),
        sa.Column("packed_bytes", sa.BigInteger(), nullable=False),
        sa.Column("unpacked_bytes", sa.BigInteger(), nullable=False),
        sa.Column("files", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name="fk_hosted_versions_account_id_accounts", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_hosted_versions"),
        sa.UniqueConstraint("account_id", "number", name="uq_hosted_versions_account_id_number"),
    )
    op.create_table(
        "hosted_logs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=True),
        sa.Column("game_id", sa.Integer(), nullable=True),
        sa.Column("verdict", sa.String(32), nullable=False),
        sa.Column("detail", sa.String(500), nullable=False),
        sa.Column("stderr_tail", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name="fk_hosted_logs_account_id_accounts", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name="fk_hosted_logs_game_id_games", ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id", name="pk_hosted_logs"),
    )
    op.create_index("ix_hosted_logs_account_id", "hosted_logs", ["account_id"])


def downgrade() -> None:
    op.drop_index("ix_hosted_logs_account_id", table_name="hosted_logs")
    op.drop_table("hosted_logs")
    op.drop_table("hosted_versions")
    op.drop_table("hosted_bots")
    op.drop_column("seats", "bot_version")
    op.drop_index("ix_accounts_owner_id", table_name="accounts")
    op.drop_column("accounts", "owner_id")
