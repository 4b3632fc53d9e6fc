"""The rooms table with fake ports: a store that records the games it is asked to create, a lobby
and a directory that record what they are told. The rooms in it are real drivers with real cores;
nothing here needs a socket or a database."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from partida.games.registry import default_registry
from partida.protocol import ErrorCode, ProtocolError
from partida.room.seed import seed_hash
from partida.room.terms import RoomTerms
from partida.server.limits import Limits
from partida.server.publisher import Publisher
from partida.server.rooms import table as table_module
from partida.server.rooms.codes import PRIVATE_CODE_LENGTH, PUBLIC_CODE_LENGTH
from partida.server.rooms.driver import Room
from partida.server.rooms.table import Rooms
from partida.server.session import Session


class Store:
    """Records each game created; game ids count from 1."""

    def __init__(self) -> None:
        self.created: list[dict[str, Any]] = []

    async def create_game(self, game: str, options: dict[str, Any], seed: int, seed_hash: str, seats: int,
                          room_code: str, public: bool, **rest: Any) -> int:  # fmt: skip
        self.created.append({"game": game, "seats": seats, "code": room_code, "public": public, "seed": seed, **rest})
        return len(self.created)


class Lobby:
    def __init__(self) -> None:
        self.changed_codes: list[str] = []
        self.removed_codes: list[str] = []

    def changed(self, room: Room) -> None:
        self.changed_codes.append(room.code)

    def removed(self, room: Room) -> None:
        self.removed_codes.append(room.code)


class Directory:
    """Another node holds the codes in `taken`: a room entering with one is given another."""

    def __init__(self, rooms: Rooms | None = None, taken: set[str] | None = None) -> None:
        self.rooms = rooms
        self.taken = taken or set()
        self.entered_codes: list[str] = []
        self.left: list[str] = []

    async def entered(self, room: Room) -> None:
        while room.code in self.taken:
            assert self.rooms is not None
            self.rooms.recode(room)
        self.entered_codes.append(room.code)

    def left_memory(self, room: Room) -> None:
        self.left.append(room.code)


class Connection(Session):
    """A session without a socket that keeps what it is sent."""

    def __init__(self, address: str = "10.0.0.1") -> None:
        super().__init__(None, address=address)
        self.got: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        self.got.append(message)


def table(directory: Directory | None = None, abandon_after: float = 90.0) -> tuple[Rooms, Store, Lobby, Directory]:
    store, lobby, directory = Store(), Lobby(), directory or Directory()
    rooms = Rooms(default_registry(), lobby, directory, Publisher(), Limits(), abandon_after)
    directory.rooms = rooms
    rooms.attach(store)  # type: ignore[arg-type]
    return rooms, store, lobby, directory


def terms(public: bool = True, **more: Any) -> RoomTerms:
    return RoomTerms(default_registry().get("tictactoe"), {}, 2, public=public, **more)


async def test_a_room_opened_is_stored_known_to_the_directory_and_listed() -> None:
    rooms, store, lobby, directory = table()
    owner = Connection()
    room = await rooms.open(terms(rated=False, abandon_after=45.0), owner)
    assert rooms[room.code] is room and room.code in rooms and len(rooms) == 1 and list(rooms.values()) == [room]
    assert len(room.code) == PUBLIC_CODE_LENGTH and room.owner is owner and room.public
    [row] = store.created
    assert (row["game"], row["seats"], row["code"], row["public"]) == ("tictactoe", 2, room.code, True)
    assert row["seed"] == room.core.seed and room.core.seed_hash == seed_hash(room.core.seed)
    assert row["endings"]["abandon_after"] == 45.0 and room.core.game_id == 1
    assert directory.entered_codes == [room.code] and lobby.changed_codes == [room.code]
    private = await rooms.open(terms(public=False), None)
    assert len(private.code) == PRIVATE_CODE_LENGTH and private.core.game_id == 2 and not private.public


async def test_a_code_another_node_holds_is_replaced_before_the_room_enters(monkeypatch: pytest.MonkeyPatch) -> None:
    directory = Directory(taken={"TAKEN1"})
    rooms, store, _, _ = table(directory)
    first = await rooms.open(terms(), None)
    # the draws: a code another node's live room has, then this node's own room's, then a free one
    drawn = iter(["TAKEN1", first.code, "FREE22"])
    monkeypatch.setattr(table_module, "new_room_code", lambda length: next(drawn))
    second = await rooms.open(terms(), None)
    assert second.code == "FREE22" and rooms["FREE22"] is second and rooms[first.code] is first
    assert "TAKEN1" not in rooms and len(rooms) == 2
    assert store.created[1]["code"] == "TAKEN1"  # stored under the drawn code; the directory recodes its row


async def test_a_room_is_found_as_typed_or_refused_as_no_such_room() -> None:
    rooms, *_ = table()
    room = await rooms.open(terms(), None)
    assert rooms.room(f"  {room.code.lower()} ") is room
    with pytest.raises(ProtocolError) as refused:
        rooms.room("NOPE42")
    assert refused.value.code == ErrorCode.NO_SUCH_ROOM
    assert rooms.get("NOPE42") is None and rooms.by_game_id(room.core.game_id) is room and rooms.by_game_id(99) is None


async def test_nothing_outside_the_table_inserts_or_deletes_a_room() -> None:
    rooms, *_ = table()
    room = await rooms.open(terms(), None)
    with pytest.raises(TypeError):
        rooms["OTHER1"] = room  # type: ignore[index]
    with pytest.raises(TypeError):
        del rooms[room.code]  # type: ignore[attr-defined]


async def test_a_dropped_room_leaves_the_table_the_lobby_the_directory_and_its_audience() -> None:
    rooms, _, lobby, directory = table()
    room = await rooms.open(terms(), None)
    watcher = Connection()
    await room.call(lambda: room.watch(watcher))
    assert watcher.rooms == {room}
    await rooms.drop(room)
    assert room.code not in rooms and lobby.removed_codes == [room.code] and directory.left == [room.code]
    assert watcher.rooms == set()
    with pytest.raises(ProtocolError) as closed:
        await room.call(lambda: room.watch(watcher))
    assert closed.value.code == ErrorCode.NO_SUCH_ROOM


async def test_a_room_lost_to_another_node_tells_its_audience_and_closes() -> None:
    rooms, _, lobby, directory = table()
    room = await rooms.open(terms(), None)
    watcher = Connection()
    await room.call(lambda: room.watch(watcher))
    rooms.lose(room, {"type": "error", "code": "moved"})
    assert room.code not in rooms and watcher.rooms == set() and watcher.got == [{"type": "error", "code": "moved"}]
    for _ in range(3):  # the close runs in a task of its own
        await asyncio.sleep(0)
    assert lobby.removed_codes == [room.code]  # closed
    assert directory.left == []  # the directory's row is the other node's now


async def test_rooms_are_counted_per_address_while_they_count_and_are_here() -> None:
    rooms, *_ = table()
    ada, bo = Connection("10.0.0.1"), Connection("10.0.0.2")
    first = await rooms.open(terms(public=True), ada)
    await rooms.open(terms(public=False), ada)
    await rooms.open(terms(public=True), bo)
    await rooms.open(terms(public=True), None)  # a ladder's: nobody's address
    assert rooms.waiting_by_address.count("10.0.0.1", 2) == 2 and rooms.public_by_address.count("10.0.0.1", 1) == 1
    assert rooms.waiting_by_address.count("10.0.0.2", 1) == 1 and rooms.waiting_by_address.count("10.0.0.3", 1) == 0
    await rooms.drop(first)
    assert rooms.waiting_by_address.count("10.0.0.1", 1) == 1 and rooms.public_by_address.count("10.0.0.1", 1) == 0
    bots = rooms.by_address(lambda room: room.core.status == "playing")
    bots.add("10.0.0.9", rooms.room(next(iter(rooms))))
    assert bots.count("10.0.0.9", 1) == 0  # waiting: it does not count


async def test_subscribers_are_the_rooms_ports() -> None:
    rooms, *_ = table()
    told: list[Room] = []
    rooms.on_finished(told.append)
    rooms.on_started(told.append)
    room = await rooms.open(terms(), None)
    assert room.ports is rooms.ports and rooms.ports.finished == [told.append] and rooms.ports.started == [told.append]


def stored_in_play(game: str = "tictactoe", **fields: Any) -> SimpleNamespace:
    data = dict(
        id=77,
        game=game,
        options={},
        seats=2,
        seed=11,
        seed_hash=seed_hash(11),
        room_code="RESUME",
        public=True,
        rated=False,
        status="playing",
        result=None,
        clock=None,
        endings=None,
        clock_state=None,
        seat_list=[(0, None, "ada"), (1, None, "bo")],
        seat_kinds={},
        seat_tokens={0: "ta", 1: "tb"},
        actions=[(0, 4)],
    )
    return SimpleNamespace(**{**data, **fields})


async def test_games_in_play_resume_into_the_table_and_an_unknown_game_stays_out() -> None:
    rooms, _, lobby, _ = table(abandon_after=33.0)
    resumed = await rooms.resume([stored_in_play(), stored_in_play("no-such-game", id=78, room_code="GONE")])  # type: ignore[list-item]
    assert [room.code for room in resumed] == ["RESUME"] and list(rooms) == ["RESUME"]
    room = rooms["RESUME"]
    assert room.core.seq == 1 and room.core.status == "playing" and room.core.endings.abandon_after == 33.0
    assert room.core.endings.away.keys() == {0, 1}  # nobody is back yet: every seat's grace runs
    assert lobby.changed_codes == ["RESUME"]
    await rooms.stop()
