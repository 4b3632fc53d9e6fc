"""Several server nodes on one PostgreSQL database: every lobby lists every node's rooms, a request
for another node's room is answered `moved` (which the SDK follows), and a node that stops hands
its games to another, which resumes them from their logs.

These run the nodes in this process (real servers on loopback ports, real PostgreSQL); the kill -9
of a node process is in tests/server/test_nodes_kill.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from sqlalchemy import select
from websockets.asyncio.client import connect

from partida.client import Client, ConnectionLost
from partida.games.registry import default_registry
from partida.server.app import Server
from partida.server.challenges import Challenges
from partida.server.cluster import Cluster
from partida.server.live_nodes import LiveNodes
from partida.server.presence import Presence
from partida.server.publisher import Publisher
from partida.storage.database import Database, StorageError
from partida.storage.models import NodeAccount
from partida.storage.nodes import NodeDirectory, NodeTaken
from tests.fixtures.nodes import LEASE, node_config
from tests.fixtures.programs import CHROMIUM_ARGS, ensure_chromium, free_port
from tests.fixtures.storage import fresh_database


@pytest.fixture
async def nodes(postgres) -> AsyncIterator[Callable[..., Awaitable[Server]]]:  # type: ignore[no-untyped-def]
    url = fresh_database(postgres, "nodes_inprocess")
    started: list[Server] = []

    async def start(name: str, mqtt: str | None = None) -> Server:
        server = Server(node_config(url, name, mqtt))
        await server.start()
        started.append(server)
        return server

    start.url = url  # type: ignore[attr-defined]
    yield start
    for server in reversed(started):
        with contextlib.suppress(Exception):
            await server.stop()


async def test_lobby_redirects_and_spectators_across_nodes(nodes) -> None:  # type: ignore[no-untyped-def]
    a = await nodes("a")
    b = await nodes("b")
    alice = await Client.connect(a.url, name="alice")
    bob = await Client.connect(b.url, name="bob")
    carol = await Client.connect(b.url, name="carol")
    created = await alice.create_room("tictactoe", seat=0)
    code = created["room"]
    assert code in [r["code"] for r in await bob.list_rooms()]  # node b lists node a's room
    async with connect(b.url) as raw:  # what a client of node b is told, as the wire says it
        await raw.send(json.dumps({"type": "hello", "version": 1, "name": "dave"}))
        await raw.recv()
        await raw.send(json.dumps({"type": "watch", "id": 1, "room": code.lower()}))
        reply = json.loads(await raw.recv())
    assert reply == {
        "type": "error",
        "id": 1,
        "code": "moved",
        "message": f"room {code} is on node a",
        "url": a.cluster.public_url,
        "room": code,
    }
    joined = await bob.join(code)  # the SDK follows it
    assert joined["seat"] == 1
    await carol.watch(code)
    assert len(a.rooms[code].spectators) == 1 and not b.rooms
    for client, move in ((alice, 0), (bob, 4), (alice, 1), (bob, 8), (alice, 2)):
        await client.act(code, move)
    final = await carol.next_message(code, timeout=5)
    while final["type"] != "game_over":
        final = await carol.next_message(code, timeout=5)
    assert final["result"]["winners"] == [0]
    assert (await bob.next_update(code, timeout=5))["seq"] == 0  # the start, pushed through node a
    for client in (alice, bob, carol):
        await client.close()


async def game_on_a_watched_from_b(nodes, mosquitto, public: bool) -> tuple[Server, Server, list[Client], str]:  # type: ignore[no-untyped-def]
    """Nodes a and b on one broker; alice and bob seated in a room on a, carol connected to b."""
    a = await nodes("a", mosquitto.url)
    b = await nodes("b", mosquitto.url)
    for server in (a, b):
        assert await server.bus.wait_connected(10)  # type: ignore[union-attr]
    alice = await Client.connect(a.url, name="alice")
    bob = await Client.connect(a.url, name="bob")
    carol = await Client.connect(b.url, name="carol")
    code = (await alice.create_room("tictactoe", seat=0, public=public))["room"]
    await bob.join(code)
    return a, b, [alice, bob, carol], code


async def test_spectators_of_another_nodes_room_are_served_from_its_events(nodes, mosquitto) -> None:  # type: ignore[no-untyped-def]
    """With a broker, a node serves spectators of another node's room itself: the stored game to
    start from, then the room's public events."""
    a, b, (alice, bob, carol), code = await game_on_a_watched_from_b(nodes, mosquitto, public=False)
    await alice.act(code, 4)
    watching = await carol.watch(code)  # asked of node b, answered by node b
    assert watching["room"] == code and code in b.cluster.relays and not carol._routes
    first = await carol.next_update(code, timeout=5)
    assert first["seq"] == 1 and first["view"]["board"][4] == 0 and first["to_act"] == [1]
    for client, move in ((bob, 0), (alice, 3), (bob, 1), (alice, 5)):
        await client.act(code, move)
    seen = []
    while True:
        message = await carol.next_message(code, timeout=10)
        if message["type"] == "game_over":
            break
        seen.append(message["seq"])
    assert seen[:4] == [2, 3, 4, 5] and message["result"]["winners"] == [0]
    assert message["seed"] == str(a.rooms[code].core.seed)  # revealed at the end, as on the room's node
    await carol.leave(code)
    assert code not in b.cluster.relays
    for client in (alice, bob, carol):
        await client.close()


