"""The hosted bots' requests: `bot_submit`, `bot_upload`, `bot_list`, `bot_logs`,
`bot_activate`, `bot_withdraw` (docs/hosted-bots.md).

A person submits a bot's program as an archive, in chunks: `bot_submit` opens an upload (its
size, digest, command and games checked first), each `bot_upload` carries the next chunk, and
the last one has the archive unpacked (`partida.hosting.bundles`, in a thread: a bundle is up to
64 MiB of files) and stored as the bot's next version. Chunks keep every frame under the one
frame cap every connection has: no connection, logged in or not, may send a larger frame, and an
upload's bytes are charged to its connection's rate limits like any other frame's.

An open upload holds its bytes in memory until its last chunk, so uploads are bounded: one per
person (a new `bot_submit` replaces that person's unfinished upload, on whichever connection),
a few at once on the server, each dropped when its connection ends, and for another's when it
stalls or passes `bot_upload_seconds` from its `bot_submit`: nobody holds every slot.
Whoever runs the bots (the hosting supervisor of `partida serve --host-bots`) is told of every
change by the callbacks given to `on_change`.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import secrets
import shlex
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from partida.games.registry import Registry
from partida.hosting.bundles import BundleRefused, Caps, remove, unpack
from partida.protocol import ErrorCode, ProtocolError, server_message
from partida.protocol import messages as m
from partida.server.limits import Limits, TokenBucket, retry
from partida.storage import accounts
from partida.storage.hosted import BotInfo, HostedStore, NoSuchBot, NoSuchVersion, NotOwner

if TYPE_CHECKING:
    from partida.server.session import Session
    from partida.server.shell import Handler

CHUNK = 32 * 1024  # bytes of one `bot_upload` (about 43 KiB in base64: under the 64 KiB frame cap)
STALLED = 120.0  # seconds without a chunk after which an upload may be dropped for another
MAX_RUN = 1000  # characters of the command line
MAX_GAMES = 32
LOGS_LIMIT = 20


@dataclass
class HostingSettings:
    """Where bundles are stored and how large an upload may be. None of it: hosting is off."""

    directory: Path
    caps: Caps = field(default_factory=Caps)
    versions_kept: int = 5  # a bot's newest versions kept on disk, beside its active one
    min_free: int = 1 << 30  # bytes free on the directory's filesystem below which submissions are refused


@dataclass
class _Upload:
    id: str
    owner_id: int
    name: str
    games: list[str]
    run: str
    size: int
    sha256: str
    data: bytearray = field(default_factory=bytearray)
    touched: float = field(default_factory=time.monotonic)
    opened: float = field(default_factory=time.monotonic)


class HostedBotService:
    def __init__(
        self, hosted: HostedStore, registry: Registry, settings: HostingSettings | None, limits: Limits
    ) -> None:
        self.hosted = hosted
        self.registry = registry
        self.settings = settings
        self.limits = limits
        self._uploads: dict[Session, _Upload] = {}
        self._submissions: dict[int, TokenBucket] = {}  # per owner account
        self._listeners: list[Callable[[int], None]] = []
        self._storing = asyncio.Lock()  # a bundle is not pruned while an upload of the same digest is stored

    def handlers(self) -> Mapping[str, Handler]:
        return {
            "bot_submit": self.on_submit,
            "bot_upload": self.on_upload,
            "bot_list": self.on_list,
            "bot_logs": self.on_logs,
            "bot_activate": self.on_activate,
            "bot_withdraw": self.on_withdraw,
        }

    def on_change(self, listener: Callable[[int], None]) -> None:
        """`listener(account_id)` after a hosted bot's version or state changed."""
        self._listeners.append(listener)

    def disconnected(self, session: Session) -> None:
        self._uploads.pop(session, None)

    # Requests.

    async def on_submit(self, session: Session, req: m.BotSubmit) -> None:
        owner_id = self._person(session)
        settings = self._hosting()
        problem = accounts.check_name(req.name, what="a bot's name")
        if problem is not None:
            raise ProtocolError(ErrorCode.BAD_FIELD, f"bot_submit: {problem}")
        if not req.games or len(req.games) > MAX_GAMES:
            raise ProtocolError(ErrorCode.BAD_FIELD, f"bot_submit: name 1 to {MAX_GAMES} games the bot plays")
        unknown = [g for g in req.games if g not in self.registry]
        if unknown:
            raise ProtocolError(ErrorCode.UNKNOWN_GAME, f"unknown game {unknown[0][:64]!r}")
        if len(req.run) > MAX_RUN:
            raise ProtocolError(ErrorCode.BAD_FIELD, f"bot_submit: the command has at most {MAX_RUN} characters")
        try:
            if not shlex.split(req.run):
                raise ValueError("it is empty")
        except ValueError as exc:
            raise ProtocolError(
                ErrorCode.BAD_FIELD, f"bot_submit: the command cannot be split into words: {exc}"
            ) from None
        if req.size <= 0:
            raise ProtocolError(ErrorCode.BAD_UPLOAD, "an upload has at least one byte")
        if req.size > settings.caps.packed:
            raise ProtocolError(
                ErrorCode.UPLOAD_TOO_LARGE,
                f"an upload is at most {settings.caps.packed >> 20} MiB packed, not {req.size}",
            )
        if len(req.sha256) != 64 or any(c not in "0123456789abcdef" for c in req.sha256):
            raise ProtocolError(ErrorCode.BAD_FIELD, "bot_submit: sha256 is 64 lowercase hex digits")
        try:
            await self.hosted.check_submitter(owner_id, req.name)
        except NotOwner as exc:
            raise ProtocolError(ErrorCode.NOT_OWNER, str(exc)) from None
        bucket = self._submissions.setdefault(
            owner_id, TokenBucket(self.limits.bot_submissions_per_hour / 3600, self.limits.bot_submissions_per_hour)
        )
        if not bucket.has():
            raise ProtocolError(
                ErrorCode.RATE_LIMITED, "too many submissions; wait a while", details=retry(bucket.wait())
            )
        for other in [s for s, u in self._uploads.items() if s is session or u.owner_id == owner_id]:
            del self._uploads[other]  # one upload per person: a new one replaces the unfinished one, on any connection
        self._check_space(settings)
        self._make_room()
        bucket.take()
        upload = _Upload(
            secrets.token_urlsafe(12), owner_id, req.name, list(dict.fromkeys(req.games)), req.run, req.size, req.sha256
        )
        self._uploads[session] = upload
        session.send(server_message("bot_upload_ready", req.id, upload=upload.id, chunk=CHUNK))

    async def on_upload(self, session: Session, req: m.BotUpload) -> None:
        upload = self._uploads.get(session)
        if upload is None or upload.id != req.upload:
            raise ProtocolError(ErrorCode.NO_SUCH_UPLOAD, "no such upload is open on this connection; bot_submit first")
        if time.monotonic() - upload.opened > self.limits.bot_upload_seconds:
            del self._uploads[session]
            raise ProtocolError(
                ErrorCode.NO_SUCH_UPLOAD,
                f"the upload took more than {self.limits.bot_upload_seconds:g} seconds; bot_submit again",
            )
        if req.offset != len(upload.data):
            raise ProtocolError(
                ErrorCode.BAD_UPLOAD,
                f"the next chunk starts at byte {len(upload.data)}, not {req.offset}",
                details={"received": len(upload.data)},
            )
        if len(req.data) > 4 * (CHUNK // 3 + 1):
            raise ProtocolError(ErrorCode.BAD_UPLOAD, f"a chunk is at most {CHUNK} bytes")
        try:
            chunk = base64.b64decode(req.data, validate=True)
        except (binascii.Error, ValueError):
            raise ProtocolError(ErrorCode.BAD_UPLOAD, "a chunk's data is base64") from None
        if len(upload.data) + len(chunk) > upload.size:
            self._uploads.pop(session, None)
            raise ProtocolError(ErrorCode.UPLOAD_TOO_LARGE, f"the upload passes the {upload.size} bytes announced")
        upload.data += chunk
        upload.touched = time.monotonic()
        if len(upload.data) < upload.size:
            session.send(server_message("bot_upload_received", req.id, upload=upload.id, received=len(upload.data)))
            return
        del self._uploads[session]
        await self._finish(session, req, upload)

    async def _finish(self, session: Session, req: m.BotUpload, upload: _Upload) -> None:
        settings = self._hosting()
        async with self._storing:
            try:  # hashed and unpacked in a thread, once: 16 MiB must not hold the event loop
                bundle = await asyncio.to_thread(unpack, upload.data, settings.directory, settings.caps, upload.sha256)
            except BundleRefused as refused:
                raise ProtocolError(refused.code, refused.message) from None
            try:
                bot, number = await self.hosted.add_version(
                    upload.owner_id,
                    upload.name,
                    sha256=bundle.sha256,
                    run=upload.run,
                    games=upload.games,
                    packed_bytes=bundle.packed_bytes,
                    unpacked_bytes=bundle.unpacked_bytes,
                    files=bundle.files,
                )
            except NotOwner as exc:
                raise ProtocolError(ErrorCode.NOT_OWNER, str(exc)) from None
            stale = await self.hosted.prune_versions(bot.account_id, settings.versions_kept)
            for sha in stale:
                await asyncio.to_thread(remove, settings.directory / sha)
        bot = await self.hosted.bot(bot.account_id) or bot  # without the versions pruned
        self._changed(bot.account_id)
        session.send(server_message("bot_submitted", req.id, bot=bot.to_data(), version=number))

    async def on_list(self, session: Session, req: m.BotList) -> None:
        owner_id = self._person(session)
        bots = await self.hosted.bots_of(owner_id)
        session.send(
            server_message("bots", req.id, bots=[b.to_data() for b in bots], hosting=self.settings is not None)
        )

    async def on_logs(self, session: Session, req: m.BotLogs) -> None:
        owner_id = self._person(session)
        limit = LOGS_LIMIT if req.limit is None else req.limit
        if not 1 <= limit <= 100:
            raise ProtocolError(ErrorCode.BAD_FIELD, f"bot_logs: limit is 1 to 100, not {limit}")
        bot = await self._owned(owner_id, req.name)
        logs = await self.hosted.logs(bot.account_id, limit)
        games = await self.hosted.recent_games(bot.account_id, limit)
        session.send(
            server_message(
                "bot_logs",
                req.id,
                bot=bot.to_data(),
                logs=[entry.to_data() for entry in logs],
                games=games,
            )
        )

    async def on_activate(self, session: Session, req: m.BotActivate) -> None:
        owner_id = self._person(session)
        self._hosting()
        await self._owned(owner_id, req.name)
        try:
            bot = await self.hosted.activate(owner_id, req.name, req.version)
        except NoSuchVersion as exc:
            raise ProtocolError(ErrorCode.NO_SUCH_VERSION, str(exc)) from None
        self._changed(bot.account_id)
        session.send(server_message("bot", req.id, bot=bot.to_data()))

    async def on_withdraw(self, session: Session, req: m.BotWithdraw) -> None:
        owner_id = self._person(session)
        await self._owned(owner_id, req.name)
        bot = await self.hosted.withdraw(owner_id, req.name)
        self._changed(bot.account_id)
        session.send(server_message("bot", req.id, bot=bot.to_data()))

    # Parts.

    def _person(self, session: Session) -> int:
        identity = session.identity
        assert identity is not None
        if identity.kind != "user" or identity.account_id is None:
            raise ProtocolError(
                ErrorCode.USERS_ONLY, "hosted bots belong to people: log in with your name and password"
            )
        return identity.account_id

    def _hosting(self) -> HostingSettings:
        if self.settings is None:
            raise ProtocolError(
                ErrorCode.HOSTING_DISABLED,
                "this server runs no submitted bots (its operator starts it with --host-bots)",
            )
        return self.settings

    async def _owned(self, owner_id: int, name: str) -> BotInfo:
        try:
            return await self.hosted.owned(owner_id, name)
        except NoSuchBot as exc:
            raise ProtocolError(ErrorCode.NO_SUCH_BOT, str(exc)) from None
        except NotOwner as exc:
            raise ProtocolError(ErrorCode.NOT_OWNER, str(exc)) from None

    @staticmethod
    def _check_space(settings: HostingSettings) -> None:
        where = settings.directory
        while not where.exists() and where != where.parent:
            where = where.parent
        if shutil.disk_usage(where).free < settings.min_free:
            raise ProtocolError(
                ErrorCode.HOSTING_FULL, "the server is short of disk space for bots' programs; try again later"
            )

    def _make_room(self) -> None:
        """Uploads hold their bytes until their last chunk: at most `bot_uploads_at_once`, the
        longest stalled one (or one open past `bot_upload_seconds`) dropped for a new one."""
        if len(self._uploads) < self.limits.bot_uploads_at_once:
            return
        now = time.monotonic()
        stalled = [
            (u.touched, s)
            for s, u in self._uploads.items()
            if now - u.touched > STALLED or now - u.opened > self.limits.bot_upload_seconds
        ]
        if not stalled:
            raise ProtocolError(
                ErrorCode.RATE_LIMITED, "the server takes a few uploads at once; try again shortly", details=retry(5.0)
            )
        self._uploads.pop(min(stalled, key=lambda pair: pair[0])[1], None)

    def _changed(self, account_id: int) -> None:
        for listener in self._listeners:
            listener(account_id)
