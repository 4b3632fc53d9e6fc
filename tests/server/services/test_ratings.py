"""People's ratings on the server (`server/services/ratings.py`) with a stand-in store: the
farming verdict at a rated game's start and what it tells the seats, the rating at its end, the
catch-up at start, and what the rating requests refuse with which code."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from partida.games.registry import default_registry
from partida.protocol import ErrorCode, ProtocolError
from partida.protocol import messages as m
from partida.server.services.ratings import CLASSES, MAX_ROWS, RatingService
from partida.server.session import Session
from tests.fakes import sent, session

CHANGES = [{"game": "tictactoe", "clock_class": "blitz", "name": "ann", "before": 1500.0, "after": 1510.0}]


class Line:
    def __init__(self, name: str) -> None:
        self.name = name

    def to_data(self) -> dict[str, Any]:
        return {"name": self.name}


class FakeStore:
    """The store's rating writes and reads, keeping what it was asked."""

    def __init__(self, verdict: str = "ok", broken: bool = False) -> None:
        self.verdict = verdict
        self.broken = broken
        self.judged: list[tuple[Any, ...]] = []
        self.rated: list[int] = []
        self.asked: list[tuple[Any, ...]] = []
        self.person_ratings = SimpleNamespace(
            unrated_games=self._unrated, of_account=self._of_account, history=self._history, leaderboard=self._board
        )

    async def judge_farming(self, game_id: int, accounts: list[int], addresses: list[str | None], now: float) -> str:
        self.judged.append((game_id, accounts, addresses))
        return self.verdict

    async def rate_game(self, game_id: int) -> list[dict[str, Any]]:
        if self.broken:
            raise OSError("disk full")
        self.rated.append(game_id)
        return CHANGES

    async def get_account_by_name(self, name: str) -> Any:
        return SimpleNamespace(id=1, name="Ann") if name.lower() == "ann" else None

    async def _unrated(self) -> list[int]:
        return [41, 42]

    async def _of_account(self, account_id: int, game: str | None) -> list[Line]:
        self.asked.append(("of_account", account_id, game))
        return [Line("ann")]

    async def _history(self, account_id: int, game: str, kind: str, limit: int) -> list[Line]:
        self.asked.append(("history", account_id, game, kind, limit))
        return []

    async def _board(self, game: str, kind: str, limit: int) -> list[Line]:
        self.asked.append(("leaderboard", game, kind, limit))
        return [Line("ann"), Line("bea")]


def rated_room(*seated: Session, rated: bool = True) -> SimpleNamespace:
    seats = [
        SimpleNamespace(account_id=s.identity.account_id, kind=s.identity.kind, session=s)  # type: ignore[union-attr]
        for s in seated
    ]
    return SimpleNamespace(rated=rated, code="abc", core=SimpleNamespace(seats=[*seats, None], game_id=7))


async def spawned_work_done() -> None:
    """The service's spawned work awaits only the stand-in store, which never suspends: one turn
    of the loop runs it to its end."""
    await asyncio.sleep(0)


def service(store: FakeStore) -> RatingService:
    return RatingService(store, default_registry())  # type: ignore[arg-type]


async def test_a_rated_games_seats_are_judged_at_its_start_a_bots_address_being_none_of_its_own() -> None:
    store = FakeStore("ok")
    ann, bot = session("ann", "user", 1, address="192.0.2.1"), session("deep", "bot", 2, address="192.0.2.1")
    service(store).game_started(rated_room(ann, bot))  # type: ignore[arg-type]
    await spawned_work_done()
    assert store.judged == [(7, [1, 2], ["192.0.2.1", None])]
    assert sent(ann) == []  # an ordinary verdict says nothing


