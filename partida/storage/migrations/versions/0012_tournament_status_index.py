"""An index on the tournaments' status: the scheduler asks every second for the tournaments
registering or running, and finished ones pile up for good (their standings stay readable),
so without it that query reads every tournament ever played.

Frozen: a migration describes the schema as it was then, so it uses plain SQLAlchemy types and
never imports partida.storage.models.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27 07:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_tournaments_status", "tournaments", ["status"])


def downgrade() -> None:
    op.drop_index("ix_tournaments_status", table_name="tournaments")
