"""The clock and endings rules as plain function calls: time is a number passed in."""

from __future__ import annotations

import pytest

from partida.bots.runner import move_budget
from partida.protocol import ProtocolError
from partida.room.clocks import BadClock, Clock, ClockSpec
from partida.room.endings import Endings, decisive, rotated, with_dropouts


def test_fischer_charges_the_seat_that_acted_and_adds_the_increment() -> None:
    clock = Clock.new(ClockSpec.parse({"initial": 10, "increment": 2}), 2)
    clock.sync([0], now=100.0)
    assert clock.deadline(0) == 110.0 and clock.deadline(1) is None
    clock.sync([1], now=103.0, acted=0)  # seat 0 thought 3 s
    assert clock.remaining == [9.0, 10.0]
    assert clock.left(1, now=104.5) == 8.5
    assert clock.next_deadline() == 113.0
    assert clock.expired(112.9) == [] and clock.expired(113.0) == [1]


def test_per_move_gives_every_decision_a_fresh_budget() -> None:
    clock = Clock.new(ClockSpec.parse({"per_move": 5}), 2)
    clock.sync([0], now=0.0)
    clock.sync([1], now=4.0, acted=0)
    assert clock.remaining == [5.0, 5.0] and clock.deadline(1) == 9.0


def test_simultaneous_decisions_run_together_and_stop_alone() -> None:
    clock = Clock.new(ClockSpec.parse({"initial": 10}), 3)
    clock.sync([0, 1, 2], now=0.0)
    clock.sync([1, 2], now=2.0, acted=0)  # 1 and 2 keep running from 0.0
    assert clock.deadline(1) == 10.0 and clock.deadline(0) is None
    assert clock.snapshot(now=4.0) == [8.0, 6.0, 6.0]


def test_a_resumed_clock_starts_from_its_snapshot() -> None:
    spec = ClockSpec.parse({"initial": 60, "increment": 1})
    clock = Clock.new(spec, 2, remaining=[12.5, 40.0])
    clock.sync([0], now=5000.0)  # however long the server was down
    assert clock.left(0, now=5000.0) == 12.5


@pytest.mark.parametrize(
    "data",
    [
        {"initial": -1},
        {"initial": 0, "increment": 2},
        {"initial": 90000},
        {"per_move": 0},
        {"per_move": -3},
        {"initial": 10, "increment": -1},
        {"initial": 10, "per_move": 5},
        {"increment": 3},
        {"initial": "ten"},
        {"initial": True},
        {"initial": float("nan")},
        {"initial": 10, "speed": 3},
        {"initial": 10, "timeouts": 0},
        "300+2",
    ],
)
def test_bad_clocks_are_refused(data) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(BadClock):
        ClockSpec.parse(data)


def test_clock_text_forms() -> None:
    assert ClockSpec.from_text("300+2") == ClockSpec(initial=300.0, increment=2.0)
    assert ClockSpec.from_text("move:5") == ClockSpec(per_move=5.0)
    assert ClockSpec.from_text("0.5") == ClockSpec(initial=0.5)
    for bad in ("fast", "-5+1", "move:", "0+1"):
        with pytest.raises(BadClock):
            ClockSpec.from_text(bad)


def test_a_negative_increment_is_told_what_an_increment_may_be() -> None:
    """`--clock 300+-2` was told the increment "must be more than 0", yet 300+0 is a clock."""
    with pytest.raises(BadClock, match="'increment' must be 0 seconds or more, not -2"):
        ClockSpec.from_text("300+-2")
    assert ClockSpec.from_text("300+0") == ClockSpec(initial=300.0)


def test_results_other_than_the_rules() -> None:
    assert decisive(2, [0], "time") == {"scores": [0.0, 1.0], "ranks": [2, 1], "winners": [1], "reason": "time"}
    assert decisive(2, [0, 1], "abandoned")["ranks"] == [1, 1]  # everyone away: a draw
    ranked = with_dropouts({"scores": [3, 9, 5, 1], "ranks": [3, 1, 2, 4], "winners": [1]}, [1, 3])
    assert ranked["ranks"] == [2, 4, 1, 3] and ranked["winners"] == [2]


def test_resign_in_three_seats_drops_out_until_one_is_left() -> None:
    endings = Endings(3)
    assert endings.resign(0) is None and endings.auto == {0}
    final = endings.resign(2)
    assert final is not None and final["winners"] == [1] and final["ranks"] == [3, 1, 2]
    with pytest.raises(ProtocolError) as exc:
        endings.resign(2)
    assert exc.value.code == "already_resigned"


def test_draw_offers_lapse_when_the_opponent_moves() -> None:
    endings = Endings(2)
    assert endings.offer_draw(0) is False
    endings.on_action(0)  # the offerer's own move keeps it
    assert endings.draw_offer == 0
    endings.on_action(1)
    assert endings.draw_offer is None
    with pytest.raises(ProtocolError) as exc:
        endings.accept_draw(1)
    assert exc.value.code == "no_draw_offer"
    endings.offer_draw(1)
    assert endings.offer_draw(0) is True  # two offers meet: agreed
    with pytest.raises(ProtocolError) as exc:
        Endings(3).offer_draw(0)
    assert exc.value.code == "draw_unavailable"


def test_abort_until_every_seat_has_moved() -> None:
    endings = Endings(2)
    endings.check_abort([0])
    with pytest.raises(ProtocolError) as exc:
        endings.check_abort([0, 1, 0])
    assert exc.value.code == "abort_too_late"


def test_timeouts_default_then_take_over() -> None:
    endings = Endings(3)
    for _ in range(2):
        assert endings.timed_out(1) == "default"
        assert not endings.take_over_if_due(1, 3)
    endings.timed_out(1)
    assert endings.take_over_if_due(1, 3) and endings.auto == {1}
    assert Endings(2).timed_out(0) == "lose"


def test_abandonment_after_the_grace_period() -> None:
    endings = Endings(2, abandon_after=10)
    endings.leave(1, now=100.0)
    assert endings.next_abandon() == 110.0
    assert endings.abandoned(109.0, moves=5) is None
    assert endings.abandoned(110.0, moves=5)["winners"] == [0]
    assert endings.abandoned(110.0, moves=1)["reason"] == "aborted"
    endings.back(1)
    assert endings.next_abandon() is None


def test_rematch_rotation_and_the_bot_budget() -> None:
    assert rotated(["a", "b"]) == ["b", "a"]
    assert rotated(["a", "b", "c"]) == ["c", "a", "b"]
    assert move_budget(None, 0) is None
    per_move = {"spec": {"per_move": 1.0}, "remaining": [1.0, 1.0]}
    assert move_budget(per_move, 1) == 0.5
    fischer = {"spec": {"initial": 60, "increment": 0}, "remaining": [3.0, 60.0]}
    assert move_budget(fischer, 0) == pytest.approx(0.1) and move_budget(fischer, 1) == pytest.approx(2.0)
