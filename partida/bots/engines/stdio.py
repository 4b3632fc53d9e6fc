"""A program that reads one JSON line per decision on stdin and writes one JSON answer line on
stdout, as the bots of CodinGame, Botzone, Halite or Kaggle do: no websocket, no token, no
reconnection. The protocol is in docs/bots.md.

One program runs per seat and game: it is started at the seat's first decision and its stdin
is closed when the game ends. Each line it reads is
`{"game", "seat", "view", "decision", "clock", "time_left"}` (`view` and `decision` exactly as
the websocket protocol's `update` carries them; `time_left` the seat's seconds on the clock, or
null without one); each line it writes is `{"action": ANSWER}`.

The program's errors are its own, and each ends its seat's game as a resignation with a note
that names the error (kept in the game's record): `bad JSON`, `bad answer` (JSON, but not
`{"action": ...}`), `illegal answer`, `no answer in time`, `crashed`, `would not start` (its
command could not be run) and `output too large` (past the caps of an engine started with them,
as a hosted bot is). What it writes on stderr goes to the bot's log.
"""

from __future__ import annotations

import json

from partida.bots.base import Agent, Forfeit, Turn
from partida.bots.engines.process import (
    EngineFailed,
    EngineGaveUp,
    EngineOverflow,
    EngineProcess,
    EngineTimeout,
    answer_timeout,
)
from partida.games.base import Action, Game, IllegalAction

DEFAULT_MOVE_TIMEOUT = 60.0  # seconds for one answer without a clock: a hung program loses, not hangs


def decision_line(turn: Turn) -> str:
    """What the program reads for one decision."""
    clock = turn.clock
    left = float(clock["remaining"][turn.seat]) if clock else None
    message = {
        "game": turn.game.name,
        "seat": turn.seat,
        "view": turn.view,
        "decision": turn.prompt.to_data(),
        "clock": clock,
        "time_left": left,
    }
    return json.dumps(message, separators=(",", ":"), default=list)


class StdioAgent(Agent):
    name = "stdio"

    def __init__(
        self, command: str, move_timeout: float = DEFAULT_MOVE_TIMEOUT, engine: EngineProcess | None = None
    ) -> None:
        # a program that died has lost its game: it is not started again within it. `engine`:
        # one started another way (a sandbox), for this command
        self.engine = engine or EngineProcess(command, f"stdio {command!r}", restarts=0)
        self.move_timeout = float(move_timeout)

    def new_game(self, game: Game, seat: int) -> None:
        self.engine.label = f"stdio {self.engine.command!r} ({game.name}, seat {seat})"

    def close(self) -> None:
        self.engine.close()  # its stdin closes: the end of the game

    def _forfeit(self, kind: str, detail: str) -> Forfeit:
        return Forfeit(f"stdio bot {self.engine.command!r}: {kind}: {detail}"[:300])

    def act(self, turn: Turn) -> Action:
        timeout = answer_timeout(turn.clock, turn.seat, self.move_timeout)
        try:
            self.engine.start()
        except EngineGaveUp as exc:
            raise self._forfeit("would not start" if not self.engine.started else "crashed", str(exc)) from None
        try:
            self.engine.send(decision_line(turn))
            text = self.engine.read_line(timeout)
        except EngineTimeout:
            raise self._forfeit("no answer in time", f"nothing within {timeout:.1f} s") from None
        except EngineOverflow as exc:
            raise self._forfeit("output too large", str(exc)) from None
        except EngineFailed as exc:
            raise self._forfeit("crashed", str(exc)) from None
        try:
            answer = json.loads(text)
        except json.JSONDecodeError as exc:
            raise self._forfeit("bad JSON", f"{text[:80]!r} ({exc.msg})") from None
        if not isinstance(answer, dict) or "action" not in answer:
            raise self._forfeit("bad answer", f'{text[:80]!r} is not {{"action": ...}}')
        try:
            action = turn.prompt.validate(answer["action"])
        except IllegalAction as exc:
            raise self._forfeit("illegal answer", str(exc)) from None
        self.engine.answered()
        return action
