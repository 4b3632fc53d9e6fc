"""The seek board (`server/seek_board.py`) with stand-in connections: how many seeks an owner
and an address may hold, what listing and paging show, the bookkeeping of a seek taken for a
pairing (put back, settled, its poster gone meanwhile), and what watchers are pushed."""

from __future__ import annotations

import pytest

from partida.competition.seeks import Party, Seek
from partida.games.registry import default_registry
from partida.protocol import Encoding, ErrorCode, ProtocolError, decode
from partida.room.terms import RoomTerms
from partida.server.seek_board import MAX_SEEKS, OpenSeek, SeekBoard, check_page_request, reply
from partida.server.session import Session
from tests.fakes import FakeLink, sent, session

JSON = Encoding.JSON
GAMES = default_registry()


def posted(board: SeekBoard, poster: Session, game: str = "tictactoe", owner: object = None) -> OpenSeek:
    seek = Seek(board.next_id(), 0.0, Party(owner if owner is not None else poster.name), game)
    open_seek = OpenSeek(seek, poster, RoomTerms(GAMES.get(game)))
    board.add(open_seek)
    return open_seek


def listed(
    board: SeekBoard, game: str | None = None, cursor: str | None = None, limit: int = 50
) -> tuple[list[int], str | None]:
    message = decode(reply(1, board.page(game, cursor, limit, JSON), JSON))
    return [s["id"] for s in message["seeks"]], message["next"]


def test_an_owner_holds_at_most_max_seeks_and_an_address_its_share() -> None:
    board = SeekBoard()
    ann = session("ann", address="192.0.2.1")
    for _ in range(MAX_SEEKS):
        board.check_room_for("ann", ann.address, 10)
        posted(board, ann, owner="ann")
    with pytest.raises(ProtocolError) as refused:
        board.check_room_for("ann", ann.address, 10)
    assert refused.value.code == ErrorCode.TOO_MANY_SEEKS
    board.check_room_for("bob", ann.address, MAX_SEEKS + 1)  # another owner behind the same address
    with pytest.raises(ProtocolError) as refused:
        board.check_room_for("bob", ann.address, MAX_SEEKS)
    assert refused.value.code == ErrorCode.TOO_MANY_SEEKS and "your address" in refused.value.message
    board.check_room_for("bot", ann.address, None)  # a bot account: no address bound
    board.remove(next(iter(board.open)))
    board.check_room_for("ann", ann.address, 10)  # a seek gone frees its place


def test_seeks_are_listed_oldest_first_by_game_a_page_at_a_time() -> None:
    board = SeekBoard()
    ann = session("ann")
    ids = [posted(board, ann, game, owner=i).seek.id for i, game in enumerate(["tictactoe", "othello", "tictactoe"])]
    first, cursor = listed(board, limit=2)
    rest, end = listed(board, cursor=cursor, limit=2)
    assert (first + rest, end) == (ids, None)
    assert listed(board, "tictactoe") == ([ids[0], ids[2]], None)
    assert listed(board, "duel") == ([], None)  # no seek of that game: an empty page
    entry = decode(reply(1, board.page(None, None, 1, JSON), JSON))["seeks"][0]
    assert entry["by"] == {"name": "ann", "kind": "guest"} and entry["game"] == "tictactoe"


def test_a_page_is_built_again_only_when_a_seek_enters_or_leaves_its_filter() -> None:
    board = SeekBoard()
    ann = session("ann")
    posted(board, ann, owner=1)
    page = board.page(None, None, 50, JSON)
    assert board.cached(None, None, 50, JSON) and board.page(None, None, 50, JSON) is page
    assert board.cached("duel", None, 50, JSON)  # nothing to build
    posted(board, ann, "othello", owner=2)
    assert not board.cached(None, None, 50, JSON)
    board.page("tictactoe", None, 50, JSON)
    posted(board, ann, "othello", owner=3)
    assert board.cached("tictactoe", None, 50, JSON)


def test_a_seek_taken_for_a_pairing_is_unlisted_and_put_back_in_its_place_if_it_fails() -> None:
    board = SeekBoard()
    ann = session("ann")
    a, b, c = (posted(board, ann, owner=i) for i in range(3))
    assert board.take(b.seek.id) is b
    assert board.take(b.seek.id) is None  # one pairing at a time
    assert b.seek.id not in board.book
    assert listed(board)[0] == [a.seek.id, c.seek.id]
    board.add(b)  # the pairing failed
    assert listed(board)[0] == [a.seek.id, b.seek.id, c.seek.id]
    assert b.seek.id in board.book


def test_a_poster_leaving_takes_its_seeks_and_marks_one_being_paired() -> None:
    board = SeekBoard()
    ann, bob = session("ann"), session("bob", address="192.0.2.2")
    mine = posted(board, ann, owner="ann")
    pairing = posted(board, ann, owner="ann")
    theirs = posted(board, bob, owner="bob")
    board.take(pairing.seek.id)
    board.drop_from(ann)
    assert mine.left and pairing.left and not theirs.left
    assert list(board.open) == [theirs.seek.id]
    board.add(pairing)  # its pairing failed: a seek whose poster left is not listed again
    assert list(board.open) == [theirs.seek.id]
    board.check_room_for("ann", ann.address, 1)  # its address's count went with them
    with pytest.raises(ProtocolError):
        board.check_room_for("x", bob.address, 1)


async def test_watchers_are_pushed_seeks_of_their_game_and_one_that_missed_a_push_lists_again() -> None:
    board = SeekBoard()
    everything, othello, slow = session("w1"), session("w2"), session("w3")
    board.watch(everything, None)
    board.watch(othello, "othello")
    board.watch(slow, None)
    ann = session("ann")
    try:
        brief = posted(board, ann, owner=1)
        board.remove(brief.seek.id)  # posted and gone within one push: never pushed
        kept = posted(board, ann, "othello", owner=2)
        link = slow.websocket
        assert isinstance(link, FakeLink)
        link.stuck = True
        slow.send({"type": "unread"})
        board.push()
        assert [m["added"] for m in sent(everything)] == [[kept.data]]
        assert sent(everything)[0]["removed"] == []
        assert [m["added"] for m in sent(othello)] == [[kept.data]]
        tictactoe = posted(board, ann, owner=3)
        board.remove(tictactoe.seek.id)
        board.push()
        assert len(sent(othello)) == 1  # nothing of its game: no frame at all
        link.stuck = False
        slow.drain()
        board.push()
        assert sent(slow)[-1] == {"type": "lobby_seeks", "resync": True}
    finally:
        board.stop()


def test_a_listing_request_names_a_cursor_it_was_given() -> None:
    assert check_page_request("12", None) == 50
    for cursor in ("", "x", "-1", "1" * 20, "١٢"):
        with pytest.raises(ProtocolError) as refused:
            check_page_request(cursor, None)
        assert refused.value.code == ErrorCode.BAD_FIELD
