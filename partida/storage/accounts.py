"""Password and token hashing for accounts, kept apart from the database code.

Passwords are chosen by people, so they get argon2id (slow on purpose, salted). Bot tokens are
256 random bits, for which a slow hash buys nothing: a sha256 digest is enough and can be looked
up by index, so checking a token is one indexed query.
"""

from __future__ import annotations

import hashlib
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

_hasher = PasswordHasher()
# Verified against when the name is unknown, so that a wrong name costs as long as a wrong password.
_DUMMY_HASH = _hasher.hash("partida: no such account")

MAX_NAME = 64
MIN_PASSWORD = 8


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    """True if `password` matches; a missing hash (a bot, an unknown name) still spends the time."""
    try:
        return _hasher.verify(password_hash or _DUMMY_HASH, password) and password_hash is not None
    except (VerificationError, InvalidHashError):
        return False


def needs_rehash(password_hash: str) -> bool:
    """True when the hash was made with weaker parameters than today's defaults."""
    try:
        return _hasher.check_needs_rehash(password_hash)
    except InvalidHashError:
        return True


def new_token() -> str:
    return secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def check_name(name: str, limit: int = MAX_NAME, what: str = "an account name") -> str | None:
    """Why `name` cannot be a name (of an account, or with `what`, of a guest), or None if it can.
    Names are shown to other players in terminals and browsers, so beside the length they hold
    only printable characters: no control characters (terminal escapes, NUL), no format
    characters (bidi overrides, zero-width joiners), no line separators, no lone surrogates."""
    if not name or name != name.strip():
        return f"{what} must be non-empty, without spaces at either end"
    if len(name) > limit:
        return f"{what} has at most {limit} characters"
    if not name.isprintable():  # Unicode categories Cc, Cf, Cs, Co, Cn, Zl, Zp and Zs but space
        return f"{what} cannot contain control, format or invisible characters"
    return None


def check_password_rule(password: str) -> str | None:
    """Why `password` cannot be chosen, or None if it can."""
    if len(password) < MIN_PASSWORD:
        return f"a password has at least {MIN_PASSWORD} characters"
    return None
