"""`partida serve`: the server, with a pool of built-in bots as separate processes."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import functools
import gc
import logging
import os
import signal
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from partida.cli import CliError
from partida.cli.common import add_db_flag, add_game_files_flags, add_log_flag, setup_logging

if TYPE_CHECKING:
    from partida.hosting.supervisor import HostingPlan, HostingSupervisor

log = logging.getLogger("partida.serve")

LIMITS_ENV = "PARTIDA_LIMITS"
CPU_ENV = "PARTIDA_CPU"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run the game server (with its bot pool)", description=__doc__)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    p.add_argument("--port", type=_port, default=8765, help="port to listen on (default: %(default)s)")
    add_db_flag(p)
    p.add_argument("--mqtt", default=None, metavar="URL", help="publish events to this MQTT broker (mqtt://host:port)")
    p.add_argument("--no-bots", action="store_true", help="do not start the built-in bot pool")
    p.add_argument(
        "--bots",
        default=None,
        metavar="AGENTS",
        help="comma-separated agents for the bot pool (default: every agent)",
    )
    p.add_argument(
        "--ladder-bots",
        action="append",
        default=[],
        metavar="LADDER=AGENTS",
        help="put built-in bots into a ladder, e.g. --ladder-bots arena=alphabeta,mcts,random (repeatable; "
        "create the ladder first with `partida ladder create`)",
    )
    p.add_argument(
        "--tournament-bots",
        action="append",
        default=[],
        metavar="TOURNAMENT=AGENTS",
        help="enter built-in bots in a tournament, e.g. --tournament-bots cup=alphabeta,mcts,random (repeatable; "
        "they enter once it is created: `partida tournament create cup ...`)",
    )
    p.add_argument(
        "--seek-bots",
        default=None,
        metavar="AGENTS",
        help="comma-separated pool agents that answer the lobby's seeks allowing bots, e.g. --seek-bots alphabeta "
        "(they join the pool if --bots left them out)",
    )
    add_game_files_flags(p, "load")
    p.add_argument(
        "--sign-up",
        choices=("open", "invite", "closed"),
        default="open",
        help="who may make an account from a browser or client: anyone (open, the default: the server listens "
        "on this machine only unless --host says otherwise, and each address makes a few accounts an hour), "
        "those with a code from `partida db invite` (invite), or nobody: `partida db create-user` only (closed)",
    )
    p.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="change a rate or resource limit, e.g. --limit requests_per_second=100 (repeatable; "
        f"the names and defaults are in docs/server.md, Limits; ${LIMITS_ENV} holds more, space-separated)",
    )
    p.add_argument(
        "--trusted-proxy",
        action="append",
        default=[],
        metavar="ADDRESS",
        help="a reverse proxy (address or network, e.g. 127.0.0.1 or 10.0.0.0/8) in front of the server: "
        "connections from it are limited by the client address its X-Forwarded-For names (repeatable)",
    )
    p.add_argument(
        "--abandon-after",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="a game without a clock whose seat is away this long is abandoned (default: %(default)s)",
    )
    p.add_argument(
        "--node",
        default=None,
        metavar="NAME",
        help="run as one node of several sharing one PostgreSQL database (docs/scale-out.md)",
    )
    p.add_argument(
        "--public-url",
        default=None,
        metavar="URL",
        help="where clients reach this node, sent to clients of other nodes (default: ws://HOST:PORT)",
    )
    p.add_argument(
        "--lease",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="a node's lease on its rooms; a dead node's games resume elsewhere after it (default: %(default)s)",
    )
    p.add_argument(
        "--cpu",
        default=None,
        metavar="N",
        help="run the server (its event loop and its threads) on CPU N only, its SQLite writer's process "
        f"on the other CPUs; the bot pool keeps every CPU (docs/speed.md; ${CPU_ENV} sets it too)",
    )
    hosting = p.add_argument_group(
        "hosted bots", "run bots people submit, each program in a sandbox (docs/hosted-bots.md)"
    )
    hosting.add_argument(
        "--host-bots",
        action="store_true",
        help="take submissions (`partida bots submit`) and play them, through a runner process, in bubblewrap",
    )
    hosting.add_argument(
        "--host-bots-dir",
        type=Path,
        default=Path("partida-hosted"),
        metavar="DIR",
        help="where submitted bundles are kept, by digest (default: ./%(default)s)",
    )
    hosting.add_argument(
        "--host-bots-max",
        type=int,
        default=8,
        metavar="N",
        help="hosted programs alive at once, across every hosted bot (default: %(default)s)",
    )
    hosting.add_argument(
        "--host-bots-games",
        type=int,
        default=2,
        metavar="N",
        help="games at once one hosted bot declares it takes (default: %(default)s)",
    )
    hosting.add_argument(
        "--host-bots-limit",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a limit on every hosted program, e.g. memory_mib=256 or decision_seconds=2 (repeatable; the names "
        "and defaults are in docs/hosted-bots.md, The limits)",
    )
    hosting.add_argument(
        "--host-bots-pause-after",
        type=int,
        default=3,
        metavar="N",
        help="pause a hosted bot after N of its games in a row failed (default: %(default)s)",
    )
    hosting.add_argument(
        "--host-bots-ladder",
        action="append",
        default=[],
        metavar="LADDER",
        help="every hosted bot that plays this ladder's game joins it (repeatable)",
    )
    hosting.add_argument(
        "--host-bots-tournament",
        action="append",
        default=[],
        metavar="TOURNAMENT",
        help="every hosted bot enters this tournament, if it plays its game (repeatable)",
    )
    hosting.add_argument(
        "--host-bots-seeks",
        action="store_true",
        help="hosted bots answer the lobby's seeks that allow bots, of the games they play",
    )
    add_log_flag(p, "info")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    setup_logging(args.log_level)
    from partida.bots.registry import all_agents
    from partida.games.registry import GameLoadError
    from partida.server.addresses import check_networks
    from partida.server.app import Server, ServerConfig
    from partida.server.limits import Limits
    from partida.server.services.hosted_bots import HostingSettings
    from partida.storage.accounts import check_name

    pool: list[str] = []
    if not args.no_bots:
        known = all_agents()
        pool = sorted(known) if args.bots is None else [a.strip() for a in args.bots.split(",") if a.strip()]
        unknown = [a for a in pool if a not in known]
        if unknown:
            raise CliError(f"unknown agent {unknown[0]!r} in --bots (known: {', '.join(sorted(known))})")
        bridges = [a for a in pool if known[a].external]
        if bridges and args.bots is not None:  # a bridge needs a program: `partida bot --gtp/--cmd`
            raise CliError(f"--bots {bridges[0]}: a bridge runs a program of yours: use `partida bot --gtp/--cmd`")
        pool = [a for a in pool if not known[a].external]
    ladder_bots = parse_ladder_bots(args.ladder_bots)
    tournament_bots = parse_ladder_bots(args.tournament_bots, flag="--tournament-bots")
    seek_bots = {a.strip() for a in (args.seek_bots or "").split(",") if a.strip()}
    unknown = sorted(seek_bots - set(all_agents()))
    if unknown:
        raise CliError(f"unknown agent {unknown[0]!r} in --seek-bots (known: {', '.join(sorted(all_agents()))})")
    bridged = sorted(a for a in seek_bots if all_agents()[a].external)
    if bridged:
        raise CliError(f"--seek-bots {bridged[0]}: a bridge runs a program of yours: use `partida bot --gtp/--cmd`")
    for agent in [*ladder_bots, *tournament_bots, *sorted(seek_bots)]:
        if agent not in pool:
            pool.append(agent)  # a ladder, tournament or seek bot is a pool bot that also enters them
    try:
        # $PARTIDA_LIMITS (NAME=VALUE separated by spaces) comes first, so --limit overrides it.
        limits = Limits().with_settings([*os.environ.get(LIMITS_ENV, "").split(), *args.limit])
    except ValueError as exc:
        raise CliError(str(exc)) from None
    try:
        trusted_proxies = check_networks(args.trusted_proxy)
    except ValueError as exc:
        raise CliError(f"--trusted-proxy: {exc}") from None
    if not 0 < args.abandon_after <= 86400:
        raise CliError("--abandon-after must be more than 0 seconds and at most a day")
    public_url = args.public_url
    if args.node is not None:
        problem = check_name(args.node, 64, "a node name")
        if problem is not None:
            raise CliError(f"--node: {problem}")
        if not 0.5 <= args.lease <= 3600:
            raise CliError("--lease must be 0.5 to 3600 seconds")
        if public_url is None and args.host in ("0.0.0.0", "::", ""):
            raise CliError(f"--node on {args.host!r}: give --public-url, where clients of other nodes reach it")
        if public_url is not None and not public_url.startswith(("ws://", "wss://")):
            raise CliError(f"--public-url must start with ws:// or wss://, not {public_url!r}")
    elif public_url is not None:
        raise CliError("--public-url is for a node of several: give --node NAME too")
    plan = _hosting_plan(args)
    every_cpu = _pin(args.cpu if args.cpu is not None else os.environ.get(CPU_ENV) or None)
    config = ServerConfig(
        host=args.host,
        port=args.port,
        db_url=args.db,
        mqtt_url=args.mqtt,
        game_files=args.game_file,
        game_dirs=args.games_dir,
        limits=limits,
        trusted_proxies=trusted_proxies,
        abandon_after=args.abandon_after,
        node=args.node,
        public_url=public_url,
        lease=args.lease,
        writer_cpus=_writer_cpus(every_cpu),
        sign_up=args.sign_up,
        hosting=None if plan is None else HostingSettings(plan.directory),
    )
    try:
        server = Server(config)
    except GameLoadError as exc:
        raise CliError(str(exc)) from None
    try:
        asyncio.run(_serve(server, pool, ladder_bots, every_cpu, tournament_bots, seek_bots, plan))
    except OSError as exc:
        raise CliError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    return 0


def _hosting_plan(args: argparse.Namespace) -> HostingPlan | None:
    """The operator's hosting choices, checked; None without --host-bots. Never unsandboxed:
    where bubblewrap cannot run, the server does not start."""
    from partida.hosting.limits import Limits as ProgramLimits
    from partida.hosting.sandbox import sandbox_missing
    from partida.hosting.supervisor import HostingPlan

    if not args.host_bots:
        return None
    missing = sandbox_missing()
    if missing is not None:
        raise CliError(f"--host-bots: {missing}")
    fields = {f.name: f.type for f in dataclasses.fields(ProgramLimits)}
    changes: dict[str, float | int] = {}
    for setting in args.host_bots_limit:
        name, sep, value = setting.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or name not in fields:
            raise CliError(f"--host-bots-limit: unknown limit {setting!r} (known: {', '.join(fields)})")
        try:
            changes[name] = int(value) if fields[name] in (int, "int") else float(value)
        except ValueError:
            raise CliError(f"--host-bots-limit: {name} takes a number, not {value!r}") from None
    try:
        limits = ProgramLimits(**changes)  # type: ignore[arg-type]
    except ValueError as exc:
        raise CliError(f"--host-bots-limit: {exc}") from None
    for flag, value in (("--host-bots-max", args.host_bots_max), ("--host-bots-games", args.host_bots_games)):
        if not 1 <= value <= 1000:
            raise CliError(f"{flag} is 1 to 1000, not {value}")
    if args.host_bots_pause_after < 1:
        raise CliError("--host-bots-pause-after is at least 1")
    directory = args.host_bots_dir.resolve()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(f"--host-bots-dir {directory}: {exc.strerror or exc}") from None
    closed = _closed_to_others(directory)
    if closed is not None:
        raise CliError(
            f"--host-bots-dir {directory}: the sandbox runs programs as nobody, and {closed} is closed to others "
            "(chmod o+x it, or choose another directory)"
        )
    return HostingPlan(
        directory,
        limits,
        max_programs=args.host_bots_max,
        ladders=args.host_bots_ladder,
        tournaments=args.host_bots_tournament,
        answer_seeks=args.host_bots_seeks,
        games_per_bot=args.host_bots_games,
        pause_after=args.host_bots_pause_after,
    )


def _closed_to_others(directory: Path) -> Path | None:
    """The first of `directory` and its parents that others cannot pass through, when the
    server runs as root (the sandbox then drops to nobody); None when all are open."""
    if os.geteuid() != 0:
        return None
    for where in (directory, *directory.parents):
        if not where.stat().st_mode & stat.S_IXOTH:
            return where
    return None


def _port(text: str) -> int:
    """A TCP port for argparse: a number the socket takes (0: any free port), so that a port out
    of range is a usage error rather than the socket's OverflowError."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, not {port}")
    return port


