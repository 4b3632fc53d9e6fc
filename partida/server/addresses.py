"""Who a connection comes from, for every limit that is kept per address.

Behind a reverse proxy (TLS termination, a load balancer) every connection's TCP peer is the
proxy, so one abusive client would be every client. An operator names the proxies it trusts
(`partida serve --trusted-proxy`); a request whose peer is one of them is taken to come from the
last address of its `X-Forwarded-For` that is not a trusted proxy (the proxies append the peer
they saw, so the addresses before that one are the client's word and cannot be trusted).
Nobody else's `X-Forwarded-For` is read: a client cannot choose the address it is limited as.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class Addresses:
    def __init__(self, trusted_proxies: Iterable[str] = ()) -> None:
        self.trusted: tuple[Network, ...] = tuple(ipaddress.ip_network(p, strict=False) for p in trusted_proxies)

    def client(self, peer: str, forwarded_for: str | None) -> str:
        """The address to limit: the peer's, or behind a trusted proxy the client's it forwarded."""
        if not self.trusted or not forwarded_for or not self._is_trusted(peer):
            return peer
        for hop in reversed([h.strip() for h in forwarded_for.split(",")]):
            if not hop:
                continue
            if not self._is_trusted(hop):
                return _canonical(hop) or peer
        return peer

    def _is_trusted(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self.trusted)


def network_of(address: str) -> str:
    """The /24 of an IPv4 address or the /64 of an IPv6 one: what one household, office or
    small host usually holds, for limits that a client spreading over neighbouring addresses
    must not escape. Anything else is its own network."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    prefix = 24 if ip.version == 4 else 64
    return str(ipaddress.ip_network(f"{ip}/{prefix}", strict=False))


def check_networks(values: Iterable[str]) -> list[str]:
    """`values` as networks (`10.0.0.1`, `10.0.0.0/8`, `::1`), or ValueError naming a bad one."""
    checked = []
    for value in values:
        try:
            checked.append(str(ipaddress.ip_network(value.strip(), strict=False)))
        except ValueError:
            raise ValueError(f"{value!r} is not an IP address or network (e.g. 127.0.0.1 or 10.0.0.0/8)") from None
    return checked


def _canonical(address: str) -> str | None:
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        return None
