"""Several nodes: aggregate throughput of 1, 2 and 3 nodes, and the time from a node's death to
its games resuming elsewhere. Prints one JSON line per measurement.

Every node is a `partida serve --node` process on one PostgreSQL database and one Mosquitto
broker (started here as the tests start them, tests/fixtures/programs.py: a throwaway PostgreSQL with
fsync off, unless --db is given). The load is tic-tac-toe games back to back in R slots, two SDK
clients per slot, each client connected to a node chosen at random, so with N nodes a join lands
on the room's node one time in N and is redirected (`moved`) otherwise. Per run: moves per
second, move latency (one client sends, the other receives the new view), the node processes'
CPU per move, PostgreSQL transactions per second and per move, and MQTT messages per move (a
subscriber to `partida/#` counts them).

    python bench/nodes.py throughput --nodes 1 2 3 --slots 60 --seconds 20
    python bench/nodes.py peers --load-js PATH/load.js --nodes 1 2 3 --slots 60 --moves 9000
    python bench/nodes.py failover --games 30 --lease 2 10
    python bench/nodes.py lobby --nodes 1 3 --trials 50 --cpu-seeks 300

`lobby`: seeks and the lobby on a single server (no `--node`, the same PostgreSQL) against
three nodes: seek pairing latency (two posters, or a poster and a taker, on different nodes),
the delay from a seek posted, a public room or a tournament created to a lobby watcher's push
on a third node, and the CPU a seek posted and cancelled on node A costs node C, which only lists it.

`peers`: the same measure under the Node load generator of the boardgame.io comparison
(docs/speed.md; its `load.js`, which needs `node` and its `ws` and `msgpackr` packages): one
load generator per node, each with slots/N slots (both clients of a slot on that node, so no
`moved`) and moves/N moves, all at once. Reported: the moves of all of them over the longest
run, the worst p99, the node processes' CPU per move and the load generators' CPU.

`failover`: three nodes; G games are created on node A (the other seat joins through B) and
played for two moves, then A is killed with SIGKILL; each game's first player connects to C and
takes its seat back (the SDK waits out A's lease and follows `moved`). Reported: the seconds
from the kill to each game answering again (min, median, max), against the lease.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.fixtures.programs, from the root

import aiomqtt
from server_process import cpu_seconds, free_port, start_server, stop_server, wait_for_server  # beside this script
from sqlalchemy import text

from partida.client import Client
from partida.storage.database import Database
from partida.storage.store import Store
from tests.fixtures.programs import start_mosquitto, start_postgres


def create_database(pg: Any, name: str) -> str:
    command = [str(pg.bin_dir / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", str(pg.directory)]
    command += ["-p", str(pg.port), "-U", "postgres", "-d", "postgres"]
    command += ["-c", f"DROP DATABASE IF EXISTS {name}", "-c", f"CREATE DATABASE {name} OWNER {pg.user}"]
    subprocess.run(command, check=True, capture_output=True)
    return pg.url.rsplit("/", 1)[0] + f"/{name}"


class NodeProcess:
    def __init__(self, name: str, db: str, mqtt: str, lease: float) -> None:
        self.port = free_port()
        self.url = f"ws://127.0.0.1:{self.port}"
        options = ("--node", name, "--public-url", self.url, "--mqtt", mqtt, "--no-bots", "--lease", str(lease))
        self.process = start_server(self.port, db, *options)

    async def ready(self) -> None:
        await wait_for_server(self.url, process=self.process)

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.process.pid)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def stop(self) -> None:
        stop_server(self.process)


async def commits(db_url: str) -> int:
    db = await Database.open(db_url, migrate=False)
    try:
        async with db.engine.connect() as conn:
            query = text("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")
            return int(await conn.scalar(query))
    finally:
        await db.close()


async def count_messages(mqtt_port: int, counter: list[int], ready: asyncio.Event) -> None:
    async with aiomqtt.Client("127.0.0.1", mqtt_port) as client:
        await client.subscribe("partida/#", qos=0)
        ready.set()
        async for _ in client.messages:
            counter[0] += 1


async def slot(urls: list[str], until: float, latencies: list[float], rng: random.Random) -> int:
    alice = await Client.connect(rng.choice(urls), name="alice")
    bob = await Client.connect(rng.choice(urls), name="bob")
    clients = [alice, bob]
    made = 0
    try:
        while time.perf_counter() < until:
            code = (await alice.create_room("tictactoe", seat=0, public=False))["room"]
            await bob.join(code)
            update = await alice.next_update(code)
            await bob.next_update(code)
            seat = 0
            while update["status"] != "finished":
                mover, other = clients[seat], clients[1 - seat]
                sent = time.perf_counter()
                await mover.act(code, rng.choice(update["decision"]["options"]), seq=update["seq"])
                update = await other.next_update(code)
                latencies.append(time.perf_counter() - sent)
                await mover.next_update(code)
                made += 1
                seat = 1 - seat
    finally:
        await alice.close()
        await bob.close()
    return made


async def throughput(pg: Any, mqtt: Any, nodes: int, slots: int, seconds: float, seed: int) -> dict[str, Any]:
    db = create_database(pg, f"bench_nodes_{nodes}")
    procs = [NodeProcess(f"n{i}", db, mqtt.url, 10.0) for i in range(nodes)]
    counter = [0]
    ready = asyncio.Event()
    listener = asyncio.create_task(count_messages(mqtt.port, counter, ready))
    try:
        await asyncio.gather(*(p.ready() for p in procs))
        await asyncio.wait_for(ready.wait(), 10)
        urls = [p.url for p in procs]
        cpu0 = sum(p.cpu_seconds() for p in procs)
        commits0 = await commits(db)
        messages0 = counter[0]
        latencies: list[float] = []
        rng = random.Random(seed)
        start = time.perf_counter()
        made = await asyncio.gather(
            *(slot(urls, start + seconds, latencies, random.Random(rng.random())) for _ in range(slots))
        )
        elapsed = time.perf_counter() - start
        await asyncio.sleep(0.5)  # the last events reach the counter
        cpu = sum(p.cpu_seconds() for p in procs) - cpu0
        committed = await commits(db) - commits0
        messages = counter[0] - messages0
    finally:
        listener.cancel()
        with contextlib.suppress(BaseException):
            await listener
        for p in procs:
            p.stop()
    moves = sum(made)
    quantiles = statistics.quantiles(sorted(latencies), n=100, method="inclusive")
    return {
        "bench": "nodes_throughput",
        "nodes": nodes,
        "slots": slots,
        "moves": moves,
        "seconds": round(elapsed, 2),
        "moves_per_second": round(moves / elapsed, 1),
        "latency_ms_p50": round(quantiles[49] * 1000, 1),
        "latency_ms_p99": round(quantiles[98] * 1000, 1),
        "node_cpu_ms_per_move": round(cpu / moves * 1000, 3),
        "pg_commits_per_second": round(committed / elapsed, 1),
        "pg_commits_per_move": round(committed / moves, 3),
        "mqtt_messages_per_move": round(messages / moves, 3),
    }


async def peers(pg: Any, mqtt: Any, nodes: int, slots: int, moves: int, load_js: Path) -> dict[str, Any]:
    db = create_database(pg, f"bench_peers_{nodes}")
    procs = [NodeProcess(f"n{i}", db, mqtt.url, 10.0) for i in range(nodes)]
    try:
        await asyncio.gather(*(p.ready() for p in procs))
        cpu0 = sum(p.cpu_seconds() for p in procs)
        commits0 = await commits(db)
        start = time.perf_counter()
        loads = [
            await asyncio.create_subprocess_exec(
                "node",
                str(load_js),
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=load_js.parent,
                env={
                    **os.environ,
                    "PORT": str(p.port),
                    "M": str(max(1, slots // nodes)),
                    "MOVES": str(moves // nodes),
                    "SEED": str(i + 1),
                    "WARMUP_MOVES": "0",
                    "MAX_S": "120",
                    "SERVER_PID": str(p.process.pid),
                    "CLK_TCK": str(os.sysconf("SC_CLK_TCK")),
                },
            )
            for i, p in enumerate(procs)
        ]
        outputs = [json.loads((await load.communicate())[0].decode().strip().splitlines()[-1]) for load in loads]
        elapsed = time.perf_counter() - start
        cpu = sum(p.cpu_seconds() for p in procs) - cpu0
        committed = await commits(db) - commits0
    finally:
        for p in procs:
            p.stop()
    made = sum(o["moves"] for o in outputs)
    wall = max(o["wall_s"] for o in outputs)
    return {
        "bench": "nodes_peers",
        "nodes": nodes,
        "slots": max(1, slots // nodes) * nodes,
        "moves": made,
        "seconds": round(wall, 2),
        "moves_per_second": round(made / wall, 1),
        "latency_ms_p50_worst": max(o["latency_ms"]["p50"] for o in outputs),
        "latency_ms_p99_worst": max(o["latency_ms"]["p99"] for o in outputs),
        "node_cpu_ms_per_move": round(cpu / made * 1000, 3),
        "node_cpu_pct": round(cpu / wall * 100, 1),
        "load_generators_cpu_pct": round(sum(o["loadgen_cpu_pct_avg"] for o in outputs), 1),
        "pg_commits_per_move": round(committed / made, 3),
        "errors": sum(o["errors"] + o["stalls"] for o in outputs),
        "elapsed_s": round(elapsed, 2),
    }


async def failover(pg: Any, mqtt: Any, games: int, lease: float) -> dict[str, Any]:
    db = create_database(pg, "bench_failover")
    a, b, c = (NodeProcess(name, db, mqtt.url, lease) for name in ("a", "b", "c"))
    clients: list[Client] = []
    try:
        await asyncio.gather(a.ready(), b.ready(), c.ready())
        seated = []
        for _ in range(games):
            alice = await Client.connect(a.url, name="alice")
            bob = await Client.connect(b.url, name="bob")
            clients += [alice, bob]
            created = await alice.create_room("tictactoe", seat=0, public=False)
            code = created["room"]
            await bob.join(code)
            await alice.act(code, 4)
            await bob.act(code, 0)
            seated.append((code, created["token"]))
        await asyncio.sleep(lease)  # a lease renewed at least twice since the games began
        killed = time.perf_counter()
        a.kill()

        async def back(code: str, token: str) -> float:
            alice = await Client.connect(c.url, name="alice")
            clients.append(alice)
            await alice.join(code, seat=0, token=token)
            await alice.act(code, 8)
            return time.perf_counter() - killed

        waits = sorted(await asyncio.gather(*(back(code, token) for code, token in seated)))
    finally:
        for client in clients:
            with contextlib.suppress(Exception):
                await client.close()
        for p in (a, b, c):
            p.stop()
    return {
        "bench": "nodes_failover",
        "games": games,
        "lease_s": lease,
        "resumed_after_s_min": round(waits[0], 2),
        "resumed_after_s_median": round(statistics.median(waits), 2),
        "resumed_after_s_max": round(waits[-1], 2),
    }


class SingleProcess(NodeProcess):
    """A single server (no `--node`): the seeks and the lobby in its memory alone, as before."""

    def __init__(self, db: str) -> None:
        self.port = free_port()
        self.url = f"ws://127.0.0.1:{self.port}"
        self.process = start_server(self.port, db, "--no-bots")


SEEK_CLOCK = {"initial": 60, "increment": 1}


async def next_of(queue: asyncio.Queue[dict[str, Any]], check: Any) -> dict[str, Any]:
    async with asyncio.timeout(20):
        while True:
            message = await queue.get()
            if check(message):
                return message


def summary(name: str, values: list[float]) -> dict[str, float]:
    values = sorted(values)
    return {
        f"{name}_ms_mean": round(statistics.fmean(values) * 1000, 2),
        f"{name}_ms_p50": round(values[len(values) // 2] * 1000, 2),
        f"{name}_ms_p95": round(values[min(len(values) - 1, int(len(values) * 0.95))] * 1000, 2),
        f"{name}_ms_max": round(values[-1] * 1000, 2),
    }


async def lobby(pg: Any, mqtt: Any, nodes: int, trials: int, cpu_seeks: int) -> dict[str, Any]:
    """Seeks and the lobby on one server against three nodes: the time from a second seek's post
    to both posters' `seek_paired` (and from a `seek_take` to the poster's), each on another node
    than the other when there are three; the delay from a seek posted (a room created) to a
    lobby watcher's push on another node; and the CPU a seek posted and cancelled on node A costs
    node C, which only lists it (one watcher there), above C's idle CPU over as long."""
    db = create_database(pg, f"bench_lobby_{nodes}")
    procs: list[NodeProcess] = (
        [SingleProcess(db)] if nodes == 1 else [NodeProcess(f"n{i}", db, mqtt.url, 10.0) for i in range(nodes)]
    )
    clients: list[Client] = []
    try:
        await asyncio.gather(*(p.ready() for p in procs))
        await asyncio.sleep(1.0)
        urls = [p.url for p in procs]
        home = [urls[i % len(urls)] for i in range(3)]  # poster, answerer, watcher: three nodes when there are
        poster, answerer, watcher = [await Client.connect(url, timeout=10) for url in home]
        clients += [poster, answerer, watcher]
        await watcher.list_seeks(watch=True)
        await watcher.rooms_page(watch=True)
        paired, taken, seek_push, room_push = [], [], [], []
        for trial in range(trials):
            # A seek, pushed to the watcher; then a compatible seek from the answerer's node.
            sent = time.perf_counter()
            seek_id = (await poster.seek("tictactoe", clock=SEEK_CLOCK))["seek"]["id"]
            await next_of(watcher.lobby_events, lambda m, i=seek_id: any(s["id"] == i for s in m.get("added", [])))
            seek_push.append(time.perf_counter() - sent)
            sent = time.perf_counter()
            await answerer.seek("tictactoe", clock=SEEK_CLOCK)
            one = await next_of(poster.seek_events, lambda m: m["type"] == "seek_paired")
            await next_of(answerer.seek_events, lambda m: m["type"] == "seek_paired")
            paired.append(time.perf_counter() - sent)
            with contextlib.suppress(Exception):
                await poster.resign(one["room"])
            # A seek taken from the answerer's node.
            seek_id = (await poster.seek("tictactoe", clock=SEEK_CLOCK))["seek"]["id"]
            for _ in range(200):  # listed there (the other node's list follows through the broker)
                if any(s["id"] == seek_id for s in await answerer.list_seeks()):
                    break
                await asyncio.sleep(0.01)
            sent = time.perf_counter()
            await answerer.seek_take(seek_id)
            one = await next_of(poster.seek_events, lambda m: m["type"] == "seek_paired")
            taken.append(time.perf_counter() - sent)
            with contextlib.suppress(Exception):
                await poster.resign(one["room"])
            # A public room, pushed to the watcher.
            sent = time.perf_counter()
            code = (await poster.create_room("tictactoe", public=True, seat=0))["room"]
            await next_of(watcher.lobby_events, lambda m, c=code: any(r["code"] == c for r in m.get("rooms", [])))
            room_push.append(time.perf_counter() - sent)
            await poster.leave(code)
            del trial
        # Tournaments: created on the poster's node, the watcher (on another node) told to list again.
        database = await Database.open(db, migrate=False)
        try:
            await Store(database).create_user("organizer", "a long enough password")
        finally:
            await database.close()
        organizer = await Client.connect(home[0], name="organizer", password="a long enough password")
        clients.append(organizer)
        await watcher.tournaments_page(watch=True)
        tournament_push = []
        for n in range(5):  # an account holds at most five live tournaments
            sent = time.perf_counter()
            await organizer.tournament_create(f"bench{n}", "tictactoe", "swiss", SEEK_CLOCK, starts_in=3600)
            await next_of(watcher.lobby_events, lambda m: m["type"] == "lobby_tournaments")
            tournament_push.append(time.perf_counter() - sent)
            await asyncio.sleep(1.1)  # past the watchers' push interval: each creation timed alone
        # CPU: node C (the watcher's) while seeks come and go on node A, against C idle.
        far = procs[-1]
        await asyncio.sleep(2.0)
        idle0, t0 = far.cpu_seconds(), time.perf_counter()
        await asyncio.sleep(5.0)
        idle = (far.cpu_seconds() - idle0) / (time.perf_counter() - t0)
        cpu0, t0 = far.cpu_seconds(), time.perf_counter()
        for _ in range(cpu_seeks):
            seek_id = (await poster.seek("othello", clock=SEEK_CLOCK))["seek"]["id"]
            await poster.seek_cancel(seek_id)
        await asyncio.sleep(1.0)  # the last pushes
        busy = far.cpu_seconds() - cpu0
        elapsed = time.perf_counter() - t0
    finally:
        for client in clients:
            with contextlib.suppress(Exception):
                await client.close()
        for p in procs:
            p.stop()
    return {
        "bench": "nodes_lobby",
        "nodes": nodes,
        "trials": trials,
        **summary("seek_paired_both", paired),
        **summary("seek_take_to_poster_told", taken),
        **summary("seek_push_delay", seek_push),
        **summary("room_push_delay", room_push),
        **summary("tournament_push_delay", tournament_push),
        "cpu_seeks": cpu_seeks,
        "watcher_node_cpu_ms_per_seek": round((busy - idle * elapsed) / cpu_seeks * 1000, 3),
        "watcher_node_idle_cpu": round(idle, 4),
    }


