"""Takebacks with plain values: the room core's rule (who may ask, what is taken back, when an
offer lapses, where it is refused), the log entry that keeps the move and its takeback, and a
record with takebacks re-run and verified from its seed."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from partida.games.base import IllegalAction
from partida.games.registry import default_registry
from partida.protocol import ErrorCode, ProtocolError
from partida.room import record, takebacks
from partida.room.clocks import ClockSpec
from partida.room.core import Push, RoomCore, Seat, TakeBack
from partida.room.endings import Endings
from partida.room.seed import seed_hash
from partida.room.terms import RoomTerms

START = default_registry().get("othello").create({}, seed=5).view(None)["board"]


@contextlib.contextmanager
def refused(code: ErrorCode) -> Iterator[None]:
    with pytest.raises(ProtocolError) as info:
        yield
    assert info.value.code == code, info.value


def started(
    name: str = "othello", clock: dict[str, Any] | None = None, kind: str = "user", **terms: Any
) -> RoomCore[int]:
    """Two people (holders 0 and 1) in a casual room that allows takebacks, unless `terms` say
    otherwise; the game begun at time 0."""
    game = default_registry().get(name)
    options = {"takebacks": True, **terms}
    core: RoomCore[int] = RoomCore(RoomTerms(game, {}, 2, clock=ClockSpec.parse(clock), **options), 5, seed_hash(5))
    for i in range(2):
        agent = "random" if kind == "bot" and i == 1 else None
        core.sit(i, Seat(f"p{i}", "bot" if agent else "user", 100 + i, agent, i, f"token-{i}"))
    core.stored_as(9)
    core.begin(core.new_state(by_owner=True))
    core.sync_clock(None, 0.0)
    return core


def play(core: RoomCore[int], square: str, now: float = 0.0) -> None:
    seat = core.decisions()[0].seat
    core.commit(core.play(seat, square, now), now)


def take_back(core: RoomCore[int], effects: list[Any], now: float = 0.0) -> None:
    """Carry out a `TakeBack` effect as the driver does: the entry written, then committed."""
    (effect,) = effects
    assert isinstance(effect, TakeBack)
    core.commit_takeback(core.take_back(effect.by, now))


def test_the_asker_gets_its_move_back_with_the_reply_after_it() -> None:
    core = started()
    play(core, "f5")
    play(core, "d6")
    assert core.offer_takeback(0) == [Push()]
    assert core.endings.takeback_offer == 0
    take_back(core, core.accept_takeback(1))
    assert core.state.view(None)["board"] == START
    assert core.decisions()[0].seat == 0  # black plays its move again
    assert core.actions == [(0, "f5"), (1, "d6"), (-1, {"takeback": 2, "by": 0})]
    assert core.last == {"seat": 0, "action": None, "text": "takes back 2 moves", "takeback": 2, "undone": [1, 2]}
    assert core.endings.takeback_offer is None
    play(core, "c4")
    assert takebacks.line(core.actions) == [(0, "c4")]


def test_before_the_reply_only_the_askers_move_goes() -> None:
    core = started()
    play(core, "f5")
    play(core, "d6")
    play(core, "c3")
    core.offer_takeback(1)  # white asks while black is to move after c3: d6 and c3 go
    take_back(core, core.accept_takeback(0))
    assert takebacks.line(core.actions) == [(0, "f5")]
    assert core.decisions()[0].seat == 1
    core.offer_takeback(0)
    take_back(core, core.accept_takeback(1))
    assert takebacks.line(core.actions) == [] and core.state.view(None)["board"] == START


def test_a_game_holds_at_most_its_takebacks() -> None:
    """One person in both seats could take back for ever, and every takeback makes a replay
    re-run the moves before it: a game holds MAX_PER_GAME, and the replay of one that has them
    all still verifies."""
    core = started()
    for _ in range(takebacks.MAX_PER_GAME):
        play(core, "f5")
        core.offer_takeback(0)
        take_back(core, core.accept_takeback(1))
    play(core, "f5")
    with refused(ErrorCode.TOO_MANY_TAKEBACKS):
        core.offer_takeback(0)
    assert takebacks.taken(core.actions) == takebacks.MAX_PER_GAME
    assert takebacks.line(core.actions) == [(0, "f5")]


def test_an_offer_lapses_when_a_move_is_made_and_a_decline_waits_for_one() -> None:
    core = started()
    play(core, "f5")
    core.offer_takeback(0)
    play(core, "d6")  # white moves instead of answering
    assert core.endings.takeback_offer is None
    with refused(ErrorCode.NO_TAKEBACK_OFFER):
        core.accept_takeback(1)
    core.offer_takeback(0)
    with refused(ErrorCode.NO_TAKEBACK_OFFER):
        core.accept_takeback(0)  # nobody accepts their own offer
    assert core.decline_takeback(1) == [Push()]
    with refused(ErrorCode.TAKEBACK_WAIT):
        core.offer_takeback(0)  # not again before a move
    play(core, "c3")
    assert core.offer_takeback(0) == [Push()]


def test_two_offers_meet_and_the_first_is_carried_out() -> None:
    core = started()
    play(core, "f5")
    play(core, "d6")
    core.offer_takeback(1)
    effects = core.offer_takeback(0)
    assert effects == [TakeBack(1)]
    take_back(core, effects)
    assert takebacks.line(core.actions) == [(0, "f5")]


def test_nothing_to_take_back_before_the_askers_first_move() -> None:
    core = started()
    with refused(ErrorCode.NOTHING_TO_TAKE_BACK):
        core.offer_takeback(0)
    play(core, "f5")
    with refused(ErrorCode.NOTHING_TO_TAKE_BACK):
        core.offer_takeback(1)
    assert core.endings.takeback_offer is None


@pytest.mark.parametrize(
    ("name", "terms", "kind"),
    [
        ("othello", {"rated": True}, "user"),  # rated
        ("othello", {"takebacks": False}, "user"),  # a tournament's or a ladder's table
        ("othello", {}, "bot"),  # against a bot
        ("duel", {}, "user"),  # hidden cards and a shuffled library
    ],
)
def test_takebacks_are_refused_where_they_do_not_belong(name: str, terms: dict[str, Any], kind: str) -> None:
    core = started(name, {"initial": 60, "increment": 0} if terms.get("rated") else None, kind, **terms)
    decision = core.decisions()[0]
    core.commit(core.play(decision.seat, decision.prompt.random_answer(random.Random(1)), 0.0), 0.0)
    for seat in range(2):
        with refused(ErrorCode.TAKEBACK_UNAVAILABLE):
            core.offer_takeback(seat)
    assert core.endings.takeback_offer is None
    assert not core.takebacks_allowed()


def test_the_hidden_and_chance_games_do_not_declare_takebacks() -> None:
    allowed = {g.name for g in default_registry().games() if g.takebacks}
    assert allowed == {"othello", "tictactoe"}
    assert all(g.perfect_information for g in default_registry().games() if g.takebacks)


def test_the_clocks_give_back_only_the_turn_under_way() -> None:
    core = started(clock={"initial": 60, "increment": 2})
    play(core, "f5", now=10.0)  # black spent 10 s: 52 left with its increment
    play(core, "d6", now=30.0)  # white spent 20 s: 42 left
    core.offer_takeback(0)
    take_back(core, core.accept_takeback(1), now=35.0)  # asked and taken while black was to move
    assert core.clock.snapshot(35.0) == [52.0, 42.0]  # black's 5 s of this turn back; nothing else
    assert core.clock.running == {0: 35.0}  # black to move again, from now
    play(core, "c4", now=36.0)
    core.offer_takeback(0)
    take_back(core, core.accept_takeback(1), now=50.0)  # white was thinking for 14 s: given back
    assert core.clock.snapshot(50.0) == [53.0, 42.0] and core.clock.running == {0: 50.0}


def test_the_rule_survives_a_restart() -> None:
    core = started()
    data = core.endings.to_data()
    assert data["takebacks"] is True
    assert Endings.from_data(2, data, 300.0).takebacks is True
    assert "takebacks" not in Endings(2).to_data()  # an old row reads as no takebacks
    play(core, "f5")
    play(core, "d6")
    core.offer_takeback(0)
    take_back(core, core.accept_takeback(1))
    stored = SimpleNamespace(
        id=9,
        options={},
        seats=2,
        seed=5,
        seed_hash=seed_hash(5),
        public=True,
        rated=False,
        clock=None,
        endings=data,
        clock_state=None,
        seat_list=[(0, 100, "p0"), (1, 101, "p1")],
        seat_kinds={0: "user", 1: "user"},
        seat_tokens={0: "token-0", 1: "token-1"},
        actions=list(core.actions),
    )
    back: RoomCore[int] = RoomCore.from_stored(default_registry().get("othello"), stored, 300.0)
    assert back.state.view(None) == core.state.view(None)
    assert back.last == core.last and back.takebacks_allowed()


def finished_with_takebacks() -> SimpleNamespace:
    """A whole Othello game where black took back its first move and later white took back two."""
    core = started()
    play(core, "f5")
    core.offer_takeback(0)
    take_back(core, core.accept_takeback(1))
    rng = random.Random(3)
    while not core.state.is_over():
        decision = core.decisions()[0]
        core.commit(core.play(decision.seat, decision.prompt.random_answer(rng), 0.0), 0.0)
        if core.seq == 12:
            core.offer_takeback(1)
            take_back(core, core.accept_takeback(0))
    return SimpleNamespace(
        id=9,
        game="othello",
        options={},
        seats=2,
        seed=5,
        seed_hash=seed_hash(5),
        status="finished",
        result=core.result,
        actions=list(core.actions),
    )


def test_a_record_with_takebacks_verifies_from_its_seed() -> None:
    game = default_registry().get("othello")
    stored = finished_with_takebacks()
    data = record.verify(game, stored)
    assert data["seed_verified"] is True and data["result_verified"] is True
    moves = data["moves"]
    assert len(moves) == len(stored.actions)  # every entry told, the takebacks in their place
    assert moves[0]["taken_back"] is True and moves[1]["text"] == "takes back a move" and moves[1]["by"] == 0
    told_takebacks = [m for m in moves if m["seat"] == -1]
    assert len(told_takebacks) == 2
    standing = takebacks.line(stored.actions)
    assert sum(1 for m in moves if m["seat"] != -1 and not m.get("taken_back")) == len(standing)
    assert data["transcript"] == game.record(game.replay({}, 5, 2, standing))


def test_steps_show_the_position_a_takeback_went_back_to() -> None:
    game = default_registry().get("othello")
    stored = finished_with_takebacks()
    steps = record.steps(game, {}, 5, 2, stored.actions)
    assert len(steps) == len(stored.actions) + 1
    assert steps[2]["view"] == steps[0]["view"]  # f5, then its takeback: the start again
    assert steps[2]["last"]["takeback"] == 1 and steps[2]["last"]["undone"] == [1]
    at = next(i for i, (seat, _) in enumerate(stored.actions) if seat == -1 and i > 1)
    assert steps[at + 1]["view"] == steps[at - 1]["view"]  # two moves back


def test_a_forged_takeback_does_not_replay() -> None:
    game = default_registry().get("othello")
    stored = finished_with_takebacks()
    stored.actions = [(0, "f5"), (-1, {"takeback": 2, "by": 0})]
    with pytest.raises(record.Unreplayable):
        record.verify(game, stored)
    with pytest.raises(IllegalAction):
        takebacks.line([(-1, {"takeback": "all"})])
