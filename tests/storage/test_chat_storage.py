"""Chat's rows on SQLite and PostgreSQL (`storage/chat.py`): a line written through the group
writer comes back with its id, in order, the newest of each channel; a removed line is out of
every history but listed for the operator and found by a sweep; silences run until their time."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from partida.storage.models import utcnow
from partida.storage.store import Store
from tests.fixtures.storage import new_game


async def test_lines_are_stored_in_order_and_read_back_by_channel(store: Store) -> None:
    game_id = await new_game(store)
    other = await new_game(store)
    ann = (await store.create_user("ann", "ann horse battery")).id
    chat = store.chat
    # written together, as a busy server's lines are: they share the writer's batches
    lines = await asyncio.gather(
        *(chat.add(("game", game_id), "players", ann, "ann", "user", 0, f"line {n}") for n in range(6))
    )
    watcher = await chat.add(("game", game_id), "spectators", None, "sam", "guest", None, "from the stands")
    await chat.add(("game", other), "players", None, "zed", "guest", 1, "elsewhere")
    assert len({line.id for line in lines}) == 6 and watcher.id > max(line.id for line in lines)
    both = await chat.history(("game", game_id), ("players", "spectators"))
    assert [line.text for line in both] == [*(f"line {n}" for n in range(6)), "from the stands"]
    assert [line.text for line in await chat.history(("game", game_id), ("players",), limit=2)] == ["line 4", "line 5"]
    assert both[0].to_data()["name"] == "ann" and both[-1].to_data()["seat"] is None

    since = utcnow() - timedelta(seconds=1)
    removed = await chat.remove(lines[2].id)
    assert removed is not None and removed.removed and removed.text == "line 2"
    assert await chat.remove(lines[2].id) is not None  # again: still that line, nothing changes
    assert await chat.remove(10**6) is None
    assert "line 2" not in [line.text for line in await chat.history(("game", game_id), ("players",))]
    assert [line.id for line in await chat.removed_since(since)] == [lines[2].id]
    listed = await chat.by_account(ann)
    assert [line.removed for line in listed] == [False, False, True, False, False, False]


async def test_silences_run_until_their_time(store: Store) -> None:
    ann = (await store.create_user("ann", "ann horse battery")).id
    bea = (await store.create_user("bea", "bea horse battery")).id
    chat = store.chat
    await chat.silence(ann, None)
    await chat.silence(bea, utcnow() + timedelta(hours=1))
    assert set(await chat.silenced()) == {ann, bea}
    await chat.silence(bea, utcnow() - timedelta(seconds=1))  # replaced: already over
    assert await chat.silenced() == {ann: None}
    assert [name for name, _ in await chat.silences()] == ["ann", "bea"]
    assert await chat.unsilence(ann) and not await chat.unsilence(ann)
    assert await chat.tournament_id("no such cup") is None
