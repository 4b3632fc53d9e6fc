"""The accounts' name keys (`accounts.name_keys`): names that pass for each other (Cyrillic or
full-width twins, accents, case) share one, so that a new account or a guest cannot take an
account's twin; they replace the index on lower(name), which found only case twins.

Existing accounts get their keys here, computed as `partida.storage.accounts.name_keys` computes
them today; should that change, a later migration computes them again. Accounts that are
already twins of each other stay (a key is indexed, not unique): the check is on new names.

Frozen otherwise: plain SQLAlchemy types, never partida.storage.models.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26 22:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from partida.storage.accounts import name_keys

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("accounts", sa.Column("name_key", sa.String(64), nullable=True))
    op.add_column("accounts", sa.Column("shape_key", sa.String(64), nullable=True))
    accounts = sa.table(
        "accounts",
        sa.column("id", sa.Integer),
        sa.column("name", sa.String),
        sa.column("name_key"),
        sa.column("shape_key"),
    )
    conn = op.get_bind()
    for account_id, name in conn.execute(sa.select(accounts.c.id, accounts.c.name)).all():
        folded, shaped = name_keys(name)
        conn.execute(accounts.update().where(accounts.c.id == account_id).values(name_key=folded, shape_key=shaped))
    op.create_index("ix_accounts_name_key", "accounts", ["name_key"])
    op.create_index("ix_accounts_shape_key", "accounts", ["shape_key"])
    op.drop_index("ix_accounts_lower_name", table_name="accounts")


def downgrade() -> None:
    op.create_index("ix_accounts_lower_name", "accounts", [sa.text("lower(name)")])
    op.drop_index("ix_accounts_shape_key", table_name="accounts")
    op.drop_index("ix_accounts_name_key", table_name="accounts")
    op.drop_column("accounts", "shape_key")
    op.drop_column("accounts", "name_key")
