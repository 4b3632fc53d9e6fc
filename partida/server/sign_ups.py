"""Who may make a new account, and how often: the operator's choice (`partida serve --sign-up
open|invite|closed`) and the pace of sign-ups from one address and one network.

A sign-up costs an argon2 hash (as a login does) and leaves a row nobody cleans up, and every
account name is one a guest can no longer take: so an address makes a few accounts an hour
(`sign_ups_per_hour`, after a burst of `sign_up_burst`: a family behind one address signs up on
one evening), and its network a few more, as logins are counted per address and per network
(`server/logins.py`). The counts are taken before the password is hashed, so a refused sign-up
costs the server one lookup of the name.
"""

from __future__ import annotations

from partida.protocol import ErrorCode, ProtocolError
from partida.server.addresses import network_of
from partida.server.limits import Limits, TokenBucket, retry

MODES = ("open", "invite", "closed")
DEFAULT_MODE = "open"
MAX_TRACKED = 4096  # buckets kept before the full ones are forgotten


class SignUps:
    def __init__(self, limits: Limits, mode: str = DEFAULT_MODE) -> None:
        if mode not in MODES:
            raise ValueError(f"sign-up mode {mode!r}: one of {', '.join(MODES)}")
        self.mode = mode
        self.limits = limits
        self._buckets: dict[tuple[str, str], TokenBucket] = {}

    def _bucket(self, key: tuple[str, str]) -> TokenBucket:
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= MAX_TRACKED:
                self._buckets = {k: b for k, b in self._buckets.items() if not b.full()}
            lim = self.limits
            rate, burst = (
                (lim.sign_ups_per_hour, lim.sign_up_burst)
                if key[0] == "address"
                else (lim.network_sign_ups_per_hour, lim.network_sign_up_burst)
            )
            bucket = self._buckets[key] = TokenBucket(rate / 3600.0, burst)
        return bucket

    def take(self, address: str) -> None:
        """Count one sign-up from `address`, or refuse it (`rate_limited`, with the wait) when its
        address or network has made its share lately; a refusal counts nothing."""
        buckets = [self._bucket(("address", address)), self._bucket(("network", network_of(address)))]
        if all(b.has() for b in buckets):
            for bucket in buckets:
                bucket.take()
            return
        wait = max(b.wait() for b in buckets)
        raise ProtocolError(
            ErrorCode.RATE_LIMITED,
            f"too many accounts made from your address lately; try again in {wait / 60:.0f} min",
            details=retry(wait),
        )
