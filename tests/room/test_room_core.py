"""The room core as plain calls: seats and tokens, moves, each ending, the clocks' timeouts, the
rematch, and a game record re-run and checked, with no server, socket or event loop (the time is
a number passed in; a seat's holder is any object)."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from partida.games.registry import default_registry
from partida.protocol import ErrorCode, ProtocolError
from partida.room import record
from partida.room.clocks import ClockSpec
from partida.room.core import Answer, End, Push, RoomCore, SaveEndings, Seat, Settle, legacy_seat_token, rematch_seats
from partida.room.seed import seed_hash
from partida.room.terms import RoomTerms


def played(name: str, seats: int, seed: int) -> list[tuple[int, Any]]:
    """A whole game of random answers."""
    state = default_registry().get(name).create({}, seed=seed, seats=seats)
    rng = random.Random(seed)
    actions = []
    while not state.is_over():
        decision = state.pending()[0]
        action = decision.prompt.random_answer(rng)
        state.apply(decision.seat, action)
        actions.append((decision.seat, action))
    return actions


def stored(name: str, seats: int, seed: int, **fields: Any) -> SimpleNamespace:
    """A finished game as storage returns it, its result the rules'."""
    game = default_registry().get(name)
    actions = played(name, seats, seed)
    state = game.replay({}, seed, seats, actions)
    data = dict(
        id=7,
        game=name,
        options={},
        seats=seats,
        seed=seed,
        seed_hash=seed_hash(seed),
        status="finished",
        result={**state.result().to_data(), "reason": "normal"},
        actions=actions,
    )
    return SimpleNamespace(**{**data, **fields})


def test_a_played_record_verifies() -> None:
    game = default_registry().get("tictactoe")
    data = record.verify(game, stored("tictactoe", 2, 11))
    assert data["seed_verified"] is True and data["result_verified"] is True
    assert data["seed"] == 11 and len(data["moves"]) == len(played("tictactoe", 2, 11))


def test_a_seed_that_is_not_the_published_one_fails() -> None:
    game = default_registry().get("tictactoe")
    data = record.verify(game, stored("tictactoe", 2, 11, seed_hash=seed_hash(12)))
    assert data["seed_verified"] is False


def test_a_result_the_rules_do_not_give_fails() -> None:
    game = default_registry().get("tictactoe")
    game_record = stored("tictactoe", 2, 11)
    winners = game_record.result["winners"]
    forged = {**game_record.result, "winners": [1 - winners[0]] if len(winners) == 1 else [0]}
    assert record.verify(game, stored("tictactoe", 2, 11, result=forged))["result_verified"] is False
    short = stored("tictactoe", 2, 11)
    short.actions = short.actions[:-1]
    assert record.verify(game, short)["result_verified"] is False  # the log does not end the game


def test_a_game_ended_outside_its_rules_has_nothing_to_compare() -> None:
    game = default_registry().get("tictactoe")
    resigned = {"scores": [0.0, 1.0], "ranks": [2, 1], "winners": [1], "reason": "resign"}
    data = record.verify(game, stored("tictactoe", 2, 11, result=resigned, actions=[]))
    assert data["result_verified"] is None and data["result"] is None


def test_resigned_seats_rank_last_when_the_result_is_compared() -> None:
    replayed = {"scores": [1.0, 0.0, 0.0], "ranks": [1, 2, 2], "winners": [0]}
    as_stored = {"scores": [1.0, 0.0, 0.0], "ranks": [1, 2, 3], "winners": [0], "dropped": [2], "reason": "normal"}
    assert record.same_result(replayed, as_stored) is True
    assert record.same_result(replayed, {**as_stored, "dropped": [1]}) is False


def test_a_log_the_rules_refuse_does_not_replay() -> None:
    game = default_registry().get("tictactoe")
    bad = stored("tictactoe", 2, 11)
    bad.actions = [bad.actions[0], bad.actions[0]]  # the same square twice
    with pytest.raises(record.Unreplayable, match="game 7 does not replay"):
        record.verify(game, bad)
    with pytest.raises(ProtocolError) as refused:
        record.steps(game, {}, 11, 2, bad.actions)
    assert refused.value.code == ErrorCode.NO_SUCH_GAME


