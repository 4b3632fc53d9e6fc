"""Rate and resource limits: what one connection, or one address, may cost the server.

Pure bookkeeping with no sockets: the server asks before it does the work (`admit` a connection,
`request` a frame, `may_guess` a room code, `may_create_room`, `may_watch`) and reports what
happened (`release`, `guessed`); logins have their own bookkeeping (server/logins.py). A refusal is a
`ProtocolError` with the code `rate_limited` and a sentence saying what to wait for; where a token
bucket refused, it carries `retry_after`, the seconds until that bucket would let the request
through (`TokenBucket.wait`), so a client can wait that long instead of hammering.

The defaults are far above what a person or a bot ever does: a bot ladder at full speed logs in
with bot accounts, whose requests are not rate-limited at all, and a person clicks a few times a
second. Every limit can be changed on `partida serve --limit NAME=VALUE`.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from dataclasses import dataclass, field

from partida.protocol import ErrorCode, ProtocolError

log = logging.getLogger(__name__)
SOONEST = 0.01  # the shortest wait a refusal names, in seconds (a refusal never says "now")
BYTES_PER_REQUEST = 1024  # a frame counts as a request per KiB it carries (most frames carry less)
# Limits that were renamed, with what an operator's old setting should become: a setting that
# no longer exists refuses the start rather than being ignored, and this says what to write.
RENAMED = {
    "http_requests_per_second": "http_pages_per_second (whole page loads a second, not files)",
    "http_request_burst": "http_page_burst (whole page loads at once, not files)",
}


@dataclass
class Limits:
    """Every limit, by the name `--limit` takes. Rates are per second."""

    requests_per_second: float = 500.0  # per connection (bot accounts are not limited)
    request_burst: float = 1000.0
    address_requests_per_second: float = 2500.0  # all connections of one address together
    address_request_burst: float = 5000.0
    connections_per_address: int = 256  # open at once
    connections_per_second: float = 20.0  # new websocket connections per address
    connection_burst: float = 256.0  # (or connections_per_address, if more) opened at once before that rate
    http_pages_per_second: float = 1.0  # the browser client's files per address, in whole page loads (web.cost)
    http_page_burst: float = 60.0
    hello_timeout: float = 10.0  # seconds a new connection has to say hello
    idle_timeout: float = 600.0  # a greeted connection with no room that sends nothing is closed (not bots)
    guesses_per_second: float = 2.0  # requests naming a room that does not exist, per connection
    guess_burst: float = 20.0
    address_guesses_per_second: float = 10.0
    address_guess_burst: float = 100.0
    rooms_created_per_second: float = 50.0  # per address
    rooms_created_burst: float = 500.0
    waiting_rooms_per_address: int = 200  # rooms not yet started whose creator has this address
    public_rooms_per_address: int = 100  # public rooms waiting or in play whose creator has this address
    rooms_watched: int = 100  # per connection
    games_per_bot: int = 32  # games one bot connection is seated in at once (waiting or in play)
    bot_games_per_address: int = 8  # games with bots in them at once that one address asked for
    games_per_bot_per_address: int = 4  # of one bot's games, those one address asked for (a share of games_per_bot)
    bot_move_seconds: float = 900.0  # a game with a bot and no clock gets this many seconds a move (0: none)
    login_failures_allowed: int = 5  # failed logins for one account from one address before the back-off starts
    login_failures_per_address: int = 200  # failed logins from one address, whatever the account
    login_failures_per_network: int = 1000  # from one /24 (IPv4) or /64 (IPv6)
    login_backoff_max: float = 300.0  # the longest wait between attempts, in seconds
    hashing_at_once: int = 1  # password checks (argon2, 64 MiB each) running at the same time
    hashing_queue: int = 64  # password checks waiting their turn, from clean addresses and from others each
    waiting_room_ttl: float = 3600.0  # a room that never starts is closed after this many seconds
    options_bytes: int = 4096  # the largest encoded `options` of a room
    tournaments_per_account: int = 5  # live tournaments (registering or running) one account created
    tournaments_per_address: int = 20  # live tournaments created from one address, whatever the account
    seeks_per_address: int = 50  # open seeks whose posters have this address (bot accounts are not limited)
    sign_ups_per_hour: float = 3.0  # new accounts made from one address (server/sign_ups.py)
    sign_up_burst: float = 5.0
    network_sign_ups_per_hour: float = 20.0  # from one /24 (IPv4) or /64 (IPv6)
    network_sign_up_burst: float = 30.0
    chat_lines_per_second: float = 0.5  # chat lines per connection, and per account over its connections (bots too)
    chat_burst: float = 5.0
    address_chat_lines_per_second: float = 2.0  # chat lines of one address's guests together
    address_chat_burst: float = 20.0
    bot_uploads_at_once: int = 4  # hosted bots' uploads open at once on the server (each held in memory, <= 16 MiB)
    bot_upload_seconds: float = 600.0  # an upload's whole life, from bot_submit to its last chunk
    bot_submissions_per_hour: float = 30.0  # hosted bots' submissions one person may start, per hour (and at once)

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    def with_settings(self, settings: list[str]) -> Limits:
        """A copy with `NAME=VALUE` settings applied; raises ValueError naming a bad one."""
        types = {f.name: f.type for f in dataclasses.fields(self)}
        changes: dict[str, float | int] = {}
        for setting in settings:
            name, sep, value = setting.partition("=")
            name = name.strip().replace("-", "_")
            if name in RENAMED:
                raise ValueError(f"the limit {name} is now {RENAMED[name]}")
            if not sep or name not in types:
                raise ValueError(f"unknown limit {setting!r} (known: {', '.join(self.names())})")
            try:
                number = int(value) if types[name] in (int, "int") else float(value)
            except ValueError:
                raise ValueError(f"the limit {name} takes a number, not {value!r}") from None
            if number < 0:
                raise ValueError(f"the limit {name} cannot be negative")
            changes[name] = number
        return dataclasses.replace(self, **changes)


class TokenBucket:
    """`rate` tokens a second up to `burst`. `take` may run into debt down to -`burst`, so a
    client that keeps going past its limit can be told apart from one that touched it."""

    __slots__ = ("burst", "rate", "stamp", "tokens")

    def __init__(self, rate: float, burst: float) -> None:
        self.rate = rate
        self.burst = max(burst, 1.0)
        self.tokens = self.burst
        self.stamp = time.monotonic()

    def take(self, n: float = 1.0) -> bool:
        """Spend `n` tokens if there are that many; otherwise go into debt and return False."""
        now = time.monotonic()  # refilled inline: every frame received takes from two buckets
        tokens = self.tokens + (now - self.stamp) * self.rate
        self.tokens = tokens if tokens < self.burst else self.burst
        self.stamp = now
        if self.tokens >= n:
            self.tokens -= n
            return True
        self.tokens = max(self.tokens - n, -self.burst)
        return False

    def has(self, n: float = 1.0) -> bool:
        if self.tokens >= n:
            return True  # refilling only adds, and a later refill adds as much (every named room asks)
        now = time.monotonic()
        tokens = self.tokens + (now - self.stamp) * self.rate
        self.tokens = tokens if tokens < self.burst else self.burst
        self.stamp = now
        return self.tokens >= n

    def spend(self, n: float) -> bool:
        """Spend `n` tokens if there are that many; a refusal costs nothing (no debt)."""
        if self.has(n):
            self.tokens -= n
            return True
        return False

    def wait(self, n: float = 1.0) -> float:
        """Seconds until `n` tokens are there, if nothing more is taken (0: now; inf: never)."""
        if self.has(n):
            return 0.0
        if self.rate <= 0 or n > self.burst:
            return math.inf
        return (n - self.tokens) / self.rate

    def full(self) -> bool:
        """Whether the bucket has refilled to its burst (nothing would be lost by forgetting it)."""
        return self.has(self.burst)

    @property
    def exhausted(self) -> bool:
        """True once the debt reaches a whole burst: the client ignores `rate_limited`."""
        return self.tokens <= -self.burst


@dataclass
class _Address:
    requests: TokenBucket
    guesses: TokenBucket
    creations: TokenBucket
    opened: TokenBucket  # new websocket connections
    http: TokenBucket  # plain HTTP requests, in page loads
    connections: int = 0
    refused: int = 0


@dataclass
class ConnectionLimits:
    """The buckets of one connection."""

    address: str
    requests: TokenBucket
    guesses: TokenBucket
    exempt: bool = False  # a bot account: trusted by the operator who created it


@dataclass
class Limiter:
    limits: Limits = field(default_factory=Limits)
    _addresses: dict[str, _Address] = field(default_factory=dict)
    _swept_at: int = 0  # how many addresses were kept at the last sweep
    _chat: dict[str, TokenBucket] = field(default_factory=dict)  # chat's buckets, by `may_chat`'s keys
    _chat_swept_at: int = 0

    def _address(self, address: str) -> _Address:
        state = self._addresses.get(address)
        if state is None:
            lim = self.limits
            state = _Address(
                TokenBucket(lim.address_requests_per_second, lim.address_request_burst),
                TokenBucket(lim.address_guesses_per_second, lim.address_guess_burst),
                TokenBucket(lim.rooms_created_per_second, lim.rooms_created_burst),
                TokenBucket(lim.connections_per_second, max(lim.connection_burst, lim.connections_per_address)),
                TokenBucket(lim.http_pages_per_second, lim.http_page_burst),
            )
            self._addresses[address] = state
            if len(self._addresses) > 2 * self._swept_at + 1024:
                self._sweep()
        return state

    def _sweep(self) -> None:
        """Forget the addresses that hold nothing: no connection, no failed login, every bucket
        full again (an address that only fetched files, or came and went)."""
        for address, state in list(self._addresses.items()):
            if state.connections <= 0 and _rested(state):
                del self._addresses[address]
        self._swept_at = len(self._addresses)

    # Connections.

    def may_open(self, address: str) -> float:
        """Before the handshake: may `address` open a websocket connection? 0 if so, else the
        seconds until it may. Refusing here costs a short HTTP reply, where a connection let
        through costs a handshake, a session and a goodbye."""
        state = self._address(address)
        if state.opened.take():
            return 0.0
        self._refused(state, address, "connections")
        return max(state.opened.wait(), SOONEST)

    def may_fetch(self, address: str, pages: float) -> float:
        """A plain HTTP request whose answer costs `pages` (a share of a whole page load,
        `web.cost`): 0 when it is served, else the seconds until it would be. A refusal takes
        nothing, so people who keep reloading behind one address are served again as soon as
        the rate allows, not after a debt is paid."""
        state = self._address(address)
        if state.http.spend(pages):
            return 0.0
        self._refused(state, address, "HTTP requests")
        return max(state.http.wait(pages), SOONEST)

    def _refused(self, state: _Address, address: str, what: str) -> None:
        state.refused += 1
        if state.refused in (1, 10) or state.refused % 1000 == 0:  # a log line per flood, not per try
            log.warning("refused %d %s from %s: too many a second", state.refused, what, address)

    def admit(self, address: str) -> ConnectionLimits | None:
        """The buckets of a new connection, or None when its address has too many already."""
        state = self._address(address)
        if state.connections >= self.limits.connections_per_address:
            state.refused += 1
            if state.refused in (1, 10) or state.refused % 1000 == 0:  # a log line per flood, not per try
                log.warning("refused %d connections from %s: %d open", state.refused, address, state.connections)
            return None
        state.connections += 1
        lim = self.limits
        return ConnectionLimits(
            address,
            TokenBucket(lim.requests_per_second, lim.request_burst),
            TokenBucket(lim.guesses_per_second, lim.guess_burst),
        )

    def release(self, conn: ConnectionLimits) -> None:
        state = self._addresses.get(conn.address)
        if state is None:
            return
        state.connections -= 1
        if state.connections <= 0 and _rested(state):
            del self._addresses[conn.address]

    # Requests.

    def request(self, conn: ConnectionLimits) -> None:
        """One frame received. Raises `rate_limited` past the rate; with `close` once the
        client has ignored a whole burst of refusals."""
        if conn.exempt:
            return
        mine = conn.requests.take()
        address = self._address(conn.address).requests
        if mine and address.take():
            return
        close = conn.requests.exhausted or address.exhausted
        wait = max(conn.requests.wait(), address.wait())
        raise ProtocolError(ErrorCode.RATE_LIMITED, "too many requests; slow down", close=close, details=retry(wait))

    def received(self, conn: ConnectionLimits, size: int) -> None:
        """A frame of `size` bytes, past `request`'s one: a request per `BYTES_PER_REQUEST` it
        carries, so a flood of large frames (60 KB of options) runs out as soon as their bytes
        would, not as slowly as pings."""
        if size > BYTES_PER_REQUEST:
            self.charge(conn, size / BYTES_PER_REQUEST - 1)

    def charge(self, conn: ConnectionLimits, cost: float) -> None:
        """Charge a request that cost more than one (a listing of many rooms) for the rest of
        its cost; the debt slows the requests that follow."""
        if conn.exempt or cost <= 0:
            return
        conn.requests.take(cost)
        self._address(conn.address).requests.take(cost)

    def may_guess(self, conn: ConnectionLimits) -> None:
        """Before a request that names a room: refuse once too many named rooms did not exist,
        so that private room codes cannot be found by trying them."""
        address = self._address(conn.address).guesses
        if conn.guesses.has() and address.has():
            return
        raise ProtocolError(
            ErrorCode.RATE_LIMITED,
            "too many requests for rooms that do not exist; wait a moment",
            details=retry(max(conn.guesses.wait(), address.wait())),
        )

    def guessed(self, conn: ConnectionLimits) -> None:
        """A request named a room that does not exist."""
        conn.guesses.take()
        self._address(conn.address).guesses.take()

    # Rooms.

    def may_create_room(self, conn: ConnectionLimits, waiting_rooms_of_address: int) -> None:
        if waiting_rooms_of_address >= self.limits.waiting_rooms_per_address:
            raise ProtocolError(
                ErrorCode.RATE_LIMITED,
                f"{waiting_rooms_of_address} rooms created from your address are waiting to start; "
                "start or leave some first",
            )
        creations = self._address(conn.address).creations
        if not creations.take():
            raise ProtocolError(
                ErrorCode.RATE_LIMITED, "too many rooms created; wait a moment", details=retry(creations.wait())
            )

    def may_open_public_room(self, conn: ConnectionLimits, public_rooms_of_address: int) -> None:
        """Public rooms are listed in everyone's lobby: an address holds a bounded number open
        (waiting or in play), however long its players take to move."""
        if not conn.exempt and public_rooms_of_address >= self.limits.public_rooms_per_address:
            raise ProtocolError(
                ErrorCode.RATE_LIMITED,
                f"{public_rooms_of_address} public rooms created from your address are open; "
                "finish some, or make this one private",
            )

    def may_play_bots(self, conn: ConnectionLimits, bot_games_of_address: int) -> None:
        """A bot's thinking is shared by everyone it plays: one address may keep a bounded
        number of games with bots going at once."""
        if not conn.exempt and bot_games_of_address >= self.limits.bot_games_per_address:
            raise ProtocolError(
                ErrorCode.RATE_LIMITED,
                f"{bot_games_of_address} games with bots are under way from your address; finish one first",
            )

    def may_take_bot(self, conn: ConnectionLimits, bot: str, games_of_address: int) -> None:
        """One bot's games are shared by everyone who plays it: one address holds at most a
        share of them, so a few addresses cannot fill the bot and refuse it to a newcomer."""
        most = self.limits.games_per_bot_per_address
        if not conn.exempt and games_of_address >= most:
            raise ProtocolError(
                ErrorCode.RATE_LIMITED,
                f"{games_of_address} games with {bot} are under way from your address, the most one address may "
                "have with one bot; finish one first or choose another bot",
            )

    def may_chat(self, connection: str, account: str | None, address: str) -> None:
        """One chat line: from this connection, and this account over all its connections (a
        bot account too: its lines reach people), else this address's guests together (a guest
        who reconnects gets a new connection). The keys are the caller's names for each. A
        refusal takes nothing; a line let through takes from every bucket."""
        lim = self.limits
        buckets = [self._chat_bucket(connection, lim.chat_lines_per_second, lim.chat_burst)]
        if account is not None:
            buckets.append(self._chat_bucket(account, lim.chat_lines_per_second, lim.chat_burst))
        else:
            buckets.append(self._chat_bucket(address, lim.address_chat_lines_per_second, lim.address_chat_burst))
        wait = max(bucket.wait() for bucket in buckets)
        if wait > 0:
            raise ProtocolError(ErrorCode.RATE_LIMITED, "too many chat lines; wait a moment", details=retry(wait))
        for bucket in buckets:
            bucket.take()

    def _chat_bucket(self, key: str, rate: float, burst: float) -> TokenBucket:
        bucket = self._chat.get(key)
        if bucket is None:
            bucket = self._chat[key] = TokenBucket(rate, burst)
            if len(self._chat) > 2 * self._chat_swept_at + 1024:  # forget those refilled: they hold nothing
                for name, old in list(self._chat.items()):
                    if old.full():
                        del self._chat[name]
                self._chat[key] = bucket
                self._chat_swept_at = len(self._chat)
        return bucket

    def may_watch(self, watching: int) -> None:
        if watching >= self.limits.rooms_watched:
            raise ProtocolError(ErrorCode.RATE_LIMITED, f"you are watching {watching} rooms already; leave some first")


def retry(seconds: float) -> dict[str, float] | None:
    """The `retry_after` of a refusal that a retry in `seconds` cures (None: no time is known),
    rounded up to a hundredth so that a client waiting exactly that long is let through."""
    if not math.isfinite(seconds):
        return None
    return {"retry_after": max(math.ceil(seconds * 100) / 100, SOONEST)}


def _rested(state: _Address) -> bool:
    return all(b.full() for b in (state.opened, state.http, state.requests, state.guesses, state.creations))
