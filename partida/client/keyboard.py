"""Lines typed at the terminal, read on the event loop.

`input()` in a thread (the obvious way to read without blocking the connection) has two faults a
player notices: Ctrl-C waits for Enter, because interpreter shutdown waits for the blocked
thread; and keys typed while the other side thinks are read as the next move. Reading the file
descriptor from the event loop has neither: nothing blocks, and what was typed before a prompt is
thrown away when the prompt appears (on a terminal; piped input is a script and is kept).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from typing import TextIO


class LineReader:
    def __init__(self, stream: TextIO | None = None, out: TextIO | None = None) -> None:
        self.stream = stream or sys.stdin
        self.out = out or sys.stdout
        self.lines: asyncio.Queue[str | None] = asyncio.Queue()
        self.partial = b""
        self.fd: int | None = None
        self.tty = False
        self.threaded = False  # a regular file cannot be polled: read it with input() instead
        self.ended = False

    def _start(self) -> None:
        if self.fd is not None or self.threaded or self.ended:
            return
        try:
            fd = self.stream.fileno()
            asyncio.get_running_loop().add_reader(fd, self._readable)
        except (OSError, ValueError, PermissionError, NotImplementedError):
            self.threaded = True
            return
        self.fd = fd
        self.tty = os.isatty(fd)

    def _readable(self) -> None:
        assert self.fd is not None
        try:
            data = os.read(self.fd, 4096)
        except BlockingIOError:
            return
        if not data:
            self.close()
            self.lines.put_nowait(None)
            return
        self.partial += data
        *complete, self.partial = self.partial.split(b"\n")
        for line in complete:
            self.lines.put_nowait(line.decode(errors="replace").rstrip("\r"))

    def discard_typed_ahead(self) -> None:
        """Forget what was typed before now (a terminal only: piped lines are a script)."""
        if not self.tty or self.fd is None:
            return
        import termios

        with contextlib.suppress(termios.error):
            termios.tcflush(self.fd, termios.TCIFLUSH)
        self.partial = b""
        while not self.lines.empty():
            if self.lines.get_nowait() is None:
                self.lines.put_nowait(None)
                break

    async def ask(self, prompt: str) -> str:
        """The next line typed after `prompt` is shown; `EOFError` when input has ended."""
        self._start()
        if self.threaded:
            return await asyncio.to_thread(input, prompt)
        self.discard_typed_ahead()
        self.out.write(prompt)
        self.out.flush()
        line = await self.lines.get()
        if line is None:
            self.lines.put_nowait(None)  # every later ask ends too
            raise EOFError
        return line

    def close(self) -> None:
        self.ended = True
        if self.fd is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(self.fd)
            self.fd = None
