"""The tournament director's rules on a clock the test moves, with fake ports: a store of dicts
in place of the database, rooms that start when their seats fill and end when the test says, and
connections the test lists. No real time passes: a start, an arena's length and a no-show are
the clock's, and the tests assert what the director did at each moment."""

from __future__ import annotations

import asyncio
import copy
import itertools
import random
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest

from partida.competition.arena import ArenaScore
from partida.competition.results import rank_points
from partida.games.registry import default_registry
from partida.room.terms import RoomTerms
from partida.server.competition.tournament_director import NO_SHOW_SECONDS, TournamentDirector, standings
from partida.server.publisher import Publisher
from partida.storage.tournaments import Entrant, RoundTaken, Slot, Table, TournamentInfo
from tests.fakes import RoomsTable

T0 = 1_800_000_000.0  # the clock's start, seconds since the epoch
CLOCK = {"initial": 60.0, "increment": 0.0}


class Clock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Session:
    """A connection as the director sees it: who it is, and what it was sent."""

    def __init__(self, account_id: int, name: str, kind: str) -> None:
        self.account_id = account_id
        self.name = name
        self.identity = SimpleNamespace(kind=kind, name=name, account_id=account_id)
        self.sent: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)


class Room:
    """A table's room: waiting until its seats fill, then playing until `end`."""

    def __init__(self, code: str, game_id: int, seats: int, kept: tuple[int, ...]) -> None:
        self.code = code
        self.game_id = game_id
        self.kept = kept
        self.seats: list[Session | None] = [None] * seats
        self.status = "waiting"
        self.result: dict[str, Any] | None = None

    @property
    def core(self) -> Room:
        """A room and its core in one stand-in: the director reads seats, status and game id from
        the core, and calls commands on the room."""
        return self

    async def call(self, command: Callable[[], Awaitable[Any]]) -> Any:
        return await command()

    async def seat_bot(self, session: Session, seat: int) -> int:
        return self._seat(session, seat)

    async def join(self, session: Session, seat: int, token: str | None) -> int:
        return self._seat(session, seat)

    def _seat(self, session: Session, seat: int) -> int:
        assert self.kept[seat] == session.account_id, "a seat is kept for its entrant"
        self.seats[seat] = session
        if None not in self.seats:
            self.status = "playing"
        return seat

    def token_for(self, seat: int) -> str:
        return f"{self.code}:{seat}"

    async def close_unstarted(self) -> None:
        if self.status == "waiting":
            self.status = "aborted"

    def end(self, ranks: list[int]) -> None:
        assert self.status == "playing"
        self.status = "finished"
        self.result = {"ranks": ranks}


class Store:
    """The tournament store's queries the director makes, on dicts; a table's game state and
    result are read from its room, as the real store reads them from the game's row."""

    def __init__(self, rooms: dict[int, Room]) -> None:
        self.rooms = rooms  # game id -> room
        self.infos: dict[int, TournamentInfo] = {}
        self.entries: dict[int, list[Entrant]] = {}
        self.pairings: dict[int, list[list[Any]]] = {}  # [round, table, accounts, game id, result]

    def add(self, fmt: str, entrants: list[Entrant], starts_at: float = T0, **fields: Any) -> TournamentInfo:
        number = len(self.infos) + 1
        info = TournamentInfo(
            id=number,
            name=f"t{number}",
            game=fields.pop("game", "tictactoe"),
            options=fields.pop("options", {}),
            seats=fields.pop("seats", 2),
            clock=CLOCK,
            format=fmt,
            entry="both",
            rounds=fields.pop("rounds", None),
            duration=fields.pop("duration", None),
            starts_at=datetime.fromtimestamp(starts_at, UTC),
            status="registering",
            round=0,
            created_at=datetime.fromtimestamp(T0, UTC),
            ended_at=None,
        )
        self.infos[number], self.entries[number], self.pairings[number] = info, entrants, []
        return info

    async def schedule(self) -> list[Slot]:
        return [
            Slot(i.id, i.status, i.format, i.starts_at.timestamp(), i.duration, bool(self.entries[i.id]))
            for i in self.infos.values()
            if i.status in ("registering", "running")
        ]

    async def by_id(self, tournament_id: int) -> TournamentInfo | None:
        return copy.copy(self.infos.get(tournament_id))

    async def set_state(self, tournament_id: int, *, status: str | None = None, round: int | None = None) -> None:
        if status is not None:
            self.infos[tournament_id].status = status

    async def entrants(self, tournament_id: int) -> list[Entrant]:
        return list(self.entries[tournament_id])

    async def open_round(self, tournament_id: int, round: int, rows: list[Any]) -> None:
        info = self.infos[tournament_id]
        if info.round != round - 1:
            raise RoundTaken(f"round {round} of tournament {tournament_id} is paired already")
        info.round = round
        self.pairings[tournament_id] += [[round, *row] for row in rows]  # row: table, accounts, game id, result

    async def decide(self, tournament_id: int, round: int, table: int, result: dict[str, Any]) -> None:
        for row in self.pairings[tournament_id]:
            if row[:2] == [round, table]:
                row[4] = result

    async def tables(self, tournament_id: int, round: int | None = None) -> list[Table]:
        names = {e.account_id: e.name for e in self.entries[tournament_id]}
        found = []
        for number, table, accounts, game_id, result in sorted(self.pairings[tournament_id], key=lambda r: r[:2]):
            if round is not None and number != round:
                continue
            room = self.rooms.get(game_id) if game_id is not None else None
            found.append(
                Table(
                    number,
                    table,
                    list(accounts),
                    game_id,
                    room.code if room else None,
                    room.status if room else None,
                    result if result is not None else (room.result if room else None),
                    [names[a] for a in accounts],
                )
            )
        return found