def _pin(cpu: str | None) -> set[int] | None:
    """Run this process (and the threads it starts) on CPU `cpu` only; returns the CPUs it could
    use before, for the bots (and the SQLite writer's process), or None when not asked to. The
    event loop hands work to its threads and takes it back thousands of times a second: on one
    CPU neither waits for the other CPU to wake up for it. It is a choice
    for whoever runs the machine (several servers on one machine should each have their own),
    not a default."""
    if cpu is None:
        return None
    try:
        wanted = int(cpu)
    except ValueError:
        raise CliError(f"--cpu takes a CPU number, not {cpu!r}") from None
    if not hasattr(os, "sched_setaffinity"):
        raise CliError("--cpu needs an operating system that can pin a process to a CPU (Linux)")
    allowed = os.sched_getaffinity(0)
    if wanted not in allowed:
        raise CliError(f"--cpu {wanted}: this server may run on CPUs {', '.join(map(str, sorted(allowed)))}")
    os.sched_setaffinity(0, {wanted})
    return allowed


def _writer_cpus(every_cpu: set[int] | None) -> frozenset[int] | None:
    """Where the SQLite writer's process runs when the server is pinned (`_pin`): on the CPUs
    other than the server's, if there are any. It wakes for every batch, and one woken on the
    event loop's CPU would run at once while the loop waits for the CPU to come back
    (docs/speed.md, "One CPU for the server")."""
    if every_cpu is None:
        return None
    return frozenset(every_cpu - os.sched_getaffinity(0) or every_cpu)


