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
import os
import threading

CHUNK = 4096

_lock = threading.Lock()
_buffer = b""
_used = 0


def _forget() -> None:
    global _buffer, _used
    _buffer, _used = b"", 0


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
