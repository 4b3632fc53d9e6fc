"""Opening a database: URLs, the async engine, SQLite settings, and migrations run from code.

SQLite (a file in the current directory) is the default because it needs nothing installed;
PostgreSQL is chosen by URL for deployments with several server nodes. Either way `Database.open`
brings the schema to the newest Alembic revision before it returns, so a fresh file or an empty
PostgreSQL database is ready to use, and an old one is upgraded in place. SQLite "in memory"
(`:memory:`) is a file in a temporary folder, removed when the database closes.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

from partida.storage.sqlite_settings import SQLITE_BUSY_TIMEOUT_MS as SQLITE_BUSY_TIMEOUT_MS
from partida.storage.sqlite_settings import apply_pragmas

ENV_VAR = "PARTIDA_DB"
DEFAULT_FILE = "partida.db"
MIGRATIONS = Path(__file__).with_name("migrations")

# How long to wait for a PostgreSQL server to accept a connection before saying it is unreachable.
CONNECT_TIMEOUT_S = 10.0
# Longest a PostgreSQL statement may take before it is cancelled and fails (asyncpg's
# `command_timeout`): a database server that stops answering (a frozen host, a lock held by hand)
# makes moves fail with a storage error, which players can retry, instead of hanging every room
# that writes behind it for ever. No statement of the server's comes near it; a migration's wait
# for another node's migration is the longest.
STATEMENT_TIMEOUT_S = 60.0
# Two server nodes starting at once must not both run the same migration; PostgreSQL serialises
# them on this advisory lock key (any constant; this one spells "partida" in ASCII, truncated).
MIGRATION_LOCK_KEY = 0x7061727469


class StorageError(ValueError):
    """A database problem a person can fix: a bad URL, an unreachable server, a taken name.
    The message is one sentence, with any password masked."""


class NotWritten(StorageError):
    """A write refused before anything reached the database (a node fenced off its games), so
    it cannot have landed: nobody need read the database back to find out (`server.mending`)."""


def default_url() -> str:
    """$PARTIDA_DB if set, else the SQLite file partida.db in the current directory."""
    return os.environ.get(ENV_VAR) or f"sqlite+aiosqlite:///{DEFAULT_FILE}"


def normalize_url(url: str) -> str:
    """The SQLAlchemy async URL for what a person typed.

    >>> normalize_url("sqlite:///games.db")
    'sqlite+aiosqlite:///games.db'
    >>> normalize_url("postgres://u:p@db/partida")
    'postgresql+asyncpg://u:p@db/partida'
    >>> normalize_url("data/games.db")
    'sqlite+aiosqlite:///data/games.db'
    """
    url = url.strip()
    if not url:
        raise StorageError("the database URL is empty; give a SQLite file path or a postgresql:// URL.")
    if "://" not in url:
        if url == ":memory:":
            return "sqlite+aiosqlite://"
        return f"sqlite+aiosqlite:///{os.path.expanduser(url)}"
    scheme, _, rest = url.partition("://")
    driver = scheme.lower().partition("+")[2]
    family = scheme.lower().partition("+")[0]
    try:
        if family == "sqlite" and driver in ("", "aiosqlite", "pysqlite"):
            normalized = f"sqlite+aiosqlite://{rest}"
        elif family in ("postgresql", "postgres") and driver in ("", "asyncpg", "psycopg2", "psycopg"):
            normalized = _postgres_url(f"postgresql+asyncpg://{rest}")
        else:
            raise StorageError(
                f"unsupported database URL {mask_url(url)}: Partida stores games in SQLite "
                "(a file path or sqlite:///FILE) or PostgreSQL (postgresql://USER:PASSWORD@HOST/DB)."
            )
        make_url(normalized).port  # noqa: B018 (parsing the port is what can fail)
    except (ArgumentError, ValueError) as exc:
        if isinstance(exc, StorageError):
            raise
        raise StorageError(f"the database URL {mask_url(url)} is malformed: {exc}.") from None
    return normalized


def _postgres_url(url: str) -> str:
    """asyncpg spells libpq's `sslmode` as `ssl`; accept the familiar spelling."""
    parsed = make_url(url)
    query = dict(parsed.query)
    if "sslmode" in query:
        query["ssl"] = query.pop("sslmode")
        return parsed.set(query=query).render_as_string(hide_password=False)
    return url


