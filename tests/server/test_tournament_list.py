"""`tournament_list` pages (`server/tournament_list.py`) read from a stand-in store: the cursor
names the last tournament shown exactly, pages carry no options, a page is read from the store
again only after a change, and a page read while a change came in is not kept."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from partida.protocol import Encoding, ErrorCode, ProtocolError, decode
from partida.server.tournament_list import TournamentPages, check_list_request, parse_cursor, reply
from partida.storage.tournaments import TournamentInfo

JSON = Encoding.JSON
START = datetime(2026, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)


def info(tournament_id: int, starts_at: datetime, status: str = "registering") -> TournamentInfo:
    return TournamentInfo(
        tournament_id, f"cup {tournament_id}", "tictactoe", {"size": 3}, 2, {"initial": 60},
        "swiss", "open", 3, None, starts_at, status, 0, starts_at, None,
    )  # fmt: skip


class FakeSource:
    """`TournamentStore.page` over a list: by status, after a (start, id) cursor, `limit` of them;
    it counts its reads and may run `during` as if a change came in while it read."""

    def __init__(self, tournaments: list[TournamentInfo]) -> None:
        self.tournaments = sorted(tournaments, key=lambda t: (t.starts_at, t.id))
        self.reads: list[tuple[Any, ...]] = []
        self.during: Any = None

    async def __call__(
        self, status: str | None, after: tuple[datetime, int] | None, limit: int
    ) -> list[TournamentInfo]:
        self.reads.append((status, after, limit))
        if self.during is not None:
            self.during()
        rows = [t for t in self.tournaments if status is None or t.status == status]
        if after is not None:
            rows = [t for t in rows if (t.starts_at, t.id) > after]
        return rows[:limit]


async def listed(
    pages: TournamentPages, status: str | None = None, cursor: str | None = None, limit: int = 50
) -> tuple[list[dict[str, Any]], str | None]:
    page = await pages.page(status, cursor, limit, JSON)
    message = decode(reply(3, page, JSON))
    assert message["type"] == "tournaments" and message["id"] == 3
    return message["tournaments"], message["next"]


async def test_pages_follow_by_an_exact_cursor_and_carry_no_options() -> None:
    same_start = [info(i, START) for i in (4, 5, 6)]  # one start to the microsecond: the id orders them
    source = FakeSource(
        [*same_start, info(1, START - timedelta(days=1)), info(9, START + timedelta(hours=1), "running")]
    )
    pages = TournamentPages(source)
    first, cursor = await listed(pages, limit=2)
    assert [t["name"] for t in first] == ["cup 1", "cup 4"]
    assert "options" not in first[0]
    assert parse_cursor(cursor) == (START, 4)
    second, cursor = await listed(pages, cursor=cursor, limit=2)
    third, end = await listed(pages, cursor=cursor, limit=2)
    assert [t["name"] for t in second + third] == ["cup 5", "cup 6", "cup 9"]
    assert end is None
    running, _ = await listed(pages, status="running")
    assert [t["name"] for t in running] == ["cup 9"]


async def test_a_page_is_read_from_the_store_again_only_after_a_change() -> None:
    source = FakeSource([info(1, START)])
    pages = TournamentPages(source)
    await listed(pages)
    assert pages.cached(None, None, 50, JSON)
    await listed(pages)
    assert len(source.reads) == 1
    pages.changed()
    assert not pages.cached(None, None, 50, JSON)
    await listed(pages)
    assert len(source.reads) == 2


async def test_a_page_read_while_a_change_came_in_answers_its_asker_and_is_not_kept() -> None:
    source = FakeSource([info(1, START)])
    pages = TournamentPages(source)
    source.during = pages.changed
    await listed(pages)
    assert not pages.cached(None, None, 50, JSON)
    source.during = None
    await listed(pages)
    assert pages.cached(None, None, 50, JSON)


def test_a_request_names_a_known_status_and_a_cursor_it_was_given() -> None:
    assert check_list_request("finished", None, None) == 50
    assert check_list_request(None, "1.2", 5) == 5
    for status, cursor, limit in (
        ("over", None, None),
        (None, "12", None),
        (None, "1.x", None),
        (None, "-1.2", None),
        (None, "9" * 30 + ".1", None),  # past any date: refused, not an overflow
        (None, None, 201),
    ):
        with pytest.raises(ProtocolError) as refused:
            check_list_request(status, cursor, limit)
        assert refused.value.code == ErrorCode.BAD_FIELD
