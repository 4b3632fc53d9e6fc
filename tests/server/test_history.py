"""Stored games over the wire: a player on another machine reads the history, and re-runs a
finished game on their own machine to check its seed; private games stay with their players."""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import sys
from pathlib import Path

import pytest

from partida.client import ServerError
from partida.server.app import Server
from tests.duel_positions import scramble, strings
from tests.helpers import local_states, play_to_the_end, random_decider


async def _finished_game(connect, public: bool, **alice_login: str) -> tuple[int, str]:
    alice = await connect(**(alice_login or {"name": "alice"}))
    bob = await connect(name="bob")
    created = await alice.create_room("tictactoe", seat=0, public=public)
    code = created["room"]
    await bob.join(code)
    final, _ = await asyncio.gather(alice.play(code, random_decider(1)), bob.play(code, random_decider(2)))
    return final["game_id"], code


async def test_a_finished_public_game_is_read_whole_and_its_seed_checks(server: Server, connect) -> None:
    game_id, code = await _finished_game(connect, public=True)
    reader = await connect(name="carol")
    listed = [g for g in await reader.games(player="ALICE") if g["game_id"] == game_id]
    assert listed and listed[0]["room"] == code and listed[0]["status"] == "finished"
    assert [s["name"] for s in listed[0]["seats"]] == ["alice", "bob"] and listed[0]["seats"][0]["guest"]
    assert await reader.games(player="nobody") == []
    record = await reader.game(game_id)
    assert record["result"]["winners"] is not None and len(record["log"]) == record["moves"] > 0
    assert hashlib.sha256(f"partida-seed:{record['seed']}".encode()).hexdigest() == record["seed_hash"]
    assert all(isinstance(move["text"], str) for move in record["log"])


@pytest.mark.slow
async def test_private_games_are_shown_only_to_accounts_that_sat_in_them(server: Server, connect) -> None:
    await server.store.create_user("alice", "correct horse battery")
    game_id, _ = await _finished_game(connect, public=False, name="alice", password="correct horse battery")
    stranger = await connect(name="mallory")
    assert all(g["game_id"] != game_id for g in await stranger.games())
    with pytest.raises(ServerError) as refused:
        await stranger.game(game_id)
    assert refused.value.code == "no_such_game"
    alice = await connect(name="alice", password="correct horse battery")
    mine = [g for g in await alice.games() if g["game_id"] == game_id]
    assert mine and mine[0]["room"] is None  # the invite code never travels in the history
    assert (await alice.game(game_id))["status"] == "finished"


async def test_a_live_game_is_read_as_its_spectators_see_it(server: Server, connect) -> None:
    alice, bob = await connect(name="alice"), await connect(name="bob")
    created = await alice.create_room("duel", seat=0, public=True)
    await bob.join(created["room"])
    update = await alice.next_update(created["room"])
    record = await (await connect(name="carol")).game(update["game_id"])
    assert record["status"] == "playing" and "seed" not in record and "log" not in record
    assert record["view"] == server.rooms[created["room"]].core.state.view(None)


async def test_bad_history_requests_get_codes(connect) -> None:
    reader = await connect(name="dora")
    with pytest.raises(ServerError) as refused:
        await reader.game(999)
    assert refused.value.code == "no_such_game"
    with pytest.raises(ServerError) as refused:
        await reader.games(limit=0)
    assert refused.value.code == "bad_field"


