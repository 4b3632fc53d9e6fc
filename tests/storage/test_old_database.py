"""A database written by an earlier release is served by this code: its unfinished game resumes
and plays to its end, every stored game is listed and replays with its seed verified, a person's
password and a bot's token still log in, and a ladder's standings read. (A game whose rules
changed since is listed, and refused with a code when read.)

tests/data/partida-a582e9b.db was written by commit a582e9b's server (the last release before
the core's rebuild) through real clients; tests/data/partida-a582e9b.json holds what cannot be
read from the file (the password, the tokens, the unfinished room's seat tokens and clocks).
Remake both with that commit's checkout and its own Python:

    .venv/bin/python scripts/make_old_database.py tests/data/partida-a582e9b.db

Each test serves a copy of the file, so the file itself is never changed.
"""

from __future__ import annotations

import asyncio
import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from partida.cli.records import as_stored
from partida.client import Client, ServerError
from partida.games.prompts import prompt_from_data
from partida.games.registry import default_registry
from partida.room.record import verify
from partida.server.app import Server
from tests.helpers import DATA

OLD = DATA / "partida-a582e9b.db"
FACTS: dict[str, Any] = json.loads((DATA / "partida-a582e9b.json").read_text())
# Crazy Eights' rules were corrected after a582e9b (the draw is offered only to a player who
# cannot play a card), so its stored log, with draws made holding a playable card, is one the
# rules refuse: it is listed, and reading it is a clear `no_such_game`, never an internal error.
RULES_CHANGED = {"crazyeights"}


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    """The old database, copied: the `server` fixture serves this copy."""
    copy = tmp_path / "partida.db"
    shutil.copyfile(OLD, copy)
    return f"sqlite+aiosqlite:///{copy}"


async def as_ada(connect) -> Client:  # type: ignore[no-untyped-def]
    return await connect(name=FACTS["password"]["name"], password=FACTS["password"]["password"])


def random_answers(seed: int):  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    return lambda update, prompt: prompt.random_answer(rng)


@pytest.mark.slow
async def test_the_unfinished_game_resumes_with_its_clocks_and_plays_to_its_end(server: Server, connect) -> None:
    unfinished = FACTS["unfinished"]
    code, to_move = unfinished["room"], unfinished["to_move"]
    ada, bob = await as_ada(connect), await connect(name="bob")
    players = [ada, bob]  # ada sat in seat 0 with her account, bob in seat 1 as a guest
    for seat, client in enumerate(players):
        await client.join(code, seat=seat, token=unfinished["tokens"][seat])
    update = await players[to_move].next_update(code)
    assert update["seq"] == unfinished["moves"] and update["decision"] is not None
    assert update["game_id"] == unfinished["game_id"]
    # the time the server was down is charged to nobody: each seat has what it had left
    assert update["clock"]["spec"] == unfinished["clock"]["spec"]
    left, had = update["clock"]["remaining"], unfinished["clock"]["remaining"]
    assert left[1 - to_move] == pytest.approx(had[1 - to_move], abs=0.01)
    assert had[to_move] - 30 < left[to_move] <= had[to_move] + 0.01
    answer = prompt_from_data(update["decision"]).random_answer(random.Random(1))
    await players[to_move].act(code, answer, seq=update["seq"], seat=to_move)
    finals = await asyncio.gather(*(c.play(code, random_answers(2 + i)) for i, c in enumerate(players)))
    assert finals[0]["status"] == "finished" and finals[0]["result"] == finals[1]["result"]
    record = await ada.game(unfinished["game_id"])
    assert record["status"] == "finished" and record["moves"] > unfinished["moves"]
    assert verify(default_registry().get(record["game"]), as_stored(record))["seed_verified"]


async def test_history_lists_every_stored_game_and_each_replays_with_its_seed_verified(connect) -> None:
    ada = await as_ada(connect)  # she sat in the private game; it is listed for her only
    listed = {row["game_id"]: row for row in await ada.games()}
    expected = {g["game_id"]: g for g in FACTS["games"]}
    assert set(listed) == {*expected, FACTS["unfinished"]["game_id"]}
    assert listed[FACTS["unfinished"]["game_id"]]["status"] == "playing"
    stranger = await connect(name="mallory")
    assert {row["game_id"] for row in await stranger.games()} == {
        *(i for i, g in expected.items() if g["public"]),
        FACTS["unfinished"]["game_id"],
    }
    registry = default_registry()
    for game_id, played in expected.items():
        assert listed[game_id]["game"] == played["game"] and listed[game_id]["status"] == "finished"
        if played["game"] in RULES_CHANGED:
            with pytest.raises(ServerError) as refused:
                await ada.game(game_id)
            assert refused.value.code == "no_such_game" and "cannot be replayed" in refused.value.message
            continue
        record = await ada.game(game_id, steps=True)
        assert len(record["steps"]) == record["moves"] + 1 == len(record["log"]) + 1
        checked = verify(registry.get(record["game"]), as_stored(record))
        assert checked["seed_verified"], game_id
        assert checked["result_verified"] is True, game_id
        if "result" in played:
            assert record["result"] == played["result"]


async def test_the_password_and_the_bot_tokens_still_log_in(server: Server, connect) -> None:
    ada = await as_ada(connect)
    assert ada.welcome["you"] == {"name": "ada", "kind": "user", "agent": None}
    with pytest.raises(ServerError) as refused:
        await connect(name="ada", password="not her password")
    assert refused.value.code == "auth_failed"
    for name, token in FACTS["bots"].items():
        bot = await connect(token=token, agent="random")
        assert bot.welcome["you"]["name"] == name and bot.welcome["you"]["kind"] == "bot"
    with pytest.raises(ServerError) as refused:
        await connect(token="x" * 43, agent="random")
    assert refused.value.code == "auth_failed"


async def test_the_ladder_standings_and_rating_history_read(connect) -> None:
    reader = await connect(name="carol")
    (ladder,) = [row for row in await reader.ladder_list() if row["name"] == FACTS["ladder"]]
    assert ladder["game"] == "tictactoe" and ladder["rated_games"] == 1
    standings = await reader.ladder_standings(FACTS["ladder"])
    assert sorted(row["name"] for row in standings) == ["left", "right"]
    assert all(row["games"] == 1 for row in standings)
    assert sum(row["wins"] for row in standings) + sum(row["draws"] for row in standings) // 2 == 1
    series = await reader.ladder_history(FACTS["ladder"])
    assert [s["name"] for s in series] == [row["name"] for row in standings]
    assert all([p["games"] for p in s["points"]] == [0, 1] for s in series)
