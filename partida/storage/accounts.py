"""Password and token hashing for accounts, kept apart from the database code.

Passwords are chosen by people, so they get argon2id (slow on purpose, salted). Bot tokens are
256 random bits, for which a slow hash buys nothing: a sha256 digest is enough and can be looked
up by index, so checking a token is one indexed query.
"""

from __future__ import annotations

import functools
import hashlib
import secrets
import unicodedata

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from confusable_homoglyphs import confusables

_hasher = PasswordHasher()


@functools.cache
def _dummy_hash() -> str:
    """Verified against when the name is unknown, so that a wrong name costs as long as a wrong
    password. Made on first use, not at import: every command and bot process that imports the
    storage layer would otherwise pay for an argon2 hash it never checks."""
    return _hasher.hash("partida: no such account")


MAX_NAME = 64
MIN_PASSWORD = 8
MAX_PASSWORD = 256  # argon2 takes any length; a bound keeps a megabyte password from being hashed


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    """True if `password` matches; a missing hash (a bot, an unknown name) still spends the time."""
    try:
        return _hasher.verify(password_hash or _dummy_hash(), password) and password_hash is not None
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
    if len(password) > MAX_PASSWORD:
        return f"a password has at most {MAX_PASSWORD} characters"
    return None


def name_keys(name: str) -> tuple[str, str]:
    """What names that pass for each other share: two names with either key in common are
    twins. Two accounts may not be twins, and a guest may not take an account's twin. Each key is
    a digest of a skeleton in the sense of Unicode's UTS #39, widened to what a name on a seat
    must not be mistaken for: compatibility forms folded (full-width `Ａ` is `A`), accents
    dropped, and every character replaced by the least of the characters Unicode's confusables
    data links it to (Cyrillic `а` and Latin `a`; `l`, `I` and `1`). The first key folds case
    before that (`ALİCE` is `alice`), the second after (`AIice`, with a capital i, is `Alice`): a
    capital I is both a case of `i` and the look of `l`. Digests, so that a key has one length
    whatever the name expands to."""
    return hashlib.sha256(_folded(name).encode()).hexdigest(), hashlib.sha256(_shaped(name).encode()).hexdigest()


def passes_for_prefix(name: str, prefix: str) -> bool:
    """Whether `name` begins with something that passes for `prefix` (by `name_keys`' two
    skeletons): `ｐool-mcts`, with a full-width p, or with a Cyrillic о, passes for `pool-`."""
    return any(form(name).startswith(form(prefix)) for form in (_folded, _shaped))


def _folded(name: str) -> str:
    return _skeleton(unicodedata.normalize("NFKD", name.casefold()))


def _shaped(name: str) -> str:
    return _skeleton(unicodedata.normalize("NFKD", _skeleton(unicodedata.normalize("NFKD", name)).casefold()))


def _skeleton(text: str) -> str:
    return "".join(_prototype(char) for char in text if not unicodedata.combining(char))


@functools.lru_cache(maxsize=4096)
def _prototype(char: str) -> str:
    """The least of the single characters `char` may be taken for, following the confusables
    data from character to character (it links each to its prototype, so a class is its closure)."""
    seen, todo = {char}, [char]
    while todo:
        for found in confusables.is_confusable(todo.pop(), greedy=True) or ():
            for glyph in found["homoglyphs"]:
                other = glyph["c"]
                if len(other) == 1 and other not in seen:
                    seen.add(other)
                    todo.append(other)
    return min(seen)
