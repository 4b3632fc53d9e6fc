"""Duel through a real server: two clients play a game to the end, and bots play it."""

from __future__ import annotations

from partida.cli.play import play_bot_game
from tests.test_server_play import play_two


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
