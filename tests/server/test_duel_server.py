"""Duel through a real server: two clients play a game to the end, and bots play it."""

from __future__ import annotations

import asyncio

from partida.cli.play import play_bot_game
from tests.helpers import play_two, random_decider


async def test_two_clients_play_duel_to_the_end(connect, server) -> None:  # type: ignore[no-untyped-def]
    alice, bob = await connect(name="alice"), await connect(name="bob")
    final, other = await play_two(alice, bob, "duel", {"deck0": "red", "deck1": "white"})
    assert final["status"] == "finished" and other["status"] == "finished"
    assert sorted(final["result"]["ranks"]) in ([1, 2], [1, 1])


async def test_bots_play_duel_through_the_server(connect, server, bots) -> None:  # type: ignore[no-untyped-def]
    await bots("duel-search", "random")
    watcher = await connect(name="watcher")
    record = await play_bot_game(watcher, "duel", {}, ["duel-search", "random"])
    assert sorted(record["result"]["ranks"]) in ([1, 2], [1, 1])


async def test_each_update_tells_what_the_last_answer_did_without_its_hidden_ids(connect, server) -> None:  # type: ignore[no-untyped-def]
    alice, bob = await connect(name="alice"), await connect(name="bob")
    created = await alice.create_room("duel", {"deck0": "white", "deck1": "red"}, seat=0, public=False)
    code = created["room"]
    await bob.join(code)
    seen: list[dict] = []
    await asyncio.gather(alice.play(code, random_decider(1), on_update=seen.append), bob.play(code, random_decider(2)))
    lasts = [u["last"] for u in seen if u["seq"] > 0]
    assert lasts and all(last["action"] is None and last["text"] for last in lasts)
    texts = " | ".join(last["text"] for last in lasts)
    assert "keeps" in texts and "plays Plains" in texts and "plays Mountain" in texts and "passes" in texts