def parse_ladder_bots(values: list[str], flag: str = "--ladder-bots") -> dict[str, list[str]]:
    """`--ladder-bots LADDER=a1,a2` (or `--tournament-bots`) flags as agent -> the ladders (or
    tournaments) it enters: one pool process per agent enters all of its own (two connections of
    one bot account cannot both join a ladder)."""
    from partida.bots.registry import all_agents

    known = all_agents()
    what = flag.removeprefix("--").removesuffix("-bots").upper()
    by_agent: dict[str, list[str]] = {}
    for value in values:
        ladder, sep, agents = value.partition("=")
        names = [a.strip() for a in agents.split(",") if a.strip()]
        if not sep or not ladder.strip() or not names:
            raise CliError(f"{flag} takes {what}=AGENT,AGENT,... not {value!r}")
        for agent in names:
            if agent not in known:
                raise CliError(f"unknown agent {agent!r} in {flag} (known: {', '.join(sorted(known))})")
            if known[agent].external:  # a bridge needs a program: `partida bot --gtp/--cmd`
                raise CliError(f"{flag} {agent}: a bridge runs a program of yours: use `partida bot --gtp/--cmd`")
            if ladder.strip() in by_agent.get(agent, []):
                raise CliError(f"{flag}: {agent} is named twice for {ladder.strip()} (one account, one entry)")
            by_agent.setdefault(agent, []).append(ladder.strip())
    return by_agent


