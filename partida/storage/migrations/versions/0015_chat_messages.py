"""Chat: the lines said in a room's game (players' and spectators' channels) or a tournament,
kept with the game so its replay shows them, and the accounts the operator silenced.

Frozen: plain SQLAlchemy types, never partida.storage.models.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-29 06:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "chat_messages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=True),
        sa.Column("tournament_id", sa.Integer(), nullable=True),
        sa.Column("channel", sa.String(length=16), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=True),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=True),
        sa.Column("text", sa.String(length=500), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("removed_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_chat_messages_account_id_accounts"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_chat_messages_game_id_games"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_chat_messages_tournament_id_tournaments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chat_messages")),
    )
    op.create_index("ix_chat_messages_game", "chat_messages", ["game_id", "id"], unique=False)
    op.create_index("ix_chat_messages_tournament", "chat_messages", ["tournament_id", "id"], unique=False)
    op.create_index(op.f("ix_chat_messages_account_id"), "chat_messages", ["account_id"], unique=False)
    op.create_index(op.f("ix_chat_messages_removed_at"), "chat_messages", ["removed_at"], unique=False)
    op.create_table(
        "chat_silences",
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_chat_silences_account_id_accounts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("account_id", name=op.f("pk_chat_silences")),
    )


def downgrade() -> None:
    op.drop_table("chat_silences")
    op.drop_index(op.f("ix_chat_messages_removed_at"), table_name="chat_messages")
    op.drop_index(op.f("ix_chat_messages_account_id"), table_name="chat_messages")
    op.drop_index("ix_chat_messages_tournament", table_name="chat_messages")
    op.drop_index("ix_chat_messages_game", table_name="chat_messages")
    op.drop_table("chat_messages")
