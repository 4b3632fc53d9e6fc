"""The secrets a room is made with, drawn from the system's generator through pools
(`server/entropy.py`: one system call for many): its code, its game's seed, and its seat tokens."""

from __future__ import annotations

import base64
from collections.abc import Callable

from partida.room.seed import seed_hash
from partida.server import entropy

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: codes are read aloud and typed


PUBLIC_CODE_LENGTH = 6  # listed anyway: short, to read aloud
PRIVATE_CODE_LENGTH = 12  # 60 bits: the code is the only key to a private room


# byte -> letter, for `bytes.translate`: the alphabet's 32 letters divide 256, so uniformly
_CODE_LETTERS = bytes(ord(CODE_ALPHABET[byte % len(CODE_ALPHABET)]) for byte in range(256))


def _room_codes(length: int) -> Callable[[int], list[str]]:
    def make(n: int) -> list[str]:
        letters = entropy.token_bytes(length * n).translate(_CODE_LETTERS).decode("ascii")
        return [letters[i : i + length] for i in range(0, length * n, length)]

    return make


_CODES = {length: entropy.Pool(_room_codes(length)) for length in (PUBLIC_CODE_LENGTH, PRIVATE_CODE_LENGTH)}


def new_room_code(length: int = PUBLIC_CODE_LENGTH) -> str:
    """`length` letters of the alphabet, uniformly: each random byte gives one letter without
    bias (the bytes of many codes from one call to the system's generator, mapped in C)."""
    pool = _CODES.get(length)
    return _room_codes(length)(1)[0] if pool is None else pool.take()


def code_length(public: bool) -> int:
    """A public room's code is short; a private room's is long, since it is the room's only key."""
    return PUBLIC_CODE_LENGTH if public else PRIVATE_CODE_LENGTH


def _seeds(n: int) -> list[tuple[int, str]]:
    """`n` new games' seeds (63 random bits each, as `entropy.randbits(63)` draws them) with
    their commitments."""
    raw = entropy.token_bytes(8 * n)
    seeds = [int.from_bytes(raw[i : i + 8], "big") >> 1 for i in range(0, 8 * n, 8)]
    return [(seed, seed_hash(seed)) for seed in seeds]


_SEEDS = entropy.Pool(_seeds)


def new_seed() -> tuple[int, str]:
    """A new game's seed and its commitment (`seed_hash`), shown before the game and checked after."""
    return _SEEDS.take()


SEAT_TOKEN_BYTES = 18  # a multiple of 3: each token is 24 base64 letters, with no padding


def _seat_tokens(n: int) -> list[str]:
    text = base64.urlsafe_b64encode(entropy.token_bytes(SEAT_TOKEN_BYTES * n)).decode("ascii")
    size = SEAT_TOKEN_BYTES // 3 * 4
    return [text[i : i + size] for i in range(0, size * n, size)]


_SEAT_TOKENS = entropy.Pool(_seat_tokens)


def new_seat_token() -> str:
    """A secret that reclaims a seat, drawn afresh each time someone takes the seat: it belongs to
    that holder alone, so a token kept from an earlier seating (say, by a creator who sat in every
    seat before a friend took one) stops working. Stored with the seat when the game starts, so it
    survives a restart. 18 random bytes as URL-safe base64 (as `secrets.token_urlsafe(18)`)."""
    return _SEAT_TOKENS.take()
