"""`server/connections.py`: who is connected here, as challenges, the bot directory and the
life cycle ask it (accounts by name in any case, bots, closing connections left out)."""

from __future__ import annotations

from partida.server.connections import Connections
from tests.fakes import session


def connected(*sessions):  # type: ignore[no-untyped-def]
    connections = Connections()
    for s in sessions:
        connections.add(s)
    return connections


def test_an_account_is_found_by_name_in_any_case_and_a_guest_is_no_account() -> None:
    ann = session("Ann", kind="user", account_id=1)
    ann_again = session("Ann", kind="user", account_id=1)
    guest = session("bob")
    connections = connected(ann, ann_again, guest)
    assert set(connections.of_account("  aNN ")) == {ann, ann_again}
    assert connections.of_account("bob") == []
    assert set(connections.of_account_id(1)) == {ann, ann_again}
    assert connections.account_ids() == {1}


def test_closing_connections_are_not_answered_for_but_still_hold_their_account() -> None:
    ann = session("ann", kind="user", account_id=1)
    bot = session("deep", kind="bot", account_id=2)
    guest = session("guest")
    connections = connected(ann, bot, guest)
    assert connections.bots() == [bot]
    ann.close_soon()
    bot.close_soon()
    assert connections.of_account("ann") == [] and connections.of_account_id(1) == []
    assert connections.bots() == [] and connections.account_ids() == set()
    assert connections.holds_account(1)  # its seats are not given up until it is gone
    connections.discard(ann)
    assert not connections.holds_account(1)
    assert set(connections) == {bot, guest}
