"""Sign-up invite codes: a server whose sign-up needs an invite keeps the codes its operator gave
out (`partida db invite`), by their sha256, with the uses each has left. And tournament games are
public from now on (anyone may watch and replay them, as on Lichess): the games of tournaments
played before, stored private, become public too.

Frozen: a migration describes the schema as it was then, so it uses plain SQLAlchemy types and
never imports partida.storage.models.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-29 06:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "sign_up_invites",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("code_hash", sa.String(length=64), nullable=False),
        sa.Column("uses_left", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sign_up_invites")),
        sa.UniqueConstraint("code_hash", name=op.f("uq_sign_up_invites_code_hash")),
    )
    games = sa.table("games", sa.column("id", sa.Integer()), sa.column("public", sa.Boolean()))
    tables = sa.table("tournament_pairings", sa.column("game_id", sa.Integer()))
    op.execute(games.update().where(games.c.id.in_(sa.select(tables.c.game_id))).values(public=True))


def downgrade() -> None:
    # Every tournament game was private before this revision.
    games = sa.table("games", sa.column("id", sa.Integer()), sa.column("public", sa.Boolean()))
    tables = sa.table("tournament_pairings", sa.column("game_id", sa.Integer()))
    op.execute(games.update().where(games.c.id.in_(sa.select(tables.c.game_id))).values(public=False))
    op.drop_table("sign_up_invites")
