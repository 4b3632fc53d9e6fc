"""Bots that are someone else's program: a bridge per protocol, each an `Agent` that owns a
child process (process.py: start, line I/O with timeouts, restarts with back-off, stderr to the
log, kill at the end). `gtp.py` speaks GTP (Othello engines such as gtp-rhino), `stdio.py` the
one-JSON-line-per-decision protocol of docs/bots.md; another protocol (NBoard, UCI) is one more
module beside them and one more entry here. `partida bot --gtp/--cmd` runs them behind the
websocket; `partida match --local --seat "gtp[command=gtp-rhino]"` plays them in-process."""

from __future__ import annotations

from partida.bots.base import AgentSpec
from partida.bots.engines.gtp import GtpAgent
from partida.bots.engines.stdio import StdioAgent

AGENTS = [
    AgentSpec(
        "gtp",
        GtpAgent,
        "a GTP engine's program, for Othello: gtp[command=gtp-rhino] (partida bot --gtp COMMAND)",
        games=frozenset({"othello"}),
        params={"command": None, "move_timeout": None, "restarts": None},
        external=True,
    ),
    AgentSpec(
        "stdio",
        StdioAgent,
        "a program reading one JSON line per decision on stdin, answering on stdout: stdio[command=...] "
        "(partida bot --cmd COMMAND; docs/bots.md)",
        params={"command": None, "move_timeout": None},
        external=True,
    ),
]