class Connections:
    def __init__(self) -> None:
        self.sessions: dict[int, Session] = {}

    def account_ids(self) -> set[int]:
        return set(self.sessions)

    def of_account_id(self, account_id: int) -> list[Session]:
        return [self.sessions[account_id]] if account_id in self.sessions else []


class Event:
    """One tournament run by a director on fake ports."""

    def __init__(self) -> None:
        self.clock = Clock()
        self.rooms = RoomsTable(self.open_room)  # this node's rooms by code
        self.by_game: dict[int, Room] = {}
        self.store = Store(self.by_game)
        self.connections = Connections()
        self.listed = 0
        self.director = TournamentDirector(
            self.store,  # type: ignore[arg-type]
            self.rooms,  # type: ignore[arg-type]
            default_registry(),
            self.connections,  # type: ignore[arg-type]
            Publisher(),
            listing_changed=self.changed,
            now=self.clock,
        )

    def changed(self) -> None:
        self.listed += 1

    async def open_room(self, terms: RoomTerms, owner: Any) -> Room:
        game_id = len(self.by_game) + 1
        room = Room(f"R{game_id:05d}", game_id, terms.seats, terms.kept)
        self.rooms[room.code] = self.by_game[game_id] = room
        return room

    def entrants(self, n: int, kind: str = "bot", connected: bool = True, first: int = 1) -> list[Entrant]:
        people = [Entrant(i, f"{kind}{i}", kind) for i in range(first, first + n)]
        if connected:
            for e in people:
                self.connect(e)
        return people

    def connect(self, entrant: Entrant) -> Session:
        session = Session(entrant.account_id, entrant.name, entrant.kind)
        self.connections.sessions[entrant.account_id] = session
        return session

    def playing(self) -> list[Room]:
        return [room for room in self.rooms.values() if room.status == "playing"]

    def end(self, room: Room, ranks: list[int]) -> None:
        """A game over, told to the director as the rooms table tells its subscribers (`Rooms.on_finished`)."""
        room.end(ranks)
        self.director.game_over(room)  # type: ignore[arg-type]


async def test_a_tournament_starts_at_its_time_and_not_before() -> None:
    event = Event()
    info = event.store.add("swiss", event.entrants(4), starts_at=T0 + 3600, rounds=1)
    await event.director.tick()
    assert event.store.infos[info.id].status == "registering" and not event.rooms
    event.clock.now = T0 + 3599
    await event.director.tick()
    assert event.store.infos[info.id].status == "registering" and not event.rooms
    event.clock.now = T0 + 3600
    await event.director.tick()
    assert event.store.infos[info.id].status == "running"
    assert len(event.playing()) == 2  # round 1: both tables, every bot seated at once
    told = [m["type"] for m in event.connections.sessions[1].sent]
    assert told == ["tournament_started", "tournament_game", "tournament_round"]


