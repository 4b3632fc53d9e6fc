"""Persistence for Partida: accounts, games and their action logs, and lab runs.

`database` opens an engine for a URL and brings its schema up to date with Alembic; `models` holds
the tables; `store` is the small async API the server and the command line call, so they never
handle ORM objects outside a session. SQLite is the default (nothing to install); PostgreSQL is
chosen by URL.
"""