async def test_a_relay_that_finds_a_gap_after_the_end_still_tells_its_spectators(nodes, mosquitto) -> None:  # type: ignore[no-untyped-def]
    """An event lost on the way sends a relay back to the stored game; if that game has ended
    meanwhile, its spectators get the final update and `game_over` then (the room's own
    `game_over` event may be what came before the gap, or lost with it)."""
    _, b, (alice, bob, carol), code = await game_on_a_watched_from_b(nodes, mosquitto, public=True)
    await carol.watch(code)
    assert (await carol.next_update(code, timeout=5))["seq"] == 0
    relay = b.cluster.relays[code]
    assert relay._task is not None
    relay._task.cancel()  # the relay hears nothing more from the broker: every event is lost
    for client, move in ((alice, 0), (bob, 4), (alice, 1), (bob, 8), (alice, 2)):
        await client.act(code, move)
    await relay._on_event({"type": "action", "seq": 5, "seat": 0, "action": 2, "view": None})  # after a gap
    final = await carol.next_update(code, timeout=5)
    assert (final["seq"], final["status"], final["result"]["winners"]) == (5, "finished", [0])
    over = await carol.next_message(code, timeout=5)
    assert over["type"] == "game_over" and over["result"]["winners"] == [0]
    await relay._on_event({"type": "game_over", "result": over["result"], "seed": over["seed"]})  # late: ignored
    await carol.request("ping")  # answered after anything the relay sent carol meanwhile
    with pytest.raises(TimeoutError):  # so it would be queued already
        await carol.next_message(code, timeout=0.05)
    for client in (alice, bob, carol):
        await client.close()


async def test_a_node_that_stops_hands_its_games_over(nodes) -> None:  # type: ignore[no-untyped-def]
    """A stopped node ends its leases at once; the next request about its room, on another node,
    takes the game over from its log, and players come back with their seat tokens."""
    a = await nodes("a")
    b = await nodes("b")
    alice = await Client.connect(a.url, name="alice")
    bob = await Client.connect(b.url, name="bob")
    created = await alice.create_room("tictactoe", seat=0, public=False, clock={"initial": 60, "increment": 0})
    code, alice_token = created["room"], created["token"]
    bob_token = (await bob.join(code))["token"]
    await alice.act(code, 4)
    await bob.act(code, 0)
    await alice.close()
    await a.stop()
    with pytest.raises(ConnectionLost):  # bob's link to node a went with it
        for _ in range(20):
            await bob.next_message(code, timeout=5)
    await bob.join(code, seat=1, token=bob_token)  # asked of node b: it takes the game over
    assert code in b.rooms and b.rooms[code].core.seq == 2
    assert b.rooms[code].core.clock is not None  # the clock resumes as after a restart
    alice = await Client.connect(b.url, name="alice")
    await alice.join(code, seat=0, token=alice_token)
    await alice.act(code, 8)
    stored = await b.store.load_game(b.rooms[code].core.game_id)
    assert [action for _, action in stored.actions] == [4, 0, 8]
    for client in (alice, bob):
        await client.close()


async def test_a_live_node_name_is_refused(nodes) -> None:  # type: ignore[no-untyped-def]
    await nodes("a")
    with pytest.raises(NodeTaken):
        await nodes("a")