async def test_a_finished_table_pairs_the_next_round_at_once() -> None:
    """The director hears of its tables' ends (`game_over`) and pairs on without waiting for a
    periodic look: its loop runs on a clock that never moves, and a round robin of four runs to
    its end, every pair once, each round paired only when the last table of the one before ends.
    (Replaces test_tournaments.py's test of the same name, which ran real bots.)"""
    event = Event()
    info = event.store.add("round-robin", event.entrants(4))
    event.director.start()
    try:
        for round in (1, 2, 3):
            async with asyncio.timeout(10):
                while event.store.infos[info.id].round < round or len(event.playing()) < 2:
                    await asyncio.sleep(0.01)
            first, second = event.playing()
            event.end(first, [1, 2])
            await asyncio.sleep(0.3)  # a look more than the director's settling time
            assert event.store.infos[info.id].round == round  # the next waits for the whole round
            event.end(second, [2, 1])
        async with asyncio.timeout(10):
            while event.store.infos[info.id].status != "finished":
                await asyncio.sleep(0.01)
    finally:
        await event.director.stop()
    tables = await event.store.tables(info.id)
    assert event.store.infos[info.id].round == 3
    pairs = [frozenset(t.accounts) for t in tables]
    assert len(pairs) == len(set(pairs)) == 6
    assert [r["games"] for r in standings("round-robin", tables, event.store.entries[info.id])] == [3, 3, 3, 3]


async def test_a_swiss_of_nine_has_one_bye_a_round_and_no_repeats() -> None:
    """The rule of test_tournaments.py's Swiss of nine, round by round on the director: each round
    pairs all nine with one bye, four rounds without a repeated game or a second bye, a point a
    game and a point a bye."""
    event = Event()
    info = event.store.add("swiss", event.entrants(9), rounds=4)
    rng = random.Random(9)
    await event.director.tick()
    while event.store.infos[info.id].status != "finished":
        assert event.playing(), "a round is paired once the one before is over"
        for room in event.playing():
            event.end(room, rng.choice([[1, 2], [2, 1], [1, 1]]))
        await event.director.tick()
    tables = await event.store.tables(info.id)
    for round in (1, 2, 3, 4):
        this = [t for t in tables if t.round == round]
        assert sum(1 for t in this if t.game_id is None) == 1
        assert sorted(a for t in this for a in t.accounts) == list(range(1, 10))
    games = [frozenset(t.accounts) for t in tables if t.game_id is not None]
    assert len(games) == len(set(games)) == 16
    assert len({t.accounts[0] for t in tables if t.game_id is None}) == 4
    over = event.connections.sessions[1].sent[-1]
    assert over["type"] == "tournament_over"
    assert sum(r["points"] for r in over["standings"]) == 16 + 4


async def test_an_arena_pairs_continuously_for_its_length_and_counts_streaks() -> None:
    """An arena of 120 seconds on the test's clock, six bots whose games end ten seconds after
    they begin: everyone plays again and again, never the same opponent twice in a row, nothing
    is paired at or after its end, and the standings hold lichess's points (2 a win, 1 a draw,
    double on a streak of two wins or more) replayed here from the pairings. (Replaces
    test_tournaments.py's two-minute arena, which ran thirty real seconds.)"""
    event = Event()
    people = event.entrants(6)
    info = event.store.add("arena", people, duration=120)
    rng = random.Random(6)
    await event.director.tick()
    while event.clock.now < T0 + 120:
        assert event.store.infos[info.id].status == "running"
        for room in event.playing():
            event.end(room, rng.choice([[1, 2], [2, 1], [1, 1]]))
        event.clock.now += 10
        await event.director.tick()
    last = event.store.infos[info.id].round
    assert event.store.infos[info.id].status == "finished"  # its end came with every game over
    await event.director.tick()
    assert event.store.infos[info.id].round == last  # nothing paired after its end
    tables = await event.store.tables(info.id)
    assert tables and all(t.status == "finished" and len(t.accounts) == 2 for t in tables)
    assert len({t.round for t in tables}) >= 5  # paired again and again, not once
    opponents: dict[int, list[int]] = {e.account_id: [] for e in people}
    expected = {e.account_id: ArenaScore() for e in people}
    for t in sorted(tables, key=lambda t: (t.round, t.table)):
        assert t.result is not None
        for seat, account in enumerate(t.accounts):
            opponents[account].append(t.accounts[1 - seat])
            expected[account] = expected[account].after(t.result["ranks"], seat)
    for account, faced in opponents.items():
        assert len(faced) >= 2, (account, faced)
        assert all(a != b for a, b in itertools.pairwise(faced)), (account, faced)
    rows = event.connections.sessions[1].sent[-1]["standings"]
    names = {e.name: e.account_id for e in people}
    assert {r["name"]: (r["points"], r["streak"]) for r in rows} == {
        e.name: (float(expected[e.account_id].points), expected[e.account_id].streak) for e in people
    }
    assert [r["points"] for r in rows] == sorted((r["points"] for r in rows), reverse=True)
    assert sum(r["games"] for r in rows) == 2 * len(tables)
    assert set(names) == {r["name"] for r in rows}


