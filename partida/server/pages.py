"""What every paged listing (rooms, seeks, tournaments) answers alike: the page size a request
asks for, and the reply around a page's bytes, which are encoded once and shared by every
reader of that page."""

from __future__ import annotations

from typing import Any

from partida.protocol import Encoding, ErrorCode, ProtocolError, encode_with_raw
from partida.server.session import Session

UNREAD_BEFORE_LISTING = 256 * 1024  # bytes queued unread past which a connection is listed nothing more


def check_reading(session: Session) -> None:
    """A listing for a connection whose earlier replies are still unread is refused: nothing more
    is built or queued for it until it reads (a reader that never reads holds no memory)."""
    if session.outbox_bytes > UNREAD_BEFORE_LISTING:
        raise ProtocolError(ErrorCode.RATE_LIMITED, "read the replies sent to you before asking for more")


def page_size(request: str, limit: int | None, default: int, most: int) -> int:
    """The page size `request` asks for, or `bad_field` naming what is wrong."""
    if limit is None:
        return default
    if not 1 <= limit <= most:
        raise ProtocolError(ErrorCode.BAD_FIELD, f"{request}: limit must be 1 to {most}")
    return limit


def page_reply(
    kind: str, request_id: int | str | None, after: str | None, raw: bytes | str, encoding: Encoding
) -> bytes | str:
    """The `kind` reply to one request (its list under the key `kind`): the request's id and the
    next page's cursor around the page's shared bytes."""
    fields: dict[str, Any] = {"type": kind, "next": after}
    if request_id is not None:
        fields["id"] = request_id
    return encode_with_raw(fields, kind, raw, encoding)