def mask_url(url: str | URL) -> str:
    """The URL with its password replaced by ***, for messages and logs."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        text_url = str(url)
        if "@" in text_url and "://" in text_url:
            scheme, _, rest = text_url.partition("://")
            creds, _, host = rest.rpartition("@")
            user = creds.partition(":")[0]
            return f"{scheme}://{user}:***@{host}"
        return text_url


def on_sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    """Per-connection SQLite settings (`sqlite_settings.apply_pragmas`)."""
    try:
        cursor = dbapi_connection.cursor()
        try:
            apply_pragmas(cursor)
        finally:
            cursor.close()
    except BaseException:
        # The pool drops a connection whose set-up failed without closing it, which would leave
        # aiosqlite's worker thread behind (say, on a file that is not a database).
        dbapi_connection.close()
        raise


def _run_upgrade(connection: Connection, revision: str = "head") -> None:
    """Alembic's synchronous upgrade, on a connection handed over by `AsyncConnection.run_sync`."""
    from alembic import command

    command.upgrade(alembic_config(connection), revision)


def alembic_config(connection: Connection | None = None) -> Any:
    """An Alembic config built in code: the scripts ship inside the package, so no alembic.ini
    has to sit in the working directory."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """The newest migration this version of Partida ships."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


class Database:
    """An async engine for one URL, with its schema migrated. Open with `await Database.open(url)`."""

    def __init__(self, engine: AsyncEngine, url: str, writer_cpus: frozenset[int] | None = None) -> None:
        self.engine = engine
        self.url = url
        self.writer_cpus = writer_cpus
        self.dialect = engine.dialect.name
        self.sessionmaker = async_sessionmaker(engine, expire_on_commit=False)
        # SQLite allows one writer at a time; queueing writers in-process is cheaper than letting
        # them spin on the file lock. PostgreSQL writes run concurrently.
        self.write_lock: asyncio.Lock | None = asyncio.Lock() if self.dialect == "sqlite" else None
        self._on_close: list[Callable[[], Awaitable[None]]] = []
        # An in-memory database is a file in a folder of its own, removed when it closes: its
        # writes take the path of any SQLite file's.
        self.temporary: Path | None = None

    @property
    def url_for_people(self) -> str:
        """The URL with its password masked."""
        return mask_url(self.url)

    @classmethod
    async def open(
        cls,
        url: str | None = None,
        *,
        migrate: bool = True,
        statement_timeout: float = STATEMENT_TIMEOUT_S,
        writer_cpus: frozenset[int] | None = None,
    ) -> Database:
        """Connect to `url` (default: `default_url()`), apply the migrations unless `migrate` is
        false, and return the database. Raises `StorageError` naming the URL if that fails.
        `statement_timeout`: seconds a PostgreSQL statement may take (see `STATEMENT_TIMEOUT_S`).
        `writer_cpus`: the CPUs the SQLite writer's process runs on, when the server pinned
        itself to one (`partida serve --cpu` gives the others: woken on the event loop's CPU,
        the process ran first while the loop waited). None: the server's own (it inherits them)."""
        url = normalize_url(url or default_url())
        check_sqlite_folder(url)
        temporary = None
        if _in_memory(url):  # a file like any other, gone when the database closes
            temporary = Path(tempfile.mkdtemp(prefix="partida-memory-"))
            url = f"sqlite+aiosqlite:///{temporary / 'partida.db'}"
        try:
            engine = create_async_engine(url, **_engine_options(url, statement_timeout))
        except (ArgumentError, ImportError, TypeError, ValueError) as exc:
            _remove(temporary)
            raise StorageError(f"cannot use the database URL {mask_url(url)}: {describe_error(exc)}.") from None
        if engine.dialect.name == "sqlite":
            event.listen(engine.sync_engine, "connect", on_sqlite_connect)
        db = cls(engine, url, writer_cpus)
        db.temporary = temporary
        try:
            if migrate:
                await db.migrate()
            else:
                await db.ping()
        except BaseException:
            await engine.dispose()
            _remove(temporary)
            raise
        return db

    async def ping(self) -> None:
        """Check that the database answers; raises `StorageError` with a sentence if not."""
        try:
            async with self.engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
        except Exception as exc:
            raise self._explain(exc) from exc

    async def migrate(self, revision: str = "head") -> None:
        """Bring the schema to `revision` (default the newest)."""
        try:
            async with self.engine.connect() as conn:
                if self.dialect == "postgresql":
                    await conn.execute(text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
                try:
                    await conn.run_sync(_run_upgrade, revision)
                    await conn.commit()
                finally:
                    if self.dialect == "postgresql":
                        await conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": MIGRATION_LOCK_KEY})
                        await conn.commit()
        except Exception as exc:
            raise self._explain(exc) from exc

    async def check_writable(self) -> None:
        """Raise `StorageError` if the database refuses writes (a read-only file or mount, a
        read-only PostgreSQL replica or role), so that a server finds out at start rather than at
        the first move it cannot store. The probe writes a row with the value it already has."""
        try:
            async with self.write() as conn:
                await conn.execute(text("UPDATE alembic_version SET version_num = version_num"))
        except Exception as exc:
            raise StorageError(
                f"the database at {self.url_for_people} does not accept writes: {describe_error(exc)}."
            ) from exc

    async def revision(self) -> str | None:
        """The schema revision the database is at (None for an empty database)."""
        from alembic.runtime.migration import MigrationContext

        def current(connection: Connection) -> str | None:
            return MigrationContext.configure(connection).get_current_revision()

        async with self.engine.connect() as conn:
            return await conn.run_sync(current)

    def _explain(self, exc: BaseException) -> StorageError:
        """One sentence for a failure to open or migrate, instead of a driver traceback."""
        from alembic.util import CommandError

        where = self.url_for_people
        if isinstance(exc, CommandError) and "Can't locate revision" in str(exc):
            return StorageError(
                f"the database at {where} was migrated by a newer Partida ({exc}); upgrade Partida to use it."
            )
        reason = describe_error(exc)
        return StorageError(f"cannot open the database at {where}: {reason}.")

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        """An ORM session; commit inside it to keep changes. Objects stay readable after commit."""
        async with self.sessionmaker() as session:
            yield session

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncConnection]:
        """One short write transaction on a Core connection, committed on exit. On SQLite the
        writers of this process take turns (see `write_lock`)."""
        if self.write_lock is None:
            async with self.engine.begin() as conn:
                yield conn
            return
        async with self.write_lock, self.engine.begin() as conn:
            yield conn

    def on_close(self, callback: Callable[[], Awaitable[None]]) -> None:
        """Run `callback` (say, flushing a batch writer) when the database closes, before the
        connections go."""
        self._on_close.append(callback)

    async def close(self) -> None:
        """Finish queued writes, then close every pooled connection."""
        callbacks, self._on_close = self._on_close, []
        for callback in callbacks:
            await callback()
        await self.engine.dispose()
        _remove(self.temporary)

    async def __aenter__(self) -> Database:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _in_memory(url: str) -> bool:
    """Whether a normalized URL names an in-memory SQLite database."""
    parsed = make_url(url)
    return parsed.get_backend_name() == "sqlite" and (parsed.database or ":memory:") == ":memory:"


