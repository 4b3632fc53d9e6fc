"""What a hosted program did wrong, in the words Botzone and CodinGame users know (time limit,
memory limit, output limit, not JSON, runtime error), as pure rules over what was observed: the
stdin/stdout bridge's kind of error, the exit status, whether the cgroup killed it for memory,
and its last lines of stderr. docs/hosted-bots.md#the-verdicts has the table."""

from __future__ import annotations

import signal
from dataclasses import dataclass
from enum import StrEnum


class Verdict(StrEnum):
    TIME_EXCEEDED = "time_exceeded"
    MEMORY_EXCEEDED = "memory_exceeded"
    OUTPUT_TOO_LARGE = "output_too_large"
    BAD_OUTPUT = "bad_output"
    ILLEGAL_ANSWER = "illegal_answer"
    CRASHED = "crashed"
    WOULD_NOT_START = "would_not_start"


@dataclass(frozen=True)
class Failure:
    verdict: Verdict
    detail: str
    stderr_tail: list[str]


# The stdin/stdout bridge's names for a program's errors (partida/bots/engines/stdio.py).
BRIDGE_KINDS = {
    "no answer in time": Verdict.TIME_EXCEEDED,
    "output too large": Verdict.OUTPUT_TOO_LARGE,
    "bad JSON": Verdict.BAD_OUTPUT,
    "bad answer": Verdict.BAD_OUTPUT,
    "illegal answer": Verdict.ILLEGAL_ANSWER,
    "crashed": Verdict.CRASHED,
    "would not start": Verdict.WOULD_NOT_START,
}

# What runtimes print as they die of a refused allocation under RLIMIT_AS (no cgroup to say
# so): CPython's MemoryError, V8's fatal heap errors, C++'s bad_alloc, glibc's ENOMEM text.
MEMORY_WORDS = ("MemoryError", "out of memory", "Cannot allocate memory", "bad_alloc", "Out of memory")

# bwrap prefixes its own errors so: a sandbox it could not set up, or a command it could not exec.
SANDBOX_SETUP = "bwrap: "


def exit_signal(returncode: int | None) -> int | None:
    """The signal that ended the program. bwrap relays its program's death by signal N as exit
    status 128 + N (bwrap itself killed shows as -N)."""
    if returncode is None:
        return None
    if returncode < 0:
        return -returncode
    if 128 < returncode < 128 + 65:
        return returncode - 128
    return None


def crash_verdict(returncode: int | None, stderr_tail: list[str], oom_killed: bool, answered: bool) -> Verdict:
    """Why a program that ended (or that the bridge saw end) failed. `answered`: it answered a
    decision before, so it did start."""
    if oom_killed:
        return Verdict.MEMORY_EXCEEDED
    if exit_signal(returncode) == signal.SIGXCPU:  # past RLIMIT_CPU's soft limit
        return Verdict.TIME_EXCEEDED
    text = "\n".join(stderr_tail)
    if any(word in text for word in MEMORY_WORDS):
        return Verdict.MEMORY_EXCEEDED
    if not answered and any(line.startswith(SANDBOX_SETUP) for line in stderr_tail):
        return Verdict.WOULD_NOT_START
    return Verdict.CRASHED


def signal_words(returncode: int | None) -> str:
    number = exit_signal(returncode)
    if number is None:
        return f"exit code {returncode}" if returncode is not None else "still running"
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    return f"killed by {name}"
