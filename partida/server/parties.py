"""Who a bot's game is for, told to the bot without telling it who anyone is.

A bot shares its thinking between the people it plays (partida/bots/thinking.py), by party. Seat
names make poor parties: a guest picks a new name per room, so one person in eight rooms was
eight parties. The server knows better, and tells the bot in `seated` an opaque `party`: the
same string for every game of one bot played for the same holders, where a holder is an
account (a person's many rooms, from any address) or, for a guest, its address (everyone behind
one address is one party, as for every other limit kept per address). The room's creator counts
as a holder too, so rooms of bots against each other that a guest opened are that guest's.

The string is an HMAC under a secret of this server process, keyed by the bot's account too: it
names no address or account, cannot be tried against guessed addresses without the secret, and
two bots cannot match their parties. All a bot learns is which of its own games are for the same
people, for as long as this process runs (a restart, or another node, draws another secret).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Iterable

_SECRET = secrets.token_bytes(32)


def holder(account_id: int | None, address: str | None, name: str) -> str:
    """The key of whoever holds a seat or asked for a game: an account by its id, a guest by its
    address (by its name when it is gone and its address with it)."""
    if account_id is not None:
        return f"account:{account_id}"
    if address:
        return f"address:{address}"
    return f"guest:{name}"


def party(bot: str, holders: Iterable[str], secret: bytes = _SECRET) -> str:
    """The opaque party of a game of the bot `bot` (its account id or name) for `holders`."""
    body = "\n".join([bot, *sorted(set(holders))])
    digest = hmac.new(secret, body.encode(), hashlib.sha256).digest()[:12]
    return base64.urlsafe_b64encode(digest).decode()