async def _check_ladder_bots(server, ladder_bots: dict[str, list[str]]) -> None:  # type: ignore[no-untyped-def]
    """Every ladder named exists and each of its bots plays its game, checked before any bot starts
    (otherwise the bot would be refused, exit and be restarted forever)."""
    from partida.bots.registry import all_agents
    from partida.games.registry import UnknownGame

    for agent, ladders in ladder_bots.items():
        for name in ladders:
            ladder = await server.store.ladders.get(name)
            if ladder is None:
                raise CliError(
                    f"--ladder-bots: there is no ladder named {name!r}; create it first, e.g. "
                    f"`partida ladder create {name} --game othello --clock 10s+0.1`"
                )
            try:
                game = server.registry.get(ladder.game)
            except UnknownGame:
                raise CliError(
                    f"--ladder-bots: ladder {name!r} plays {ladder.game!r}, which this server does not load"
                ) from None
            if not all_agents()[agent].supports(game):
                raise CliError(f"--ladder-bots: agent {agent!r} does not play {game.name} (ladder {name!r})")


def _play_hint(server, pool: list[str]) -> str:  # type: ignore[no-untyped-def]
    """A command that plays on this server as started: it said `--vs alphabeta` whatever the
    pool (none: a room for a friend), and named no `--server` off the default port."""
    from partida.bots.registry import all_agents
    from partida.cli.common import DEFAULT_SERVER

    game = server.registry.get("tictactoe")
    bots = [a for a in sorted(pool, key=lambda a: a != "alphabeta") if all_agents()[a].supports(game)]
    vs = f" --vs {bots[0]}" if bots else ""
    where = "" if server.url == DEFAULT_SERVER else f" --server {server.url}"
    return f"partida play tictactoe{vs}{where}"