async def test_an_arena_game_in_play_at_its_end_is_counted_then_it_finishes() -> None:
    event = Event()
    info = event.store.add("arena", event.entrants(2), duration=60)
    await event.director.tick()
    (room,) = event.playing()
    event.clock.now = T0 + 60
    await event.director.tick()
    assert event.store.infos[info.id].status == "running"  # its last game goes on
    event.end(room, [1, 2])
    await event.director.tick()
    assert event.store.infos[info.id].status == "finished" and event.store.infos[info.id].round == 1
    rows = event.connections.sessions[1].sent[-1]["standings"]
    assert [(r["name"], r["points"]) for r in rows] == [("bot1", 2.0), ("bot2", 0.0)]


async def test_a_table_waits_its_no_show_time_for_an_entrant_away_then_goes_to_those_seated() -> None:
    """An entrant not connected when its round is paired has `NO_SHOW_SECONDS` from the pairing
    to come and take its seat; until then the table waits, after it the table is won by whoever
    is seated (`no_show`) and its room is closed."""
    event = Event()
    bot = event.entrants(1, first=1)
    person = event.entrants(1, kind="user", connected=False, first=2)
    info = event.store.add("swiss", bot + person, rounds=1)
    event.clock.now = T0 + 30  # paired half a minute after its start time
    await event.director.tick()
    (table,) = await event.store.tables(info.id)
    room = event.rooms[table.room_code or ""]
    assert room.status == "waiting" and room.seats[table.accounts.index(1)] is not None
    event.clock.now = T0 + 30 + NO_SHOW_SECONDS - 1
    await event.director.tick()
    assert not (await event.store.tables(info.id))[0].decided and room.status == "waiting"
    event.clock.now = T0 + 30 + NO_SHOW_SECONDS
    await event.director.tick()
    (table,) = await event.store.tables(info.id)
    assert table.result == {"ranks": [1 if a == 1 else 2 for a in table.accounts], "reason": "no_show"}
    assert room.status == "aborted"  # closed unstarted
    over = event.connections.sessions[1].sent[-1]
    assert over["type"] == "tournament_over"
    assert {r["name"]: r["points"] for r in over["standings"]} == {"bot1": 1.0, "user2": 0.0}


async def test_a_table_nobody_came_to_counts_for_no_one() -> None:
    event = Event()
    info = event.store.add("swiss", event.entrants(2, kind="user", connected=False), rounds=1)
    await event.director.tick()
    event.clock.now = T0 + NO_SHOW_SECONDS
    await event.director.tick()
    (table,) = await event.store.tables(info.id)
    assert table.result == {"ranks": [0, 0], "void": True}
    assert event.store.infos[info.id].status == "finished"
    rows = standings("swiss", [table], event.store.entries[info.id])
    assert [(r["points"], r["games"]) for r in rows] == [(0.0, 0), (0.0, 0)]


async def test_a_hearts_event_pairs_by_table_rotates_seats_and_scores_by_rank() -> None:
    """Eight entrants, two Swiss rounds at tables of four: everyone plays each round, the second
    round's tables are grouped by points and nobody keeps their seat, and each table gives 1, 2/3,
    1/3 and 0 by rank. (Replaces test_tournaments.py's test of the same name, which ran eight
    bot processes' hands of Hearts.)"""
    event = Event()
    people = event.entrants(8)
    info = event.store.add("swiss", people, game="hearts", options={"target": 1}, seats=4, rounds=2)
    rng = random.Random(4)
    await event.director.tick()
    while event.store.infos[info.id].status != "finished":
        for room in event.playing():
            ranks = [1, 2, 3, 4]
            rng.shuffle(ranks)
            event.end(room, ranks)
        await event.director.tick()
    tables = await event.store.tables(info.id)
    assert len(tables) == 4 and all(t.status == "finished" for t in tables)
    points = {e.account_id: 0.0 for e in people}
    seat_in_first: dict[int, int] = {}
    for round in (1, 2):
        this = [t for t in tables if t.round == round]
        assert sorted(a for t in this for a in t.accounts) == list(range(1, 9))
        if round == 2:
            top, bottom = sorted(this, key=lambda t: t.table)
            assert min(points[a] for a in top.accounts) >= max(points[a] for a in bottom.accounts)
            for t in this:
                assert all(seat_in_first[a] != seat for seat, a in enumerate(t.accounts)), t
        for t in this:
            assert t.result is not None
            for seat, (a, share) in enumerate(zip(t.accounts, rank_points(t.result["ranks"]), strict=True)):
                points[a] += float(share)
                seat_in_first.setdefault(a, seat)
    rows = event.connections.sessions[1].sent[-1]["standings"]
    assert {r["name"]: r["points"] for r in rows} == pytest.approx({e.name: points[e.account_id] for e in people})
    assert sum(r["points"] for r in rows) == pytest.approx(8.0)  # 1 + 2/3 + 1/3 + 0 = 2 at each of 4 tables
    assert all(r["games"] == 2 and r["bot"] for r in rows)


