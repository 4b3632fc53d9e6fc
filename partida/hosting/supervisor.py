"""The server's side of hosting: it keeps the runner process (partida/hosting/runner.py) going
and tells it which bots to play, and records what the runner reports.

It runs in `partida serve --host-bots`, beside the server, and is handed the few parts it uses:
the hosted bots' rows, a way to give a bot account a new token, and the ladders' games. Each
time a hosted bot is ordered played it gets a new token (the old one stops working), passed to
the runner on its stdin: no person ever holds a hosted bot's token, so only the runner logs in
as one. A verdict the runner reports is stored; a bot whose games failed `pause_after` times in
a row is paused with the reason, and stopped, until its owner submits or activates again.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from partida.hosting.limits import Limits
from partida.storage.hosted import ACTIVE, BotInfo, HostedStore

log = logging.getLogger("partida.hosting")

PAUSE_AFTER = 3  # failed games in a row that pause a hosted bot
REPORT_BYTES = 1 << 20  # the longest line the runner reports (its stderr tails are cut well below)


@dataclass(frozen=True)
class HostingPlan:
    """What the operator chose on `partida serve`: where bundles are, the programs' limits, how
    many may be alive at once, and where hosted bots play besides challenges and `add_bot`."""

    directory: Path
    limits: Limits = field(default_factory=Limits)
    max_programs: int = 8
    ladders: list[str] = field(default_factory=list)
    tournaments: list[str] = field(default_factory=list)
    answer_seeks: bool = False
    games_per_bot: int = 2
    pause_after: int = PAUSE_AFTER


class HostingSupervisor:
    def __init__(
        self,
        url: str,
        plan: HostingPlan,
        hosted: HostedStore,
        new_token: Callable[[str], Awaitable[str]],
        ladder_game: Callable[[str], Awaitable[str | None]],
        preexec: Callable[[], None] | None = None,
    ) -> None:
        self.url = url
        self.plan = plan
        self.hosted = hosted
        self.new_token = new_token
        self.ladder_game = ladder_game
        self.preexec = preexec
        self.process: asyncio.subprocess.Process | None = None
        self.tasks: set[asyncio.Task[Any]] = set()
        self.main: asyncio.Task[None] | None = None
        self.names: dict[int, str] = {}  # account id -> name, of the bots ordered played

    def start(self) -> None:
        self.main = asyncio.get_running_loop().create_task(self._supervise())

    async def stop(self) -> None:
        if self.main is not None:
            self.main.cancel()
            await asyncio.gather(self.main, return_exceptions=True)
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    def changed(self, account_id: int) -> None:
        """A hosted bot's version or state changed (a submission, activate, withdraw)."""
        self._spawn(self._refresh(account_id))

    # The runner process.

    async def _supervise(self) -> None:
        delay = 1.0
        while True:
            self.process = process = await asyncio.create_subprocess_exec(
                *[sys.executable, "-m", "partida.hosting.runner", "--server", self.url],
                *["--max-programs", str(self.plan.max_programs)],
                *["--limits", json.dumps(dataclasses.asdict(self.plan.limits))],
                *["--log-level", "debug" if log.isEnabledFor(logging.DEBUG) else "warning"],
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                preexec_fn=self.preexec,
                limit=REPORT_BYTES,
            )
            try:
                for bot in await self.hosted.playing():
                    await self._order_play(bot)
                await self._read(process)
                said = f"exited with {await process.wait()}"
            except asyncio.CancelledError:
                await self._end(process)
                raise
            except Exception as exc:  # the database, say: the runner starts again, and orders again
                said = f"was stopped ({exc})"
                await self._end(process)
            log.warning("the hosted bots' runner %s; restarting it in %.0f s", said, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 60)

    async def _end(self, process: asyncio.subprocess.Process) -> None:
        """Its stdin closed is the runner's signal to stop its bots and end."""
        with contextlib.suppress(Exception):
            assert process.stdin is not None
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 10)
        except (TimeoutError, asyncio.CancelledError):
            with contextlib.suppress(ProcessLookupError):
                process.kill()

    async def _read(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None
        while line := await process.stdout.readline():
            try:
                event = json.loads(line)
                await self._report(event)
            except (ValueError, KeyError, TypeError) as exc:
                log.warning("the hosted bots' runner said something unreadable (%s): %r", exc, line[:200])
            except Exception:
                log.exception("a hosted bot's report could not be stored")

    def _send(self, order: dict[str, Any]) -> None:
        process = self.process
        if process is None or process.stdin is None or process.returncode is not None:
            return  # the runner's next start orders every bot that plays
        process.stdin.write((json.dumps(order) + "\n").encode())

    # Orders and reports.

    async def _refresh(self, account_id: int) -> None:
        bot = await self.hosted.bot(account_id)
        if bot is None:
            return
        if bot.status == ACTIVE and bot.active is not None:
            await self._order_play(bot)
        else:
            self._send({"op": "stop", "bot": bot.name})

    async def _order_play(self, bot: BotInfo) -> None:
        version = bot.active
        if version is None:
            return
        ladders = [name for name in self.plan.ladders if await self.ladder_game(name) in version.games]
        self.names[bot.account_id] = bot.name
        self._send(
            {
                "op": "play",
                "bot": bot.name,
                "token": await self.new_token(bot.name),
                "version": version.number,
                "games": version.games,
                "run": version.run,
                "bundle": str(self.plan.directory / version.sha256),
                "ladders": ladders,
                "tournaments": self.plan.tournaments,
                "answer_seeks": self.plan.answer_seeks,
                "max_games": self.plan.games_per_bot,
            }
        )

    async def _report(self, event: dict[str, Any]) -> None:
        account_id = next((i for i, name in self.names.items() if name == event["bot"]), None)
        if account_id is None:
            return
        kind = event["event"]
        game_id = event.get("game_id")
        if kind == "played" and isinstance(game_id, int):
            await self.hosted.mark_version(game_id, int(event["seat"]), int(event["version"]))
        elif kind == "clean":
            await self.hosted.game_went_well(
                account_id,
                int(event["version"]),
                game_id if isinstance(game_id, int) else None,
                [str(line) for line in event.get("stderr_tail") or []],
            )
        elif kind == "failure":
            reason = await self.hosted.record_failure(
                account_id,
                int(event["version"]),
                game_id if isinstance(game_id, int) else None,
                str(event["verdict"]),
                str(event["detail"]),
                [str(line) for line in event.get("stderr_tail") or []],
                self.plan.pause_after,
            )
            if reason is not None:
                log.warning("hosted bot %s is paused: %s", event["bot"], reason)
                self._send({"op": "stop", "bot": event["bot"]})

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        task.add_done_callback(_log_failure)


def _log_failure(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("hosting: %s", task.exception())