def test_steps_show_each_moment_as_the_table_saw_it() -> None:
    game = default_registry().get("hearts")
    actions = played("hearts", 4, 5)[:10]
    steps = record.steps(game, {}, 5, 4, actions)
    assert len(steps) == len(actions) + 1 and steps[0]["last"] is None
    state = game.create({}, seed=5, seats=4)
    for (seat, action), step in zip(actions, steps[1:], strict=True):
        state.apply(seat, action)
        assert step["view"] == state.view(None)
        assert step["last"] == {"seat": seat, "action": None, "text": state.last_event()}  # cards stay hidden


def test_a_perfect_information_game_tells_the_action_itself() -> None:
    game = default_registry().get("tictactoe")
    state = game.create({}, seed=1, seats=2)
    seat, action = played("tictactoe", 2, 1)[0]
    state.apply(seat, action)
    assert record.public_last(game, state, seat, action)["action"] == action


# A room's core: seats, moves, endings, time.


@contextlib.contextmanager
def refused(code: ErrorCode) -> Iterator[None]:
    """The block raises a `ProtocolError` with this code."""
    with pytest.raises(ProtocolError) as info:
        yield
    assert info.value.code == code, info.value


def seated(name: str = "tictactoe", seats: int = 2, clock: dict[str, Any] | None = None, **terms: Any) -> RoomCore:
    """A core with every seat taken by holder `i` (a plain int here), stored as game 9."""
    game = default_registry().get(name)
    core: RoomCore[int] = RoomCore(RoomTerms(game, {}, seats, clock=ClockSpec.parse(clock), **terms), 5, seed_hash(5))
    for i in range(seats):
        core.sit(core.free_seat(None), Seat(f"p{i}", "user", 100 + i, None, i, f"token-{i}"))
    core.stored_as(9)
    return core


def started(name: str = "tictactoe", seats: int = 2, clock: dict[str, Any] | None = None, now: float = 0.0) -> RoomCore:
    core = seated(name, seats, clock)
    core.begin(core.new_state(by_owner=True))
    core.sync_clock(None, now)
    return core


def move(core: RoomCore, now: float = 0.0) -> None:
    """The first open decision answered (its first legal answer), written and committed."""
    decision = core.decisions()[0]
    core.commit(core.play(decision.seat, decision.prompt.random_answer(random.Random(0)), now), now)


def test_seats_are_taken_in_order_until_the_room_is_full() -> None:
    core = seated()
    assert [s.name for s in core.seats] == ["p0", "p1"] and core.full()
    with refused(ErrorCode.ROOM_FULL):
        core.free_seat(None)
    with refused(ErrorCode.SEAT_TAKEN):
        core.free_seat(1)
    with refused(ErrorCode.NO_SUCH_SEAT):
        core.check_seat_number(2)
    core.seat_left(1, now=0.0)  # before the start a seat that is left is free again
    assert core.seats[1] is None and core.free_seat(None) == 1


def test_a_kept_seat_seats_only_its_account() -> None:
    game = default_registry().get("tictactoe")
    core: RoomCore[int] = RoomCore(RoomTerms(game, {}, 2, kept=(100, 101)), 5, seed_hash(5))
    for stranger in (None, 102):  # a guest, another account
        with refused(ErrorCode.SEAT_KEPT):
            core.free_seat(None, stranger)
        with refused(ErrorCode.SEAT_KEPT):
            core.free_seat(1, stranger)
    assert core.free_seat(None, 101) == 1 and core.free_seat(0, 100) == 0
    with refused(ErrorCode.SEAT_KEPT):
        core.free_seat(1, 100)  # its own seat is 0
    half: RoomCore[int] = RoomCore(RoomTerms(game, {}, 2, kept=(100, None)), 5, seed_hash(5))
    assert half.free_seat(None, 102) == 1 and half.free_seat(None, 100) == 0


def test_a_token_holds_its_own_seat_only() -> None:
    core = seated()
    assert core.seat_of_token("token-1", None) == 1 and core.token_for(1) == "token-1"
    with refused(ErrorCode.AUTH_FAILED):
        core.seat_of_token("token-1", 0)  # a seat number, when given, must be the token's
    with refused(ErrorCode.AUTH_FAILED):
        core.seat_of_token("token-2", None)
    core.game_id = 0  # a game not stored yet: no token holds anything
    with refused(ErrorCode.AUTH_FAILED):
        core.seat_of_token("token-1", None)


