"""Alembic environment for Partida.

Partida runs its migrations from code (`partida.storage.database.Database.open` and `partida db
upgrade`): they hand over an open synchronous connection in `config.attributes["connection"]`, so
the same code path serves SQLite and PostgreSQL and no alembic.ini is needed. Run by the `alembic`
command instead (for writing a new revision), it connects to `sqlalchemy.url` from its config, or
to $PARTIDA_DB.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, create_engine, pool

from partida.storage.models import Base

config = context.config
target_metadata = Base.metadata


def run_on(connection: Connection) -> None:
    """Apply the migrations on an open connection. SQLite gets batch mode, which rebuilds a table
    to alter it, because SQLite's ALTER TABLE cannot change or drop most things."""
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def sync_url() -> str:
    """The URL the `alembic` command connects to, with the async driver swapped for a sync one."""
    from partida.storage.database import default_url, normalize_url

    url = config.get_main_option("sqlalchemy.url") or default_url()
    url = normalize_url(url)
    return url.replace("+aiosqlite", "").replace("+asyncpg", "+psycopg2")


def run() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        run_on(connection)
        return
    if context.is_offline_mode():
        context.configure(url=sync_url(), target_metadata=target_metadata, literal_binds=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = create_engine(sync_url(), poolclass=pool.NullPool)
    with engine.connect() as connection:
        run_on(connection)


run()
