"""Saying hello: the protocol version, and who a connection is (a guest by name, a person by
password or session token, a bot by its token), each login paced by `server/logins.py`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING

from partida import __version__
from partida.protocol import SUPPORTED_VERSIONS, ErrorCode, ProtocolError, server_message
from partida.protocol import messages as m
from partida.protocol.accepts import Accepts
from partida.server.account_presence import AccountPresence
from partida.server.logins import Logins
from partida.server.services.bots import RESERVED_PREFIX
from partida.server.session import Identity, Session
from partida.storage.accounts import check_name
from partida.storage.models import Account
from partida.storage.store import Store

if TYPE_CHECKING:
    from partida.server.shell import Handler

GUEST_NAME_LENGTH = 32
MAX_DECLARED_SEATS = 64  # more than any game's seats: a bound on what a hello may say
MAX_DECLARED_CLOCK = 86_400.0  # a day, the longest clock a room takes


class Greeting:
    def __init__(
        self, store: Store, logins: Logins, presence: AccountPresence, bot_arrived: Callable[[Session], Awaitable[None]]
    ) -> None:
        self.store = store
        self.logins = logins
        self.presence = presence  # where accounts are: the node's, with several
        self.bot_arrived = bot_arrived  # a bot account logged in: back to the seats it held

    def handlers(self) -> Mapping[str, Handler]:
        return {"hello": self.on_hello, "ping": self.on_ping}

    async def on_ping(self, session: Session, req: m.Ping) -> None:
        session.send(server_message("pong", req.id))

    async def on_hello(self, session: Session, req: m.Hello) -> None:
        if session.greeted:
            raise ProtocolError(ErrorCode.ALREADY_GREETED, "this connection has already said hello")
        if req.version not in SUPPORTED_VERSIONS:
            supported = ", ".join(map(str, sorted(SUPPORTED_VERSIONS)))
            raise ProtocolError(
                ErrorCode.UNSUPPORTED_VERSION,
                f"protocol version {req.version} is not supported (supported: {supported})",
                close=True,
            )
        resume = None
        if req.token is not None:
            await self.logins.check(session.address, None)
            account = await self.store.check_token(req.token)
            if account is None:
                self.logins.failed(session.address, None)
                raise ProtocolError(ErrorCode.AUTH_FAILED, "unknown bot token", close=True)
            self.logins.succeeded(session.address, None)
            if session.limits is not None:
                session.limits.exempt = True
            agent = req.agent if req.agent is not None else account.name
            problem = check_name(agent, GUEST_NAME_LENGTH, "an agent name")
            if problem is not None:
                raise ProtocolError(ErrorCode.BAD_FIELD, f"hello: {problem}")
            accepts = _declaration(req)
            games = None if accepts.games is None else sorted(accepts.games)
            identity = Identity(account.name, "bot", account.id, agent, games, accepts)
        elif req.agent is not None or any(v is not None for v in _declared(req)):
            raise ProtocolError(
                ErrorCode.NOT_A_BOT,
                "only a bot account may declare an agent or games: log in with its token "
                "(an operator creates one with `partida db create-bot NAME`)",
            )
        elif req.password is not None or req.resume is not None:
            if not req.name:
                raise ProtocolError(ErrorCode.AUTH_FAILED, "a password needs an account name", close=True)
            account = await self._resumed(req.name, req.resume) if req.resume is not None else None
            if account is None:
                if req.password is None:
                    raise ProtocolError(ErrorCode.AUTH_FAILED, "that session has ended: log in again", close=True)
                await self.logins.check(session.address, req.name)
                async with self.logins.turn(session.address):
                    await self.logins.check(session.address, req.name, pause=False)  # failures came in meanwhile?
                    account = await self.store.check_password(req.name, req.password)
                if account is None:
                    self.logins.failed(session.address, req.name)
                    raise ProtocolError(ErrorCode.AUTH_FAILED, "wrong account name or password", close=True)
                self.logins.succeeded(session.address, req.name)
            identity = Identity(account.name, "user", account.id)
            resume = self.logins.resume_token(account.id)
        else:
            name = (req.name or "").strip()[:GUEST_NAME_LENGTH] or f"guest-{session.id}"
            problem = check_name(name, GUEST_NAME_LENGTH, "a name")
            if problem is not None:
                raise ProtocolError(ErrorCode.BAD_FIELD, f"hello: {problem}")
            if name.lower().startswith(RESERVED_PREFIX) or (taken := await self.store.reserved_name(name)):
                owner = name if name.lower().startswith(RESERVED_PREFIX) else taken
                raise ProtocolError(
                    ErrorCode.NAME_RESERVED,
                    f"the name {owner!r} belongs to an account: log in to it, or pick another name",
                )
            identity = Identity(name, "guest")
        session.identity = identity
        session.version = req.version
        if identity.account_id is not None:
            await self.presence.arrived(session)  # findable from other nodes
        session.send(
            server_message(
                "welcome",
                req.id,
                version=req.version,
                server=f"partida {__version__}",
                session=session.id,
                you=identity.to_data(),
                **({"nodes": self.presence.node_urls} if self.presence.node_urls is not None else {}),
                **({"resume": resume} if resume is not None else {}),
            )
        )
        if identity.account_id is not None and identity.kind == "bot":
            await self.bot_arrived(session)

    async def _resumed(self, name: str, token: str) -> Account | None:
        """The user account `name` if `token` is a session token this server gave it."""
        account_id = self.logins.resumed(token)
        if account_id is None:
            return None
        account = await self.store.get_account(account_id)
        if account is None or account.kind != "user" or account.name.lower() != name.lower():
            return None
        return account


def _declared(req: m.Hello) -> tuple[object, ...]:
    return (req.games, req.hidden_information, req.clock_min, req.clock_max, req.max_games, req.max_games_per_opponent)


def _declaration(req: m.Hello) -> Accepts:
    """A bot's declaration from its hello; nonsense (a seat count of 0, a clock range upside
    down) is refused, since it would offer the bot nowhere without saying why."""
    if isinstance(req.games, dict):
        for game, counts in req.games.items():
            if counts is not None and not all(1 <= n <= MAX_DECLARED_SEATS for n in counts):
                raise ProtocolError(
                    ErrorCode.BAD_FIELD, f"hello: games: {game}'s seat counts must be 1 to {MAX_DECLARED_SEATS}"
                )
    for name in ("clock_min", "clock_max"):
        value = getattr(req, name)
        if value is not None and not 0 <= value <= MAX_DECLARED_CLOCK:
            raise ProtocolError(ErrorCode.BAD_FIELD, f"hello: {name} must be 0 to {MAX_DECLARED_CLOCK:g} seconds")
    if req.clock_min is not None and req.clock_max is not None and req.clock_min > req.clock_max:
        raise ProtocolError(ErrorCode.BAD_FIELD, "hello: clock_min is more than clock_max")
    for name in ("max_games", "max_games_per_opponent"):
        value = getattr(req, name)
        if value is not None and value < 1:
            raise ProtocolError(ErrorCode.BAD_FIELD, f"hello: {name} must be at least 1")
    return Accepts.from_hello(
        req.games, req.hidden_information, req.clock_min, req.clock_max, req.max_games, req.max_games_per_opponent
    )
