"""Three `partida serve --node` processes on loopback ports, one real PostgreSQL and one real
Mosquitto: a game created on node A, joined through node B and watched through node C goes on
after A is killed with SIGKILL, on B or C, with every acknowledged move; and games keep every
acknowledged move while nodes are killed and restarted at random moments; and the one lobby (seeks,
tournament calls) goes on when the node holding the seeks or running a Swiss is killed."""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from partida.bots.runner import BotRunner
from partida.client import Client, ConnectionLost, ServerError
from partida.games.prompts import prompt_from_data
from partida.server.scheduler_lock import SchedulerLock
from partida.storage.database import Database
from partida.storage.store import Store
from tests.fixtures.programs import free_port
from tests.fixtures.storage import fresh_database

pytestmark = [pytest.mark.processes, pytest.mark.realtime]  # `partida serve` nodes, killed and waited out

LEASE = 3.0  # as tests/fixtures/nodes.py: a renewal late on a loaded machine must not fence a node


class Node:
    """A `partida serve --node` process."""

    def __init__(self, name: str, db: str, mqtt: str, logs: Path) -> None:
        self.name = name
        self.db = db
        self.mqtt = mqtt
        self.port = free_port()
        self.log = logs / f"node-{name}.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def start(self) -> None:
        command = [sys.executable, "-m", "partida", "serve", "--node", self.name, "--port", str(self.port)]
        command += ["--public-url", self.url, "--db", self.db, "--mqtt", self.mqtt, "--no-bots"]
        command += ["--lease", str(LEASE), "--abandon-after", "120", "--log-level", "info"]
        with open(self.log, "ab") as log:
            env = {**os.environ, "PYTHONUNBUFFERED": "1"}
            self.process = subprocess.Popen(command, stdout=log, stderr=log, env=env)

    async def ready(self) -> None:
        deadline = time.monotonic() + 60
        while True:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"node {self.name} exited:\n{self.log.read_text()[-3000:]}")
            try:
                client = await Client.connect(self.url, name="probe", timeout=2)
                await client.close()
                return
            except (ConnectionLost, OSError):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"node {self.name} did not start:\n{self.log.read_text()[-3000:]}") from None
                await asyncio.sleep(0.1)

    def kill(self) -> None:
        """SIGKILL: no goodbye, its leases simply stop being renewed."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()


@pytest.fixture
def cluster(postgres, mosquitto, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[list[Node]]:  # type: ignore[no-untyped-def]
    db = fresh_database(postgres, "nodes_" + request.node.name[5:30].lower())
    nodes = [Node(name, db, mosquitto.url, tmp_path) for name in ("a", "b", "c")]
    for node in nodes:
        node.start()
    try:
        yield nodes
    finally:
        for node in nodes:
            node.kill()


async def final_message(client: Client, code: str) -> dict[str, Any]:
    while True:
        message = await client.next_message(code, timeout=20)
        if message["type"] == "game_over":
            return message


async def held_by(lock: SchedulerLock) -> str | None:
    """The node holding `lock`, once one has taken it (None after ten seconds)."""
    for _ in range(100):
        holder = await lock.holder()
        if holder is not None:
            return holder
        await asyncio.sleep(0.1)
    return None


async def stored_moves(db_url: str, game_id: int) -> tuple[str, list[Any]]:
    db = await Database.open(db_url, migrate=False)
    try:
        stored = await Store(db).load_game(game_id)
        assert stored is not None
        return stored.status, [action for _, action in stored.actions]
    finally:
        await db.close()


async def test_a_game_outlives_the_node_it_was_created_on(cluster: list[Node]) -> None:
    a, b, c = cluster
    await asyncio.gather(*(node.ready() for node in cluster))
    alice = await Client.connect(a.url, name="alice")
    bob = await Client.connect(b.url, name="bob")
    carol = await Client.connect(c.url, name="carol")
    created = await alice.create_room("tictactoe", seat=0)
    code, game_id, alice_token = created["room"], created["summary"]["game_id"], created["token"]
    assert code in [room["code"] for room in await carol.list_rooms()]  # C's lobby shows A's room
    bob_token = (await bob.join(code))["token"]  # through B, which sends bob to A
    await carol.watch(code)  # served by C itself, from the room's events over MQTT
    await alice.act(code, 0)
    await bob.act(code, 4)
    await alice.act(code, 8)  # acknowledged: then A dies
    a.kill()

    # Everyone comes back through a node that is alive; the SDK waits out A's lease and follows
    # `moved` to whichever node took the game over.
    alice = await Client.connect(c.url, name="alice")
    await alice.join(code, seat=0, token=alice_token)
    await bob.join(code, seat=1, token=bob_token)
    update = await bob.next_update(code, timeout=20)
    while update["seq"] < 3:
        update = await bob.next_update(code, timeout=20)
    assert update["seq"] == 3 and update["view"]["board"] == [0, -1, -1, -1, 1, -1, -1, -1, 0]
    for client, move in ((bob, 2), (alice, 6), (bob, 1), (alice, 7)):  # X takes the bottom row
        await client.act(code, move)
    over = await final_message(carol, code)  # carol never had to come back: C relays it all
    assert over["result"]["winners"] == [0]
    assert await stored_moves(a.db, game_id) == ("finished", [0, 4, 8, 2, 6, 1, 7])
    for client in (alice, bob, carol):
        await client.close()


class Deployment:
    """The nodes alive now; a killed node is replaced by a new one under a new name."""

    def __init__(self, nodes: list[Node]) -> None:
        self.started = nodes  # every node started, so the fixture kills the replacements too
        self.alive = list(nodes)
        self.dead: list[Node] = []
        self.rng = random.Random(7)

    def any_url(self) -> str:
        return self.rng.choice(self.alive).url

    async def kill_and_replace(self, generation: int) -> None:
        victim = self.rng.choice(self.alive)
        victim.kill()
        self.alive.remove(victim)
        self.dead.append(victim)
        fresh = Node(f"{victim.name[0]}{generation}", victim.db, victim.mqtt, victim.log.parent)
        self.started.append(fresh)
        fresh.start()
        await fresh.ready()
        self.alive.append(fresh)


async def resilient_player(
    deployment: Deployment, name: str, code: str, game_id: int, seat: int, token: str, acked: dict[int, Any]
) -> dict[str, Any]:
    """Plays random legal moves; whenever its node goes away it connects to any live node and
    takes its seat back with its token (the SDK finds the room's new node). `acked`: move number
    -> action, for every action the server acknowledged. A game whose last move was stored just
    before its node died ended there: no node resumes a finished game, so taking the seat back
    finds no room, and the stored game says it finished."""
    rng = random.Random(f"{code}-{seat}")
    client: Client | None = None
    while True:
        try:
            if client is None:
                client = await Client.connect(deployment.any_url(), name=name, timeout=3)
                await client.join(code, seat=seat, token=token)
            update = await client.next_update(code, timeout=30)
            if update["status"] == "finished":
                await client.close()
                return update
            if update["decision"] is None or client._queued_updates[code, seat] > 0:
                continue
            action = prompt_from_data(update["decision"]).random_answer(rng)
            await asyncio.sleep(rng.uniform(0.0, 0.08))
            await client.act(code, action, seq=update["seq"], seat=seat)
            acked[update["seq"]] = action
        except (ServerError, TimeoutError) as exc:
            code_ = exc.code if isinstance(exc, ServerError) else "timeout"
            if code_ in ("stale_decision", "not_your_turn", "game_over"):
                continue
            if code_ == "no_such_room":
                status, _ = await stored_moves(deployment.alive[0].db, game_id)
                if status == "finished":
                    if client is not None:
                        await client.close()
                    return {"status": status}
            if code_ not in ("connection_lost", "storage_unavailable", "timeout"):
                raise
            if client is not None:
                await client.close()
            client = None
            await asyncio.sleep(0.2)


async def test_games_keep_every_acknowledged_move_while_nodes_die(cluster: list[Node]) -> None:
    await asyncio.gather(*(node.ready() for node in cluster))
    deployment = Deployment(cluster)
    games = []
    for i in range(4):
        host = await Client.connect(cluster[i % 3].url, name=f"host{i}")
        created = await host.create_room("othello", seat=0, public=False)
        code = created["room"]
        guest = await Client.connect(cluster[(i + 1) % 3].url, name=f"guest{i}")
        joined = await guest.join(code)
        games.append((code, created["summary"]["game_id"], created["token"], joined["token"]))
        await host.close()
        await guest.close()
    acked: dict[str, dict[int, Any]] = {code: {} for code, *_ in games}
    players = [
        asyncio.create_task(resilient_player(deployment, f"p{seat}-{code}", code, game_id, seat, token, acked[code]))
        for code, game_id, host_token, guest_token in games
        for seat, token in ((0, host_token), (1, guest_token))
    ]
    for generation in range(1, 4):  # kill a node at a random moment, three times
        await asyncio.sleep(deployment.rng.uniform(0.3, 2.0))
        if all(p.done() for p in players):
            break
        await deployment.kill_and_replace(generation)
    finals = await asyncio.wait_for(asyncio.gather(*players), 180)
    assert all(f["status"] == "finished" for f in finals)
    for code, game_id, *_ in games:
        status, moves = await stored_moves(deployment.alive[0].db, game_id)
        assert status == "finished"
        assert acked[code], code
        for seq, action in acked[code].items():
            assert moves[seq] == action, (code, seq)
    for node in deployment.dead:
        assert node.process is not None and node.process.returncode == -9
    logs = "".join(node.log.read_text() for node in deployment.alive + deployment.dead)
    assert "took over room" in logs  # the kills hit games in play, which other nodes resumed


async def test_a_ladder_goes_on_when_its_schedulers_node_dies(cluster: list[Node]) -> None:
    """One node schedules the ladder (it holds the advisory lock); bots connected to the other
    nodes are sent to it. Killed, it lets the lock go with its connection: another node takes
    it, counts the games in progress, and the ladder goes on."""
    await asyncio.gather(*(node.ready() for node in cluster))
    db = await Database.open(cluster[0].db, migrate=False)
    tasks: list[asyncio.Task[None]] = []
    try:
        store = Store(db)
        await store.ladders.create("duo", "tictactoe", {}, 2, {"per_move": 5.0}, 2)
        lock = SchedulerLock(db, "probe")
        holder = await held_by(lock)
        scheduler = next(node for node in cluster if node.name == holder)
        others = [node for node in cluster if node is not scheduler]
        for i, name in enumerate(("ann", "bob", "cid", "dan")):
            _, token = await store.create_bot(name)
            runner = BotRunner(others[i % 2].url, "random", token=token, ladders=["duo"])
            tasks.append(asyncio.create_task(runner.run(reconnect=True)))

        async def rated() -> int:
            return (await store.ladders.require("duo")).rated_games

        async def reach(count: int) -> None:
            deadline = time.monotonic() + 90
            while await rated() < count:
                assert time.monotonic() < deadline, f"the ladder did not reach {count} rated games"
                await asyncio.sleep(0.1)

        await reach(4)
        scheduler.kill()
        killed_at = await rated()
        await reach(killed_at + 6)  # rated after the scheduler's node died
        assert await lock.holder() in {node.name for node in others}
        for task in tasks:
            assert not task.done(), task  # no bot gave up
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await db.close()


async def test_a_tournament_goes_on_when_its_node_dies(cluster: list[Node]) -> None:
    """One node runs the tournaments (it holds their advisory lock, apart from the ladders'); bots
    connected to other nodes are summoned to it for their games. Killed mid-round, it lets the lock
    go: another node takes it, the games in play are taken over (their bots summoned there) and
    played to their end, and the round robin ends with every pair met once, nothing lost (no void,
    no-show or time loss) and nothing paired or counted twice."""
    from datetime import UTC, datetime, timedelta

    from partida.competition.tables import scores_of
    from partida.server.competition.tournament_director import LOCK_KEY
    from partida.storage.tournaments import TournamentStore

    await asyncio.gather(*(node.ready() for node in cluster))
    db = await Database.open(cluster[0].db, migrate=False)
    tasks: list[asyncio.Task[None]] = []
    try:
        store, tournaments = Store(db), TournamentStore(db)
        lock = SchedulerLock(db, "probe", LOCK_KEY)
        holder = await held_by(lock)
        runner = next(node for node in cluster if node.name == holder)
        others = [node for node in cluster if node is not runner]
        starts = datetime.now(UTC) + timedelta(seconds=3)
        clock = {"initial": 120.0, "increment": 0.0}
        info = await tournaments.create("nodecup", "othello", {}, 2, clock, "round-robin", "bots", starts)
        names = ("ann", "bob", "cid", "dan")
        homes = [runner, runner, others[0], others[1]]
        for name, home in zip(names, homes, strict=True):
            _, token = await store.create_bot(name)
            urls = ",".join(node.url for node in [home, *(n for n in cluster if n is not home)])
            bot = BotRunner(urls, "mcts", token=token, params={"seconds": 0.05}, tournaments=["nodecup"])
            tasks.append(asyncio.create_task(bot.run(reconnect=True)))
        deadline = time.monotonic() + 60
        while not any(t.status == "playing" for t in await tournaments.tables(info.id)):
            assert time.monotonic() < deadline, "no tournament game got going"
            await asyncio.sleep(0.1)
        in_play = [t.game_id for t in await tournaments.tables(info.id) if t.status == "playing"]
        runner.kill()
        deadline = time.monotonic() + 180
        while (await tournaments.require("nodecup")).status != "finished":
            assert time.monotonic() < deadline, "the tournament did not finish after its node died"
            await asyncio.sleep(0.5)
        tables = await tournaments.tables(info.id)
        assert len({frozenset(t.accounts) for t in tables}) == len(tables) == 6
        for t in tables:
            assert t.status == "finished" and t.result is not None, t
            assert t.result.get("reason") == "normal", t  # played to its end: no void, no-show or time loss
        assert all(t.status == "finished" for t in tables if t.game_id in in_play)
        scores = scores_of(tables)
        assert sorted(s.games for s in scores.values()) == [3, 3, 3, 3]
        assert sum(s.points for s in scores.values()) == 6
        logs = {node.name: node.log.read_text() for node in cluster}
        paired = [(n, line) for n, text in logs.items() for line in text.splitlines() if "nodecup: round" in line]
        assert sorted(line.split("round ")[1].split(" ")[0] for _, line in paired) == ["1", "2", "3"]
        assert {n for n, _ in paired} - {runner.name}  # a survivor paired the rounds after the kill
        assert await lock.holder() in {node.name for node in others}
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await db.close()


# One lobby across nodes: seeks and tournament calls when a node dies.

PASSWORD = "correct horse battery"
SEEK_CLOCK = {"initial": 60, "increment": 1}


async def seek_taker(client: Client, taken: dict[int, list[str]], me: str, stop: asyncio.Event) -> None:
    """Take every seek this bot's node lists, as it appears (`--answer-seeks` does the same)."""
    await client.list_seeks(watch=True)
    while not stop.is_set():
        try:
            message = await asyncio.wait_for(client.lobby_events.get(), 0.5)
        except TimeoutError:
            continue
        for seek in message.get("added") or []:
            try:
                reply = await client.seek_take(seek["id"])
            except ServerError:
                continue
            taken.setdefault(seek["id"], []).append(f"{me}:{reply['room']}:{reply['summary']['game_id']}")


async def listed_ids(client: Client) -> set[int]:
    return {s["id"] for s in await client.list_seeks()}


async def test_the_node_holding_the_seeks_dies_while_two_nodes_take_them(cluster: list[Node]) -> None:
    """The node holding a person's seeks is killed while two bots on the other nodes race to take
    them: no seek is taken twice, every seek taken has its game, the dead node's seeks leave every
    list once its lease has run out, and seeking goes on between the live nodes."""
    a, b, c = cluster
    await asyncio.gather(*(node.ready() for node in cluster))
    db = await Database.open(a.db, migrate=False)
    clients: list[Client] = []
    stop = asyncio.Event()
    try:
        store = Store(db)
        for name in ("alice", "bob"):
            await store.create_user(name, PASSWORD)
        _, token_b = await store.create_bot("takerb")
        _, token_c = await store.create_bot("takerc")
        alice = await Client.connect(a.url, name="alice", password=PASSWORD)
        bob = await Client.connect(b.url, name="bob", password=PASSWORD)
        taker_b = await Client.connect(b.url, token=token_b)
        taker_c = await Client.connect(c.url, token=token_c)
        clients += [alice, bob, taker_b, taker_c]
        taken: dict[int, list[str]] = {}
        racers = [  # noqa: F841  (they run until `stop`)
            asyncio.create_task(seek_taker(taker_b, taken, "b", stop)),
            asyncio.create_task(seek_taker(taker_c, taken, "c", stop)),
        ]
        posted: list[int] = []
        for _ in range(12):
            posted.append((await alice.seek("tictactoe", clock=SEEK_CLOCK, allow_bots=True))["seek"]["id"])
            async with asyncio.timeout(15):
                while posted[-1] not in taken:
                    await asyncio.sleep(0.02)
        for _ in range(3):  # the last ones are being taken as their node dies
            posted.append((await alice.seek("tictactoe", clock=SEEK_CLOCK, allow_bots=True))["seek"]["id"])
        a.kill()
        await asyncio.sleep(LEASE + 5 + 2)  # its lease, a read-back of the seeks (every 5 s), a margin
        assert all(len(rooms) == 1 for rooms in taken.values()), taken  # never taken twice
        assert set(taken) <= set(posted)
        assert len(taken) >= 12  # those posted before the kill were all taken
        for game_id in (int(entry.split(":")[2]) for rooms in taken.values() for entry in rooms):
            game = await store.load_game(game_id)  # every seek taken has its game, started
            assert game is not None and game.status in ("playing", "finished"), (game_id, game and game.status)
        for client in (bob, taker_b, taker_c):
            assert not (await listed_ids(client)) & set(posted)  # the dead node's seeks are gone everywhere

        # Seeking goes on between the live nodes.
        seek_id = (await bob.seek("tictactoe", clock=SEEK_CLOCK, allow_bots=True))["seek"]["id"]
        async with asyncio.timeout(15):
            while seek_id not in taken:
                await asyncio.sleep(0.1)
        assert len(taken[seek_id]) == 1
        paired = await asyncio.wait_for(bob.seek_events.get(), 10)
        assert paired["room"] == taken[seek_id][0].split(":")[1]
    finally:
        stop.set()
        for client in clients:
            await client.close()
        await db.close()


async def play_calls(client: Client, games: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    calls: list[dict[str, Any]] = []
    while len(calls) < games:
        message = await client.tournament_events.get()
        if message["type"] != "tournament_game":
            continue
        calls.append(message)
        final = await client.play(message["room"], lambda update, prompt: prompt.random_answer(rng), on_error=bearable)
        assert final["status"] == "finished"
    return calls


def bearable(exc: ServerError) -> None:
    """A move refused while its room's node is dying, or before the room is taken over: asked again."""
    if exc.code not in ("storage_unavailable", "connection_lost", "stale_decision"):
        raise exc


async def test_a_swiss_goes_on_for_people_elsewhere_when_its_node_dies(cluster: list[Node]) -> None:
    """The node running a Swiss of two people connected elsewhere is killed mid-round: the game
    in play is taken over and finished, the next round is paired by the next node and pushed to
    both through their own nodes, and each round is counted once."""
    from datetime import UTC, datetime, timedelta

    from partida.server.competition.tournament_director import LOCK_KEY
    from partida.storage.tournaments import TournamentStore

    await asyncio.gather(*(node.ready() for node in cluster))
    db = await Database.open(cluster[0].db, migrate=False)
    clients: list[Client] = []
    try:
        store, tournaments = Store(db), TournamentStore(db)
        holder = await held_by(SchedulerLock(db, "probe", LOCK_KEY))
        runner = next(node for node in cluster if node.name == holder)
        others = [node for node in cluster if node is not runner]
        for name in ("ada", "bea"):
            await store.create_user(name, PASSWORD)
        starts = datetime.now(UTC) + timedelta(seconds=3)
        clock = {"initial": 120.0, "increment": 0.0}
        info = await tournaments.create("farcup", "othello", {}, 2, clock, "swiss", "people", starts, rounds=2)
        ada = await Client.connect(others[0].url, name="ada", password=PASSWORD)
        bea = await Client.connect(others[1].url, name="bea", password=PASSWORD)
        clients += [ada, bea]
        for person in (ada, bea):
            await person.tournament_join("farcup")
        playing = asyncio.gather(play_calls(ada, 2, 1), play_calls(bea, 2, 2))
        deadline = time.monotonic() + 60
        while not any(t.status == "playing" for t in await tournaments.tables(info.id)):
            assert time.monotonic() < deadline, "no tournament game got going"
            await asyncio.sleep(0.1)
        await asyncio.sleep(1.0)  # a few moves in
        runner.kill()
        calls = await asyncio.wait_for(playing, 240)
        for mine in calls:
            assert [c["round"] for c in mine] == [1, 2]
            assert mine[0].get("url") == runner.url and "token" not in mine[0]  # called through its own node
        deadline = time.monotonic() + 60
        while (await tournaments.require("farcup")).status != "finished":
            assert time.monotonic() < deadline, "the Swiss did not finish after its node died"
            await asyncio.sleep(0.5)
        tables = await tournaments.tables(info.id)
        assert sorted(t.round for t in tables) == [1, 2]  # each round paired once
        for t in tables:
            assert t.result is not None and t.result.get("reason") == "normal", t  # played to its end
    finally:
        for client in clients:
            await client.close()
        await db.close()


async def test_an_arena_over_three_nodes_goes_on_when_its_node_dies(cluster: list[Node]) -> None:
    """Six bots, two connected to each node, in an arena run by one of them; that node is killed
    with SIGKILL mid-arena. Every bot plays, the next node runs the arena to its end, and every
    game counts once: each table has its own game, and the standings count each decided table's
    two players once each."""
    from datetime import UTC, datetime, timedelta

    from partida.server.competition.tournament_director import LOCK_KEY
    from partida.storage.tournaments import TournamentStore

    await asyncio.gather(*(node.ready() for node in cluster))
    db = await Database.open(cluster[0].db, migrate=False)
    tasks: list[asyncio.Task[None]] = []
    try:
        store, tournaments = Store(db), TournamentStore(db)
        holder = await held_by(SchedulerLock(db, "probe", LOCK_KEY))
        runner = next(node for node in cluster if node.name == holder)
        starts = datetime.now(UTC) + timedelta(seconds=3)
        clock = {"initial": 20.0, "increment": 0.0}
        info = await tournaments.create("spread", "tictactoe", {}, 2, clock, "arena", "bots", starts, duration=40)
        for i in range(6):
            home = cluster[i % 3]
            _, token = await store.create_bot(f"arena{i}")
            urls = ",".join(node.url for node in [home, *(n for n in cluster if n is not home)])
            bot = BotRunner(urls, "random", token=token, tournaments=["spread"])
            tasks.append(asyncio.create_task(bot.run(reconnect=True)))
        deadline = time.monotonic() + 60
        while len(await tournaments.tables(info.id)) < 4:
            assert time.monotonic() < deadline, "the arena did not get going"
            await asyncio.sleep(0.2)
        runner.kill()
        deadline = time.monotonic() + 180
        while (await tournaments.require("spread")).status != "finished":
            assert time.monotonic() < deadline, "the arena did not finish after its node died"
            await asyncio.sleep(0.5)
        tables = await tournaments.tables(info.id)
        games = [t.game_id for t in tables if t.game_id is not None]
        assert len(games) == len(set(games))  # no game paired twice
        assert len({(t.round, t.table) for t in tables}) == len(tables)
        played = {a: 0 for a in [e.account_id for e in await tournaments.entrants(info.id)]}
        for t in tables:
            assert t.result is not None, t  # every table decided
            if not t.result.get("void") and not t.result.get("bye"):
                for account in t.accounts:
                    played[account] += 1
        assert all(count >= 1 for count in played.values()), played  # every bot played, wherever it was
        from partida.server.competition.tournament_director import standings

        rows = standings("arena", tables, await tournaments.entrants(info.id))
        assert {r["name"]: r["games"] for r in rows} == {
            e.name: played[e.account_id] for e in await tournaments.entrants(info.id)
        }
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await db.close()