@pytest.mark.parametrize(("verdict", "still_rated"), [("flag", True), ("refuse", False)])
async def test_a_verdict_on_seats_sharing_an_address_is_told_and_a_refusal_plays_casual(
    verdict: str, still_rated: bool
) -> None:
    ann, bea = session("ann", "user", 1), session("bea", "user", 3)
    room = rated_room(ann, bea)
    service(FakeStore(verdict)).game_started(room)  # type: ignore[arg-type]
    await spawned_work_done()
    assert room.rated is still_rated
    for who in (ann, bea):
        told = sent(who)[-1]
        assert (told["type"], told["verdict"], told["rated"], told["room"]) == (
            "rating_verdict",
            verdict,
            still_rated,
            "abc",
        )


async def test_a_casual_game_costs_the_store_nothing() -> None:
    store = FakeStore("refuse")
    ratings = service(store)
    room = rated_room(session("ann", "user", 1), rated=False)
    ratings.game_started(room)  # type: ignore[arg-type]
    ratings.game_over(room)  # type: ignore[arg-type]
    await spawned_work_done()
    assert store.judged == [] and store.rated == []


async def test_a_rated_game_over_is_rated_and_its_seats_told_and_a_failed_rating_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ann = session("ann", "user", 1)
    store = FakeStore()
    service(store).game_over(rated_room(ann))  # type: ignore[arg-type]
    await spawned_work_done()
    assert store.rated == [7]
    assert sent(ann)[-1] == {
        "type": "rating_changed", "room": "abc", "game_id": 7, "game": "tictactoe", "clock_class": "blitz",
        "changes": CHANGES,
    }  # fmt: skip
    service(FakeStore(broken=True)).game_over(rated_room(ann))  # type: ignore[arg-type]
    await spawned_work_done()
    assert "rating game 7 failed; it is rated at the next start" in caplog.text


async def test_a_start_rates_the_games_left_unrated() -> None:
    store = FakeStore()
    ratings = service(store)
    ratings.start()
    await spawned_work_done()
    assert store.rated == [41, 42]
    await ratings.stop()


async def test_the_requests_read_an_accounts_ratings_by_name_or_ones_own() -> None:
    store = FakeStore()
    ratings = service(store)
    ann = session("ann", "user", 1)
    await ratings.on_ratings(ann, m.Ratings(game="tictactoe"))
    await ratings.on_ratings(session("zed"), m.Ratings(name="ANN"))
    await ratings.on_history(ann, m.RatingHistory(game="tictactoe", clock_class="blitz"))
    await ratings.on_leaderboard(ann, m.Leaderboard(game="tictactoe", limit=3, id=5))
    assert store.asked[:3] == [
        ("of_account", 1, "tictactoe"),
        ("of_account", 1, None),
        ("history", 1, "tictactoe", "blitz", MAX_ROWS),
    ]
    assert [a[2] for a in store.asked[3:]] == CLASSES  # no class named: every class's board
    board = sent(ann)[-1]
    assert board["id"] == 5 and board["boards"]["blitz"] == [{"place": 1, "name": "ann"}, {"place": 2, "name": "bea"}]


async def test_the_requests_refuse_a_guest_an_unknown_account_game_or_class_and_a_bad_limit() -> None:
    ratings = service(FakeStore())
    ann = session("ann", "user", 1)
    for who, request, code in (
        (session("zed"), m.Ratings(), ErrorCode.NO_SUCH_PLAYER),
        (ann, m.Ratings(name="nobody"), ErrorCode.NO_SUCH_PLAYER),
        (ann, m.Ratings(game="chess"), ErrorCode.UNKNOWN_GAME),
        (ann, m.RatingHistory(game="tictactoe", clock_class="lightning"), ErrorCode.BAD_FIELD),
        (ann, m.RatingHistory(game="tictactoe", clock_class="blitz", limit=MAX_ROWS + 1), ErrorCode.BAD_FIELD),
        (ann, m.Leaderboard(game="tictactoe", limit=0), ErrorCode.BAD_FIELD),
    ):
        handler = {
            m.Ratings: ratings.on_ratings, m.RatingHistory: ratings.on_history, m.Leaderboard: ratings.on_leaderboard
        }[type(request)]  # fmt: skip
        with pytest.raises(ProtocolError) as refused:
            await handler(who, request)
        assert refused.value.code == code, request