def test_a_game_stored_without_tokens_honours_the_derived_ones() -> None:
    core = seated()
    core.seats[0].token = ""  # type: ignore[union-attr]
    assert core.seat_of_token(legacy_seat_token(5, 9, 0), None) == 0 == core.seat_of_token(core.token_for(0), 0)


def test_a_seat_left_in_play_is_held_and_given_back() -> None:
    core = started()
    core.seat_left(1, now=3.0)
    assert core.seats[1].session is None and core.held_for(101) == 1 and core.held_for(100) is None  # type: ignore[union-attr]
    assert core.endings.away == {1: 3.0}
    assert core.seat_back(1, "new connection") is None and core.endings.away == {}
    assert core.seat_back(1, "third connection") == "new connection"  # told it lost the seat
    with refused(ErrorCode.ALREADY_STARTED):
        core.free_seat(None)


def test_only_the_owner_starts_and_only_a_full_room() -> None:
    core = seated()
    with refused(ErrorCode.NOT_OWNER):
        core.new_state(by_owner=False)
    core.seat_left(1, now=0.0)
    with refused(ErrorCode.SEATS_EMPTY):
        core.new_state(by_owner=True)
    assert core.status == "waiting" and core.state is None


def test_a_move_joins_the_log_only_once_committed() -> None:
    core = started()
    decision = core.decisions()[0]
    action = decision.prompt.random_answer(random.Random(0))
    pending = core.play(decision.seat, action, 1.0)
    assert (pending.seq, pending.seat, pending.result) == (0, decision.seat, None) and core.seq == 0
    core.undo(pending)  # not stored
    assert core.seq == 0 and core.state.view(None) == core.game.create({}, seed=5, seats=2).view(None)  # type: ignore[union-attr]
    core.commit(core.play(decision.seat, action, 1.0), 1.0)
    assert core.actions == [(decision.seat, action)] and core.last["seat"] == decision.seat  # type: ignore[index]
    with refused(ErrorCode.NOT_YOUR_TURN):
        core.play(decision.seat, action, 2.0)
    with refused(ErrorCode.STALE_DECISION):
        core.check_act([1], None, seq=0)


def test_the_move_that_ends_the_game_carries_its_result() -> None:
    core = started()
    while True:
        decision = core.decisions()[0]
        pending = core.play(decision.seat, decision.prompt.random_answer(random.Random(1)), 0.0)
        if pending.result is not None:
            break
        core.commit(pending, 0.0)
    assert core.commit(pending, 0.0) is True and core.result == pending.result and core.status == "finished"
    assert pending.result["reason"] == "normal" and core.next_deadline() is None
    with refused(ErrorCode.GAME_OVER):
        core.check_act([0, 1], None, None)


def test_resigning_in_two_seats_ends_the_game() -> None:
    core = started()
    [end] = core.resign(0)
    assert isinstance(end, End) and end.result["reason"] == "resign" and end.result["winners"] == [1]


def test_resigning_in_four_seats_drops_the_seat_out() -> None:
    core = started("hearts", 4)
    assert core.resign(2) == [SaveEndings(), Push(), Settle()]
    assert core.endings.auto == {2}
    while core.decisions()[0].seat != 2:
        move(core)
    seat, _ = core.auto_answer()  # type: ignore[misc]  # the server's bot answers for it
    assert seat == 2
    with refused(ErrorCode.ALREADY_RESIGNED):
        core.resign(2)


def test_a_draw_is_agreed_by_offer_and_acceptance_or_declined() -> None:
    core = started()
    assert core.offer_draw(0) == [Push()] and core.endings.draw_offer == 0
    assert core.decline_draw(1) == [Push()] and core.endings.draw_offer is None
    with refused(ErrorCode.NO_DRAW_OFFER):
        core.accept_draw(1)
    core.offer_draw(0)
    [end] = core.accept_draw(1)
    assert isinstance(end, End) and end.result["reason"] == "draw_agreed" and end.result["scores"] == [0.5, 0.5]
    core = started()
    core.offer_draw(1)
    [end] = core.offer_draw(0)  # offers that cross: agreed
    assert isinstance(end, End) and end.result["reason"] == "draw_agreed"


def test_abort_until_every_seat_has_moved() -> None:
    core = started()
    move(core)
    [end] = core.abort(1)
    assert isinstance(end, End) and end.result["reason"] == "aborted"
    move(core)
    with refused(ErrorCode.ABORT_TOO_LATE):
        core.abort(0)