async def main_async(args: argparse.Namespace) -> None:
    pg = start_postgres()
    mqtt = start_mosquitto()
    try:
        if args.mode == "throughput":
            for nodes in args.nodes:
                print(json.dumps(await throughput(pg, mqtt, nodes, args.slots, args.seconds, args.seed)), flush=True)
        elif args.mode == "lobby":
            for nodes in args.nodes:
                print(json.dumps(await lobby(pg, mqtt, nodes, args.trials, args.cpu_seeks)), flush=True)
        elif args.mode == "peers":
            for nodes in args.nodes:
                print(json.dumps(await peers(pg, mqtt, nodes, args.slots, args.moves, args.load_js)), flush=True)
        else:
            for lease in args.lease:
                print(json.dumps(await failover(pg, mqtt, args.games, lease)), flush=True)
    finally:
        mqtt.close()
        pg.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="mode", required=True)
    t = sub.add_parser("throughput")
    t.add_argument("--nodes", type=int, nargs="+", default=[1, 2, 3])
    t.add_argument("--slots", type=int, default=60)
    t.add_argument("--seconds", type=float, default=20.0)
    t.add_argument("--seed", type=int, default=1)
    p = sub.add_parser("peers")
    p.add_argument("--load-js", type=Path, required=True, help="the Node load generator (load.js)")
    p.add_argument("--nodes", type=int, nargs="+", default=[1, 2, 3])
    p.add_argument("--slots", type=int, default=60)
    p.add_argument("--moves", type=int, default=9000)
    lo = sub.add_parser("lobby")
    lo.add_argument("--nodes", type=int, nargs="+", default=[1, 3])
    lo.add_argument("--trials", type=int, default=50)
    lo.add_argument("--cpu-seeks", type=int, default=300)
    f = sub.add_parser("failover")
    f.add_argument("--games", type=int, default=30)
    f.add_argument("--lease", type=float, nargs="+", default=[2.0, 10.0])
    asyncio.run(main_async(parser.parse_args()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
