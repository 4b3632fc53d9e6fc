"""A child process spoken to in lines: the one part every engine bridge shares (GTP, the
stdin/stdout protocol, and NBoard or UCI if a game needs them).

An agent's `act` runs in a worker thread and blocks on the engine, so the I/O is plain blocking
pipes: a reader thread turns the engine's stdout into a queue of lines, which lets a read wait
with a timeout; another thread sends its stderr to the log line by line (and keeps the last
few, to say why it died). A dead engine is started again after a growing pause, up to a number
of times in a row; an engine that will not stay up raises `EngineFailed`. Every engine started
here is killed when the agent closes it, or at the latest when this process exits.
"""

from __future__ import annotations

import atexit
import collections
import logging
import os
import queue
import shlex
import signal
import subprocess
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

_EOF = object()  # the reader's last item: the engine closed its stdout (it ended)
_running: weakref.WeakSet[EngineProcess] = weakref.WeakSet()


class EngineFailed(Exception):
    """The engine did not do its part: it died, or did not answer in time. The message says
    which, in words fit for the game's record."""


class EngineTimeout(EngineFailed):
    pass


class EngineGaveUp(EngineFailed):
    """The engine cannot be started, or died more times in a row than it may be restarted."""


class EngineOverflow(EngineFailed):
    """The engine wrote more than its caps allow (a line, or its output in total): it was
    killed the moment it did, its excess never read into memory."""


@dataclass(frozen=True)
class OutputCaps:
    """Bounds on what is read from an engine that is not trusted (a hosted bot): one line of
    stdout or stderr, stdout and stderr in total, in characters. Past one the engine is killed.
    `stderr_lines`: how many last lines of stderr are kept to say why it failed."""

    line_chars: int
    total_chars: int
    stderr_chars: int
    stderr_lines: int = 3


MARGIN = 0.3  # seconds of a clock kept for the answer to reach the server (and its network)


def answer_timeout(clock: dict[str, object] | None, seat: int, default: float) -> float:
    """How long an engine may take for one decision: `default` without a clock; under one, what
    the seat has left less a margin, so that the bridge gives up before the server's clock does
    and the record says why."""
    if not clock:
        return default
    remaining = clock.get("remaining")
    if not isinstance(remaining, list) or seat >= len(remaining):
        return default
    return max(0.05, min(default, float(remaining[seat]) - MARGIN))