def test_running_out_of_time_in_two_seats_loses() -> None:
    core = started(clock={"per_move": 5}, now=100.0)
    assert core.next_deadline() == 105.0
    assert core.expired(104.9) == [] and core.expired(105.0) == [0]
    [end] = core.time_out(0)
    assert isinstance(end, End) and end.result["reason"] == "time" and end.result["winners"] == [1]


def test_a_timeout_in_four_seats_answers_for_the_seat_then_takes_it_over() -> None:
    core = started("hearts", 4, clock={"per_move": 5, "timeouts": 2})
    seat = core.decisions()[0].seat
    first = core.time_out(seat)
    assert first[0] == SaveEndings() and isinstance(first[1], Answer) and first[1].seat == seat
    assert core.time_out(seat) == [SaveEndings()] and seat in core.endings.auto  # the bot plays it from now on


def test_a_seat_away_past_its_grace_abandons_the_game() -> None:
    core = started()
    core.seat_left(1, now=10.0)
    assert core.next_deadline() == 10.0 + core.endings.abandon_after
    assert core.abandoned(now=10.0 + core.endings.abandon_after - 1) == []
    [end] = core.abandoned(now=10.0 + core.endings.abandon_after)
    assert isinstance(end, End) and end.result["reason"] == "aborted"  # fewer than two moves
    move(core)
    move(core)
    [end] = core.abandoned(now=10.0 + core.endings.abandon_after)
    assert end.result["reason"] == "abandoned" and end.result["winners"] == [0]  # type: ignore[union-attr]


def test_a_rematch_needs_every_human_seat_and_rotates_the_seats() -> None:
    core = seated("hearts", 4)
    core.seats[3].agent = "random"  # type: ignore[union-attr]  # a bot accepts by itself
    with refused(ErrorCode.GAME_NOT_OVER):
        core.offer_rematch(0)
    core.begin(core.new_state(by_owner=True))
    core.finish({"scores": [1, 0, 0, 0], "ranks": [1, 2, 2, 2], "winners": [0], "reason": "resign"}, now=0.0)
    assert [core.offer_rematch(seat) for seat in (0, 1, 2)] == [False, False, True]
    again = rematch_seats(core.seats, ["a", "b", "c", "d"])
    assert [s.name for s in again] == ["p3", "p0", "p1", "p2"]  # type: ignore[union-attr]
    assert [s.session for s in again] == [3, 0, 1, 2] and [s.token for s in again] == ["a", "b", "c", "d"]  # type: ignore[union-attr]


# What the driver used to write into a core from outside: now the core's own commands.


def in_play(name: str = "tictactoe", moves: int = 3, **fields: Any) -> SimpleNamespace:
    """A game in play as storage returns it: `moves` actions of a whole random game."""
    actions = played(name, 2, 11)[:moves]
    data = dict(
        id=41,
        game=name,
        options={},
        seats=2,
        seed=11,
        seed_hash=seed_hash(11),
        public=False,
        rated=True,
        status="playing",
        result=None,
        clock={"initial": 60, "increment": 2},
        endings={"abandon_after": 30.0, "resigned": [], "timeouts": [1, 0], "auto": []},
        clock_state=[50.0, 40.0],
        seat_list=[(0, 100, "ada"), (1, None, "guest-bo")],
        seat_kinds={0: "bot"},
        seat_tokens={0: "token-ada", 1: None},
        actions=actions,
    )
    return SimpleNamespace(**{**data, **fields})


def test_a_core_rebuilt_from_a_stored_game_holds_its_seats_and_replays_its_log() -> None:
    game = default_registry().get("tictactoe")
    stored = in_play()
    core: RoomCore[int] = RoomCore.from_stored(game, stored, abandon_after=120.0)
    assert (core.game_id, core.seed, core.seed_hash, core.status) == (41, 11, seed_hash(11), "playing")
    assert [(s.name, s.kind, s.account_id, s.session, s.token) for s in core.seats] == [  # type: ignore[union-attr]
        ("ada", "bot", 100, None, "token-ada"),
        ("guest-bo", "guest", None, None, ""),  # a guest's seat stored without a kind or a token
    ]
    assert core.actions == stored.actions and core.seq == 3
    assert core.state is not None and core.state.view(None) == game.replay({}, 11, 2, stored.actions).view(None)
    assert core.clock is not None and core.clock.remaining == [50.0, 40.0]  # the snapshot of the last action
    assert core.endings.timeouts == [1, 0] and core.endings.abandon_after == 30.0  # the stored grace wins
    assert core.token_for(0) == "token-ada"