def test_entrants_level_on_everything_share_a_rank() -> None:
    """Three entrants who drew every game share first place; in an arena, two level on points
    and on the tie-breaks share theirs too."""
    people = [Entrant(1, "x", "bot"), Entrant(2, "y", "bot"), Entrant(3, "z", "bot")]
    draw = {"ranks": [1, 1]}
    drawn = [
        Table(1, 1, [1, 2], 11, status="finished", result=draw),
        Table(2, 1, [1, 3], 12, status="finished", result=draw),
    ]
    drawn.append(Table(3, 1, [2, 3], 13, status="finished", result=draw))
    rows = standings("round-robin", drawn, people)
    assert [r["rank"] for r in rows] == [1, 1, 1]
    won = [Table(1, 1, [1, 2], 11, status="finished", result={"ranks": [1, 2]})]
    won.append(Table(2, 1, [3, 2], 12, status="finished", result={"ranks": [1, 2]}))
    rows = standings("arena", won, people)
    assert [(r["name"], r["rank"], r["points"]) for r in rows] == [("x", 1, 2.0), ("z", 1, 2.0), ("y", 3, 0.0)]


class Counted(Store):
    """The store, counting the director's reads of it by query."""

    def __init__(self, rooms: dict[int, Room]) -> None:
        super().__init__(rooms)
        self.reads: list[tuple[str, int | None]] = []

    async def schedule(self) -> list[Slot]:
        self.reads.append(("schedule", None))
        return await super().schedule()

    async def by_id(self, tournament_id: int) -> TournamentInfo | None:
        self.reads.append(("by_id", tournament_id))
        return await super().by_id(tournament_id)

    async def entrants(self, tournament_id: int) -> list[Entrant]:
        self.reads.append(("entrants", tournament_id))
        return await super().entrants(tournament_id)

    async def tables(self, tournament_id: int, round: int | None = None) -> list[Table]:
        self.reads.append(("tables", tournament_id))
        return await super().tables(tournament_id, round)


def counted_event() -> tuple[Event, Counted]:
    event = Event()
    store = Counted(event.by_game)
    event.store = event.director.store = store  # type: ignore[assignment]
    return event, store


async def test_idle_arenas_are_not_read_again_until_something_is_due() -> None:
    """Empty running arenas cost the director nothing after it first reads the schedule: passes
    go by, the clock moves on (short of their end), and no store read is made; an entrant joining
    one makes that one, and only it, looked at. (Replaces test_tournaments_hostile.py's test of
    the same name, which watched a real server for three seconds.)"""
    event, store = counted_event()
    week = 7 * 24 * 3600.0
    arenas = [store.add("arena", [], duration=week) for _ in range(30)]
    for info in arenas:
        info.status = "running"
    await event.director.tick()
    assert store.reads == [("schedule", None)]  # nobody is entered in any: none is looked at
    store.reads.clear()
    for _ in range(10):
        event.clock.now += 3600
        await event.director.tick()
    assert store.reads == []
    store.entries[arenas[7].id].append(Entrant(100, "ann", "user"))
    event.director.entered(arenas[7].id)
    await event.director.tick()
    assert {tournament for _, tournament in store.reads} == {arenas[7].id}
    assert ("entrants", arenas[7].id) in store.reads


async def test_a_restart_looks_only_at_the_arenas_someone_entered() -> None:
    """A director that has just started (a restarted server) reads the live tournaments and
    looks at the running arenas someone entered, not at the empty ones; passes after that look
    at nothing. (Replaces test_tournaments_hostile.py's test of the same name, which restarted a
    real server and watched it a second and a half.)"""
    event, store = counted_event()
    week = 7 * 24 * 3600.0
    empty = [store.add("arena", [], duration=week) for _ in range(10)]
    busy = store.add("arena", [Entrant(100, "ann", "user")], duration=week)
    for info in [*empty, busy]:
        info.status = "running"
    await event.director.tick()
    assert [tournament for query, tournament in store.reads if query == "by_id"] == [busy.id]
    store.reads.clear()
    for _ in range(5):
        event.clock.now += 600
        await event.director.tick()
    assert store.reads == []
