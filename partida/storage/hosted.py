"""Hosted bots in the database: their owners, versions, state and the verdicts on their programs.

A hosted bot is a bot account with an owner (`Account.owner_id`, the person who submitted it)
and a `HostedBot` row. Its versions are numbered per bot and never change; submitting stores a
new one and makes it the active one, which also lifts a pause; versions older than the newest
few (but the active one) are deleted (`prune_versions`). The bundles themselves are files
on disk (`partida.hosting.bundles`), named by the digest each version keeps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import desc, func, select, update

from partida.storage import accounts
from partida.storage.database import Database, StorageError
from partida.storage.models import (
    Account,
    GameRecord,
    HostedBot,
    HostedLog,
    HostedVersion,
    SeatRecord,
    utcnow,
)

ACTIVE, PAUSED, WITHDRAWN = "active", "paused", "withdrawn"
FINISHED = "finished"  # a log entry that is no verdict: a game ended, its program's stderr kept


class NotOwner(StorageError):
    """The name belongs to an account that is not the asker's bot."""


class NoSuchBot(StorageError):
    """No hosted bot of the asker has that name."""


class NoSuchVersion(StorageError):
    """The bot has no version with that number."""


@dataclass(frozen=True)
class VersionInfo:
    number: int
    sha256: str
    run: str
    games: list[str]
    packed_bytes: int
    unpacked_bytes: int
    files: int
    created_at: datetime

    def to_data(self) -> dict[str, Any]:
        return {
            "version": self.number,
            "sha256": self.sha256,
            "run": self.run,
            "games": list(self.games),
            "packed_bytes": self.packed_bytes,
            "unpacked_bytes": self.unpacked_bytes,
            "files": self.files,
            "created_at": self.created_at.isoformat(),
        }


@dataclass(frozen=True)
class BotInfo:
    account_id: int
    name: str
    owner: str
    status: str
    reason: str | None
    active_version: int | None
    failures_in_row: int
    versions: list[VersionInfo] = field(default_factory=list)

    @property
    def active(self) -> VersionInfo | None:
        return next((v for v in self.versions if v.number == self.active_version), None)

    def to_data(self) -> dict[str, Any]:
        active = self.active
        return {
            "name": self.name,
            "owner": self.owner,
            "status": self.status,
            "reason": self.reason,
            "active_version": self.active_version,
            "games": list(active.games) if active else [],
            "failures_in_row": self.failures_in_row,
            "versions": [v.to_data() for v in self.versions],
        }


@dataclass(frozen=True)
class LogEntry:
    version: int | None
    game_id: int | None
    verdict: str
    detail: str
    stderr_tail: list[str]
    created_at: datetime

    def to_data(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "game_id": self.game_id,
            "verdict": self.verdict,
            "detail": self.detail,
            "stderr_tail": list(self.stderr_tail),
            "at": self.created_at.isoformat(),
        }


