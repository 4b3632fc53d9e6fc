"""Where rooms are (server/room_directory.py): the single server's answer, and a node's
(server/cluster.py) with fake ports: a directory of nodes and room leases kept in memory, the
store and the rooms' rebuilding standing in for the server's. The real directory, with
PostgreSQL and several nodes, is tested in tests/test_nodes*.py."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from partida.games.registry import default_registry
from partida.protocol import ErrorCode, ProtocolError
from partida.server.challenges import Challenges
from partida.server.cluster import Cluster, NodeParts
from partida.server.events import EventBus
from partida.server.limits import Limiter, Limits
from partida.server.live_nodes import LiveNodes
from partida.server.presence import Presence
from partida.server.publisher import Publisher
from partida.server.room_directory import SingleNodeRooms
from partida.server.rooms.codes import PUBLIC_CODE_LENGTH
from partida.server.session import Session
from partida.storage.nodes import Claimed, CodeTaken, Location

HERE = "ws://a:1"
THERE = "ws://b:1"


@dataclass
class Lease:
    game_id: int
    node: str
    public: bool = True
    summary: dict[str, Any] | None = None


class Directory:
    """The shared directory, in memory: nodes (URL, live), room leases by code, and what a
    node asked of it."""

    def __init__(self) -> None:
        self.nodes: dict[str, tuple[str, bool]] = {"b": (THERE, True)}
        self.leases: dict[str, Lease] = {}
        self.released: list[int] = []
        self.recoded: dict[int, str] = {}
        self.accounts_left: list[str] = []
        self.pages: list[tuple[Any, ...]] = []

    async def register(self, name: str, public_url: str, lease: float) -> None:
        self.nodes[name] = (public_url, True)

    async def renew(self, node: str, lease: float) -> set[int]:
        url, _ = self.nodes[node]
        self.nodes[node] = (url, lease > 0)
        return {lease.game_id for lease in self.leases.values() if lease.node == node}

    async def live_urls(self) -> list[str]:
        return sorted(url for url, live in self.nodes.values() if live)

    async def left(self, node: str, account_ids: list[int] | None = None) -> None:
        self.accounts_left.append(node)

    async def release(self, node: str, game_ids: list[int]) -> None:
        self.released += game_ids
        for code in [c for c, lease in self.leases.items() if lease.node == node and lease.game_id in game_ids]:
            del self.leases[code]

    async def claim_expired(self, node: str, limit: int = 100, game_id: int | None = None) -> Claimed:
        dead = [
            lease
            for lease in self.leases.values()
            if not self.nodes[lease.node][1] and (game_id is None or lease.game_id == game_id)
        ]
        for lease in dead:
            lease.node = node
        return Claimed([lease.game_id for lease in dead], [])

    async def locate(self, code: str) -> Location | None:
        lease = self.leases.get(code)
        if lease is None:
            return None
        url, live = self.nodes[lease.node]
        return Location(lease.game_id, lease.node, url, live, lease.public, lease.summary or {})

    async def add_room(self, game_id: int, code: str, node: str, summary: dict[str, Any]) -> None:
        if code in self.leases:
            raise CodeTaken(code)
        self.leases[code] = Lease(game_id, node, bool(summary.get("public")), summary)

    async def recode(self, game_id: int, code: str) -> None:
        self.recoded[game_id] = code

    async def save_summaries(self, node: str, summaries: dict[int, dict[str, Any]]) -> None:
        return None

    async def lobby(
        self, exclude_node: str, game: str | None = None, status: str | None = None, after: int = 0, limit: int = 50
    ) -> list[dict[str, Any]]:
        self.pages.append((exclude_node, game, status, after, limit))
        return [
            {"code": code, "game_id": lease.game_id}
            for code, lease in sorted(self.leases.items(), key=lambda item: item[1].game_id)
            if lease.node != exclude_node and lease.public and lease.game_id > after
        ][:limit]


class Core:
    """What the directory reads of a room's core: its game id, status, seats and move count."""

    def __init__(self, game_id: int, status: str) -> None:
        self.game_id = game_id
        self.status = status
        self.seats: list[Any] = []
        self.seq = 0


class Room:
    """What the directory reads of a room: its code, visibility, summary and core (and of one
    taken over, its seats, to summon the bots that held them)."""

    def __init__(self, game_id: int, code: str, public: bool = True, status: str = "waiting") -> None:
        self.code = code
        self.public = public
        self.core = Core(game_id, status)

    def summary(self) -> dict[str, Any]:
        return {"code": self.code, "game_id": self.core.game_id, "public": self.public, "status": "waiting"}


class Table(dict[str, Any]):
    """The node's rooms as the cluster changes them: a room re-coded before it enters, a room lost
    to another node."""

    def recode(self, room: Room) -> None:
        room.code = next(c for c in ("UVWXYZ", "QRSTUV") if c != room.code and c not in self)

    def lose(self, room: Room, notice: dict[str, Any]) -> None:
        self.pop(room.code, None)


@dataclass
class StoredGame:
    id: int


class Store:
    """The games in play that a node taking over reads back."""

    def __init__(self, playing: list[int]) -> None:
        self.playing = playing

    async def unfinished_games(self, ids: list[int]) -> list[StoredGame]:
        return [StoredGame(i) for i in ids if i in self.playing]


@dataclass
class Request:
    type: str
    room: str


