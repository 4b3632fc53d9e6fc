"""Stored games over the wire (`server/services/history.py`, `server/history.py`) from a
stand-in store: who may see a game, what a listing line and a record hold for a finished game
and a live one, and what is refused with which code."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest

from partida.games.registry import default_registry
from partida.protocol import ErrorCode, ProtocolError
from partida.protocol import messages as m
from partida.room.seed import seed_hash
from partida.server.services.history import HistoryService
from partida.storage.store import StoredGame
from tests.fakes import sent, session

GAMES = default_registry()
SEED = 11


def played(moves: int | None = None) -> list[tuple[int, Any]]:
    state = GAMES.get("tictactoe").create({}, seed=SEED, seats=2)
    rng = random.Random(SEED)
    actions: list[tuple[int, Any]] = []
    while not state.is_over() and (moves is None or len(actions) < moves):
        decision = state.pending()[0]
        action = decision.prompt.random_answer(rng)
        state.apply(decision.seat, action)
        actions.append((decision.seat, action))
    return actions


def stored(game_id: int, *, public: bool = True, status: str = "finished", game: str = "tictactoe") -> StoredGame:
    actions = played() if status == "finished" else played(2)
    return StoredGame(
        game_id, game, {}, 2, SEED, seed_hash(SEED), "room1", public, status,
        {"winner": 0} if status == "finished" else None,
        datetime(2026, 1, 1, tzinfo=UTC), None, None,
        seat_list=[(0, 1, "ann"), (1, None, "zed")], seat_kinds={0: "user"}, actions=actions,
        action_count=len(actions),
    )  # fmt: skip


class FakeChat:
    """No game here has chat; the channels each record asked for are kept."""

    def __init__(self) -> None:
        self.asked: list[tuple[Any, ...]] = []

    async def history(self, place: tuple[str, int], channels: tuple[str, ...]) -> list[Any]:
        self.asked.append((place, channels))
        return []


class FakeStore:
    def __init__(self, *games: StoredGame) -> None:
        self.games = {g.id: g for g in games}
        self.listed: list[tuple[Any, ...]] = []
        self.chat = FakeChat()

    async def list_games(self, limit: int, game: Any, status: Any, **where: Any) -> list[StoredGame]:
        self.listed.append((limit, game, status, where))
        return list(self.games.values())[:limit]

    async def load_game(self, game_id: int) -> StoredGame | None:
        return self.games.get(game_id)


def service(*games: StoredGame, live: Any = None) -> tuple[HistoryService, FakeStore]:
    store = FakeStore(*games)
    return HistoryService(store, GAMES, lambda game_id: live), store  # type: ignore[arg-type]


async def record_for(history: HistoryService, who: Any, game_id: int, steps: bool = False) -> dict[str, Any]:
    await history.on_game(who, m.GameRecord(game_id, steps=steps))
    return sent(who)[-1]["game"]


async def test_a_listing_asks_the_store_for_what_the_asker_may_see_and_hides_private_codes() -> None:
    history, store = service(stored(1), stored(2, public=False))
    ann = session("ann", kind="user", account_id=1)
    await history.on_games(ann, m.Games(player="zed", limit=10, id=4))
    assert store.listed == [(10, None, None, {"player": "zed", "only_visible": True, "account_id": 1})]
    reply = sent(ann)[-1]
    assert reply["type"] == "stored_games" and reply["id"] == 4
    first, second = reply["games"]
    assert first["room"] == "room1" and second["room"] is None  # a private room's code is its invite
    assert first["seats"] == [
        {"seat": 0, "name": "ann", "guest": False, "kind": "user"},
        {"seat": 1, "name": "zed", "guest": True, "kind": "guest"},
    ]
    for limit in (0, 201):
        with pytest.raises(ProtocolError) as refused:
            await history.on_games(ann, m.Games(limit=limit))
        assert refused.value.code == ErrorCode.BAD_FIELD


async def test_a_private_game_is_shown_only_to_accounts_that_sat_in_it() -> None:
    history, _ = service(stored(2, public=False))
    assert (await record_for(history, session("ann", kind="user", account_id=1), 2))["game_id"] == 2
    for stranger in (session("bob", kind="user", account_id=9), session("zed")):  # zed's guest seat names no account
        with pytest.raises(ProtocolError) as refused:
            await record_for(history, stranger, 2)
        assert refused.value.code == ErrorCode.NO_SUCH_GAME
    with pytest.raises(ProtocolError) as refused:
        await record_for(history, session("ann"), 404)
    assert refused.value.code == ErrorCode.NO_SUCH_GAME


async def test_a_finished_game_is_sent_whole_with_its_seed() -> None:
    game = stored(1)
    history, _ = service(game)
    record = await record_for(history, session("zed"), 1, steps=True)
    assert record["seed"] == str(SEED) and record["seed_hash"] == seed_hash(SEED)
    assert len(record["log"]) == len(game.actions) == record["moves"]
    assert record["view"] is not None
    assert len(record["steps"]) == len(game.actions) + 1  # before the first move and after each


async def test_a_live_game_is_sent_as_its_spectators_see_it() -> None:
    game = stored(3, status="playing")
    state = GAMES.get("tictactoe").replay({}, SEED, 2, game.actions)
    room = SimpleNamespace(core=SimpleNamespace(state=state, actions=game.actions))  # the room's core: what it reads
    history, _ = service(game, live=room)
    record = await record_for(history, session("zed"), 3)
    assert "seed" not in record and record["view"] == state.view(None)
    assert record["log"] == [{"seat": seat, "action": action} for seat, action in game.actions]
    gone, _ = service(game, live=None)  # stored as playing, but no room here plays it
    assert (await record_for(gone, session("zed"), 3))["view"] is None


async def test_a_game_no_longer_registered_or_its_log_refused_by_its_rules() -> None:
    history, _ = service(stored(5, game="no-such-game"))
    with pytest.raises(ProtocolError) as refused:
        await record_for(history, session("zed"), 5)
    assert refused.value.code == ErrorCode.UNKNOWN_GAME
    broken = stored(6)
    broken.actions = [*broken.actions[:1], broken.actions[0]]  # the same square twice
    history, _ = service(broken)
    with pytest.raises(ProtocolError) as refused:
        await record_for(history, session("zed"), 6)
    assert refused.value.code == ErrorCode.NO_SUCH_GAME
