"""The ladder director's rules with fake ports and a clock the test moves: a store of dicts that
rates a finished game as storage does, rooms that end when the test says, members the test
connects. What is tested is who is paired when: after a game over, and the wait for busy members
before a rematch (`WAIT_FOR_OTHERS`), measured on the director's clock, not the wall's."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from partida.competition.ladder_pairing import WAIT_FOR_OTHERS
from partida.competition.ratings import Rating, rate
from partida.games.registry import default_registry
from partida.room.terms import RoomTerms
from partida.server.competition.ladder_director import LadderDirector, LiveLadder, Member
from partida.server.publisher import Publisher
from partida.storage.ladders import LadderInfo, RatingChange, Standing
from tests.fakes import RoomsTable


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Session:
    def __init__(self, account_id: int) -> None:
        self.account_id = account_id
        self.closed = False
        self.sent: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)


class Room:
    def __init__(self, code: str, game_id: int, seats: int) -> None:
        self.code = code
        self.game_id = game_id
        self.seats: list[Any] = [None] * seats
        self.status = "waiting"
        self.ranks: list[int] = []

    @property
    def core(self) -> Room:
        """A room and its core in one stand-in: the director reads seats, status and game id from
        the core, and calls commands on the room."""
        return self

    async def call(self, command: Callable[[], Awaitable[Any]]) -> Any:
        return await command()

    async def seat_bot(self, session: Session, seat: int) -> int:
        self.seats[seat] = SimpleNamespace(account_id=session.account_id, session=session)
        if None not in self.seats:
            self.status = "playing"
        return seat


class Ladders:
    """The ladder queries the director makes; a game over is rated here, as storage rates it in
    the transaction that stores it."""

    def __init__(self, info: LadderInfo, rooms: dict[int, Room]) -> None:
        self.info = info
        self.rooms = rooms  # game id -> room
        self.ratings: dict[int, Standing] = {}
        self.changes: dict[int, list[RatingChange]] = {}

    async def all(self) -> list[LadderInfo]:
        return [self.info]

    async def get(self, name: str) -> LadderInfo | None:
        return self.info if name == self.info.name else None

    async def games(self, ladder_id: int, live: bool = False) -> list[Any]:
        return []

    async def history(self, ladder_id: int) -> list[RatingChange]:
        return [c for changes in self.changes.values() for c in changes]

    async def standings(self, ladder_id: int) -> list[Standing]:
        return sorted(self.ratings.values(), key=lambda s: -s.rating.display)

    async def add_game(self, ladder_id: int, game_id: int) -> None:
        assert game_id in self.rooms

    async def game_ratings(self, game_id: int) -> list[RatingChange]:
        room = self.rooms[game_id]
        if game_id not in self.changes:
            accounts = [seat.account_id for seat in room.seats]
            before = [self.ratings[a].rating if a in self.ratings else Rating() for a in accounts]
            after = rate(before, room.ranks)
            self.changes[game_id] = [
                RatingChange(game_id, len(self.changes) + 1, a, f"b{a}", seat, rank, old, new)
                for seat, (a, rank, old, new) in enumerate(zip(accounts, room.ranks, before, after, strict=True))
            ]
            for a, new in zip(accounts, after, strict=True):
                games = self.ratings[a].games + 1 if a in self.ratings else 1
                self.ratings[a] = Standing(a, f"b{a}", new.mu, new.sigma, games)
        return self.changes[game_id]


class Ladder:
    """One ladder run by a director on fake ports."""

    def __init__(self, concurrency: int, pairing: str = "rating") -> None:
        info = LadderInfo(1, "duo", "tictactoe", {}, 2, {"per_move": 5.0}, concurrency, pairing, 0, datetime.now(UTC))
        self.clock = Clock()
        self.rooms = RoomsTable(self.open_room)
        self.by_game: dict[int, Room] = {}
        self.ladders = Ladders(info, self.by_game)
        store = SimpleNamespace(ladders=self.ladders, ended_games=None)
        self.director = LadderDirector(
            store,  # type: ignore[arg-type]
            self.rooms,  # type: ignore[arg-type]
            default_registry(),
            Publisher(),
            now=self.clock,
        )
        self.sessions: dict[int, Session] = {}

    async def open_room(self, terms: RoomTerms, owner: Any) -> Room:
        game_id = len(self.by_game) + 1
        room = Room(f"L{game_id:05d}", game_id, terms.seats)
        self.rooms[room.code] = self.by_game[game_id] = room
        return room

    async def live(self) -> LiveLadder:
        return await self.director.ladder("duo")

    async def join(self, *accounts: int) -> None:
        live = await self.live()
        for a in accounts:
            self.sessions[a] = Session(a)
            live.members[a] = Member(a, f"b{a}", self.sessions[a])  # type: ignore[arg-type]

    def playing(self) -> list[Room]:
        return [room for room in self.rooms.values() if room.status == "playing"]

    def pairs(self) -> list[frozenset[int]]:
        return [frozenset(seat.account_id for seat in room.seats) for room in self.by_game.values()]

    def end(self, room: Room, ranks: list[int]) -> None:
        room.status = "finished"
        room.ranks = ranks
        self.director.game_over(room)  # type: ignore[arg-type]


async def test_two_members_are_paired_again_after_their_game_is_over_and_told_their_ratings() -> None:
    ladder = Ladder(concurrency=1)
    await ladder.join(1, 2)
    await ladder.director.tick()
    (room,) = ladder.playing()
    assert [m["type"] for m in ladder.sessions[1].sent] == ["ladder_game"]
    await ladder.director.tick()
    assert len(ladder.rooms) == 1  # one game at a time: nobody is idle
    ladder.end(room, [1, 2])
    await ladder.director.tick()
    assert [m["type"] for m in ladder.sessions[1].sent] == ["ladder_game", "rating", "ladder_game"]
    rating = ladder.sessions[2].sent[1]
    assert rating["game_id"] == room.game_id and [r["rank"] for r in rating["ratings"]] == [1, 2]
    assert len(ladder.playing()) == 1 and ladder.pairs() == [frozenset({1, 2})] * 2  # nobody else: a rematch
    second = ladder.playing()[0]
    assert [seat.account_id for seat in second.seats] == [2, 1]  # the seats evened out


async def test_two_who_finish_first_wait_for_the_others_then_meet_new_opponents() -> None:
    """Four members, two games at a time: the two whose game ends first are not paired again at
    once while the other two play; when the others are free too, the new pairs cross over.
    (The rule test_ladder_server.py's four bots show over twelve games on a real server.)"""
    ladder = Ladder(concurrency=2)
    await ladder.join(1, 2, 3, 4)
    await ladder.director.tick()
    first, second = ladder.playing()
    before = set(ladder.pairs())
    ladder.end(first, [1, 2])
    await ladder.director.tick()
    assert ladder.playing() == [second]  # waiting rather than repeating
    ladder.clock.now += WAIT_FOR_OTHERS - 1
    await ladder.director.tick()
    assert ladder.playing() == [second]
    ladder.end(second, [2, 1])
    await ladder.director.tick()
    new = ladder.pairs()[2:]
    assert len(new) == 2 and not set(new) & before  # everyone meets someone new


async def test_after_waiting_its_time_a_rematch_is_allowed() -> None:
    ladder = Ladder(concurrency=2)
    await ladder.join(1, 2, 3, 4)
    await ladder.director.tick()
    assert len(ladder.playing()) == 2
    first = ladder.playing()[0]
    ladder.end(first, [1, 1])
    await ladder.director.tick()
    assert len(ladder.playing()) == 1
    ladder.clock.now += WAIT_FOR_OTHERS
    await ladder.director.tick()
    assert len(ladder.playing()) == 2 and ladder.pairs()[2] == ladder.pairs()[0]


async def test_a_member_gone_is_not_paired_and_its_game_goes_on() -> None:
    ladder = Ladder(concurrency=2)
    await ladder.join(1, 2, 3)
    await ladder.director.tick()
    (room,) = ladder.playing()
    seated = {seat.account_id for seat in room.seats}
    (idle,) = {1, 2, 3} - seated
    gone = min(seated)
    ladder.director.disconnected(ladder.sessions[gone])  # type: ignore[arg-type]
    ladder.end(room, [1, 2])
    await ladder.director.tick()
    assert len(ladder.playing()) == 1
    assert ladder.pairs()[1] == frozenset({idle, max(seated)})


async def test_four_members_two_games_at_a_time_meet_everyone() -> None:
    """Twelve games of four members, two at a time, the games ending in an order the test draws:
    the ladder does not lock into two pairs (before the wait for busy members, the two that
    finished first were paired again at once, for ever): test_ladder_server.py's test of the same
    name, on the director alone."""
    import random

    rng = random.Random(12)
    ladder = Ladder(concurrency=2)
    await ladder.join(1, 2, 3, 4)
    await ladder.director.tick()
    while len(ladder.by_game) < 12:
        playing = ladder.playing()
        assert playing, "a game is always in play"
        ladder.end(rng.choice(playing), rng.choice([[1, 2], [2, 1], [1, 1]]))
        await ladder.director.tick()
    pairs = ladder.pairs()
    assert len(set(pairs)) >= 4, pairs
    last: dict[int, frozenset[int]] = {}
    for pair in pairs:  # in the order they were opened
        for account in pair:
            assert last.get(account) != pair, pairs  # never the same two twice in a row
            last[account] = pair
