"""Random secrets for rooms (codes, seeds, seat tokens, challenge ids), drawn from the system's
generator a few kilobytes at a time.

`secrets` asks the kernel once per secret, and each of those calls lets go of the GIL; under load
the event loop then waits to take it back from the storage thread, which cost more than the call
itself (about four secrets a game). The bytes are the kernel's either way; they are only fetched
in bulk and handed out in order, never twice. A forked child starts with an empty buffer, so a
parent and its child never share secrets.
"""

from __future__ import annotations

import base64
import collections
import os
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

CHUNK = 4096
T = TypeVar("T")

_lock = threading.Lock()
_buffer = b""
_used = 0


def _forget() -> None:
    global _buffer, _used
    _buffer, _used = b"", 0
    for pool in list(_pools):
        pool.forget()


os.register_at_fork(after_in_child=_forget)


def token_bytes(n: int) -> bytes:
    """`n` bytes from the operating system's generator (like `secrets.token_bytes`)."""
    global _buffer, _used
    if n > CHUNK:
        return os.urandom(n)
    with _lock:
        if _used + n > len(_buffer):
            _buffer, _used = os.urandom(CHUNK), 0
        chunk = _buffer[_used : _used + n]
        _used += n
        return chunk


def token_urlsafe(n: int) -> str:
    """Like `secrets.token_urlsafe(n)`: `n` random bytes as URL-safe base64 text."""
    return base64.urlsafe_b64encode(token_bytes(n)).rstrip(b"=").decode("ascii")


def token_hex(n: int) -> str:
    return token_bytes(n).hex()


def randbits(k: int) -> int:
    """A random integer of `k` bits (like `secrets.randbits`)."""
    value = int.from_bytes(token_bytes((k + 7) // 8), "big")
    return value >> (-k % 8)


class Pool(Generic[T]):
    """Secrets made `size` at a time by `make(size)` and handed out one by one, in order, never
    twice. Each room draws a few (a code, a seed and its hash, a token per seat), once per game:
    made one at a time, each went through its own calls into the generator's buffer, base64 and
    OpenSSL, code that a game runs too rarely to find in the processor's caches; made by the
    dozen, the calls are few and run warm. A forked child starts with every pool empty."""

    def __init__(self, make: Callable[[int], Sequence[T]], size: int = 64) -> None:
        self._make = make
        self._size = size
        self._items: collections.deque[T] = collections.deque()
        _pools.add(self)

    def take(self) -> T:
        try:
            return self._items.popleft()  # atomic: two threads never get the same item
        except IndexError:
            self._items.extend(self._make(self._size))
            return self._items.popleft()

    def forget(self) -> None:
        self._items.clear()


_pools: weakref.WeakSet[Pool[object]] = weakref.WeakSet()
