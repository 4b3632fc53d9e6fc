"""`list_rooms` (`server/services/lobby.py`) on a real lobby and limiter, with stand-in rooms and
connections: a page built for its asker is charged by its bytes, a shared page is not, a
connection that does not read is listed nothing, and `watch` starts and stops the pushes."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from partida.protocol import ErrorCode, ProtocolError
from partida.protocol import messages as m
from partida.server.limits import Limiter, Limits
from partida.server.lobby import Lobby
from partida.server.pages import UNREAD_BEFORE_LISTING
from partida.server.services.lobby import BUILT_BYTES_PER_REQUEST, LobbyService
from tests.fakes import FakeLink, sent, session


class FakeRoom:
    """What the lobby reads of a room: its code, whether it is public, its core's game and
    status, and its summary."""

    public = True

    def __init__(self, code: str) -> None:
        self.code = code
        self.core = SimpleNamespace(game=SimpleNamespace(name="tictactoe"), status="waiting")

    def summary(self) -> dict[str, Any]:
        return {"code": self.code, "game": "tictactoe", "padding": "x" * 100}


def listing() -> tuple[LobbyService, Lobby]:
    lobby = Lobby()
    for i in range(30):
        lobby.changed(FakeRoom(f"room{i}"))  # type: ignore[arg-type]
    # No refill: what a request is charged is exactly what its bucket lost.
    limits = Limits(requests_per_second=0.0, address_requests_per_second=0.0)
    return LobbyService(lobby, Limiter(limits)), lobby


async def test_a_page_built_for_its_asker_is_charged_by_its_bytes_and_a_shared_one_is_not() -> None:
    service, lobby = listing()
    asker = session("ann")
    asker.limits = service.limiter.admit(asker.address)  # buckets that do not refill
    assert asker.limits is not None
    before = asker.limits.requests.tokens
    await service.on_list_rooms(asker, m.ListRooms(id=1))
    page = await lobby.page(None, None, None, 50, asker.encoding)
    assert before - asker.limits.requests.tokens == pytest.approx(len(page.rooms) / BUILT_BYTES_PER_REQUEST)
    charged = asker.limits.requests.tokens
    other = session("bob", address="198.51.100.2")
    other.limits = service.limiter.admit(other.address)
    await service.on_list_rooms(asker, m.ListRooms(id=2))
    await service.on_list_rooms(other, m.ListRooms(id=3))
    assert asker.limits.requests.tokens == charged  # the same page, already built: no charge
    assert other.limits is not None and other.limits.requests.tokens == other.limits.requests.burst
    reply = sent(asker)[-1]
    assert reply["type"] == "rooms" and reply["id"] == 2 and len(reply["rooms"]) == 30


async def test_a_connection_that_does_not_read_is_listed_nothing() -> None:
    service, _ = listing()
    slow = session("ann")
    link = slow.websocket
    assert isinstance(link, FakeLink)
    link.stuck = True
    slow.send_frame("x" * (UNREAD_BEFORE_LISTING + 1))
    with pytest.raises(ProtocolError) as refused:
        await service.on_list_rooms(slow, m.ListRooms())
    assert refused.value.code == ErrorCode.RATE_LIMITED
    assert slow.outbox is not None and len(slow.outbox) == 1  # nothing more was queued


async def test_watch_starts_the_pushes_and_watch_false_or_leaving_stops_them() -> None:
    service, lobby = listing()
    ann, bob = session("ann"), session("bob")
    try:
        await service.on_list_rooms(ann, m.ListRooms(watch=True))
        await service.on_list_rooms(bob, m.ListRooms(watch=True))
        lobby.changed(FakeRoom("new"))  # type: ignore[arg-type]
        lobby.push()
        assert sent(ann)[-1]["type"] == "lobby" and sent(bob)[-1]["type"] == "lobby"
        await service.on_list_rooms(ann, m.ListRooms(watch=False))
        service.disconnected(bob)
        told = len(sent(ann)), len(sent(bob))
        lobby.changed(FakeRoom("newer"))  # type: ignore[arg-type]
        lobby.push()
        assert (len(sent(ann)), len(sent(bob))) == (told[0], told[1])
    finally:
        await lobby.stop()


async def test_a_bad_filter_is_refused_before_anything_is_built() -> None:
    service, _ = listing()
    for request in (m.ListRooms(status="finished"), m.ListRooms(cursor="zz"), m.ListRooms(limit=0)):
        with pytest.raises(ProtocolError) as refused:
            await service.on_list_rooms(session("ann"), request)
        assert refused.value.code == ErrorCode.BAD_FIELD
