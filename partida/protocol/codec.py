"""Frames to messages and back. Sans-I/O: bytes or text in, dicts out, and the reverse.

A connection speaks MessagePack in binary frames, or JSON in text frames; the server answers in
the format of the client's first frame.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

import msgpack

from partida.protocol.errors import ErrorCode, ProtocolError

MAX_MESSAGE_BYTES = 64 * 1024


class Encoding(StrEnum):
    MSGPACK = "msgpack"
    JSON = "json"


def encoding_of(frame: bytes | str) -> Encoding:
    return Encoding.JSON if isinstance(frame, str) else Encoding.MSGPACK


def encode(message: dict[str, Any], encoding: Encoding) -> bytes | str:
    if encoding is Encoding.JSON:
        return json.dumps(message, separators=(",", ":"), default=_json_default)
    return msgpack.packb(message, use_bin_type=True, default=_json_default)


def decode(frame: bytes | str, limit: int = MAX_MESSAGE_BYTES) -> dict[str, Any]:
    """One frame to one message map, or a `ProtocolError` saying what is wrong with it."""
    size = len(frame.encode() if isinstance(frame, str) else frame)
    if size > limit:
        raise ProtocolError(ErrorCode.FRAME_TOO_LARGE, f"frames are limited to {limit} bytes, got {size}", close=True)
    try:
        if isinstance(frame, str):
            message = json.loads(frame)
        else:
            message = msgpack.unpackb(frame, raw=False, strict_map_key=False)
    except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError, TypeError) as exc:
        kind = "JSON" if isinstance(frame, str) else "MessagePack"
        raise ProtocolError(ErrorCode.BAD_FRAME, f"the frame is not valid {kind}: {exc}") from None
    if not isinstance(message, dict):
        raise ProtocolError(ErrorCode.BAD_MESSAGE, 'a message must be a map with a "type" field')
    if not isinstance(message.get("type"), str):
        raise ProtocolError(ErrorCode.BAD_MESSAGE, 'a message must have a string "type" field')
    return message


def _json_default(value: Any) -> Any:
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    raise TypeError(f"cannot encode {type(value).__name__}")
