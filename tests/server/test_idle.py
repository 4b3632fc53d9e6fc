"""The idle rule of `server/idle.py` on timers moved by hand: who is closed for saying nothing,
and who may stay quiet (a seat, a watched room, a bot waiting for games)."""

from __future__ import annotations

from partida.server.idle import IdleWatch
from partida.server.session import Session
from tests.fakes import FakeLink, ManualLoop, session

TIMEOUT = 600.0


def watched(who: Session) -> tuple[IdleWatch, ManualLoop]:
    loop = ManualLoop()
    return IdleWatch(who, TIMEOUT, loop), loop  # type: ignore[arg-type]


def closed_with(who: Session) -> tuple[int, str] | None:
    link = who.websocket
    assert isinstance(link, FakeLink)
    return link.closed_with


def test_a_quiet_guest_in_no_room_is_closed_after_the_timeout() -> None:
    guest = session("ann")
    _, loop = watched(guest)
    loop.advance(TIMEOUT - 1)
    assert not guest.closed
    loop.advance(1)
    assert guest.closed
    assert closed_with(guest) == (1001, "idle for too long")


def test_each_message_heard_starts_the_quiet_period_again() -> None:
    guest = session("ann")
    watch, loop = watched(guest)
    loop.advance(TIMEOUT - 10)
    watch.touch()
    loop.advance(TIMEOUT - 10)  # past the first deadline, not a whole period since it spoke
    assert not guest.closed
    loop.advance(10)
    assert guest.closed


def test_a_connection_in_a_room_may_stay_quiet_and_is_closed_a_period_after_it_leaves() -> None:
    player = session("ann")
    room = object()
    player.rooms.add(room)  # type: ignore[arg-type]
    _, loop = watched(player)
    loop.advance(5 * TIMEOUT)
    assert not player.closed
    player.rooms.discard(room)  # type: ignore[arg-type]
    loop.advance(TIMEOUT)
    assert player.closed


def test_bots_waiting_for_games_stay() -> None:
    bot_account = session("deep", kind="bot", account_id=7)
    pool_agent = session("random-1", agent="random")
    _, loop = watched(bot_account)
    _, other_loop = watched(pool_agent)
    loop.advance(10 * TIMEOUT)
    other_loop.advance(10 * TIMEOUT)
    assert not bot_account.closed and not pool_agent.closed
    assert loop.pending() == 1  # still looked at once a period


def test_a_cancelled_watch_closes_nothing_and_a_closed_connection_is_looked_at_no_more() -> None:
    guest = session("ann")
    watch, loop = watched(guest)
    watch.cancel()
    loop.advance(2 * TIMEOUT)
    assert not guest.closed

    gone = session("bob")
    _, loop = watched(gone)
    gone.close_soon(1000, "bye")
    loop.advance(TIMEOUT)
    assert closed_with(gone) == (1000, "bye")
    assert loop.pending() == 0
