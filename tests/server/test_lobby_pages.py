"""The lobby's indexes, pages and pushes (`server/lobby.py`) on stand-in rooms: which rooms a
filter lists, in what order, how pages follow each other (this node's, then other nodes'),
when a page's bytes are built again, and what watchers are pushed."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from partida.protocol import Encoding, ErrorCode, ProtocolError, decode
from partida.server.lobby import Lobby, check_page_request, reply
from tests.fakes import FakeLink, sent, session

JSON = Encoding.JSON


class FakeRoom:
    """What the lobby reads of a room: its code, whether it is public, its core's game and
    status, and its summary."""

    def __init__(self, code: str, game: str = "tictactoe", status: str = "waiting", public: bool = True) -> None:
        self.code = code
        self.public = public
        self.core = SimpleNamespace(game=SimpleNamespace(name=game), status=status)

    def summary(self) -> dict[str, Any]:
        return {"code": self.code, "game": self.core.game.name, "status": self.core.status}


def opened(lobby: Lobby, *rooms: FakeRoom) -> None:
    for room in rooms:
        lobby.changed(room)  # type: ignore[arg-type]


async def codes(
    lobby: Lobby, game: str | None = None, status: str | None = None, cursor: str | None = None, limit: int = 50
) -> tuple[list[str], str | None]:
    page = await lobby.page(game, status, cursor, limit, JSON)
    return [r["code"] for r in decode(reply(None, page, JSON))["rooms"]], page.next


async def test_public_rooms_waiting_or_playing_are_listed_by_filter_in_order_of_creation() -> None:
    lobby = Lobby()
    a, b, c = FakeRoom("a"), FakeRoom("b", "othello"), FakeRoom("c", status="playing")
    opened(lobby, a, b, c, FakeRoom("hidden", public=False))
    assert await codes(lobby) == (["a", "b", "c"], None)
    assert await codes(lobby, game="tictactoe") == (["a", "c"], None)
    assert await codes(lobby, status="waiting") == (["a", "b"], None)
    assert await codes(lobby, game="tictactoe", status="playing") == (["c"], None)

    a.core.status = "playing"  # changes filter, keeps its place
    b.core.status = "finished"  # leaves every listing
    opened(lobby, a, b)
    assert await codes(lobby) == (["a", "c"], None)
    assert await codes(lobby, status="playing") == (["a", "c"], None)
    assert await codes(lobby, status="waiting") == ([], None)


async def test_pages_follow_each_other_by_cursor() -> None:
    lobby = Lobby()
    opened(lobby, *(FakeRoom(code) for code in "abcde"))
    first, after = await codes(lobby, limit=2)
    second, after_second = await codes(lobby, cursor=after, limit=2)
    third, end = await codes(lobby, cursor=after_second, limit=2)
    assert (first, second, third, end) == (["a", "b"], ["c", "d"], ["e"], None)


async def test_other_nodes_rooms_follow_this_nodes() -> None:
    asked: list[tuple[Any, ...]] = []

    async def remote(game: str | None, status: str | None, after: int, limit: int) -> list[dict[str, Any]]:
        asked.append((game, status, after, limit))
        rows = [{"code": f"r{i}", "game_id": i} for i in (11, 12, 13)]
        return [row for row in rows if row["game_id"] > after][:limit]

    lobby = Lobby(remote)
    opened(lobby, FakeRoom("a"), FakeRoom("b"))
    assert await codes(lobby, limit=2) == (["a", "b"], "r0")  # this node's end exactly here
    assert await codes(lobby, cursor="r0", limit=2) == (["r11", "r12"], "r12")
    assert await codes(lobby, cursor="r12", limit=2) == (["r13"], None)
    lobby2 = Lobby(remote)
    opened(lobby2, FakeRoom("a"))
    assert await codes(lobby2, limit=3) == (["a", "r11", "r12"], "r12")  # one page, both sources
    assert asked[-1] == (None, None, 0, 3)


async def test_a_page_is_built_again_only_when_a_room_enters_or_leaves_its_filter() -> None:
    lobby = Lobby()
    a = FakeRoom("a")
    opened(lobby, a)
    assert not lobby.cached(None, None, None, 50, JSON)
    first = await lobby.page(None, None, None, 50, JSON)
    assert lobby.cached(None, None, None, 50, JSON)
    assert await lobby.page(None, None, None, 50, JSON) is first  # the same bytes for the next asker
    opened(lobby, FakeRoom("other", "othello"))
    assert not lobby.cached(None, None, None, 50, JSON)
    assert lobby.cached("tictactoe", None, None, 50, JSON) is False  # never built
    await lobby.page("tictactoe", None, None, 50, JSON)
    opened(lobby, FakeRoom("third", "othello"))
    assert lobby.cached("tictactoe", None, None, 50, JSON)  # an othello room is not in its filter


async def test_a_code_taken_over_by_another_room_is_not_unlisted_by_the_old_one() -> None:
    lobby = Lobby()
    old, new = FakeRoom("a"), FakeRoom("a")
    opened(lobby, old)
    lobby.removed(new)  # type: ignore[arg-type]
    assert await codes(lobby) == (["a"], None)
    lobby.removed(old)  # type: ignore[arg-type]
    assert await codes(lobby) == ([], None)


async def test_watchers_are_pushed_what_changed_in_their_filter_and_a_slow_one_lists_again() -> None:
    lobby = Lobby()
    everything, othello, slow = session("ann"), session("bob"), session("cid")
    lobby.watch(everything, None, None)
    lobby.watch(othello, "othello", None)
    lobby.watch(slow, None, None)
    try:
        gone = FakeRoom("gone")
        opened(lobby, FakeRoom("t1"), FakeRoom("o1", "othello"), gone)
        gone.core.status = "finished"
        opened(lobby, gone)
        link = slow.websocket
        assert isinstance(link, FakeLink)
        link.stuck = True
        slow.send({"type": "unread"})
        lobby.push()
        assert sent(everything)[-1] == {
            "type": "lobby",
            "rooms": [
                {"code": "o1", "game": "othello", "status": "waiting"},
                {"code": "t1", "game": "tictactoe", "status": "waiting"},
            ],
            "removed": ["gone"],
        }
        assert sent(othello)[-1]["rooms"] == [{"code": "o1", "game": "othello", "status": "waiting"}]
        assert sorted(sent(othello)[-1]["removed"]) == ["gone", "t1"]
        link.stuck = False
        slow.drain()
        lobby.push()  # nothing changed: only the one that missed a push hears, to list again
        assert sent(slow)[-1] == {"type": "lobby", "resync": True}
        assert len(sent(everything)) == 1
    finally:
        await lobby.stop()


def test_a_listing_request_names_a_listed_status_and_a_cursor_it_was_given() -> None:
    assert check_page_request(None, "playing", "l12", None) == 50
    assert check_page_request("tictactoe", None, "r7", 10) == 10
    for status, cursor in (("finished", None), (None, "x1"), (None, "l"), (None, "l1x"), (None, "l" + "9" * 20)):
        with pytest.raises(ProtocolError) as refused:
            check_page_request(None, status, cursor, None)
        assert refused.value.code == ErrorCode.BAD_FIELD
