"""Logins under attack: back-off after failures, a fair queue for password checks, and session
tokens that let a returning connection in without checking its password again.

A password check (argon2, 64 MiB and tens of milliseconds of a core) is the most expensive
thing a client can make the server do, so a crowd sending wrong passwords must neither starve
everyone else's logins nor lock out people who happen to share an address with it:

- failures are counted three ways: per address and account name (a guesser of one account:
  the lock a person behind a shared address meets only for the account guessed), per address
  (a guesser of many, with a ceiling far above one account's allowance, as Lichess allows an
  address twenty times an account's password checks), and per network (/24, /64: a guesser
  spread over its neighbourhood), each with its own allowance before the back-off starts; a
  count is forgotten after `RECENT` seconds without a failure, and a right password forgives
  only its own address and account's count (the person who logged in, not whoever guesses
  other accounts from the same address);
- an address has at most one check queued or running at a time, and one more waiting behind
  it; a refusal is answered after a second, not at once: a client that reconnects the moment
  it is refused would otherwise cost the server a handshake per try, as fast as it can;
- checks from addresses and networks with no recent failure go before the others, so a
  person logging in from a clean address waits for at most the clean checks ahead of them;
- a successful password login is given a session token (`resume`): a reconnect presents it and
  needs no argon2 at all.

Session tokens are signed with a secret of this server process: they last `RESUME_SECONDS` or
until the server restarts, after which the client logs in with its password again, or until the
person logs out or changes their password (`forget_sessions`): every token given to the account
before that moment stops working, so a session left on another computer ends with them.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import contextlib
import hashlib
import hmac
import logging
import secrets
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from partida.protocol import ErrorCode, ProtocolError
from partida.server.addresses import network_of
from partida.server.limits import Limits, retry

log = logging.getLogger(__name__)

RECENT = 600.0  # seconds a failure keeps an address or network from the front of the queue
PER_ADDRESS = 2  # checks of one address in the queue: one in its turn, one waiting behind it
REFUSAL_DELAY = 1.0  # seconds a refused login waits for its answer
RESUME_SECONDS = 7 * 24 * 3600.0


@dataclass
class _Failures:
    count: int = 0
    next_try: float = 0.0  # monotonic time before which a login is refused
    last: float = 0.0


class Logins:
    def __init__(self, limits: Limits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self._clock = clock  # the back-off's time (another: one a test moves by hand)
        self._failures: dict[tuple[str, str], _Failures] = {}
        self._swept_at = 0
        self._by_address: dict[str, tuple[asyncio.Lock, list[int]]] = {}  # a turn per address, and its waiters
        self._running = 0
        # Waiting checks (address, woken when its turn comes), from clean addresses and from others.
        self._clean: collections.deque[tuple[str, asyncio.Future[None]]] = collections.deque()
        self._suspect: collections.deque[tuple[str, asyncio.Future[None]]] = collections.deque()
        self._secret = secrets.token_bytes(32)
        # account id -> the time (ms) before which its session tokens were given: no longer good.
        self._forgotten: dict[int, int] = {}

    # Back-off.

    def _keys(self, address: str, name: str | None) -> list[tuple[tuple[str, str], int]]:
        """Each count a login from `address` for `name` falls under, with its allowance."""
        keys = [(("address", address), self.limits.login_failures_per_address)]
        keys.append((("network", network_of(address)), self.limits.login_failures_per_network))
        if name is not None:
            keys.append((("account", f"{address} {name.lower()}"), self.limits.login_failures_allowed))
        return keys

    async def check(self, address: str, name: str | None, pause: bool = True) -> None:
        """Before a login is checked: refuse during a back-off that applies to it, after a pause
        (none while holding a turn to check, which others wait for)."""
        now = self._clock()
        wait = max(
            (f.next_try - now for f in map(self._failures.get, [k for k, _ in self._keys(address, name)]) if f),
            default=0.0,
        )
        if wait > 0:
            if pause:
                await asyncio.sleep(min(wait, REFUSAL_DELAY))
                wait -= min(wait, REFUSAL_DELAY)
            raise ProtocolError(
                ErrorCode.RATE_LIMITED,
                f"too many failed logins; try again in {wait:.0f} s",
                close=True,
                details=retry(wait),
            )

    def failed(self, address: str, name: str | None) -> None:
        now = self._clock()
        for key, allowed in self._keys(address, name):
            failures = self._failures.get(key)
            if failures is None:
                failures = self._failures[key] = _Failures()
            elif now - failures.last > RECENT and failures.next_try <= now:
                failures.count = 0  # quiet for long enough: a count starts again
            failures.count += 1
            failures.last = now
            over = failures.count - allowed
            if over > 0:  # 1 s after the first failure past the allowance, then 2, 4, 8... up to the max
                failures.next_try = now + min(2.0 ** (over - 1), self.limits.login_backoff_max)
        if len(self._failures) > 2 * self._swept_at + 1024:
            self._sweep(now)
        count = self._failures[("address", address)].count
        log.warning("failed login for %r from %s (%d in a row)", name or "(bot token or invite code)", address, count)

    def succeeded(self, address: str, name: str | None) -> None:
        """A right password forgives the failures for its own account from its address, and
        nothing else: a person's success behind a shared address says nothing of the guesser of
        other accounts there (it once reset the address's count, so a guesser beside a person
        who logs in now and then was never backed off). A bot token names no account: it
        forgives nothing."""
        if name is not None:
            self._failures.pop(("account", f"{address} {name.lower()}"), None)

    def has_failures(self, address: str) -> bool:
        """Whether `address` or its network failed a login recently."""
        now = self._clock()
        for key in (("address", address), ("network", network_of(address))):
            failures = self._failures.get(key)
            if failures is not None and now - failures.last < RECENT:
                return True
        return False

    def _sweep(self, now: float) -> None:
        for key, failures in list(self._failures.items()):
            if now - failures.last > max(RECENT, self.limits.login_backoff_max) and failures.next_try <= now:
                del self._failures[key]
        self._swept_at = len(self._failures)

    # The queue of password checks.

    @asynccontextmanager
    async def turn(self, address: str) -> AsyncIterator[None]:
        """A turn to check a password from `address`: one at a time per address, a bounded number
        at once, clean addresses first; beyond the queue's bound, `rate_limited`."""
        lock, waiters = self._by_address.setdefault(address, (asyncio.Lock(), [0]))
        if waiters[0] >= PER_ADDRESS:
            await asyncio.sleep(REFUSAL_DELAY)
            raise ProtocolError(
                ErrorCode.RATE_LIMITED, "logins from your address are being checked; wait for their answers", close=True
            )
        waiters[0] += 1
        try:
            async with lock:
                async with self._queued(address):
                    yield
        finally:
            waiters[0] -= 1
            if not waiters[0]:
                del self._by_address[address]

    @asynccontextmanager
    async def _queued(self, address: str) -> AsyncIterator[None]:
        queue = self._suspect if self.has_failures(address) else self._clean
        if len(queue) >= self.limits.hashing_queue:
            await asyncio.sleep(REFUSAL_DELAY)
            raise ProtocolError(ErrorCode.RATE_LIMITED, "the server is busy checking passwords; try again", close=True)
        if self._running >= max(self.limits.hashing_at_once, 1) or self._clean or self._suspect:
            waiter = asyncio.get_running_loop().create_future()
            queue.append((address, waiter))
            try:
                await waiter
            except BaseException:
                for waiting in (self._clean, self._suspect):
                    with contextlib.suppress(ValueError):
                        waiting.remove((address, waiter))
                if waiter.done() and not waiter.cancelled():
                    self._running -= 1  # it was handed a turn it will not take
                    self._next()
                raise
        else:
            self._running += 1
        try:
            yield
        finally:
            self._running -= 1
            self._next()

    def _next(self) -> None:
        while self._running < max(self.limits.hashing_at_once, 1) and (self._clean or self._suspect):
            if self._clean:
                address, waiter = self._clean.popleft()
                if self.has_failures(address):  # its neighbours failed since it was queued
                    self._suspect.append((address, waiter))
                    continue
            else:
                address, waiter = self._suspect.popleft()
            if not waiter.done():
                self._running += 1
                waiter.set_result(None)

    # Session tokens.

    def resume_token(self, account_id: int) -> str:
        """A token that lets the account back in; its body says when it was given (in ms, so a
        login just after a log-out is told apart from the tokens the log-out ended)."""
        given = _now_ms()
        while given <= self._forgotten.get(account_id, -1):  # a token given at the same ms as a log-out
            given += 1
        body = f"{account_id}.{given}"
        return f"{body}.{self._sign(body)}"

    def resumed(self, token: str) -> int | None:
        """The account a session token was given to, if it is this server's and still good."""
        body, _, signature = token.rpartition(".")
        account, _, given = body.partition(".")
        if not (account.isdigit() and given.isdigit() and len(token) < 200):
            return None
        if not hmac.compare_digest(signature, self._sign(body)):
            return None
        if int(given) + RESUME_SECONDS * 1000 < _now_ms() or int(given) <= self._forgotten.get(int(account), -1):
            return None
        return int(account)

    def forget_sessions(self, account_id: int) -> None:
        """Every session token given to the account until now stops working (a log-out, a new
        password). Forgotten again once the oldest such token would have lapsed anyway."""
        now = _now_ms()
        self._forgotten[account_id] = now
        if len(self._forgotten) > 1024:
            horizon = now - RESUME_SECONDS * 1000
            self._forgotten = {k: v for k, v in self._forgotten.items() if v > horizon}

    def _sign(self, body: str) -> str:
        digest = hmac.new(self._secret, body.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def _now_ms() -> int:
    return int(time.time() * 1000)
