"""People's ratings: whether a game is rated (and the farming verdict taken at its start), each
account's rating per game and clock class, and the history of every rated game's changes.

Frozen: a migration describes the schema as it was then, so it uses plain SQLAlchemy types and
never imports partida.storage.models.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27 03:50:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Plain ADD COLUMN (SQLite takes a constant default): a batch copy of `games` would drop the
    # old table, and with it, by its foreign keys' cascades, every seat and action.
    op.add_column("games", sa.Column("rated", sa.Boolean(), server_default=sa.false(), nullable=False))
    op.add_column("games", sa.Column("farming", sa.String(length=8), nullable=True))
    op.create_table(
        "person_ratings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("game", sa.String(length=64), nullable=False),
        sa.Column("clock_class", sa.String(length=16), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_person_ratings_account_id_accounts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_person_ratings")),
        sa.UniqueConstraint(
            "account_id", "game", "clock_class", name=op.f("uq_person_ratings_account_id_game_clock_class")
        ),
    )
    op.create_index(op.f("ix_person_ratings_game"), "person_ratings", ["game", "clock_class"], unique=False)
    op.create_table(
        "person_rating_changes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("game", sa.String(length=64), nullable=False),
        sa.Column("clock_class", sa.String(length=16), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("mu_before", sa.Float(), nullable=False),
        sa.Column("sigma_before", sa.Float(), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("rated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_person_rating_changes_account_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_person_rating_changes_game_id_games"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_person_rating_changes")),
        sa.UniqueConstraint("game_id", "account_id", name=op.f("uq_person_rating_changes_game_id_account_id")),
    )
    op.create_index(op.f("ix_person_rating_changes_account_id"), "person_rating_changes", ["account_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_person_rating_changes_account_id"), table_name="person_rating_changes")
    op.drop_table("person_rating_changes")
    op.drop_index(op.f("ix_person_ratings_game"), table_name="person_ratings")
    op.drop_table("person_ratings")
    op.drop_column("games", "farming")
    op.drop_column("games", "rated")
