"""A hosted bot's seat: the stdin/stdout protocol (partida/bots/engines/stdio.py) spoken to a
program in the sandbox, its every failure named by a verdict.

The bridge's own errors become verdicts (verdicts.py); a program that ended is judged by what
the cgroup and its exit say: killed for memory, past its CPU time, a sandbox or a command that
could not start, else crashed. A command that names a program or a script that is not there is
refused before anything starts (would_not_start), so a typo is not recorded as a crash.
"""

from __future__ import annotations

import logging
import os
import stat
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from partida.bots.base import Forfeit, Turn
from partida.bots.engines.stdio import StdioAgent
from partida.games.base import Action, Game
from partida.hosting.limits import Limits
from partida.hosting.sandbox import BOT_DIR, PATH, SandboxedProgram
from partida.hosting.verdicts import BRIDGE_KINDS, Failure, Verdict, crash_verdict, signal_words

log = logging.getLogger(__name__)

# Arguments read as a script the interpreter runs: one missing is a program that cannot start.
# How often a program's CPU time in total is read (a walk of its processes in /proc), at most:
# past its limit it may run on for this long times its cores, a small slice of cpu_seconds.
CPU_CHECK_SECONDS = 1.0
SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".lua", ".sh", ".jar", ".php")


def missing_program(bundle_dir: Path, argv: list[str]) -> str | None:
    """Why `argv` cannot start in the sandbox, seen from outside it: the program is found as the
    sandbox would find it (in the bundle, or on the sandbox's PATH of mounted runtimes), and a
    script it is given is in the bundle. None where it looks startable."""
    if not argv:
        return "an empty command"
    if not bundle_dir.is_dir():
        return f"the bundle {str(bundle_dir)!r} is not a directory"
    if os.geteuid() == 0:  # bwrap runs as nobody: it must reach the bundle as others may
        for where in (bundle_dir.resolve(), *bundle_dir.resolve().parents):
            needed = stat.S_IXOTH | (stat.S_IROTH if where == bundle_dir.resolve() else 0)
            if where.stat().st_mode & needed != needed:
                return f"the sandbox's user (nobody) cannot reach the bundle: {str(where)!r} is closed to others"
    program = argv[0]
    if "/" in program:
        inside = PurePosixPath(program)
        if inside.is_absolute() and not str(inside).startswith(BOT_DIR + "/"):
            where = Path(program)  # a runtime: /usr/bin/python3
        else:
            where = bundle_dir / (inside.relative_to(BOT_DIR) if inside.is_absolute() else inside)
        if not (where.is_file() and os.access(where, os.X_OK)):
            return f"{program!r} is not an executable file in the bundle or the runtimes"
    elif not any(os.access(Path(d) / program, os.X_OK) for d in PATH.split(":")):
        return f"{program!r} is not a program the sandbox has (on {PATH})"
    for arg in argv[1:]:
        if arg.startswith("-") or not arg.endswith(SCRIPT_SUFFIXES) or PurePosixPath(arg).is_absolute():
            continue
        if not (bundle_dir / arg).is_file():
            return f"{arg!r} is not a file in the bundle"
    return None


class HostedAgent(StdioAgent):
    """The stdin/stdout protocol (partida/bots/engines/stdio.py) to a program run in the
    sandbox: one warm program per game and seat, started at the first decision. A failure calls
    `on_failure` and raises `Forfeit` with the note "hosted bot LABEL: VERDICT: DETAIL"."""

    name = "hosted"

    def __init__(
        self,
        bundle_dir: Path,
        run: str,
        limits: Limits,
        label: str,
        on_failure: Callable[[Failure], None] | None = None,
    ) -> None:
        self.bundle_dir = Path(bundle_dir)
        self.label = label
        self.limits = limits
        self.on_failure = on_failure
        self.failure: Failure | None = None  # the first failure, once there is one
        self.answered = False  # it answered a decision: it did start
        self.cpu_checked = 0.0  # when its CPU time in total was last read (time.monotonic)
        program = SandboxedProgram(self.bundle_dir, run, limits, f"hosted bot {label}")
        super().__init__(run, limits.decision_seconds, engine=program)
        self.program = program
        self.not_startable = missing_program(self.bundle_dir, program.argv)

    def new_game(self, game: Game, seat: int) -> None:
        self.program.label = f"hosted bot {self.label} ({game.name}, seat {seat})"

    def act(self, turn: Turn) -> Action:
        if self.not_startable is not None:
            raise self._forfeit("would not start", self.not_startable)
        now = time.monotonic()
        if now - self.cpu_checked >= CPU_CHECK_SECONDS and self.program.alive:
            # RLIMIT_CPU bounds each process; the program's many together are caught here
            self.cpu_checked = now
            used = self.program.cpu_used()
            if used > self.limits.cpu_seconds:
                self.program.kill()
                raise self._forfeit("no answer in time", f"past its CPU time in total ({used:.1f} s)")
        action = super().act(turn)
        self.answered = True
        return action

    def _forfeit(self, kind: str, detail: str) -> Forfeit:
        verdict = BRIDGE_KINDS.get(kind, Verdict.CRASHED)
        program = self.program
        if verdict is Verdict.CRASHED:  # it ended: the cgroup, its exit and last words say why
            returncode = program.returncode()
            verdict = crash_verdict(returncode, list(program.last_stderr), program.memory_killed(), self.answered)
            detail = _crash_detail(verdict, returncode, detail)
        failure = Failure(verdict, detail[:300], [line[:300] for line in program.last_stderr])
        if self.failure is None:
            self.failure = failure
        log.warning("hosted bot %s: %s: %s", self.label, verdict, failure.detail)
        if self.on_failure is not None:
            self.on_failure(failure)
        return Forfeit(f"hosted bot {self.label}: {verdict}: {failure.detail}"[:300])


def _crash_detail(verdict: Verdict, returncode: int | None, said: str) -> str:
    if verdict is Verdict.MEMORY_EXCEEDED:
        return f"killed at its memory limit ({signal_words(returncode)})"
    if verdict is Verdict.TIME_EXCEEDED:
        return f"past its CPU time in total ({signal_words(returncode)})"
    return said


def sandboxed_agent(command: str, dir: str = ".", move_timeout: float | None = None) -> HostedAgent:
    """A person's own stdio program under the hosted bots' sandbox and default limits
    (`partida bot --cmd COMMAND --sandbox --dir DIR`); `move_timeout` replaces the decision time."""
    limits = Limits() if move_timeout is None else Limits(decision_seconds=float(move_timeout))
    return HostedAgent(Path(dir), command, limits, label=repr(command))