async def test_nodes_need_postgresql(tmp_path) -> None:  # type: ignore[no-untyped-def]
    db = await Database.open(str(tmp_path / "one.db"))
    try:
        with pytest.raises(StorageError, match="PostgreSQL"):
            NodeDirectory(db)
    finally:
        await db.close()


async def test_exactly_one_node_claims_each_expired_room(nodes) -> None:  # type: ignore[no-untyped-def]
    """Two claimers at once, racing on the same expired rows: each row goes to one of them."""
    a = await nodes("a")
    alice = await Client.connect(a.url, name="alice")
    bob = await Client.connect(a.url, name="bob")
    codes = []
    for _ in range(6):
        code = (await alice.create_room("tictactoe", seat=0))["room"]
        await bob.join(code)
        codes.append(code)
    game_ids = {a.rooms[c].core.game_id for c in codes}
    directory = a.cluster.directory
    await a.cluster.stop()  # leases end; the rooms stay in memory, so no takeover may write them
    db = await Database.open(nodes.url)
    try:
        one, two = NodeDirectory(db), NodeDirectory(db)
        await one.register("x", "ws://x", LEASE)
        await two.register("y", "ws://y", LEASE)
        got = await asyncio.gather(*(d.claim_expired(n) for d, n in ((one, "x"), (two, "y"))))
        x, y = set(got[0].playing), set(got[1].playing)
        assert x | y == game_ids and not x & y
        assert await directory.owned("a") == []
    finally:
        await db.close()
    for client in (alice, bob):
        await client.close()


def test_a_lease_must_be_sane() -> None:
    live = LiveNodes(["ws://a"])
    presence = Presence("a", "ws://a", live, default_registry(), Publisher(), Challenges())
    with pytest.raises(ValueError):
        Cluster("a", "ws://a", live, presence, lease=0)