async def _serve(  # type: ignore[no-untyped-def]
    server,
    pool: list[str],
    ladder_bots: dict[str, list[str]],
    every_cpu: set[int] | None,
    tournament_bots: dict[str, list[str]] | None = None,
    seek_bots: set[str] | None = None,
    hosting: HostingPlan | None = None,
) -> None:
    tournament_bots = tournament_bots or {}
    seek_bots = seek_bots or set()
    from partida.storage.database import StorageError

    try:
        await server.start()
    except StorageError as exc:
        raise CliError(str(exc)) from None
    try:
        await _check_ladder_bots(server, ladder_bots)
    except CliError:
        await server.stop()
        raise
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    supervisors = [
        asyncio.create_task(
            _supervise_bot(
                server,
                agent,
                stop,
                ladder_bots.get(agent, []),
                every_cpu,
                tournament_bots.get(agent, []),
                answer_seeks=agent in seek_bots,
            )
        )
        for agent in pool
    ]
    print(f"Partida is serving on {server.url} (database: {server.db.url_for_people}).", flush=True)
    print(f"Play in a browser: {server.http_url}", flush=True)
    if server.cluster is not None:
        cluster = server.cluster
        print(f"Node {cluster.name}, reached at {cluster.public_url} (lease {cluster.lease:g} s).", flush=True)
    if pool:
        print(f"Bot pool: {', '.join(pool)}.", flush=True)
    for agent, ladders in sorted(ladder_bots.items()):
        print(f"Ladder bot pool-{agent} plays in: {', '.join(ladders)}.", flush=True)
    for agent, tournaments in sorted(tournament_bots.items()):
        print(f"Tournament bot pool-{agent} enters: {', '.join(tournaments)}.", flush=True)
    if seek_bots:
        print(f"Answering seeks that allow bots: {', '.join(f'pool-{a}' for a in sorted(seek_bots))}.", flush=True)
    hosted = None if hosting is None else _start_hosting(server, hosting, every_cpu)
    if hosting is not None:
        print(
            f"Hosting submitted bots (bundles in {hosting.directory}; "
            f"at most {hosting.max_programs} programs at once).",
            flush=True,
        )
    print(f"Play: {_play_hint(server, pool)}   Stop: Ctrl-C", flush=True)
    _tune_collector()
    try:
        await stop.wait()
        _say("Stopping.")
    finally:
        # whatever happened to the console, the server stops: an unclosed database leaves its
        # threads running, and the process then waits on them for ever with its port open
        for task in supervisors:
            task.cancel()
        await asyncio.gather(*supervisors, return_exceptions=True)
        if hosted is not None:
            await hosted.stop()
        await server.stop()


