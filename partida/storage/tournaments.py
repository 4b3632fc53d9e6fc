"""Tournaments in the database: the tournament, its entries, and each round's tables.

Results are never copied here: a table names its game, and a game's result is read from its game
row. So a game that ends while the server stops, or on a node that dies, is counted exactly once,
by whoever reads the standings next, and a restarted server picks a tournament up from these rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import defer

from partida.storage.accounts import name_keys
from partida.storage.database import Database, StorageError
from partida.storage.ladders import check_ladder_name
from partida.storage.models import Account, GameRecord, Tournament, TournamentEntry, TournamentPairing, utcnow

FORMATS = ("round-robin", "swiss", "arena")
LIVE = ("registering", "running")  # the states a scheduler has work in
ENTRIES = ("people", "bots", "both")


class TournamentExists(StorageError):
    """A tournament with that name exists already."""


class NoSuchTournament(StorageError):
    """No tournament has that name."""


class RoundTaken(StorageError):
    """The round was paired already (by another node, or before a restart)."""


@dataclass
class TournamentInfo:
    id: int
    name: str
    game: str
    options: dict[str, Any]
    seats: int
    clock: dict[str, Any]
    format: str
    entry: str
    rounds: int | None
    duration: float | None
    starts_at: datetime
    status: str
    round: int
    created_at: datetime
    ended_at: datetime | None
    entrants: int = 0

    def to_data(self, options: bool = True) -> dict[str, Any]:
        """The tournament as requests answer it; `options=False`: as listed (a listing carries
        no options: a tournament's own page has them)."""
        return {
            "name": self.name,
            "game": self.game,
            **({"options": self.options} if options else {}),
            "seats": self.seats,
            "clock": self.clock,
            "format": self.format,
            "entry": self.entry,
            "rounds": self.rounds,
            "duration": self.duration,
            "starts_at": self.starts_at.timestamp(),
            "status": self.status,
            "round": self.round,
            "entrants": self.entrants,
        }


@dataclass(frozen=True)
class Slot:
    """What the scheduler reads of a live tournament each time it reads them all: when it starts
    and (an arena) ends, never its options or entrants."""

    id: int
    status: str
    format: str
    starts_at: float  # seconds since the epoch
    duration: float | None
    entered: bool = True  # anyone entered and not withdrawn: an empty arena has nothing to pair

    @property
    def ends_at(self) -> float | None:
        return self.starts_at + self.duration if self.format == "arena" and self.duration else None


@dataclass
class Entrant:
    account_id: int
    name: str
    kind: str  # user | bot
    withdrawn: bool = False


@dataclass
class Table:
    """One table of one round, with its game's outcome once the game has one."""

    round: int
    table: int
    accounts: list[int]
    game_id: int | None  # None: a bye
    room_code: str | None = None
    status: str | None = None  # the game's: waiting | playing | finished | aborted
    result: dict[str, Any] | None = None
    names: list[str] = field(default_factory=list)

    @property
    def decided(self) -> bool:
        """Its outcome is known: a bye, a table decided without its game, or a game over."""
        return self.game_id is None or self.status in ("finished", "aborted") or self.result is not None


class TournamentStore:
    """The tournament queries the server and `partida tournament` call."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def create(
        self,
        name: str,
        game: str,
        options: dict[str, Any],
        seats: int,
        clock: dict[str, Any],
        format: str,
        entry: str,
        starts_at: datetime,
        rounds: int | None = None,
        duration: float | None = None,
        created_by: int | None = None,
        created_from: str | None = None,
    ) -> TournamentInfo:
        """A new tournament. The caller has checked the game, options, seats, clock, rounds and
        duration against the rules; the name, format and entry rule are checked here, and the
        name against every tournament's look-alikes (`accounts.name_keys`: case, `l` and `1`)."""
        problem = check_ladder_name(name)
        if problem is not None:
            raise StorageError(f"{problem.replace('a ladder', 'a tournament')} ({name!r} is not).")
        if format not in FORMATS:
            raise StorageError(f"format is one of {', '.join(FORMATS)}, not {format!r}.")
        if entry not in ENTRIES:
            raise StorageError(f"entry is one of {', '.join(ENTRIES)}, not {entry!r}.")
        folded, shaped = name_keys(name)
        async with self.db.session() as session:
            twin = await session.scalar(
                select(Tournament.name)
                .where(or_(Tournament.name_key == folded, Tournament.shape_key == shaped))
                .limit(1)
            )
        if twin is not None:
            same = "named" if twin == name else "whose name looks like it:"
            raise TournamentExists(f"there is already a tournament {same} {twin!r}.")
        try:
            async with self.db.write() as conn:
                await conn.execute(
                    insert(Tournament).values(
                        name=name,
                        name_key=folded,
                        shape_key=shaped,
                        game=game,
                        options=options,
                        seats=seats,
                        clock=clock,
                        format=format,
                        entry=entry,
                        rounds=rounds,
                        duration=duration,
                        starts_at=starts_at,
                        status="registering",
                        round=0,
                        created_by=created_by,
                        created_from=created_from,
                        created_at=utcnow(),
                    )
                )
        except IntegrityError:
            raise TournamentExists(f"there is already a tournament named {name!r}.") from None
        return await self.require(name)

    async def get(self, name: str) -> TournamentInfo | None:
        found = await self._tournaments(select(Tournament).where(func.lower(Tournament.name) == name.lower()))
        return found[0] if found else None

    async def require(self, name: str) -> TournamentInfo:
        info = await self.get(name)
        if info is None:
            raise NoSuchTournament(f"there is no tournament named {name!r} (see `partida tournament list`).")
        return info

    async def by_id(self, tournament_id: int) -> TournamentInfo | None:
        found = await self._tournaments(select(Tournament).where(Tournament.id == tournament_id))
        return found[0] if found else None

    async def page(self, status: str | None, after: tuple[datetime, int] | None, limit: int) -> list[TournamentInfo]:
        """Up to `limit` tournaments after `after` (the starts_at and id of the last one of the
        page before; None: from the first), soonest first, without their options: what one
        page of `tournament_list` reads, whatever the number stored."""
        query = select(Tournament).options(defer(Tournament.options)).order_by(Tournament.starts_at, Tournament.id)
        if status is not None:
            query = query.where(Tournament.status == status)
        if after is not None:
            starts_at, last_id = after
            query = query.where(
                or_(Tournament.starts_at > starts_at, and_(Tournament.starts_at == starts_at, Tournament.id > last_id))
            )
        return await self._tournaments(query.limit(limit), options=False)

    async def live(self) -> list[TournamentInfo]:
        """The tournaments registering or running, whole (the scheduler reads `schedule`)."""
        query = select(Tournament).where(Tournament.status.in_(LIVE)).order_by(Tournament.starts_at, Tournament.id)
        return await self._tournaments(query)

    async def schedule(self) -> list[Slot]:
        """The live tournaments as the scheduler reads them: ids, status and times, one small
        row each (finished ones pile up; the scheduler never reads them)."""
        entered = (
            select(TournamentEntry.id)
            .where(TournamentEntry.tournament_id == Tournament.id, TournamentEntry.withdrawn.is_(False))
            .exists()
        )
        query = select(
            Tournament.id, Tournament.status, Tournament.format, Tournament.starts_at, Tournament.duration, entered
        ).where(Tournament.status.in_(LIVE))
        async with self.db.session() as session:
            rows = (await session.execute(query)).all()
        return [
            Slot(int(i), status, fmt, _stamp(starts), duration, bool(anyone))
            for i, status, fmt, starts, duration, anyone in rows
        ]

    async def live_created(self, account_id: int, address: str | None) -> tuple[int, int]:
        """How many live tournaments `account_id` created, and how many were created from
        `address` (0 for None): what the caps on creating one count."""
        live = Tournament.status.in_(LIVE)
        async with self.db.session() as session:
            mine = await session.scalar(select(func.count()).where(live, Tournament.created_by == account_id))
            here = 0
            if address is not None:
                here = await session.scalar(select(func.count()).where(live, Tournament.created_from == address))
        return int(mine or 0), int(here or 0)

    async def _tournaments(self, query: Any, options: bool = True) -> list[TournamentInfo]:
        counts = (
            select(TournamentEntry.tournament_id, func.count().label("n"))
            .where(TournamentEntry.withdrawn.is_(False))
            .group_by(TournamentEntry.tournament_id)
            .subquery()
        )
        async with self.db.session() as session:
            rows = (await session.execute(query.add_columns(counts.c.n).outerjoin(counts))).all()
        return [
            TournamentInfo(
                t.id,
                t.name,
                t.game,
                t.options if options else {},
                t.seats,
                t.clock,
                t.format,
                t.entry,
                t.rounds,
                t.duration,
                t.starts_at,
                t.status,
                t.round,
                t.created_at,
                t.ended_at,
                n or 0,
            )
            for t, n in rows
        ]

    async def set_state(self, tournament_id: int, *, status: str | None = None, round: int | None = None) -> None:
        values: dict[str, Any] = {}
        if status is not None:
            values["status"] = status
            if status == "finished":
                values["ended_at"] = utcnow()
        if round is not None:
            values["round"] = round
        async with self.db.write() as conn:
            await conn.execute(update(Tournament).where(Tournament.id == tournament_id).values(**values))

    async def enter(self, tournament_id: int, account_id: int) -> None:
        """Enter an account, or enter it again after it withdrew."""
        async with self.db.write() as conn:
            changed = await conn.execute(
                update(TournamentEntry)
                .where(TournamentEntry.tournament_id == tournament_id, TournamentEntry.account_id == account_id)
                .values(withdrawn=False)
            )
            if changed.rowcount == 0:
                await conn.execute(
                    insert(TournamentEntry).values(
                        tournament_id=tournament_id, account_id=account_id, joined_at=utcnow(), withdrawn=False
                    )
                )

    async def withdraw(self, tournament_id: int, account_id: int) -> bool:
        """False: the account was not entered."""
        async with self.db.write() as conn:
            changed = await conn.execute(
                update(TournamentEntry)
                .where(
                    TournamentEntry.tournament_id == tournament_id,
                    TournamentEntry.account_id == account_id,
                    TournamentEntry.withdrawn.is_(False),
                )
                .values(withdrawn=True)
            )
        return changed.rowcount > 0

    async def entrants(self, tournament_id: int) -> list[Entrant]:
        """Every account ever entered (withdrawn ones marked), in the order they entered."""
        async with self.db.session() as session:
            rows = (
                await session.execute(
                    select(Account.id, Account.name, Account.kind, TournamentEntry.withdrawn)
                    .join(TournamentEntry, TournamentEntry.account_id == Account.id)
                    .where(TournamentEntry.tournament_id == tournament_id)
                    .order_by(TournamentEntry.joined_at, TournamentEntry.id)
                )
            ).all()
        return [Entrant(int(i), name, kind, bool(w)) for i, name, kind, w in rows]

    async def open_round(
        self, tournament_id: int, round: int, tables: list[tuple[int, list[int], int | None, dict[str, Any] | None]]
    ) -> None:
        """Record round `round`'s tables (number, accounts, game id, result: a bye's) and make it
        the current round, in one transaction, only if round `round - 1` is still the current one:
        a round is recorded whole or not at all, and by one scheduler (`RoundTaken` otherwise)."""
        async with self.db.write() as conn:
            moved = await conn.execute(
                update(Tournament)
                .where(Tournament.id == tournament_id, Tournament.round == round - 1)
                .values(round=round)
            )
            if moved.rowcount != 1:
                raise RoundTaken(f"round {round} of tournament {tournament_id} is paired already")
            if tables:  # one statement for the round's tables
                rows = [
                    {
                        "tournament_id": tournament_id,
                        "round": round,
                        "table": table,
                        "accounts": accounts,
                        "game_id": game_id,
                        "result": result,
                    }
                    for table, accounts, game_id, result in tables
                ]
                await conn.execute(insert(TournamentPairing), rows)

    async def decide(self, tournament_id: int, round: int, table: int, result: dict[str, Any]) -> None:
        """A table decided without its game (a no-show): its ranks."""
        async with self.db.write() as conn:
            await conn.execute(
                update(TournamentPairing)
                .where(
                    TournamentPairing.tournament_id == tournament_id,
                    TournamentPairing.round == round,
                    TournamentPairing.table == table,
                )
                .values(result=result)
            )

    async def tables(self, tournament_id: int, round: int | None = None) -> list[Table]:
        """Every table (of one round, or of all), each with its game's state and result."""
        query = (
            select(TournamentPairing, GameRecord.room_code, GameRecord.status, GameRecord.result)
            .outerjoin(GameRecord, GameRecord.id == TournamentPairing.game_id)
            .where(TournamentPairing.tournament_id == tournament_id)
            .order_by(TournamentPairing.round, TournamentPairing.table)
        )
        if round is not None:
            query = query.where(TournamentPairing.round == round)
        async with self.db.session() as session:
            rows = (await session.execute(query)).all()
            ids = {a for p, *_ in rows for a in p.accounts}
            names = dict((await session.execute(select(Account.id, Account.name).where(Account.id.in_(ids)))).all())
        return [
            Table(
                p.round,
                p.table,
                [int(a) for a in p.accounts],
                p.game_id,
                code,
                status,
                p.result if p.result is not None else result,
                [names.get(a, f"#{a}") for a in p.accounts],
            )
            for p, code, status, result in rows
        ]


def _stamp(when: datetime) -> float:
    """Seconds since the epoch of a stored time (SQLite gives it back naive, in UTC)."""
    return (when if when.tzinfo is not None else when.replace(tzinfo=UTC)).timestamp()
