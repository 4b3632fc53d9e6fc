"""The hosted bots' rows on both backends: a submission creates the bot owned by its submitter
and numbers its versions, only the owner adds to it, verdicts in a row pause it and a clean game
starts the count again, and a seat keeps the version that played it."""

from __future__ import annotations

import pytest

from partida.storage.hosted import HostedStore, NoSuchBot, NoSuchVersion, NotOwner
from partida.storage.store import Store
from tests.fixtures.storage import new_game

pytestmark = pytest.mark.slow  # password hashing


def version(n: int) -> dict[str, object]:
    return {
        "sha256": f"{n:064x}",
        "run": "python3 bot.py",
        "games": ["tictactoe"],
        "packed_bytes": 10,
        "unpacked_bytes": 20,
        "files": 1,
    }


async def test_versions_owners_pauses_and_seats(store: Store) -> None:
    ada = await store.create_user("ada", "ada lovelace")
    bo = await store.create_user("bo", "bo diddley")
    hosted = HostedStore(store.db)
    bot, number = await hosted.add_version(ada.id, "adabot", **version(1))  # type: ignore[arg-type]
    assert number == 1 and bot.owner == "ada" and bot.status == "active" and bot.active_version == 1
    account = await store.get_account_by_name("adabot")
    assert account is not None and account.kind == "bot" and account.owner_id == ada.id
    _, number = await hosted.add_version(ada.id, "adabot", **version(2))  # type: ignore[arg-type]
    assert number == 2
    with pytest.raises(NotOwner):
        await hosted.add_version(bo.id, "adabot", **version(3))  # type: ignore[arg-type]
    with pytest.raises(NotOwner):
        await hosted.add_version(bo.id, "ADABOT", **version(3))  # type: ignore[arg-type]  # a look-alike
    with pytest.raises(NotOwner):
        await hosted.add_version(bo.id, "ada", **version(3))  # type: ignore[arg-type]  # a person
    with pytest.raises(NoSuchBot):
        await hosted.owned(bo.id, "nobody")
    with pytest.raises(NoSuchVersion):
        await hosted.activate(ada.id, "adabot", 7)
    assert [b.name for b in await hosted.bots_of(ada.id)] == ["adabot"] and await hosted.bots_of(bo.id) == []

    assert await hosted.record_failure(bot.account_id, 2, None, "crashed", "exit 1", ["a"], 3) is None
    await hosted.game_went_well(bot.account_id, 2, None, ["said something"])
    assert await hosted.record_failure(bot.account_id, 2, None, "crashed", "exit 1", ["b"], 3) is None
    assert await hosted.record_failure(bot.account_id, 2, None, "bad_output", "not JSON", ["c"], 3) is None
    reason = await hosted.record_failure(bot.account_id, 2, 999, "time_exceeded", "5 s", ["d"], 3)
    assert reason is not None and "3 failed games in a row" in reason and "time_exceeded" in reason
    paused = await hosted.owned(ada.id, "adabot")
    assert paused.status == "paused" and paused.reason == reason
    assert [b.name for b in await hosted.playing()] == []
    logs = await hosted.logs(bot.account_id)
    assert [entry.verdict for entry in logs] == ["time_exceeded", "bad_output", "crashed", "finished", "crashed"]
    assert logs[0].game_id is None and logs[0].stderr_tail == ["d"]  # a game the database does not hold
    back = await hosted.activate(ada.id, "adabot", 1)
    assert back.status == "active" and back.reason is None and back.failures_in_row == 0
    assert (await hosted.withdraw(ada.id, "adabot")).status == "withdrawn"

    game_id = await new_game(store)
    await store.set_seat(game_id, 0, account.id, "adabot")
    await store.set_seat(game_id, 1, None, "kim")
    await hosted.mark_version(game_id, 0, 2)
    [stored] = await store.list_games(1)
    assert stored.seat_versions == {0: 2}
    [played] = await hosted.recent_games(bot.account_id)
    assert played["game_id"] == game_id and played["seat"] == 0 and played["version"] == 2