def _say(text: str) -> None:
    """A line for the operator that must not stop the stopping: with `partida serve | tee log`,
    a Ctrl-C reaches the whole process group and `tee` is gone before this line is written."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        # nobody reads any more: later lines (and the flush at exit) go nowhere instead of failing
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _start_hosting(  # type: ignore[no-untyped-def]
    server, plan: HostingPlan, every_cpu: set[int] | None
) -> HostingSupervisor:
    """The hosted bots' supervisor, handed what it uses: their rows, new tokens, the ladders'
    games; told of every submission, activation and withdrawal."""
    from partida.hosting.supervisor import HostingSupervisor
    from partida.storage.hosted import HostedStore

    async def new_token(name: str) -> str:
        _, token = await server.store.create_bot(name)
        return token

    async def ladder_game(name: str) -> str | None:
        ladder = await server.store.ladders.get(name)
        return None if ladder is None else ladder.game

    supervisor = HostingSupervisor(
        server.url,
        plan,
        HostedStore(server.db),
        new_token,
        ladder_game,
        # off the server's CPU when it is pinned: however a hosted program spins, it never takes the
        # CPU the moves are played on (its programs inherit the runner's CPUs)
        preexec=functools.partial(_bot_process, _writer_cpus(every_cpu)),
    )
    server.hosted_bots.on_change(supervisor.changed)
    supervisor.start()
    return supervisor


YOUNG_COLLECTION_AFTER = 20_000  # new container objects, net, per young collection (Python's default: 700)
FULL_COLLECTION_EVERY = 1000  # collections of the middle generation per full one (Python's default: 10)


def _tune_collector() -> None:
    """Make the cyclic garbage collector's passes rare. A full pass walks every live object, and
    a server with a thousand connections holds millions: each pass stops every room for tens of
    milliseconds, a large part of p99 at 500 concurrent games. A young pass walks the objects
    made since the last one that are still alive, and 500 games in flight keep tens of thousands
    alive (messages, futures, frames): after every 700 of them, Python's default, the same
    in-flight objects are walked again and again (6-15% of the server's CPU at 500 games; after
    20,000, 1-3%, measured by `bench/gc_pauses.py`). What the server loaded to start (modules,
    the schema, the games) is moved out of the collector's sight for good (`gc.freeze`). The
    measurements: docs/speed.md and its journal."""
    gc.freeze()
    _, middle, _ = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_AFTER, middle, FULL_COLLECTION_EVERY)


async def _supervise_bot(  # type: ignore[no-untyped-def]
    server,
    agent: str,
    stop: asyncio.Event,
    ladders: list[str],
    every_cpu: set[int] | None,
    tournaments: list[str] = (),  # type: ignore[assignment]
    answer_seeks: bool = False,
) -> None:
    """Keep one bot process per agent running; restart it (with backoff) when it dies."""
    name = f"pool-{agent}"
    delay = 1.0
    while not stop.is_set():
        # A new token for each start: every node of a deployment runs its own pool under the same
        # accounts, and another node's start rotates the token this process logged in with.
        _, token = await server.store.create_bot(name)
        env = dict(os.environ, PARTIDA_BOT_TOKEN=token)
        process = await asyncio.create_subprocess_exec(
            *[sys.executable, "-m", "partida", "bot", agent, "--server", server.url, "--name", name],
            # the operator's console: a pool bot's every game and rating only when debugging
            *["--log-level", "debug" if log.isEnabledFor(logging.DEBUG) else "warning"],
            *[arg for ladder in ladders for arg in ("--ladder", ladder)],
            *[arg for tournament in tournaments for arg in ("--tournament", tournament)],
            *(["--answer-seeks"] if answer_seeks else []),
            *[arg for path in server.config.game_files for arg in ("--game-file", str(path))],
            *[arg for path in server.config.game_dirs for arg in ("--games-dir", str(path))],
            env=env,
            preexec_fn=functools.partial(_bot_process, every_cpu),
        )
        try:
            code = await process.wait()
        except asyncio.CancelledError:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(process.wait(), 5)
            raise
        log.warning("bot %s exited with %s; restarting in %.0f s", name, code, delay)
        await asyncio.sleep(delay)
        delay = min(delay * 2, 60)


def _bot_process(every_cpu: set[int] | None) -> None:
    """In a pool bot's process, before it runs: every CPU back when the server runs on one
    (`--cpu`; a bot's search would take it from the server), and an end with the server."""
    if every_cpu is not None:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, every_cpu)
    _die_with_parent()


def _die_with_parent() -> None:
    """In a pool bot's process, before it runs: end it when the server dies, even by SIGKILL
    (Linux), rather than leave it knocking on a dead server's port for ever."""
    with contextlib.suppress(Exception):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
