"""Posting, cancelling, taking and listing seeks (`server/services/seeks.py`) up to the pairing,
with a stand-in terms check and ratings and real connections on a fake transport: what is
refused with which code, who holds a seek, and what a listing costs. (A pairing opens a room:
the server tests play it.)"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from partida.competition.ratings import PersonRating
from partida.games.registry import default_registry
from partida.protocol import ErrorCode, ProtocolError
from partida.protocol import messages as m
from partida.room.clocks import ClockSpec
from partida.server.limits import Limiter, Limits
from partida.server.seek_board import SeekBoard
from partida.server.services.seeks import SeekService
from partida.server.session import Session
from tests.fakes import sent, session

GAMES = default_registry()
RATINGS = {1: 1500.0, 2: 1900.0}  # account -> its rating in every class


class FakeRooms:
    """The rooms service's check of a room's terms (the game by name, the rest as given)."""

    def check_terms(self, who: Session, game: str, options: Any, seats: Any, clock: Any) -> SimpleNamespace:
        spec = None if clock is None else ClockSpec(**clock)
        return SimpleNamespace(game=GAMES.get(game), options=options or {}, seats=seats or 2, clock=spec)


async def rating_of(account_id: int, game: str, clock: Any) -> PersonRating | None:
    rating = RATINGS.get(account_id)
    return None if rating is None else PersonRating(rating, 60.0)


def seeks(**limits: Any) -> tuple[SeekService, SeekBoard]:
    board = SeekBoard()
    limiter = Limiter(Limits(**limits))
    return SeekService(board, FakeRooms(), None, None, rating_of, limiter), board  # type: ignore[arg-type]


async def refused(call: Any, who: Session, request: Any) -> str:
    with pytest.raises(ProtocolError) as error:
        await call(who, request)
    return error.value.code


BLITZ = {"initial": 180.0, "increment": 2.0}


async def test_a_seek_with_no_match_is_posted_and_listed() -> None:
    service, board = seeks()
    ann = session("ann", "user", 1)
    await service.on_seek(ann, m.Seek(game="tictactoe", clock=BLITZ, rated=True, range=[1800, 2000], id=3))
    reply = sent(ann)[-1]
    assert (reply["type"], reply["id"], reply["paired"]) == ("seek_posted", 3, False)
    assert reply["seek"]["rating"] == 1500.0 and reply["seek"]["range"] == [1800.0, 2000.0]
    assert list(board.open) == [reply["seek"]["id"]]


async def test_seeks_are_for_two_and_a_rated_one_needs_an_account_and_a_clock() -> None:
    service, board = seeks()
    ann, guest = session("ann", "user", 1), session("zed")
    assert await refused(service.on_seek, ann, m.Seek(game="crazyeights", seats=3)) == ErrorCode.BAD_SEEK
    assert await refused(service.on_seek, guest, m.Seek(game="tictactoe", rated=True, clock=BLITZ)) == (
        ErrorCode.RATED_NEEDS_ACCOUNT
    )
    assert await refused(service.on_seek, ann, m.Seek(game="tictactoe", rated=True)) == ErrorCode.RATED_NEEDS_CLOCK
    for wrong in ([1], [2000, 1000]):
        assert await refused(service.on_seek, ann, m.Seek(game="tictactoe", range=wrong)) == ErrorCode.BAD_SEEK
    assert board.open == {}


async def test_an_address_holds_its_share_of_seeks_but_a_bot_account_is_not_bounded_by_it() -> None:
    service, board = seeks(seeks_per_address=2)
    posters = [session(f"guest{i}", limited=True) for i in range(3)]
    for poster in posters[:2]:
        await service.on_seek(poster, m.Seek(game="tictactoe", range=[0, 1]))  # guests: unrated, never paired
    assert (
        await refused(service.on_seek, posters[2], m.Seek(game="tictactoe", range=[0, 1])) == ErrorCode.TOO_MANY_SEEKS
    )
    server_made = session("pool", "user", 3)  # no buckets: a connection the server made itself
    await service.on_seek(server_made, m.Seek(game="tictactoe", range=[0, 1]))
    assert len(board.open) == 3


async def test_only_its_poster_cancels_a_seek() -> None:
    service, board = seeks()
    ann, bob = session("ann", "user", 1), session("bob", "user", 2)
    await service.on_seek(ann, m.Seek(game="tictactoe", range=[0, 1]))
    seek_id = sent(ann)[-1]["seek"]["id"]
    assert await refused(service.on_cancel, bob, m.SeekCancel(seek=seek_id)) == ErrorCode.NO_SUCH_SEEK
    await service.on_cancel(ann, m.SeekCancel(seek=seek_id, id=8))
    assert sent(ann)[-1] == {"type": "seek_cancelled", "id": 8, "seek": seek_id}
    assert board.open == {}
    assert await refused(service.on_cancel, ann, m.SeekCancel(seek=seek_id)) == ErrorCode.NO_SUCH_SEEK


async def test_a_seek_refuses_a_taker_outside_its_terms_and_stays_open() -> None:
    service, board = seeks()
    ann, bob, guest = session("ann", "user", 1), session("bob", "user", 2), session("zed")
    await service.on_seek(ann, m.Seek(game="tictactoe", clock=BLITZ, rated=True, range=[1400, 1600]))
    seek_id = sent(ann)[-1]["seek"]["id"]
    for taker in (ann, bob, guest):  # its own, a rating out of range, a guest for a rated game
        assert await refused(service.on_take, taker, m.SeekTake(seek=seek_id)) == ErrorCode.SEEK_REFUSED
    assert list(board.open) == [seek_id]
    assert await refused(service.on_take, bob, m.SeekTake(seek=seek_id + 1)) == ErrorCode.NO_SUCH_SEEK


async def test_a_posters_seeks_go_when_it_leaves() -> None:
    service, board = seeks()
    ann = session("ann", "user", 1)
    await service.on_seek(ann, m.Seek(game="tictactoe", range=[0, 1]))
    await service.on_seek(ann, m.Seek(game="othello", range=[0, 1]))
    service.disconnected(ann)
    assert board.open == {}


async def test_a_listing_is_charged_by_its_bytes_and_its_building() -> None:
    service, _ = seeks(requests_per_second=0.0, address_requests_per_second=0.0)
    ann = session("ann", "user", 1)
    for i in range(3):
        await service.on_seek(session(f"g{i}"), m.Seek(game="tictactoe", range=[0, 1]))
    reader = session("reader")
    reader.limits = service.limiter.admit(reader.address)  # buckets that do not refill
    assert reader.limits is not None
    full = reader.limits.requests.tokens
    await service.on_list(reader, m.ListSeeks(limit=10, id=1))
    built = full - reader.limits.requests.tokens
    await service.on_list(reader, m.ListSeeks(limit=10, id=2))
    shared = full - reader.limits.requests.tokens - built
    assert built == pytest.approx(shared + 1.0)  # building 10 seeks' page: a tenth each
    assert [len(r["seeks"]) for r in sent(reader)] == [3, 3]
    assert await refused(service.on_list, ann, m.ListSeeks(cursor="x")) == ErrorCode.BAD_FIELD