def _remove(folder: Path | None) -> None:
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def sqlite_file(url: str) -> Path | None:
    """The file a SQLite URL (or a plain path, as `--db` takes) names, or None: another database,
    SQLite in memory, or no URL at all (`Database.open` says what is wrong with it)."""
    try:
        parsed = make_url(normalize_url(url))
    except (ArgumentError, StorageError, ValueError):
        return None
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    database = parsed.database
    if database.startswith("file:"):  # a SQLite URI (say file:games.db?mode=ro with uri=true)
        database = database.removeprefix("file:").partition("?")[0]
    return Path(database)


def check_sqlite_folder(url: str) -> None:
    """Refuse a SQLite file whose folder is missing before connecting (or claiming it,
    `sqlite_claim`): the message is clearer, and aiosqlite leaves a worker thread behind when the
    connection itself fails."""
    database = sqlite_file(url)
    if database is None:
        return
    folder = database.parent
    if not folder.is_dir():
        raise StorageError(f"cannot open the database at {mask_url(url)}: the folder {folder} does not exist.")


def _engine_options(url: str, statement_timeout: float) -> dict[str, Any]:
    if url.startswith("sqlite"):
        return {"connect_args": {"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000}}
    return {
        "pool_pre_ping": True,
        "pool_size": 10,
        "max_overflow": 20,
        "connect_args": {"timeout": CONNECT_TIMEOUT_S, "command_timeout": statement_timeout},
    }


def log_failure(logger: logging.Logger, exc: BaseException, message: str, *args: Any) -> None:
    """Log a failed database call: a database that is full, read-only or gone is the operator's
    to fix and says so in one line (with the driver's reason); anything else is a bug and gets
    its traceback. Under a full disk every refused request fails the same way: one line each."""
    if isinstance(exc, SQLAlchemyError | StorageError | OSError):
        logger.error(message + ": %s", *args, describe_error(exc))
    else:
        logger.error(message, *args, exc_info=exc)


def describe_error(exc: BaseException) -> str:
    """The innermost human part of a driver error, on one line."""
    if isinstance(exc, ConnectionRefusedError):
        message = "the connection was refused (is the database server running, on that host and port?)"
    elif isinstance(exc, SQLAlchemyError):
        orig = getattr(exc, "orig", None)
        message = str(orig) if orig is not None else str(exc).split("\n")[0]
        if "unable to open database file" in message:
            message += " (may Partida write in its folder?)"
    elif isinstance(exc, OSError) and exc.strerror:
        message = exc.strerror
    elif isinstance(exc, TimeoutError | asyncio.TimeoutError):
        message = "no answer in time"
    else:
        message = str(exc) or type(exc).__name__
    message = " ".join(message.split()).rstrip(".")
    return message or type(exc).__name__
