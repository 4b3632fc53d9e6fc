"""A GTP engine as an agent (the Go Text Protocol, which Othello engines such as GRhino's
`gtp-rhino` speak too).

The engine keeps its own board, so the bridge keeps it in step with the game: before each
`genmove` it sends the moves made since (`play COLOR VERTEX`), or, when the engine's board is
not a prefix of the game (a restarted engine, a game begun from an opening), `clear_board` and
the whole game again. Passes are sent as `play COLOR PASS`; an engine that refuses them (some
Othello engines pass by themselves, as Partida does) is not sent them again. Under a clock the
engine is told `time_settings` once and `time_left` before each move, as long as it accepts them.

What the engine answers is checked against the seat's legal moves: `resign`, a pass while a
move exists, an illegal or unreadable vertex, no answer in time, or an engine that keeps dying
all end the seat's game with `Forfeit`, whose note the game's record keeps.

A game speaks GTP through a `GtpGame` (below: Othello); another game is one more entry in
`GAMES`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from partida.bots.base import Agent, Forfeit, Turn
from partida.bots.engines.process import (
    EngineFailed,
    EngineGaveUp,
    EngineProcess,
    EngineTimeout,
    answer_timeout,
)
from partida.games.base import Action, Game, IllegalAction

log = logging.getLogger(__name__)

COLORS = ("black", "white")  # GTP's colours, by seat
DEFAULT_MOVE_TIMEOUT = 60.0  # seconds for one move without a clock: a hung engine loses, not hangs
SETUP_TIMEOUT = 10.0  # seconds for each set-up command (boardsize, clear_board, play...)


@dataclass(frozen=True)
class GtpGame:
    """How one game is spoken in GTP: its board size and the game so far as `play` arguments."""

    size: int

    def plays(self, view: dict[str, Any]) -> list[str]:
        raise NotImplementedError


class OthelloGtp(GtpGame):
    """Othello engines write squares as Partida does (column a-h, row 1-8 from the top: GRhino's
    showboard puts row 1 on top), so a vertex is the square in capitals."""

    def plays(self, view: dict[str, Any]) -> list[str]:
        from partida.games.othello.board import square_name
        from partida.games.othello.rules import OthelloState, parse_transcript_squares

        state = OthelloState()
        out: list[str] = []
        last: int | None = None
        # view["moves"] is every move from the start, an opening included; passes are implicit
        for square in parse_transcript_squares(view.get("moves", "")):
            mover = state.to_move
            if last == mover:  # the same side twice: the other had no move and passed
                out.append(f"{COLORS[1 - mover]} PASS")
            out.append(f"{COLORS[mover]} {square_name(square).upper()}")
            state.play(square)
            last = mover
        return out


GAMES: dict[str, GtpGame] = {"othello": OthelloGtp(8)}


class GtpAgent(Agent):
    """One engine process for one seat of one game, started on the first decision."""

    name = "gtp"

    def __init__(self, command: str, move_timeout: float = DEFAULT_MOVE_TIMEOUT, restarts: int = 3) -> None:
        self.engine = EngineProcess(command, f"gtp {command!r}", restarts=restarts)
        self.move_timeout = float(move_timeout)
        self.board: list[str] = []  # the `play` arguments the engine's board holds, in order
        self.takes_passes = True
        self.takes_time = True
        self.gtp: GtpGame | None = None

    def new_game(self, game: Game, seat: int) -> None:
        self.gtp = GAMES.get(game.name)
        self.engine.label = f"gtp {self.engine.command!r} ({game.name}, {COLORS[seat] if seat < 2 else seat})"

    def close(self) -> None:
        log.debug("%s < quit", self.engine.label)
        self.engine.close("quit")

    def act(self, turn: Turn) -> Action:
        if self.gtp is None:
            self.new_game(turn.game, turn.seat)
        if self.gtp is None:
            raise Forfeit(f"GTP bridge: {turn.game.name} is not spoken in GTP here")
        budget = answer_timeout(turn.clock, turn.seat, self.move_timeout)
        deadline = time.monotonic() + budget
        while True:
            try:
                if self.engine.start():
                    self.board = []
                    self._set_up(turn)
                return self._move(turn, deadline)
            except EngineTimeout:
                raise Forfeit(self._note(f"no move in time: no answer within {budget:.1f} s")) from None
            except EngineGaveUp as exc:
                raise Forfeit(self._note(f"crashed: {exc}")) from None
            except EngineFailed as exc:
                # it died: start() above waits out the back-off and replays the game
                log.warning("%s: %s", self.engine.label, exc)

    def _note(self, what: str) -> str:
        return f"GTP engine {self.engine.command!r}: {what}"[:300]

    def command(self, line: str, deadline: float) -> tuple[bool, str]:
        """Send one GTP command; (success, the response's text without `=`/`?`)."""
        log.debug("%s < %s", self.engine.label, line)
        self.engine.send(line)
        while True:
            first = self.engine.read_line(deadline - time.monotonic()).strip()
            if first[:1] in ("=", "?"):
                break
            if first:
                log.debug("%s: ignored %r", self.engine.label, first)
        lines = [first[1:].lstrip("0123456789").strip()]  # `=ID text`: the id is not used
        while (more := self.engine.read_line(deadline - time.monotonic())).strip():
            lines.append(more)
        log.debug("%s > %s", self.engine.label, " | ".join([first, *lines[1:]]))
        return first[0] == "=", "\n".join(lines).strip()

    def _set_up(self, turn: Turn) -> None:
        assert self.gtp is not None
        until = time.monotonic() + SETUP_TIMEOUT
        ok, text = self.command(f"boardsize {self.gtp.size}", until)
        if not ok:
            raise Forfeit(self._note(f"refused boardsize {self.gtp.size}: {text}"))
        self.command("clear_board", until)
        spec = (turn.clock or {}).get("spec") or {}
        if spec:
            per_move = spec.get("per_move")
            # GTP's Canadian byo-yomi: (main, period, stones); Fischer's increment has no GTP
            # form, so absolute time, and the true time left before each move (time_left)
            settings = f"0 {int(per_move)} 1" if per_move else f"{int(spec.get('initial') or 0)} 0 0"
            self.takes_time, _ = self.command(f"time_settings {settings}", until)

    def _move(self, turn: Turn, deadline: float) -> Action:
        assert self.gtp is not None
        wanted = self.gtp.plays(turn.view)
        if self.board != wanted[: len(self.board)]:  # the engine's board is not this game's
            self.command("clear_board", deadline)
            self.board = []
        for play in wanted[len(self.board) :]:
            if play.endswith(" PASS") and not self.takes_passes:
                self.board.append(play)
                continue
            ok, text = self.command(f"play {play}", deadline)
            if not ok and play.endswith(" PASS"):
                self.takes_passes = False  # it passes by itself
            elif not ok:
                raise Forfeit(self._note(f"refused the game's move 'play {play}': {text}"))
            self.board.append(play)
        color = COLORS[turn.seat]
        if turn.clock and self.takes_time:
            left = int(float(turn.clock["remaining"][turn.seat]))
            self.takes_time, _ = self.command(f"time_left {color} {left} 0", deadline)
        ok, text = self.command(f"genmove {color}", deadline)
        if not ok:
            raise Forfeit(self._note(f"genmove {color} failed: {text}"))
        vertex = text.split()[0] if text.split() else ""
        if vertex.lower() == "resign":
            raise Forfeit(self._note("resigned"))
        try:
            action = turn.prompt.validate(vertex.lower())
        except IllegalAction:
            legal = ", ".join(map(str, turn.prompt.answers() or []))
            raise Forfeit(self._note(f"illegal move {text!r} for {color} (legal: {legal})")) from None
        self.board.append(f"{color} {vertex.upper()}")
        self.engine.answered()
        return action