class Node:
    def __init__(self, bus: EventBus) -> None:
        self.directory = Directory()
        self.rooms = Table()
        self.store = Store([])
        self.codes: dict[int, str] = {}  # game id -> its room code, for the rooms rebuilt on taking over
        self.live = LiveNodes([HERE])
        registry = default_registry()
        presence = Presence("a", HERE, self.live, registry, Publisher(bus), Challenges())
        self.cluster = Cluster("a", HERE, self.live, presence, lease=3600)
        self.parts = NodeParts(
            directory=self.directory,  # type: ignore[arg-type]
            store=self.store,  # type: ignore[arg-type]
            bus=bus,
            registry=registry,
            limiter=Limiter(Limits()),
            rooms=self.rooms,  # type: ignore[arg-type]
            bots=list,
            resume=self.resume,  # type: ignore[arg-type]
            seat_bot_again=self.seat_bot_again,
        )
        self.served: list[Request] = []

    async def resume(self, stored: list[StoredGame]) -> list[Any]:
        rooms = [Room(game.id, self.codes[game.id], status="playing") for game in stored]
        for room in rooms:
            self.rooms[room.code] = room
        return rooms

    async def seat_bot_again(self, session: Session) -> None:
        return None

    async def dispatch(self, session: Session, request: Any) -> None:
        self.served.append(request)


@pytest.fixture
async def node() -> AsyncIterator[Node]:
    async with EventBus() as bus:
        node = Node(bus)
        await node.cluster.start(node.parts)
        yield node
        await node.cluster.stop()


MISSING = ProtocolError(ErrorCode.NO_SUCH_ROOM, "there is no room")


async def elsewhere(node: Node, code: str, kind: str = "join") -> ProtocolError | None:
    return await node.cluster.room_elsewhere(Session(None), Request(kind, code), MISSING, node.dispatch)


async def test_a_single_server_has_every_room_here() -> None:
    rooms = SingleNodeRooms()
    served: list[Any] = []

    async def dispatch(session: Session, request: Any) -> None:
        served.append(request)

    assert await rooms.room_elsewhere(Session(None), Request("join", "ABCDEF"), MISSING, dispatch) is MISSING
    assert served == []
    assert rooms.other_rooms is None  # the lobby lists this node's rooms only
    room = Room(1, "ABCDEF")
    await rooms.entered(room)  # type: ignore[arg-type]
    rooms.left_memory(room)  # type: ignore[arg-type]
    assert room.code == "ABCDEF"


async def test_a_node_enters_the_directory_and_names_the_live_nodes(node: Node) -> None:
    assert node.directory.nodes["a"] == (HERE, True)
    assert node.live.urls == [HERE, THERE]
    assert node.directory.accounts_left == ["a"]  # its presence forgot the accounts of its last life
    await node.cluster.stop()
    assert node.directory.nodes["a"] == (HERE, False)  # its leases end at once: others take its games
    assert node.directory.accounts_left == ["a", "a"]


async def test_a_room_on_another_live_node_is_moved_there(node: Node) -> None:
    node.directory.leases["ABCDEF"] = Lease(5, "b")
    with pytest.raises(ProtocolError) as moved:
        await elsewhere(node, " abcdef ")
    assert moved.value.code == ErrorCode.MOVED
    assert moved.value.details == {"url": THERE, "room": "ABCDEF"}
    assert node.served == []


async def test_a_room_no_node_has_is_missing(node: Node) -> None:
    assert await elsewhere(node, "ZZZZZZ") is MISSING
    assert await elsewhere(node, "ZZZZZZ", "watch") is MISSING  # no broker: no spectators relayed
    assert node.served == []


async def test_a_dead_nodes_room_is_taken_over_and_the_request_served_here(node: Node) -> None:
    node.directory.nodes["b"] = (THERE, False)
    node.directory.leases["ABCDEF"] = Lease(5, "b")
    node.store.playing = [5]
    node.codes[5] = "ABCDEF"
    assert await elsewhere(node, "ABCDEF") is None
    assert [request.room for request in node.served] == ["ABCDEF"]
    assert node.directory.leases["ABCDEF"].node == "a"
    assert node.cluster.owned == {5} and node.cluster.taken_over == 1


async def test_a_new_room_enters_the_directory_under_a_free_code(node: Node) -> None:
    node.directory.leases["ABCDEF"] = Lease(5, "b")
    public, private = Room(6, "ABCDEF"), Room(7, "GHIJKL", public=False)
    await node.cluster.entered(public)  # type: ignore[arg-type]
    await node.cluster.entered(private)  # type: ignore[arg-type]
    assert public.code != "ABCDEF" and len(public.code) == PUBLIC_CODE_LENGTH
    assert node.directory.recoded == {6: public.code}
    assert node.directory.leases[public.code].node == "a"
    assert private.code == "GHIJKL" and node.directory.leases["GHIJKL"].node == "a"
    assert node.cluster.owned == {6, 7}


async def test_a_room_that_left_memory_leaves_the_directory_at_the_next_round(node: Node) -> None:
    room = Room(6, "ABCDEF")
    await node.cluster.entered(room)  # type: ignore[arg-type]
    node.cluster.left_memory(room)  # type: ignore[arg-type]
    assert "ABCDEF" in node.directory.leases  # not at once: one write per round
    await node.cluster.tick(asyncio.get_running_loop().time())
    assert node.directory.released == [6] and "ABCDEF" not in node.directory.leases
    assert node.cluster.owned == set()


async def test_the_lobby_pages_other_nodes_rooms(node: Node) -> None:
    node.directory.leases["ABCDEF"] = Lease(5, "b")
    node.directory.leases["GHIJKL"] = Lease(6, "a")
    other_rooms = node.cluster.other_rooms
    assert other_rooms is not None
    assert await other_rooms("tictactoe", "waiting", 0, 10) == [{"code": "ABCDEF", "game_id": 5}]
    assert node.directory.pages == [("a", "tictactoe", "waiting", 0, 10)]