class EngineProcess:
    """One engine command line, started on first use. `restarts`: how many times in a row it may
    be started again after dying before `start` gives up; `backoff`: the first pause (seconds),
    doubled each time."""

    def __init__(
        self, command: str, label: str, *, restarts: int = 3, backoff: float = 0.5, caps: OutputCaps | None = None
    ) -> None:
        self.argv = shlex.split(command)  # the caller checked it splits (a quote left open)
        if not self.argv:
            raise ValueError("an empty engine command")
        self.command = command
        self.label = label  # who it plays for, in log lines: "gtp in room K7QX2M seat 0"
        self.restarts = restarts
        self.backoff = backoff
        self.failures = 0  # deaths since it last answered: the back-off grows with them
        self.started = 0  # how many times it was started
        self.caps = caps  # None: the engine is trusted with its output (a local GTP engine)
        self.overflow: str | None = None  # what the engine wrote past its caps, when it did
        self.last_stderr: collections.deque[str] = collections.deque(maxlen=caps.stderr_lines if caps else 3)
        self._proc: subprocess.Popen[str] | None = None
        self._stderr: threading.Thread | None = None
        self._lines: queue.Queue[object] = queue.Queue()
        self._closed = False  # closed for good: an act still running in a thread must not restart it

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> bool:
        """Make sure the engine runs; True when this started it (a new engine knows nothing of
        the game yet). After a death, wait out the back-off first; past `restarts` deaths in a
        row, raise `EngineFailed`."""
        if self.alive:
            return False
        if self._closed:
            raise EngineGaveUp("the engine was closed (its game is over for it)")
        if self._proc is not None:
            self._reap()
            self.failures += 1
            if self.failures > self.restarts:
                raise EngineGaveUp(f"the engine died {self.failures} times in a row{self._last_words()}")
            pause = self.backoff * 2 ** (self.failures - 1)
            log.warning("%s: the engine is down; starting it again in %.1f s", self.label, pause)
            time.sleep(pause)
        self.overflow = None
        try:
            proc = subprocess.Popen(
                self._spawn_argv(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",  # a stray byte is a bad line, not the end of the engine's output
                bufsize=1,
                start_new_session=True,  # its own process group: killing it kills what it started
                **self._spawn_options(),
            )
        except OSError as exc:
            raise EngineGaveUp(f"cannot start {self.command!r}: {exc.strerror or exc}") from None
        finally:
            self._spawned()
        self._proc = proc
        self._lines = queue.Queue()
        self.started += 1
        _running.add(self)
        if self.caps is None:
            threading.Thread(target=_read_lines, args=(proc, self._lines), daemon=True).start()
        else:
            threading.Thread(target=self._read_capped, args=(proc, self._lines, self.caps), daemon=True).start()
        self._stderr = threading.Thread(target=self._log_stderr, args=(proc,), daemon=True)
        self._stderr.start()
        log.info("%s: started %r (pid %d)", self.label, self.command, proc.pid)
        return True

    def send(self, line: str) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None:
            raise EngineFailed("the engine is not running")
        try:
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise EngineFailed(f"the engine stopped reading its input{self._exit_words()}") from None

    def read_line(self, timeout: float) -> str:
        """The engine's next line (without its newline). `EngineTimeout` after `timeout` seconds
        (the engine is then killed: a late answer must not be taken for the next one's);
        `EngineFailed` when it ended."""
        if self.overflow is not None:  # what it wrote before it was killed is not an answer
            raise EngineOverflow(self.overflow)
        try:
            item = self._lines.get(timeout=max(0.0, timeout))
        except queue.Empty:
            self.kill()
            raise EngineTimeout(f"no answer within {timeout:.1f} s") from None
        if item is _EOF:
            if self.overflow is not None:
                raise EngineOverflow(self.overflow)
            raise EngineFailed(f"the engine ended{self._exit_words()}")
        assert isinstance(item, str)
        return item

    def answered(self) -> None:
        """The engine did its part: its next death starts the back-off afresh."""
        self.failures = 0

    def close(self, goodbye: str | None = None, grace: float = 1.0) -> None:
        """End the engine: `goodbye` (GTP's `quit`) or closing its input asks it to leave; after
        `grace` seconds it is killed."""
        self._closed = True
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            try:
                if goodbye is not None:
                    self.send(goodbye)
                if proc.stdin is not None:
                    proc.stdin.close()
                proc.wait(grace)
            except (EngineFailed, OSError, subprocess.TimeoutExpired):
                pass
        self.kill()
        _running.discard(self)

    def kill(self) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                proc.kill()
        self._reap()

    # Hooks for an engine started in another way (a sandbox): its command line, more options
    # for Popen, and what to do once Popen returned (or failed) and once the engine was reaped.
    def _spawn_argv(self) -> list[str]:
        return self.argv

    def _spawn_options(self) -> dict[str, Any]:
        return {}

    def _spawned(self) -> None:
        pass

    def _reaped(self) -> None:
        pass

    def _reap(self) -> None:
        proc = self._proc
        if proc is None:
            return
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
        else:
            self._reaped()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass

    def _log_stderr(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stderr is not None
        caps = self.caps
        total = 0
        try:
            while True:
                line = proc.stderr.readline(caps.line_chars + 1) if caps else proc.stderr.readline()
                if not line:
                    return
                total += len(line)
                if caps and total > caps.stderr_chars:
                    self._overflowed(proc, f"more than {caps.stderr_chars} characters on stderr")
                    return
                if caps and len(line) > caps.line_chars and not line.endswith("\n"):
                    kept = line[: caps.line_chars]  # the rest of an over-long line is dropped unread
                    while line and not line.endswith("\n"):
                        line = proc.stderr.readline(caps.line_chars + 1)
                        total += len(line)
                        if total > caps.stderr_chars:
                            self._overflowed(proc, f"more than {caps.stderr_chars} characters on stderr")
                            return
                    line = kept
                line = line.rstrip("\n")
                self.last_stderr.append(line)
                log.info("%s [stderr] %s", self.label, line)
        except (OSError, ValueError):
            pass

    def _read_capped(self, proc: subprocess.Popen[str], lines: queue.Queue[object], caps: OutputCaps) -> None:
        """`_read_lines` for an engine that may flood: a line is read at most `line_chars` at a
        time, so an endless line costs no memory; past a cap the engine is killed."""
        assert proc.stdout is not None
        total = 0
        try:
            while True:
                line = proc.stdout.readline(caps.line_chars + 1)
                if not line:
                    break
                total += len(line)
                if len(line) > caps.line_chars and not line.endswith("\n"):
                    self._overflowed(proc, f"a line of output longer than {caps.line_chars} characters")
                    break
                if total > caps.total_chars:
                    self._overflowed(proc, f"more than {caps.total_chars} characters of output")
                    break
                lines.put(line.rstrip("\r\n"))
        except (OSError, ValueError):
            pass
        lines.put(_EOF)

    def _overflowed(self, proc: subprocess.Popen[str], what: str) -> None:
        if self.overflow is None:
            self.overflow = what
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            proc.kill()

    def _exit_words(self) -> str:
        proc = self._proc
        code = None
        if proc is not None:
            try:
                code = proc.wait(0.5)
            except subprocess.TimeoutExpired:
                pass
        if self._stderr is not None:
            self._stderr.join(0.5)  # its last words, printed as it died
        said = f" (exit code {code})" if code is not None and code >= 0 else ""
        if code is not None and code < 0:
            said = f" (killed by signal {-code})"
        return said + self._last_words()

    def _last_words(self) -> str:
        return f"; its stderr ended with: {self.last_stderr[-1][:120]!r}" if self.last_stderr else ""


def _read_lines(proc: subprocess.Popen[str], lines: queue.Queue[object]) -> None:
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            lines.put(line.rstrip("\r\n"))
    except (OSError, ValueError):
        pass
    lines.put(_EOF)


@atexit.register
def _kill_all() -> None:
    """No engine outlives the bot that started it (a crash of the runner included)."""
    for engine in list(_running):
        engine.kill()