def test_a_game_stored_without_a_grace_or_clock_takes_the_default() -> None:
    game = default_registry().get("tictactoe")
    core: RoomCore[int] = RoomCore.from_stored(game, in_play(clock=None, endings=None, clock_state=None), 120.0)
    assert core.clock is None and core.clock_spec is None and core.endings.abandon_after == 120.0


def test_a_log_found_ahead_is_taken_and_a_draw_offer_lapses_as_it_would_have() -> None:
    core = started()
    move(core)  # seat 0 has moved: seat 1 to act
    core.offer_draw(1)
    assert core.endings.draw_offer == 1
    ahead = played("tictactoe", 2, 11)
    log = [core.actions[0], *[(seat, action) for seat, action in ahead[1:3]]]  # seat 0 answered the offer
    core.catch_up(log, None)
    assert core.actions == log and core.seq == 3 and core.endings.draw_offer is None
    assert core.state is not None and core.state.view(None) == core.game.replay({}, 5, 2, log).view(None)


def test_a_log_found_ahead_by_the_offerers_own_move_keeps_the_offer() -> None:
    core = started()
    move(core)
    core.offer_draw(0)  # seat 0 offers; only seat 1's move makes it lapse
    core.catch_up([*core.actions], None)
    assert core.endings.draw_offer == 0


def test_an_ending_request_whose_write_failed_is_taken_back_unless_the_game_ended() -> None:
    core = started("hearts", 4)
    kept = core.endings_kept()
    assert core.resign(2) == [SaveEndings(), Push(), Settle()]
    assert core.endings.resigned == [2]
    core.endings_back(kept)
    assert core.endings.resigned == []
    kept = core.endings_kept()
    core.resign(3)
    core.finish({"scores": [1, 1, 0, 0], "ranks": [1, 1, 3, 3], "winners": [0, 1], "reason": "resign"}, now=0.0)
    core.endings_back(kept)  # the game ended in memory: what ended it stands
    assert core.endings.resigned == [3]


def test_a_rematch_has_the_same_terms_and_seats_everyone_one_seat_on() -> None:
    core = seated("hearts", 4, clock={"initial": 60, "increment": 2})
    core.begin(core.new_state(by_owner=True))
    core.finish({"scores": [1, 0, 0, 0], "ranks": [1, 2, 2, 2], "winners": [0], "reason": "resign"}, now=0.0)
    terms = core.rematch_terms(public=True, rated=False)
    assert (terms.game, terms.options, terms.seats, terms.public, terms.rated) == (core.game, {}, 4, True, False)
    assert terms.clock == core.clock_spec and terms.abandon_after == core.endings.abandon_after
    assert terms.options is not core.options  # the rematch's own copy
    again: RoomCore[int] = RoomCore(terms, 6, seed_hash(6))
    seats = again.seat_rematch(core.seats, ["a", "b", "c", "d"])
    assert seats is again.seats and [s.name for s in seats] == ["p3", "p0", "p1", "p2"]  # type: ignore[union-attr]
    assert [s.session for s in seats] == [3, 0, 1, 2] and [s.token for s in seats] == ["a", "b", "c", "d"]  # type: ignore[union-attr]
    assert again.full() and again.status == "waiting"
    with pytest.raises(AssertionError):
        again.seat_rematch(core.seats, ["e", "f", "g", "h"])  # seated once, in a new room


def test_a_seat_taken_and_a_game_stored_are_the_cores_own_commands() -> None:
    game = default_registry().get("tictactoe")
    core: RoomCore[str] = RoomCore(RoomTerms(game, {}, 2), 5, seed_hash(5))
    core.stored_as(12)
    core.sit(core.free_seat(1), Seat("ada", "user", 7, None, "conn-ada", "t"))
    assert core.game_id == 12 and core.seats_of("conn-ada") == [1] and core.seats[0] is None
    with refused(ErrorCode.SEAT_TAKEN):
        core.free_seat(1)