class HostedStore:
    """The hosted bots' rows, read and written outside the games' hot path (a submission, a
    verdict, a game's start): plain transactions of their own."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def check_submitter(self, owner_id: int, name: str) -> None:
        """Refuse before an upload what `add_version` would refuse after it: a name that is a
        person's, or a bot someone else (or nobody: `partida db create-bot`) owns."""
        async with self.db.session() as session:
            account = await session.scalar(select(Account).where(Account.name == name))
        if account is not None:
            _check_owned(account, owner_id, name)

    async def add_version(
        self,
        owner_id: int,
        name: str,
        *,
        sha256: str,
        run: str,
        games: list[str],
        packed_bytes: int,
        unpacked_bytes: int,
        files: int,
    ) -> tuple[BotInfo, int]:
        """Store a submission as the bot's next version and make it the active one (creating
        the bot account, owned by `owner_id`, on its first); lifts a pause. Returns the bot and
        the new version's number."""
        problem = accounts.check_name(name)
        if problem is not None:
            raise StorageError(f"{problem}.")
        folded, shaped = accounts.name_keys(name)
        async with self.db.write() as conn:
            account = (
                await conn.execute(
                    select(Account.id, Account.kind, Account.owner_id, Account.name).where(Account.name == name)
                )
            ).first()
            if account is None:
                twin = await conn.scalar(
                    select(Account.name).where((Account.name_key == folded) | (Account.shape_key == shaped)).limit(1)
                )
                if twin is not None:
                    raise NotOwner(f"the name {name!r} is too like the account {twin!r}; choose another.")
                account_id = (
                    await conn.execute(
                        Account.__table__.insert()
                        .values(
                            name=name,
                            kind="bot",
                            owner_id=owner_id,
                            name_key=folded,
                            shape_key=shaped,
                            created_at=utcnow(),
                        )
                        .returning(Account.id)
                    )
                ).scalar_one()
                await conn.execute(
                    HostedBot.__table__.insert().values(
                        account_id=account_id, status=ACTIVE, failures_in_row=0, updated_at=utcnow()
                    )
                )
            else:
                _check_owned_row(account.kind, account.owner_id, owner_id, name)
                account_id = account.id
                if await conn.scalar(select(HostedBot.account_id).where(HostedBot.account_id == account_id)) is None:
                    await conn.execute(
                        HostedBot.__table__.insert().values(
                            account_id=account_id, status=ACTIVE, failures_in_row=0, updated_at=utcnow()
                        )
                    )
            last = await conn.scalar(
                select(func.max(HostedVersion.number)).where(HostedVersion.account_id == account_id)
            )
            number = (last or 0) + 1
            await conn.execute(
                HostedVersion.__table__.insert().values(
                    account_id=account_id,
                    number=number,
                    sha256=sha256,
                    run=run,
                    games=list(games),
                    packed_bytes=packed_bytes,
                    unpacked_bytes=unpacked_bytes,
                    files=files,
                    created_at=utcnow(),
                )
            )
            await conn.execute(
                update(HostedBot)
                .where(HostedBot.account_id == account_id)
                .values(active_version=number, status=ACTIVE, reason=None, failures_in_row=0, updated_at=utcnow())
            )
        bot = await self.bot(account_id)
        assert bot is not None
        return bot, number

    async def prune_versions(self, account_id: int, keep: int) -> list[str]:
        """Delete the bot's versions but its active one and its newest `keep`; returns the digests
        of those deleted that no version of any bot still names (their bundles may go)."""
        async with self.db.write() as conn:
            active = await conn.scalar(select(HostedBot.active_version).where(HostedBot.account_id == account_id))
            rows = (
                await conn.execute(
                    select(HostedVersion.number, HostedVersion.sha256)
                    .where(HostedVersion.account_id == account_id)
                    .order_by(desc(HostedVersion.number))
                )
            ).all()
            old = [(number, sha) for number, sha in rows[keep:] if number != active]
            if not old:
                return []
            await conn.execute(
                HostedVersion.__table__.delete().where(
                    HostedVersion.account_id == account_id, HostedVersion.number.in_([n for n, _ in old])
                )
            )
            digests = {sha for _, sha in old}
            still = set(
                (await conn.execute(select(HostedVersion.sha256).where(HostedVersion.sha256.in_(digests)))).scalars()
            )
        return sorted(digests - still)

    async def owned(self, owner_id: int, name: str) -> BotInfo:
        """The owner's hosted bot of that name; `NoSuchBot` or `NotOwner` otherwise."""
        async with self.db.session() as session:
            account = await session.scalar(select(Account).where(Account.name == name))
        if account is None or account.kind != "bot":
            raise NoSuchBot(f"you have no hosted bot named {name!r}.")
        _check_owned(account, owner_id, name)
        bot = await self.bot(account.id)
        if bot is None:
            raise NoSuchBot(f"{name!r} has no submission yet.")
        return bot

    async def bots_of(self, owner_id: int) -> list[BotInfo]:
        async with self.db.session() as session:
            ids = list(
                await session.scalars(
                    select(Account.id)
                    .join(HostedBot, HostedBot.account_id == Account.id)
                    .where(Account.owner_id == owner_id)
                    .order_by(Account.name)
                )
            )
        return [bot for bot in [await self.bot(i) for i in ids] if bot is not None]

    async def playing(self) -> list[BotInfo]:
        """Every hosted bot that should be playing now: active, with an active version."""
        async with self.db.session() as session:
            ids = list(
                await session.scalars(
                    select(HostedBot.account_id).where(
                        HostedBot.status == ACTIVE, HostedBot.active_version.is_not(None)
                    )
                )
            )
        return [bot for bot in [await self.bot(i) for i in ids] if bot is not None]

    async def bot(self, account_id: int) -> BotInfo | None:
        async with self.db.session() as session:
            row = (
                await session.execute(
                    select(HostedBot, Account.name, Account.owner_id)
                    .join(Account, Account.id == HostedBot.account_id)
                    .where(HostedBot.account_id == account_id)
                )
            ).first()
            if row is None:
                return None
            hosted, name, owner_id = row
            owner = await session.scalar(select(Account.name).where(Account.id == owner_id)) if owner_id else None
            versions = list(
                await session.scalars(
                    select(HostedVersion).where(HostedVersion.account_id == account_id).order_by(HostedVersion.number)
                )
            )
        return BotInfo(
            account_id=account_id,
            name=name,
            owner=owner or "",
            status=hosted.status,
            reason=hosted.reason,
            active_version=hosted.active_version,
            failures_in_row=hosted.failures_in_row,
            versions=[
                VersionInfo(
                    v.number, v.sha256, v.run, list(v.games), v.packed_bytes, v.unpacked_bytes, v.files, v.created_at
                )
                for v in versions
            ],
        )

    async def activate(self, owner_id: int, name: str, number: int) -> BotInfo:
        """Make version `number` the one that plays; lifts a pause or a withdrawal."""
        bot = await self.owned(owner_id, name)
        if all(v.number != number for v in bot.versions):
            raise NoSuchVersion(
                f"{name!r} has no version {number} (it has {', '.join(str(v.number) for v in bot.versions)})."
            )
        await self._set(bot.account_id, active_version=number, status=ACTIVE, reason=None, failures_in_row=0)
        return await self._reread(bot.account_id)

    async def withdraw(self, owner_id: int, name: str) -> BotInfo:
        """Stop playing; the versions stay (activate one to play again)."""
        bot = await self.owned(owner_id, name)
        await self._set(bot.account_id, status=WITHDRAWN, reason="withdrawn by its owner")
        return await self._reread(bot.account_id)

    async def record_failure(
        self,
        account_id: int,
        version: int | None,
        game_id: int | None,
        verdict: str,
        detail: str,
        stderr_tail: list[str],
        pause_after: int,
    ) -> str | None:
        """Keep a verdict; pause the bot once `pause_after` of its games in a row failed (the
        reason, or None when it plays on)."""
        await self._log(account_id, version, game_id, verdict, detail, stderr_tail)
        async with self.db.write() as conn:
            failures = (
                await conn.scalar(select(HostedBot.failures_in_row).where(HostedBot.account_id == account_id)) or 0
            ) + 1
            values: dict[str, Any] = {"failures_in_row": failures, "updated_at": utcnow()}
            reason = None
            if failures >= pause_after:
                reason = f"paused after {failures} failed games in a row (the last: {verdict}: {detail})"[:300]
                values.update(status=PAUSED, reason=reason)
            changed = await conn.execute(
                update(HostedBot).where(HostedBot.account_id == account_id, HostedBot.status == ACTIVE).values(**values)
            )
        return reason if changed.rowcount else None

    async def _log(
        self,
        account_id: int,
        version: int | None,
        game_id: int | None,
        verdict: str,
        detail: str,
        stderr_tail: list[str],
    ) -> None:
        async with self.db.write() as conn:
            if game_id is not None and await conn.scalar(select(GameRecord.id).where(GameRecord.id == game_id)) is None:
                game_id = None  # a game this database does not hold: the entry is kept without it
            await conn.execute(
                HostedLog.__table__.insert().values(
                    account_id=account_id,
                    version=version,
                    game_id=game_id,
                    verdict=verdict,
                    detail=detail[:500],
                    stderr_tail=[line[:300] for line in stderr_tail[-20:]],
                    created_at=utcnow(),
                )
            )

    async def game_went_well(
        self, account_id: int, version: int | None, game_id: int | None, stderr_tail: list[str]
    ) -> None:
        """A game played to its end without a verdict: the failures in a row start again, and
        what its program said on stderr, if anything, is kept for its owner."""
        await self._set(account_id, failures_in_row=0)
        if stderr_tail:
            await self._log(account_id, version, game_id, FINISHED, "the game ended without a verdict", stderr_tail)

    async def mark_version(self, game_id: int, seat: int, version: int) -> None:
        """The version that plays this seat of this game (shown with the game's players)."""
        async with self.db.write() as conn:
            await conn.execute(
                update(SeatRecord)
                .where(SeatRecord.game_id == game_id, SeatRecord.seat == seat)
                .values(bot_version=version)
            )

    async def logs(self, account_id: int, limit: int = 20) -> list[LogEntry]:
        async with self.db.session() as session:
            rows = list(
                await session.scalars(
                    select(HostedLog)
                    .where(HostedLog.account_id == account_id)
                    .order_by(desc(HostedLog.id))
                    .limit(limit)
                )
            )
        return [LogEntry(r.version, r.game_id, r.verdict, r.detail, list(r.stderr_tail), r.created_at) for r in rows]

    async def recent_games(self, account_id: int, limit: int = 20) -> list[dict[str, Any]]:
        """The bot's latest games: id, game, status, which seat and version, and how it ended."""
        async with self.db.session() as session:
            rows = (
                await session.execute(
                    select(GameRecord, SeatRecord.seat, SeatRecord.bot_version)
                    .join(SeatRecord, SeatRecord.game_id == GameRecord.id)
                    .where(SeatRecord.account_id == account_id)
                    .order_by(desc(GameRecord.id))
                    .limit(limit)
                )
            ).all()
        games = []
        for record, seat, version in rows:
            result = record.result or {}
            ranks = result.get("ranks") or []
            games.append(
                {
                    "game_id": record.id,
                    "game": record.game,
                    "status": record.status,
                    "seat": seat,
                    "version": version,
                    "rank": ranks[seat] if seat < len(ranks) else None,
                    "reason": result.get("reason"),
                    "note": (result.get("notes") or {}).get(str(seat)),
                }
            )
        return games

    async def _set(self, account_id: int, **values: Any) -> None:
        async with self.db.write() as conn:
            await conn.execute(
                update(HostedBot).where(HostedBot.account_id == account_id).values(updated_at=utcnow(), **values)
            )

    async def _reread(self, account_id: int) -> BotInfo:
        bot = await self.bot(account_id)
        assert bot is not None
        return bot


def _check_owned(account: Account, owner_id: int, name: str) -> None:
    _check_owned_row(account.kind, account.owner_id, owner_id, name)


def _check_owned_row(kind: str, owner: int | None, owner_id: int, name: str) -> None:
    if kind != "bot":
        raise NotOwner(f"the name {name!r} belongs to a person's account, not a bot; choose another.")
    if owner != owner_id:
        raise NotOwner(f"the bot {name!r} is not yours; choose another name.")