def test_serve_refuses_node_flags_that_cannot_work(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from partida.cli import main

    db = str(tmp_path / "one.db")
    assert main(["serve", "--public-url", "ws://x:1", "--db", db, "--no-bots"]) == 2
    assert "give --node NAME too" in capsys.readouterr().err
    assert main(["serve", "--node", "a", "--host", "0.0.0.0", "--db", db, "--no-bots"]) == 2
    assert "give --public-url" in capsys.readouterr().err
    assert main(["serve", "--node", "a", "--public-url", "http://x:1", "--db", db, "--no-bots"]) == 2
    assert "must start with ws://" in capsys.readouterr().err
    port = free_port()
    assert main(["serve", "--node", "a", "--port", str(port), "--db", db, "--no-bots"]) == 2
    assert "PostgreSQL" in capsys.readouterr().err  # one writing process: one node


@pytest.mark.browser
async def test_the_browser_client_follows_moved_to_the_rooms_node(nodes) -> None:  # type: ignore[no-untyped-def]
    """An invite link opened on another node's address: the page opens itself on the room's
    node (the name carried along in the fragment) and takes a seat there."""
    playwright_api = pytest.importorskip("playwright.async_api")
    a = await nodes("a")
    b = await nodes("b")
    alice = await Client.connect(a.url, name="alice")
    code = (await alice.create_room("tictactoe", seat=0))["room"]
    async with playwright_api.async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=ensure_chromium(), args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page()
            page.set_default_timeout(15_000)
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            await page.goto(f"http://127.0.0.1:{b.config.port}/r/{code}")
            await page.fill("#name", "bob")
            await page.click("#enter")
            await page.wait_for_url(f"http://127.0.0.1:{a.config.port}/r/{code}")
            await page.wait_for_selector("#board")
            assert await page.text_content("#room-code") == code
            for _ in range(100):
                if a.rooms[code].core.seats[1] is not None:
                    break
                await asyncio.sleep(0.05)
            seat = a.rooms[code].core.seats[1]
            assert seat is not None and seat.name == "bob" and seat.session is not None
            assert errors == []
        finally:
            await browser.close()
    await alice.close()


async def test_a_bot_given_several_nodes_connects_to_one_that_answers(server, connect) -> None:  # type: ignore[no-untyped-def]
    from partida.bots.runner import BotRunner

    _, token = await server.store.create_bot("roamer")
    dead = f"ws://127.0.0.1:{free_port()}"
    runner = BotRunner(f"{dead},{server.url}", "random", token=token)
    task = asyncio.create_task(runner.run(reconnect=True, max_delay=0.2))
    try:
        for _ in range(200):
            if any(s.identity and s.identity.name == "roamer" for s in server.bot_sessions()):
                break
            await asyncio.sleep(0.05)
        alice = await connect(name="alice")
        created = await alice.create_room("tictactoe", seat=0, bots={1: "roamer"})
        assert created["summary"]["seats"][1]["name"] == "roamer"
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@pytest.mark.processes
def test_pool_bots_end_with_their_server_even_when_it_is_killed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`partida serve` starts its pool bots so that the kernel ends them when it dies."""
    import os
    import signal
    import subprocess
    import sys
    import time

    pid_file = tmp_path / "child.pid"
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time\n"
            "from partida.cli.serve import _die_with_parent\n"
            "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], "
            "preexec_fn=_die_with_parent)\n"
            f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
            "time.sleep(60)\n",
        ]
    )
    try:
        for _ in range(200):
            if pid_file.exists() and pid_file.read_text():
                break
            time.sleep(0.05)
        child = int(pid_file.read_text())
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        for _ in range(200):
            try:
                os.kill(child, 0)
            except ProcessLookupError:
                break
            with open(f"/proc/{child}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break  # ended, waiting only to be reaped by init
            time.sleep(0.05)
        else:
            os.kill(child, signal.SIGKILL)
            raise AssertionError("the child outlived its killed parent")
    finally:
        parent.kill()


async def test_every_node_shows_a_ladders_connected_members_and_games(nodes) -> None:  # type: ignore[no-untyped-def]
    """Ladder bots connect to the scheduler's node only; every node's `ladder_list` and
    `ladder_standings` show them, and the games in play, from what that node writes."""
    servers = [await nodes(name) for name in ("a", "b", "c")]
    scheduler = next(s for s in servers if s.ladder_director.lock is not None and s.ladder_director.lock.held)
    others = [s for s in servers if s is not scheduler]
    await scheduler.store.ladders.create("trio", "tictactoe", {}, 2, {"per_move": 600.0}, 1)
    bots = []
    for name, server in zip(("ann", "ben", "cyd"), (others[0], others[1], others[0]), strict=True):
        _, token = await scheduler.store.create_bot(name)
        bot = await Client.connect(server.url, token=token)  # joins, and never moves: its game stays in play
        await bot.ladder_join("trio")  # answered `moved`: joined on the scheduler's node
        bots.append(bot)

    async def seen_everywhere(connected: int, playing: int) -> None:
        for _ in range(200):
            lists = [await _ladder(server, "trio") for server in servers]
            if all((d["connected"], d["playing"]) == (connected, playing) for d in lists):
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"not every node shows {connected} connected and {playing} playing: {lists}")

    await seen_everywhere(3, 1)
    async with await Client.connect(others[1].url, name="eve") as eve:
        standings = await eve.ladder_standings("trio")
        assert sorted(row["name"] for row in standings if row["connected"]) == ["ann", "ben", "cyd"]
    await bots[2].close()
    await seen_everywhere(2, 1)
    for bot in bots[:2]:
        await bot.close()
    await seen_everywhere(0, 1)  # the game waits for its absent players


async def _ladder(server: Server, name: str) -> dict[str, object]:
    async with await Client.connect(server.url, name="looker") as looker:
        return next(d for d in await looker.ladder_list() if d["name"] == name)


async def test_a_starting_node_clears_the_accounts_of_nodes_gone_for_good(nodes) -> None:  # type: ignore[no-untyped-def]
    a = await nodes("a")
    assert a.cluster is not None and a.cluster.directory is not None
    account = await a.store.create_user("zed", "correct horse battery")
    directory = a.cluster.directory
    await directory.register("ghost", "ws://127.0.0.1:9", LEASE)
    await directory.arrived("ghost", account.id, "zed", "user", None, None)
    await directory.arrived("a", account.id, "zed", "user", None, None)
    assert [w.node for w in await directory.connected("ZED", "b")] == ["a", "ghost"]
    await directory.renew("ghost", -1.0)  # its lease runs out: its rows no longer count
    assert [w.node for w in await directory.connected("zed", "b")] == ["a"]
    await nodes("b")  # and a node starting clears them
    async with directory.db.session() as session:
        rows = sorted(await session.scalars(select(NodeAccount.node)))
    assert rows == ["a"]
