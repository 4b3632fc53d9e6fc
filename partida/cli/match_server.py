"""`partida match` through a server: each game a private room where bots play as they will when
deployed (built-in agents of the server's pool, bot accounts connected to it, or programs the
match starts for a seat with `--seat-cmd`). With `--rotate` or `--sprt` games come in sets, the
agents rotated over the seats, and the same statistics and SPRT as `--local` are kept.

A room's seed is drawn by the server and a creator cannot choose it, so the games of a set do
not share a deal: the set cancels the advantage of a seat, not the luck of the deal. A game with
an openings book (Othello) gives every game of a set the same opening. No `register`: play.py
owns the `match` command."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from partida.cli import CliError
from partida.cli.common import game_registry, parse_option_pairs
from partida.cli.match_report import exit_status, print_summary, progress_bar, progress_text, sprt_spec
from partida.match.paired import Deal, SetResult, Tally, deals, first_agent_points, rotations
from partida.match.processes import SeatCommand, create_bot_accounts, exit_text, start_seat, start_server, stop

PAIRING_NOTE = (
    "sets: the seats rotated over fresh seeds (the server draws each room's seed; "
    "the luck of the deal does not cancel within a set)"
)
# Games of a match run concurrently: bots spend most of a game thinking, the server and the
# watcher almost nothing, so N games take about as long as one while bots have cores to think on.
DEFAULT_PARALLEL = 8
READY_SECONDS = 60.0  # how long a server the match started, and the bots it starts, may take to come up


class SeatFailed(Exception):
    """A seat's bot stopped playing: the match ends with this one line."""


def _label(seat: str | SeatCommand) -> str:
    return str(seat)


def _check_seat_gone(summary: dict[str, Any], labels: list[str], shift: int) -> None:
    """A `room` push in a game in play: a seat whose bot is no longer connected ends the match
    (it would only lose on time, or hold the game for the server's bot clock)."""
    if summary.get("status") != "playing":
        return
    for seat in summary.get("seats", []):
        if seat.get("connected") is False:
            index = (seat["seat"] + shift) % len(labels)
            raise SeatFailed(
                f"seat {index + 1} ({labels[index]}): its bot lost its connection to the server "
                f"in room {summary.get('code')}"
            )


class ServerMatch:
    """One match's rooms, played from one watching connection."""

    def __init__(
        self, args: argparse.Namespace, client: Any, names: list[str], labels: list[str], waits_for_bots: bool
    ) -> None:
        self.args, self.client, self.names, self.labels = args, client, names, labels
        self.waits_for_bots = waits_for_bots  # the match started bot programs, which may still be logging in
        self.options = parse_option_pairs(args.option)
        self.slots = asyncio.Semaphore(args.parallel or DEFAULT_PARALLEL)
        self.records: list[dict[str, Any]] = []
        self.throttled_since: float | None = None
        self.started = time.monotonic()

    def _may_retry(self, exc: Any) -> bool:
        """Bots the match started may still be logging in; and the server bounds the games with
        bots one address keeps going (a game from before the match may still hold one)."""
        if exc.code == "rate_limited" and "under way" in exc.message:
            self.throttled_since = self.throttled_since or time.monotonic()
            return time.monotonic() - self.throttled_since < READY_SECONDS
        waiting = self.waits_for_bots and exc.code in ("no_bot_available", "unknown_agent")
        return waiting and time.monotonic() - self.started < READY_SECONDS

    async def play_set(self, deal: Deal, seatings: list[list[str]]) -> SetResult:
        out = SetResult(deal)
        options = dict(self.options)
        if deal.opening is not None:
            options["opening"] = deal.opening
        games = [self._game(deal, options, seating, shift) for shift, seating in enumerate(seatings)]
        out.games.extend(await asyncio.gather(*games))
        return out

    async def _game(self, deal: Deal, options: dict[str, Any], seating: list[str], shift: int) -> dict[str, Any]:
        """One room; `shift`: the rotation, seat s holds the agent of --seat (s + shift) mod n."""
        from partida.cli.play import _clock, play_bot_game
        from partida.client import ServerError

        async with self.slots:
            while True:
                try:
                    record = await play_bot_game(
                        self.client,
                        self.args.game,
                        options,
                        seating,
                        _clock(self.args.clock),
                        on_room=lambda summary: _check_seat_gone(summary, self.labels, shift),
                    )
                    break
                except ServerError as exc:
                    if not self._may_retry(exc):
                        raise
                    await asyncio.sleep(0.5)
        self.throttled_since = None
        result = record["result"]
        record.update(
            deal=deal.index,
            opening=deal.opening,
            seats=[{"seat": i, "agent": self.labels[(i + shift) % len(self.labels)]} for i in range(len(seating))],
            points=first_agent_points(result["ranks"], result["winners"], (len(seating) - shift) % len(seating)),
        )
        self.records.append(record)
        if self.args.json:
            print(json.dumps(record, separators=(",", ":"), default=str), flush=True)
        else:
            agents = " vs ".join(s["agent"] for s in record["seats"])
            print(
                f"game {record['game_id']} room {record['room']}: {agents} -> scores {result['scores']} "
                f"winners {result['winners']} ({record['moves']} moves, {record['seconds']:.1f} s)",
                flush=True,
            )
        return record


