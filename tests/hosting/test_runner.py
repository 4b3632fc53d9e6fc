"""The runner's program slots, with plain values: a seat holds a slot from its first decision to
its game's end, no more programs run than slots, a seat that cannot get one in its time answers
at random without its program ever being asked, and the end of a game is reported once, clean or
not. The agent handed in is a stand-in for `HostedAgent` (its attributes the runner reads)."""

from __future__ import annotations

import asyncio
import json
import logging
import random
import threading
from typing import Any

import pytest

from partida.bots.base import Turn
from partida.games.registry import default_registry
from partida.hosting.limits import Limits
from partida.hosting.runner import Events, HostedRunner, SeatProgram
from partida.hosting.verdicts import Failure, Verdict


class FakeProgramAgent:
    """What the runner uses of a `HostedAgent`: act, close, its limits, label, failure and the
    program's last stderr lines."""

    def __init__(self) -> None:
        self.limits = Limits(decision_seconds=1.0)
        self.label = "fake v1"
        self.failure: Failure | None = None
        self.program = type("Program", (), {"last_stderr": ["said hello"]})()
        self.asked = 0
        self.closed = 0

    def new_game(self, game: Any, seat: int) -> None:
        pass

    def act(self, turn: Turn) -> Any:
        self.asked += 1
        return turn.prompt.options[0]  # type: ignore[attr-defined]

    def close(self) -> None:
        self.closed += 1


def turn(clock_left: float | None) -> Turn:
    game = default_registry().get("tictactoe")
    state = game.new_state({}, 1, 2)
    decision = state.pending()[0]
    clock = None if clock_left is None else {"remaining": [clock_left, clock_left], "spec": {"per_move": clock_left}}
    return Turn(game, decision.seat, decision.prompt, state.view(decision.seat), clock)


def seat(slots: threading.BoundedSemaphore, ends: list[Any], firsts: list[int]) -> tuple[SeatProgram, FakeProgramAgent]:
    agent = FakeProgramAgent()
    program = SeatProgram(agent, slots, lambda failure, tail: ends.append((failure, tail)), lambda: firsts.append(1))  # type: ignore[arg-type]
    return program, agent


def test_a_seat_holds_its_slot_for_the_whole_game_and_reports_a_clean_end_once() -> None:
    slots = threading.BoundedSemaphore(1)
    ends: list[Any] = []
    firsts: list[int] = []
    first, agent = seat(slots, ends, firsts)
    first.act(turn(None))
    first.act(turn(None))
    assert agent.asked == 2 and firsts == [1]  # one program, warm across decisions
    assert not slots.acquire(blocking=False)  # taken while its game goes on
    first.close()
    first.close()
    assert ends == [(None, ["said hello"])] and agent.closed == 1
    assert slots.acquire(blocking=False)  # given back at the end


def test_a_seat_that_finds_every_slot_taken_answers_at_random_within_its_clock() -> None:
    slots = threading.BoundedSemaphore(1)
    ends: list[Any] = []
    firsts: list[int] = []
    first, _ = seat(slots, ends, firsts)
    first.act(turn(None))
    second, agent = seat(slots, ends, firsts)
    second.rng = random.Random(3)
    answer = second.act(turn(1.5))  # a clock that leaves no time to wait for a slot
    assert answer in turn(1.5).prompt.options  # type: ignore[attr-defined]
    assert agent.asked == 0 and firsts == [1]  # its program never ran
    first.close()
    second.act(turn(None))
    assert agent.asked == 1 and firsts == [1, 1]
    second.agent.failure = Failure(Verdict.CRASHED, "exit 1", ["boom"])  # type: ignore[union-attr]
    second.close()
    assert ends == [(None, ["said hello"]), (second.agent.failure, ["said hello"])]


def test_a_seat_waiting_for_a_slot_gets_it_when_another_game_ends() -> None:
    slots = threading.BoundedSemaphore(1)
    ends: list[Any] = []
    first, _ = seat(slots, ends, [])
    first.act(turn(None))
    second, agent = seat(slots, ends, [])
    answered = threading.Event()
    waiting = threading.Thread(target=lambda: (second.act(turn(None)), answered.set()))
    waiting.start()
    assert not answered.wait(0.2) and agent.asked == 0  # no slot: it waits rather than start a program
    first.close()
    waiting.join(10)
    assert answered.is_set() and agent.asked == 1


def test_a_bad_order_is_logged_without_the_bots_token(caplog: pytest.LogCaptureFixture) -> None:
    runner = HostedRunner("ws://127.0.0.1:1/ws", Limits(), 1, Events())
    token = "pt_secret-token-of-the-bot"
    line = json.dumps({"op": "play", "bot": "b1", "token": token, "version": "x", "games": []})
    with caplog.at_level(logging.ERROR, logger="partida.hosting.runner"):
        asyncio.run(runner.order(line))
        asyncio.run(runner.order(json.dumps(["play", token])))
    assert "a bad order" in caplog.text and "b1" in caplog.text
    assert token not in caplog.text
