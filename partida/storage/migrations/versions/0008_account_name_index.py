"""An index on the accounts' names in lower case: every guest's hello asks whether its name is an
account's in any case, which without it reads every account.

Frozen: a migration describes the schema as it was then, so it uses plain SQLAlchemy types and
never imports partida.storage.models.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23 14:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_accounts_lower_name", "accounts", [sa.text("lower(name)")])


def downgrade() -> None:
    op.drop_index("ix_accounts_lower_name", table_name="accounts")