async def _play(args: argparse.Namespace, match: ServerMatch, tally: Tally) -> str | None:
    """Play the sets, `parallel` games at a time; the SPRT's verdict, if it stopped the match."""
    book: list[str] = []
    if not args.no_book and "opening" not in match.options:
        with contextlib.suppress(Exception):  # a game only the server knows has no book here
            book = game_registry(args).get(args.game).openings()
    paired = args.rotate or args.sprt is not None
    seatings = rotations(match.names) if paired else [list(match.names)]
    sets = -(-args.games // len(seatings))
    spec = sprt_spec(args, len(match.names))
    in_flight = max(1, -(-(args.parallel or DEFAULT_PARALLEL) // len(seatings)))
    planned = deals(sets, args.seed, book)
    running: set[asyncio.Task[SetResult]] = set()
    verdict = None
    with progress_bar() as progress:
        task = progress.add_task("", total=sets * len(seatings))
        try:
            while True:
                while len(running) < in_flight and (deal := next(planned, None)) is not None:
                    running.add(asyncio.ensure_future(match.play_set(deal, seatings)))
                if not running:
                    break
                done, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for finished in done:
                    tally.add(finished.result())
                    line, verdict = progress_text(tally, spec, len(match.names))
                    progress.update(task, advance=len(seatings), description=line)
                if verdict is not None:
                    break
        finally:
            for pending in running:
                pending.cancel()
            await asyncio.gather(*running, return_exceptions=True)
    return verdict


async def _watch(process: asyncio.subprocess.Process, what: str) -> str:
    code = await process.wait()
    return f"{what} {exit_text(code)}"


async def _wait_for_server(url: str, server: asyncio.subprocess.Process, folder: Path) -> None:
    from partida.client import Client, ConnectionLost

    deadline = time.monotonic() + READY_SECONDS
    while True:
        if server.returncode is not None:
            log = (folder / "serve.log").read_text(errors="replace").strip().splitlines()
            raise CliError(f"the match's server {exit_text(server.returncode)}: {log[-1] if log else 'no output'}")
        try:
            client = await Client.connect(url, name="match-check")
        except (ConnectionLost, OSError):
            if time.monotonic() > deadline:
                raise CliError(f"the match's server did not answer at {url} within {READY_SECONDS:.0f} s") from None
            await asyncio.sleep(0.3)
            continue
        await client.close()
        return


async def run_server_match(args: argparse.Namespace) -> int:
    from partida.client import Client, ConnectionLost, ServerError

    seats: list[str | SeatCommand] = list(args.seat)
    labels = [_label(s) for s in seats]
    commands = {i: s for i, s in enumerate(seats) if isinstance(s, SeatCommand)}
    names = [f"seat{i + 1}" if i in commands else str(s) for i, s in enumerate(seats)]
    folder: Path | None = None
    processes: list[tuple[asyncio.subprocess.Process, str]] = []
    url = args.server
    if commands:
        if args.server_given:
            raise CliError(
                "--seat-cmd starts its program against a server the match starts itself: drop --server, "
                "or run your bot under a bot account on that server and give its name to --seat"
            )
        pool = sorted({str(s) for s in seats if not isinstance(s, SeatCommand)})
        for agent in pool:
            if "[" in agent:
                raise CliError(f"--seat {agent}: agents with parameters play in-process (--local)")
        folder = Path(tempfile.mkdtemp(prefix="partida-match-"))
        db_url = f"sqlite:///{folder / 'partida.db'}"
        tokens = await create_bot_accounts(db_url, [names[i] for i in commands])
        server, url = await start_server(folder, db_url, pool, args.game_file, args.games_dir)
        processes.append((server, "the match's server"))
    tally = Tally()
    verdict = None
    failure: str | None = None
    started = time.perf_counter()
    match: ServerMatch | None = None
    try:
        if folder is not None:
            await _wait_for_server(url, processes[0][0], folder)
            for index, command in commands.items():
                try:
                    process = await start_seat(command, url, tokens[names[index]], names[index], args.game)
                except OSError as exc:
                    raise CliError(f"seat {index + 1} ({command}): cannot start it: {exc.strerror or exc}") from None
                processes.append((process, f"seat {index + 1} ({command}): its process"))
        try:
            client = await Client.connect(url, name="match")
        except ConnectionLost as exc:
            raise CliError(f"{exc}. Is the server running? Start one with `partida serve`.") from None
        async with client:
            match = ServerMatch(args, client, names, labels, bool(commands))
            playing = asyncio.ensure_future(_play(args, match, tally))
            watchers = [asyncio.ensure_future(_watch(p, what)) for p, what in processes]
            try:
                await asyncio.wait([playing, *watchers], return_when=asyncio.FIRST_COMPLETED)
                if playing.done():
                    verdict = playing.result()
                else:
                    failure = next(w.result() for w in watchers if w.done())
            except (SeatFailed, ConnectionLost) as exc:
                # a process that ended says more than the connection it dropped: give it a moment
                if watchers:
                    await asyncio.wait(watchers, timeout=1.0)
                ended = [w.result() for w in watchers if w.done()]
                failure = ended[0] if ended else str(exc)
            except ServerError as exc:
                if exc.code in ("no_bot_available", "unknown_agent"):
                    raise CliError(exc.message) from None
                failure = f"the server refused a game: {exc.message} ({exc.code})"
            finally:
                for waiting in (playing, *watchers):
                    waiting.cancel()
                await asyncio.gather(playing, *watchers, return_exceptions=True)
    finally:
        for process, _ in reversed(processes):
            await stop(process)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
    _report(args, match, labels, tally, verdict, time.perf_counter() - started)
    if failure is not None:
        played = len(match.records) if match is not None else 0
        raise CliError(f"the match stopped after {played} games: {failure}")
    return exit_status(args, verdict)


def _report(
    args: argparse.Namespace,
    match: ServerMatch | None,
    labels: list[str],
    tally: Tally,
    verdict: str | None,
    seconds: float,
) -> None:
    from partida.cli.play import summarize

    records = match.records if match is not None else []
    counted = summarize(records)  # every game that ended, also those of a set the match stopped in
    paired = args.rotate or args.sprt is not None
    extra: dict[str, Any] = {"mean_seconds": counted["mean_seconds"]}
    extra.update(mean_moves=counted["mean_moves"], games_finished=counted["games"])
    extra["pairing"] = PAIRING_NOTE if paired else "none: every game seats the agents in --seat order"
    notes = [f"{a}: {r['wins']} wins, {r['draws']} draws, {r['losses']} losses" for a, r in counted["agents"].items()]
    if paired:
        notes.append(PAIRING_NOTE)
    if args.json:
        # `agents` of the JSON summary has always been the per-name counts
        extra["agents"] = counted["agents"]
        extra["seats"] = labels
    print_summary(args, labels, tally, verdict, seconds, extra, notes)
