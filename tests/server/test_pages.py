"""What every paged listing shares (`server/pages.py`): the refusal of a connection that does
not read, the page size a request may ask for, and the reply around a page's shared bytes."""

from __future__ import annotations

import pytest

from partida.protocol import Encoding, ErrorCode, ProtocolError, decode, encode
from partida.server.pages import UNREAD_BEFORE_LISTING, check_reading, page_reply, page_size
from tests.fakes import FakeLink, session


def test_a_connection_with_unread_replies_past_the_bound_is_listed_nothing() -> None:
    reader = session("ann")
    check_reading(reader)  # nothing waits: listed
    link = reader.websocket
    assert isinstance(link, FakeLink)
    link.stuck = True
    reader.send_frame("x" * UNREAD_BEFORE_LISTING)
    check_reading(reader)  # exactly the bound: still listed
    reader.send_frame("x")
    with pytest.raises(ProtocolError) as refused:
        check_reading(reader)
    assert refused.value.code == ErrorCode.RATE_LIMITED


def test_page_size_is_the_default_or_a_limit_within_bounds() -> None:
    assert page_size("list_x", None, 50, 200) == 50
    assert page_size("list_x", 1, 50, 200) == 1
    assert page_size("list_x", 200, 50, 200) == 200
    for wrong in (0, -1, 201):
        with pytest.raises(ProtocolError) as refused:
            page_size("list_x", wrong, 50, 200)
        assert refused.value.code == ErrorCode.BAD_FIELD
        assert "list_x: limit must be 1 to 200" in refused.value.message


@pytest.mark.parametrize("encoding", list(Encoding))
def test_a_page_reply_carries_the_id_the_cursor_and_the_shared_bytes(encoding: Encoding) -> None:
    rows = [{"code": "ab"}, {"code": "cd"}]
    raw = encode(rows, encoding)  # type: ignore[arg-type]
    assert decode(page_reply("rooms", 7, "l2", raw, encoding)) == {
        "type": "rooms",
        "id": 7,
        "next": "l2",
        "rooms": rows,
    }
    # A push with no request: no id at all (not a null one), and no next page.
    assert decode(page_reply("rooms", None, None, raw, encoding)) == {"type": "rooms", "next": None, "rooms": rows}
