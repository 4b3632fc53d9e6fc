"""The room core as plain calls: a game record re-run and checked, with no server, socket or loop."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest

from partida.games.registry import default_registry
from partida.protocol import ErrorCode, ProtocolError
from partida.room import record
from partida.room.seed import seed_hash


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
