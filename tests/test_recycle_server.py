"""A RECYCLE game played to the end through a real server by two clients."""

from __future__ import annotations

from tests.test_server_play import play_two


async def test_two_clients_play_crazy_eights_through_the_server(connect, server) -> None:
    assert "crazyeights" in server.registry
    alice, bob = await connect(name="alice"), await connect(name="bob")
    final_a, final_b = await play_two(alice, bob, "crazyeights")
    assert final_a["status"] == final_b["status"] == "finished"
    assert final_a["result"] == final_b["result"]
    assert len(final_a["result"]["scores"]) == 2
