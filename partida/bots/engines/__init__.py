"""Bots that are someone else's program: a bridge per protocol, each an `Agent` that owns a
child process (process.py: start, line I/O with timeouts, restarts with back-off, stderr to the
log, kill at the end). `gtp.py` speaks GTP (Othello engines such as gtp-rhino), `stdio.py` the
one-JSON-line-per-decision protocol of docs/bots.md; another protocol (NBoard, UCI) is one more
module beside them and one more entry here; `sandboxed` is the stdio bridge to a program under the hosted bots' sandbox
(partida/hosting/). `partida bot --gtp/--cmd` runs them behind the
websocket; `partida match --local --seat "gtp[command=gtp-rhino]"` plays them in-process."""

from __future__ import annotations

from typing import Any

from partida.bots.base import Agent, AgentSpec
from partida.bots.engines.gtp import GtpAgent
from partida.bots.engines.stdio import StdioAgent


def _sandboxed(**params: Any) -> Agent:
    from partida.hosting.agent import sandboxed_agent  # the sandbox is loaded only when asked for

    return sandboxed_agent(**params)


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
    AgentSpec(
        "sandboxed",
        _sandboxed,
        "the stdio bridge to a program run under the hosted bots' sandbox and limits: "
        "sandboxed[command=...;dir=...] (partida bot --cmd COMMAND --sandbox; docs/hosted-bots.md)",
        params={"command": None, "dir": None, "move_timeout": None},
        external=True,
    ),
]
