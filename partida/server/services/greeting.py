"""Saying hello: the protocol version, and who a connection is (a guest by name, a person by
password or session token, a bot by its token, or a person new here signing up), each login
paced by `server/logins.py` and each sign-up by `server/sign_ups.py`."""

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
from partida.server.sign_ups import SignUps
from partida.storage.accounts import check_name, check_password_rule, passes_for_prefix
from partida.storage.invites import InviteStore
from partida.storage.models import Account
from partida.storage.store import NameTaken, Store

if TYPE_CHECKING:
    from partida.server.shell import Handler

GUEST_NAME_LENGTH = 32
MAX_DECLARED_SEATS = 64  # more than any game's seats: a bound on what a hello may say
MAX_DECLARED_CLOCK = 86_400.0  # a day, the longest clock a room takes


class Greeting:
    def __init__(
        self,
        store: Store,
        logins: Logins,
        presence: AccountPresence,
        bot_arrived: Callable[[Session], Awaitable[None]],
        sign_ups: SignUps | None = None,
        invites: InviteStore | None = None,
    ) -> None:
        self.store = store
        self.logins = logins
        self.presence = presence  # where accounts are: the node's, with several
        self.bot_arrived = bot_arrived  # a bot account logged in: back to the seats it held
        self.sign_ups = sign_ups  # who may sign up, how often; None: nobody
        self.invites = invites  # the operator's invite codes, for an invite-only sign-up

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
        elif req.sign_up:
            account = await self._signed_up(session, req)
            identity = Identity(account.name, "user", account.id)
            resume = self.logins.resume_token(account.id)
        elif req.invite is not None:
            raise ProtocolError(ErrorCode.BAD_FIELD, "hello: an invite goes with sign_up")
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
            server_own = passes_for_prefix(name, RESERVED_PREFIX)
            if server_own or (taken := await self.store.reserved_name(name)):
                owner = name if server_own else taken
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
                sign_up=self.sign_ups.mode if self.sign_ups is not None else "closed",
            )
        )
        if identity.account_id is not None and identity.kind == "bot":
            await self.bot_arrived(session)

    async def _signed_up(self, session: Session, req: m.Hello) -> Account:
        """A new person's account, made from a `hello` with `sign_up`: the operator's mode, the
        name (printable, not an account's nor a look-alike of one), the password's rule, the
        address's pace of sign-ups, then the invite (a wrong code counts as a failed login, so
        codes are guessed no faster than passwords), and the argon2 hash in the logins' queue.
        Each refusal leaves the connection open for another hello and changes nothing."""
        mode = self.sign_ups.mode if self.sign_ups is not None else "closed"
        if mode == "closed" or self.sign_ups is None:
            raise ProtocolError(
                ErrorCode.SIGN_UP_CLOSED, "this server takes no sign-ups: its operator makes the accounts"
            )
        name, password = req.name, req.password
        if name is None or password is None:
            raise ProtocolError(ErrorCode.BAD_FIELD, "hello: sign_up needs a name and a password")
        problem = check_name(name, GUEST_NAME_LENGTH, "an account name")
        if problem is not None:
            raise ProtocolError(ErrorCode.BAD_FIELD, f"hello: {problem}")
        problem = check_password_rule(password)
        if problem is not None:
            raise ProtocolError(ErrorCode.BAD_PASSWORD, f"hello: {problem}")
        if passes_for_prefix(name, RESERVED_PREFIX):
            raise ProtocolError(ErrorCode.NAME_TAKEN, f"names starting with {RESERVED_PREFIX!r} are the server's own")
        taken = await self.store.reserved_name(name)
        if taken is not None:
            same = taken == name
            raise ProtocolError(
                ErrorCode.NAME_TAKEN,
                f"the name {name!r} is taken; choose another"
                if same
                else f"the name {name!r} is too like the account {taken!r}; choose another",
            )
        if mode == "invite":
            await self.logins.check(session.address, None)
            if req.invite is None:
                raise ProtocolError(ErrorCode.BAD_INVITE, "sign-up here needs an invite code from its operator")
        spent = None
        if mode == "invite" and req.invite is not None:
            assert self.invites is not None
            if not await self.invites.spend(req.invite):
                self.logins.failed(session.address, None)
                raise ProtocolError(ErrorCode.BAD_INVITE, "that invite code is not one, or is used up")
            spent = req.invite
        try:
            self.sign_ups.take(session.address)
        except ProtocolError:
            if spent is not None and self.invites is not None:
                await self.invites.give_back(spent)
            raise
        try:
            async with self.logins.turn(session.address):
                account = await self.store.create_user(name, password)
        except NameTaken:  # taken between the look and the write
            if spent is not None and self.invites is not None:
                await self.invites.give_back(spent)
            raise ProtocolError(ErrorCode.NAME_TAKEN, f"the name {name!r} was just taken; choose another") from None
        return account

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