async def _cli(*args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "partida", *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    return process.returncode or 0, out.decode(), err.decode()


@pytest.mark.processes
async def test_games_and_replay_ask_a_server(server: Server, connect) -> None:
    game_id, _ = await _finished_game(connect, public=True)
    code, out, err = await _cli("games", "--server", server.url, "--json")
    assert code == 0, err
    assert any(row["id"] == game_id for row in json.loads(out))
    code, out, err = await _cli("replay", str(game_id), "--server", server.url, "--json")
    assert code == 0, err
    replayed = json.loads(out)
    assert replayed["seed_verified"] and replayed["result_verified"]


@pytest.mark.processes
async def test_reading_a_database_that_is_not_there_does_not_create_it(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.db"
    for command in (["games"], ["replay", "1"]):
        code, _, err = await _cli(*command, "--db", str(missing))
        assert code == 2 and "--server" in err and "Traceback" not in err
    assert not missing.exists()


async def test_a_duel_replay_step_by_step_shows_only_what_spectators_saw(server: Server, connect) -> None:
    from partida.games.prompts import freeze

    game_id = await play_to_the_end(connect, "duel", 2)
    record = await (await connect(name="carol")).game(game_id, steps=True)
    steps = record["steps"]
    assert len(steps) == len(record["log"]) + 1 > 10 and steps[0]["last"] is None
    assert steps[-1]["view"] == record["view"]
    rng = random.Random(3)
    for i, (state, step) in enumerate(zip(local_states(server, record), steps, strict=True)):
        assert step["view"] == state.view(None), i
        # The same step with every hidden card swapped for another reads the same: nothing hidden is in it.
        assert freeze(scramble(state, None, rng).view(None)) == freeze(step["view"]), i
        hands = {cid for p in state.players for cid, _ in p.hand}
        assert not strings(step) & hands, i
        assert "hand" not in step["view"] and "library_known" not in step["view"]
        if i:
            assert step["last"]["seat"] == record["log"][i - 1]["seat"] and step["last"]["action"] is None


async def test_a_recycle_replay_step_by_step_never_shows_a_hidden_card(server: Server, connect) -> None:
    game_id = await play_to_the_end(connect, "agram", 4)
    record = await (await connect(name="carol")).game(game_id, steps=True)
    steps = record["steps"]
    assert len(steps) == len(record["log"]) + 1 > 4
    hidden_seen = 0
    for i, (state, step) in enumerate(zip(local_states(server, record), steps, strict=True)):
        assert step["view"] == state.view(None), i
        shown = {(loc["owner"], loc["kind"], loc["name"]): loc for loc in step["view"]["locations"]}
        shown_ids = {card["id"] for loc in shown.values() for card in loc.get("cards", [])}
        for key, cards in state.locs.items():
            if cards and not state.visible(key, None):
                hidden_seen += 1
                assert "cards" not in shown[key] and shown[key]["count"] == len(cards), (i, key)
                assert not {state.oid[c] for c in cards} & shown_ids, (i, key)
    assert hidden_seen  # the hands were hidden at some step, and none of their cards was shown


async def test_a_live_game_replays_step_by_step_as_spectators_saw_it(server: Server, connect) -> None:
    alice, bob = await connect(name="alice"), await connect(name="bob")
    created = await alice.create_room("tictactoe", seat=0, public=True)
    code = created["room"]
    await bob.join(code)
    await alice.act(code, 4)
    update = await bob.next_update(code)
    while update["decision"] is None:
        update = await bob.next_update(code)
    await bob.act(code, 0)
    reader = await connect(name="carol")
    for _ in range(100):
        record = await reader.game(update["game_id"], steps=True)
        if len(record["steps"]) == 3:
            break
        await asyncio.sleep(0.02)
    assert record["status"] == "playing" and "seed" not in record
    assert [s["last"] for s in record["steps"][1:]] == [
        {"seat": 0, "action": 4, "text": None},
        {"seat": 1, "action": 0, "text": None},
    ]
    assert record["steps"][-1]["view"] == server.rooms[code].core.state.view(None)  # type: ignore[union-attr]
    assert "steps" not in await reader.game(update["game_id"])  # only when asked


@pytest.mark.processes
async def test_listings_say_who_sat_a_guest_a_person_or_a_bot(server: Server, connect, bots) -> None:
    await server.store.create_user("Uma", "correct horse battery")
    await bots("random")
    uma = await connect(name="Uma", password="correct horse battery")
    created = await uma.create_room("tictactoe", seat=0, seats=2, public=True, bots={1: "random"})
    await uma.play(created["room"], random_decider(5))
    gus = await connect(name="gus")
    created = await gus.create_room("tictactoe", seat=0, public=True, bots={1: "random"})
    await gus.play(created["room"], random_decider(6))
    listed = {g["seats"][0]["name"]: g for g in await gus.games(game="tictactoe", status="finished")}
    assert [s["kind"] for s in listed["Uma"]["seats"]] == ["user", "bot"]
    assert [s["kind"] for s in listed["gus"]["seats"]] == ["guest", "bot"]
    assert listed["gus"]["seats"][0]["guest"] and not listed["Uma"]["seats"][0]["guest"]
    code, out, err = await _cli("games", "--server", server.url, "--json")
    assert code == 0, err
    rows = {row["seats"][0]: row for row in json.loads(out)}
    assert rows["gus"]["kinds"] == ["guest", "bot"] and rows["Uma"]["kinds"] == ["user", "bot"]
