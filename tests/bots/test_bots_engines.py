"""The bridges' parts without a server: the GTP form of an Othello game (passes made explicit),
how long an engine may take, and the engine process (restarts with back-off until it gives up,
a timeout that kills, a close that kills what will not leave). The bridges through a real server
are tests/bots/test_bots_gtp.py and tests/bots/test_bots_stdio.py."""

from __future__ import annotations

import sys
import time

import pytest

from partida.bots.engines.gtp import OthelloGtp
from partida.bots.engines.process import EngineFailed, EngineGaveUp, EngineProcess, EngineTimeout, answer_timeout
from partida.room.endings import Endings


def test_othello_in_gtp_makes_the_implicit_passes_explicit() -> None:
    # after c1 black has no move: white moves twice, and GTP hears black pass between
    plays = OthelloGtp(8).plays({"moves": "d3c3e6d2d1e1b2c1a3"})
    assert plays[:2] == ["black D3", "white C3"]
    assert plays[-3:] == ["white C1", "black PASS", "white A3"]
    assert OthelloGtp(8).plays({"moves": ""}) == []


def test_an_engine_has_its_clock_less_a_margin_or_the_default() -> None:
    assert answer_timeout(None, 0, 60.0) == 60.0
    assert answer_timeout({"remaining": [10.0, 2.0]}, 1, 60.0) == pytest.approx(1.7)
    assert answer_timeout({"remaining": [100.0, 2.0]}, 0, 60.0) == 60.0
    assert answer_timeout({"remaining": [0.1, 2.0]}, 0, 60.0) == 0.05  # never nothing


def python(code: str) -> str:
    return f"{sys.executable} -c {code!r}"


@pytest.mark.processes
def test_a_dying_engine_is_restarted_with_growing_pauses_then_given_up() -> None:
    engine = EngineProcess(python("import sys; sys.exit(2)"), "test", restarts=2, backoff=0.05)
    started = time.monotonic()
    for _ in range(3):  # the first start and two restarts
        engine.start()
        with pytest.raises(EngineFailed, match="exit code 2"):
            engine.read_line(5)
    with pytest.raises(EngineGaveUp, match="died 3 times in a row"):
        engine.start()
    assert engine.started == 3
    assert time.monotonic() - started >= 0.05 + 0.1  # the pauses doubled


@pytest.mark.processes
def test_an_engine_that_answered_starts_its_back_off_afresh() -> None:
    engine = EngineProcess(python("print('ready', flush=True)"), "test", restarts=1, backoff=0.01)
    for _ in range(3):  # each life answers once, then dies: never two deaths in a row
        engine.start()
        assert engine.read_line(5) == "ready"
        engine.answered()
        with pytest.raises(EngineFailed):
            engine.read_line(5)
    assert engine.started == 3


@pytest.mark.processes
def test_a_silent_engine_times_out_and_is_killed() -> None:
    engine = EngineProcess(python("import time; time.sleep(30)"), "test")
    engine.start()
    with pytest.raises(EngineTimeout, match=r"no answer within 0\.2 s"):
        engine.read_line(0.2)
    assert not engine.alive


@pytest.mark.processes
def test_closing_kills_an_engine_that_will_not_leave() -> None:
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(30)"
    engine = EngineProcess(python(code), "test")
    engine.start()
    engine.close("quit", grace=0.2)
    assert not engine.alive


@pytest.mark.processes
def test_an_engine_that_cannot_start_is_given_up_at_once() -> None:
    with pytest.raises(EngineGaveUp, match="cannot start 'no-such-engine-here'"):
        EngineProcess("no-such-engine-here", "test").start()


def test_resignation_notes_survive_a_restart_of_the_server() -> None:
    endings = Endings(3)
    assert endings.resign(2, "stdio bot: crashed") is None  # three seats: the game goes on
    again = Endings.from_data(3, endings.to_data(), 300.0)
    assert again.notes == {2: "stdio bot: crashed"}
    assert again.resign(1)["notes"] == {"2": "stdio bot: crashed"}  # type: ignore[index]


@pytest.mark.processes
def test_a_closed_engine_is_not_started_again() -> None:
    """The runner closes the engine of an agent it gave up on while its act still runs in a
    thread: that act must not start the engine again, to outlive its game."""
    engine = EngineProcess(python("import time; time.sleep(30)"), "test")
    engine.start()
    engine.close(grace=0.1)
    with pytest.raises(EngineGaveUp, match="closed"):
        engine.start()
    assert not engine.alive


@pytest.mark.processes
def test_a_line_that_is_not_utf8_is_read_as_a_bad_line_not_the_end() -> None:
    engine = EngineProcess(python("import sys; sys.stdout.buffer.write(b'\\xff\\xfe\\n'); print('next')"), "test")
    engine.start()
    assert engine.read_line(5) == "\ufffd\ufffd"
    assert engine.read_line(5) == "next"
