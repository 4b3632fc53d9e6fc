"""Frames to messages and back. Sans-I/O: bytes or text in, dicts out, and the reverse.

A connection speaks MessagePack in binary frames, or JSON in text frames; the server answers in
the format of the client's first frame.
"""

from __future__ import annotations

import json
import math
import threading
from enum import StrEnum
from typing import Any

import msgpack

from partida.protocol.errors import ErrorCode, ProtocolError

MAX_MESSAGE_BYTES = 64 * 1024
# No request needs more nesting than this; a deeper frame is refused before anything walks it
# recursively (the rules, the storage's JSON encoder, the log).
MAX_DEPTH = 32
# MessagePack's integer range: a wider integer could be decoded from JSON but never sent back.
MIN_INT, MAX_INT = -(2**63), 2**64 - 1


class Encoding(StrEnum):
    MSGPACK = "msgpack"
    JSON = "json"


def encoding_of(frame: bytes | str) -> Encoding:
    return Encoding.JSON if isinstance(frame, str) else Encoding.MSGPACK


def encode(message: dict[str, Any], encoding: Encoding) -> bytes | str:
    if encoding is Encoding.JSON:
        return json.dumps(message, separators=(",", ":"), default=_json_default)
    try:
        packer = _packers.packer
    except AttributeError:  # inline rather than `_packer()`: every message sent comes through here
        packer = _packer()
    return packer.pack(message)


def encode_with_raw(fields: dict[str, Any], key: str, raw: bytes | str, encoding: Encoding) -> bytes | str:
    """The message `fields` plus `key`, whose value `raw` is already encoded in `encoding`: a
    large value shared by many replies (a lobby page) is encoded once, not once per reply."""
    if encoding is Encoding.JSON:
        head = encode(fields, encoding)
        assert isinstance(head, str) and isinstance(raw, str)
        return f"{head[:-1]}{',' if fields else ''}{json.dumps(key)}:{raw}}}"
    assert isinstance(raw, bytes) and len(fields) < 15  # a fixmap: up to 15 entries
    pack = _packer().pack
    body = b"".join(pack(k) + pack(v) for k, v in fields.items())
    return bytes((0x80 | (len(fields) + 1),)) + body + pack(key) + raw


# One packer per thread, reused (`msgpack.packb` makes a new one per message, a quarter of its
# time on a server's small messages); a packer is not safe to share between threads.
_packers = threading.local()


def _packer() -> msgpack.Packer:
    try:
        return _packers.packer
    except AttributeError:
        _packers.packer = msgpack.Packer(use_bin_type=True, default=_json_default)
        return _packers.packer


def decode(frame: bytes | str, limit: int = MAX_MESSAGE_BYTES) -> dict[str, Any]:
    """One frame to one message map, or a `ProtocolError` saying what is wrong with it."""
    text = isinstance(frame, str)
    size = len(frame.encode()) if text else len(frame)
    if size > limit:
        raise ProtocolError(ErrorCode.FRAME_TOO_LARGE, f"frames are limited to {limit} bytes, got {size}", close=True)
    try:
        if text:
            message = json.loads(frame, parse_constant=_refuse_constant)
        else:
            message = msgpack.unpackb(frame, raw=False, strict_map_key=False)
    except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError, TypeError) as exc:
        kind = "JSON" if text else "MessagePack"
        raise ProtocolError(ErrorCode.BAD_FRAME, f"the frame is not valid {kind}: {exc}") from None
    except RecursionError:
        raise ProtocolError(ErrorCode.BAD_FRAME, f"the frame nests deeper than {MAX_DEPTH} levels") from None
    problem = _unencodable(message, MAX_DEPTH)
    if problem is not None:
        kind = "JSON" if text else "MessagePack"
        request_id = message.get("id") if isinstance(message, dict) else None
        if not isinstance(request_id, int | str) or isinstance(request_id, bool) or _unencodable(request_id, 1):
            request_id = None
        raise ProtocolError(ErrorCode.BAD_FRAME, f"the {kind} frame {problem}", request_id=request_id)
    if not isinstance(message, dict):
        raise ProtocolError(ErrorCode.BAD_MESSAGE, 'a message must be a map with a "type" field')
    if not isinstance(message.get("type"), str):
        raise ProtocolError(ErrorCode.BAD_MESSAGE, 'a message must have a string "type" field')
    return message


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number in this protocol")


def _unencodable(value: Any, depth: int) -> str | None:
    """Why `value` could not be stored or sent back in both formats, or None. Whatever enters
    is checked here, at the edge, so that nothing unencodable reaches a room, the database or
    another client's writer: lone surrogates (JSON allows them, UTF-8 does not), NUL
    (PostgreSQL text cannot hold it), integers outside MessagePack's range, and deep nesting.
    A map is looked at first, with its plain values (ASCII text without NUL, integers in range,
    None) told inline (what `_plain` tells, without its call): every request is such a map, and
    a call per value was most of the cost."""
    if isinstance(value, dict) and depth > 0:
        for key, item in value.items():
            kind = type(key)
            if not (
                (kind is str and key.isascii() and "\x00" not in key)
                or (kind is int and MIN_INT <= key <= MAX_INT)
                or key is None
            ):
                problem = _unencodable(key, depth - 1)
                if problem is not None:
                    return problem
            kind = type(item)
            if kind is str:
                if item.isascii() and "\x00" not in item:
                    continue
            elif kind is int:
                if MIN_INT <= item <= MAX_INT:
                    continue
            elif item is None:
                continue
            problem = _unencodable(item, depth - 1)
            if problem is not None:
                return problem
        return None
    if isinstance(value, str):
        if "\x00" in value:
            return "holds a NUL character"
        if not value.isascii():
            try:
                value.encode()
            except UnicodeEncodeError:
                return "holds a lone surrogate, which UTF-8 cannot encode"
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else "holds a number that is not finite"
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return None if MIN_INT <= value <= MAX_INT else "holds an integer outside the 64-bit range"
    if depth <= 0:
        return f"nests deeper than {MAX_DEPTH} levels"
    if isinstance(value, list):
        for item in value:
            if not _plain(item):
                problem = _unencodable(item, depth - 1)
                if problem is not None:
                    return problem
        return None
    return "holds binary data or an extension type, which JSON clients and the database cannot take"


def _plain(value: Any) -> bool:
    """The common values that are fine as they are (ASCII text without NUL, integers in range,
    None), told without a call of `_unencodable` each: every request goes through here."""
    kind = type(value)
    if kind is str:
        return value.isascii() and "\x00" not in value
    if kind is int:
        return MIN_INT <= value <= MAX_INT
    return value is None


def _json_default(value: Any) -> Any:
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    raise TypeError(f"cannot encode {type(value).__name__}")
