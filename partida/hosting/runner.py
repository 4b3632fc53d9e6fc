"""The hosted bots' runner: one process, apart from the server, playing every hosted bot.

`partida serve --host-bots` starts it (`python -m partida.hosting.runner`) and talks to it over
its stdin and stdout, one JSON object a line; everything else goes over the websocket, like any
client. On stdin it is told which bots to play: `{"op": "play", "bot", "token", "version",
"games", "run", "bundle", "ladders", "tournaments", "answer_seeks", "max_games"}` (again for a
new version: the bot's connection starts afresh with it) and `{"op": "stop", "bot"}`; a token
comes this way, never on a command line another user could read. On stdout it tells what its
programs did: `{"event": "played", "bot", "version", "game_id", "seat"}` at a seat's first
decision, `{"event": "failure", ..., "verdict", "detail", "stderr_tail"}` for each verdict, and
`{"event": "clean", ..., "stderr_tail"}` when a seat's game ended without one.

Each hosted bot is a `BotRunner` (partida/bots/runner.py) logged in with its own bot account,
declaring the games its version plays, whose agents are `HostedAgent`s: a program in the
sandbox, started at a seat's first decision and kept warm for the rest of the game. At most
`--max-programs` programs are alive at once across every bot: a seat that finds them all taken
waits for one to end, and a decision that cannot wait (its clock) is answered at random, as the
runner answers for any agent that runs out of time (no verdict: the program never ran).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import logging
import random
import sys
import threading
from pathlib import Path
from typing import Any

from partida.bots.base import Agent, Turn
from partida.bots.runner import BotRunner
from partida.client.refusals import ServerError
from partida.games.base import Action, Game
from partida.hosting.agent import HostedAgent
from partida.hosting.limits import Limits
from partida.hosting.verdicts import Failure

log = logging.getLogger("partida.hosting.runner")

STDERR_LINE = 300  # characters of a stderr line reported (and kept for the owner)


class Events:
    """What the runner tells its supervisor: JSON lines on stdout, whole lines from any thread
    (a program's failure is reported from the thread that asked it)."""

    def __init__(self, out: Any = None) -> None:
        self.out = out or sys.stdout
        self.lock = threading.Lock()

    def tell(self, event: str, **fields: Any) -> None:
        line = json.dumps({"event": event, **fields}, separators=(",", ":"))
        with self.lock:
            self.out.write(line + "\n")
            self.out.flush()


@dataclasses.dataclass(frozen=True)
class Orders:
    """One hosted bot as the supervisor asks for it to be played."""

    bot: str
    token: str
    version: int
    games: list[str]
    run: str
    bundle: Path
    ladders: list[str] = dataclasses.field(default_factory=list)
    tournaments: list[str] = dataclasses.field(default_factory=list)
    answer_seeks: bool = False
    max_games: int | None = None

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Orders:
        return cls(
            bot=str(data["bot"]),
            token=str(data["token"]),
            version=int(data["version"]),
            games=[str(g) for g in data["games"]],
            run=str(data["run"]),
            bundle=Path(data["bundle"]),
            ladders=[str(x) for x in data.get("ladders") or []],
            tournaments=[str(x) for x in data.get("tournaments") or []],
            answer_seeks=bool(data.get("answer_seeks")),
            max_games=data.get("max_games"),
        )


class SeatProgram(Agent):
    """A hosted bot's seat in one game: its `HostedAgent`, holding one of the runner's program
    slots from its first decision to the end of its game, and reporting what became of it."""

    name = "hosted"

    def __init__(self, agent: HostedAgent, slots: threading.BoundedSemaphore, on_end: Any, on_first: Any) -> None:
        self.agent = agent
        self.slots = slots
        self.holding = False
        self.ended = False
        self.on_end = on_end
        self.on_first = on_first
        self.rng = random.Random()
        self.lock = threading.Lock()

    def new_game(self, game: Game, seat: int) -> None:
        self.agent.new_game(game, seat)

    def act(self, turn: Turn) -> Action:
        if not self.holding:
            if not self.slots.acquire(timeout=_slot_wait(turn, self.agent.limits)):
                log.warning("%s: every program slot is taken; this decision is answered at random", self.agent.label)
                return turn.prompt.random_answer(self.rng)
            with self.lock:
                if self.ended:  # the game ended while it waited
                    self.slots.release()
                    return turn.prompt.random_answer(self.rng)
                self.holding = True
            self.on_first()
        return self.agent.act(turn)

    def close(self) -> None:
        with self.lock:
            if self.ended:
                return
            self.ended = True
            holding, self.holding = self.holding, False
        try:
            self.agent.close()
        finally:
            if holding:
                self.slots.release()
                tail = [line[:STDERR_LINE] for line in getattr(self.agent.program, "last_stderr", ())]
                self.on_end(self.agent.failure, tail)


def _slot_wait(turn: Turn, limits: Limits) -> float:
    """How long a seat may wait for a program slot: its clock's time less the decision's own
    share, or a decision's time without a clock."""
    clock = turn.clock
    if not clock:
        return max(limits.decision_seconds, 60.0)
    left = float(clock["remaining"][turn.seat])
    return max(0.0, min(left - limits.decision_seconds, left / 2))


class HostedRunner:
    """Every hosted bot's `BotRunner`, started and stopped as the supervisor orders."""

    def __init__(self, url: str, limits: Limits, max_programs: int, events: Events) -> None:
        self.url = url
        self.limits = limits
        self.slots = threading.BoundedSemaphore(max_programs)
        self.events = events
        self.bots: dict[str, tuple[Orders, BotRunner, asyncio.Task[None]]] = {}

    async def play(self, orders: Orders) -> None:
        await self.stop(orders.bot)  # its old connection gone first: a ladder takes one per bot

        def make(game: Game, seat: int, notice: dict[str, Any]) -> Agent:
            game_id = notice["summary"].get("game_id")
            where = {"bot": orders.bot, "version": orders.version, "game_id": game_id, "seat": seat}

            def failed(failure: Failure) -> None:
                self.events.tell(
                    "failure",
                    **where,
                    verdict=str(failure.verdict),
                    detail=failure.detail[:STDERR_LINE],
                    stderr_tail=[line[:STDERR_LINE] for line in failure.stderr_tail],
                )

            def ended(failure: Failure | None, stderr_tail: list[str]) -> None:
                if failure is None:
                    self.events.tell("clean", **where, stderr_tail=stderr_tail)

            agent = HostedAgent(orders.bundle, orders.run, self.limits, f"{orders.bot} v{orders.version}", failed)
            return SeatProgram(agent, self.slots, ended, lambda: self.events.tell("played", **where))

        runner = BotRunner(
            self.url,
            "stdio",  # a bridge to a program, as `partida bot --cmd`: asked for by its account's name only
            name=orders.bot,
            token=orders.token,
            games=orders.games,
            ladders=orders.ladders,
            tournaments=orders.tournaments,
            answer_seeks=orders.answer_seeks,
            max_games=orders.max_games,
            make=make,
        )
        task = asyncio.get_running_loop().create_task(self._run(orders.bot, runner))
        self.bots[orders.bot] = (orders, runner, task)
        log.info("hosted bot %s v%d plays %s", orders.bot, orders.version, ", ".join(orders.games))

    async def _run(self, bot: str, runner: BotRunner) -> None:
        """The bot's runner, started again after a refusal it stops on (a ladder that still
        holds its last connection, say), with a growing pause; never after its token was
        replaced: a newer order plays it now."""
        delay = 1.0
        while True:
            try:
                await runner.run()
                return
            except ServerError as exc:
                if exc.code == "auth_failed":
                    log.warning("hosted bot %s stopped: its token was replaced", bot)
                    return
                log.warning("hosted bot %s: %s; trying again in %.0f s", bot, exc, delay)
            except Exception as exc:  # its trouble alone: the other bots play on
                log.warning("hosted bot %s: %s; trying again in %.0f s", bot, exc, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 60.0)

    async def stop(self, bot: str) -> None:
        held = self.bots.pop(bot, None)
        if held is None:
            return
        _, runner, task = held
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        if runner.client is not None:
            with contextlib.suppress(Exception):
                await runner.client.close()
        log.info("hosted bot %s stopped", bot)

    async def stop_all(self) -> None:
        for bot in list(self.bots):
            await self.stop(bot)

    async def order(self, line: str) -> None:
        data: Any = None
        try:
            data = json.loads(line)
            if data.get("op") == "play":
                await self.play(Orders.from_data(data))
            elif data.get("op") == "stop":
                await self.stop(str(data["bot"]))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            # never the line itself: a play order holds the bot's token in plain text
            fields = {k: data.get(k) for k in ("op", "bot", "version")} if isinstance(data, dict) else None
            log.error("a bad order from the server (%s: %s): %s", type(exc).__name__, exc, fields)


async def main(args: argparse.Namespace) -> None:
    limits = Limits(**json.loads(args.limits)) if args.limits else Limits()
    runner = HostedRunner(args.server, limits, args.max_programs, Events())
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    try:
        while line := await reader.readline():  # the server's end: stdin closes, the runner ends
            await runner.order(line.decode())
    finally:
        await runner.stop_all()


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m partida.hosting.runner", description=__doc__.split("\n\n")[0])
    p.add_argument("--server", required=True, help="the server's websocket URL")
    p.add_argument("--max-programs", type=int, default=8, help="hosted programs alive at once")
    p.add_argument("--limits", default=None, help="the programs' limits, as JSON (partida.hosting.limits.Limits)")
    p.add_argument("--log-level", default="warning")
    return p.parse_args(argv)


if __name__ == "__main__":
    arguments = parse()
    logging.basicConfig(level=arguments.log_level.upper(), stream=sys.stderr, format="%(name)s: %(message)s")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main(arguments))
