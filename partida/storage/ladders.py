"""Ladders in the database: ladders, members, their games, and the rating history.

Ratings are derived data. A ladder game is rated by `rate_finished_games`, which `Store.finish_game`
calls (through the group writer, for every game a batch ends) inside the transaction that stores
the game's result, so a result is never stored without its rating nor rated twice. It locks the
ladder's row and numbers the game (`rated_seq`), so the ratings are applied in one order that
`rerate` can follow again from the stored results, giving the same floats bit for bit. Aborted
games are not rated; a game lost on time or by abandonment is stored as finished with its
ranks, and is rated like any other.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, exists, func, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql import Executable

from partida.competition.ratings import Rating, outcome, rate
from partida.storage.database import Database, StorageError
from partida.storage.models import (
    Account,
    GameRecord,
    Ladder,
    LadderGame,
    LadderMember,
    RatingRecord,
    SeatRecord,
    utcnow,
)

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
PAIRINGS = ("rating", "random")


class LadderExists(StorageError):
    """A ladder with that name exists already."""


class NoSuchLadder(StorageError):
    """No ladder has that name."""


def check_ladder_name(name: str) -> str | None:
    """Why `name` cannot name a ladder, or None. Names become MQTT topic levels, hence the
    narrow alphabet (no '/', '+', '#')."""
    if not NAME_PATTERN.fullmatch(name):
        return "a ladder name is 1 to 32 letters, digits, '.', '_' or '-', starting with a letter or digit"
    return None


@dataclass
class LadderInfo:
    id: int
    name: str
    game: str
    options: dict[str, Any]
    seats: int
    clock: dict[str, Any]
    concurrency: int
    pairing: str
    rated_games: int
    created_at: datetime
    members: int = 0

    def to_data(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "game": self.game,
            "options": self.options,
            "seats": self.seats,
            "clock": self.clock,
            "concurrency": self.concurrency,
            "pairing": self.pairing,
            "rated_games": self.rated_games,
            "members": self.members,
        }


@dataclass
class Standing:
    """One member's line in the standings."""

    account_id: int
    name: str
    mu: float
    sigma: float
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def rating(self) -> Rating:
        return Rating(self.mu, self.sigma)

    def record(self) -> tuple[float, float, int, int, int, int]:
        return (self.mu, self.sigma, self.games, self.wins, self.draws, self.losses)

    def to_data(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "rating": self.rating.display,
            "mu": self.mu,
            "sigma": self.sigma,
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
        }


@dataclass
class RatingChange:
    """One seat's rating change in one rated game."""

    game_id: int
    seq: int
    account_id: int
    name: str
    seat: int
    rank: int
    before: Rating
    after: Rating

    def to_data(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "seq": self.seq,
            "name": self.name,
            "seat": self.seat,
            "rank": self.rank,
            "rating": self.after.display,
            "mu": self.after.mu,
            "sigma": self.after.sigma,
            "before": {"rating": self.before.display, "mu": self.before.mu, "sigma": self.before.sigma},
        }


@dataclass
class LadderGameInfo:
    """A ladder game as `ladder games` lists it."""

    game_id: int
    room_code: str
    status: str
    result: dict[str, Any] | None
    rated_seq: int | None
    seats: list[tuple[int, int | None, str]]
    created_at: datetime
    finished_at: datetime | None


@dataclass
class Rerate:
    """What `rerate` found: the standings rebuilt from the stored results, and every difference
    from the live tables (none, when all is well)."""

    standings: list[Standing]
    games: int
    differences: list[str] = field(default_factory=list)


# Whether a finished game is an unrated ladder game: the rating hook's guard (the group writer
# asks it of each game a batch ends, on the driver, and calls the hook only if one is).
UNRATED_LADDER_GAME = select(LadderGame.ladder_id).where(
    LadderGame.game_id == bindparam("game_id"), LadderGame.rated_seq.is_(None)
)
# The same question of the game row that finishing it changes: the finish's answer to the guard
# (on PostgreSQL the finish UPDATE returns it, and the guard's query is not sent).
UNRATED_LADDER_GAME_ROW = exists().where(LadderGame.game_id == GameRecord.id, LadderGame.rated_seq.is_(None))
# The ladder games among a batch's finished games, in one query: built once.
_UNRATED_LADDER_GAMES = select(LadderGame.game_id, LadderGame.ladder_id).where(
    LadderGame.game_id.in_(bindparam("game_ids", expanding=True)), LadderGame.rated_seq.is_(None)
)


def rate_finished_games(conn: Connection, ends: list[dict[str, Any]]) -> list[list[RatingChange]]:
    """Rate the games of `ends` (each a dict of `game_id`, `result`, `status`) that are ladder
    games and finished; called by `Store.finish_game` through the group writer, once for every
    game a batch ends, on a synchronous connection in the transaction that stores the results.
    One query finds the ladder games among them (most games are not), in the order given.
    Returns each game's seats' rating changes (empty when there is nothing to rate)."""
    game_ids = [int(end["game_id"]) for end in ends]
    ladders = dict(conn.execute(_UNRATED_LADDER_GAMES, {"game_ids": game_ids}).all()) if ends else {}
    changes: list[list[RatingChange]] = []
    for game_id, end in zip(game_ids, ends, strict=True):
        ladder_id = ladders.pop(game_id, None)  # rated once, should a batch end a game twice
        changes.append([] if ladder_id is None else _rate(conn, ladder_id, game_id, end["result"], end["status"]))
    return changes


def _rate(
    conn: Connection, ladder_id: int, game_id: int, result: dict[str, Any] | None, status: str
) -> list[RatingChange]:
    """Rate `game_id` of `ladder_id` if it finished with ranks."""
    if status != "finished" or not result or not result.get("ranks"):
        return []
    ranks = [int(r) for r in result["ranks"]]
    seats = (
        conn.execute(
            select(SeatRecord.seat, SeatRecord.account_id, SeatRecord.name)
            .where(SeatRecord.game_id == game_id)
            .order_by(SeatRecord.seat)
        )
    ).all()
    if len(seats) != len(ranks) or len(ranks) < 2 or any(account is None for _, account, _ in seats):
        return []  # a seat without an account (deleted since) cannot be rated
    # Lock the ladder's row: games of one ladder are rated one at a time, in `rated_games` order.
    seq = conn.scalar(select(Ladder.rated_games).where(Ladder.id == ladder_id).with_for_update())
    assert seq is not None
    seq += 1
    accounts = [int(account) for _, account, _ in seats]
    in_ladder = (LadderMember.ladder_id == ladder_id, LadderMember.account_id.in_(accounts))
    known = set(conn.scalars(select(LadderMember.account_id).where(*in_ladder)))
    for account in accounts:
        if account not in known:
            conn.execute(_new_member(ladder_id, account))
    members = {row.account_id: row for row in conn.execute(select(LadderMember).where(*in_ladder))}
    before = [Rating(members[a].mu, members[a].sigma) for a in accounts]
    after = rate(before, ranks)
    changes = []
    for (seat, account, name), rank, old, new in zip(seats, ranks, before, after, strict=True):
        won, drew, lost = outcome(ranks, seat)
        conn.execute(
            update(LadderMember)
            .where(LadderMember.ladder_id == ladder_id, LadderMember.account_id == account)
            .values(
                mu=new.mu,
                sigma=new.sigma,
                games=LadderMember.games + 1,
                wins=LadderMember.wins + won,
                draws=LadderMember.draws + drew,
                losses=LadderMember.losses + lost,
            )
        )
        conn.execute(
            insert(RatingRecord).values(
                ladder_id=ladder_id,
                game_id=game_id,
                seq=seq,
                account_id=account,
                seat=seat,
                rank=rank,
                mu_before=old.mu,
                sigma_before=old.sigma,
                mu=new.mu,
                sigma=new.sigma,
            )
        )
        changes.append(RatingChange(game_id, seq, int(account), name, seat, rank, old, new))
    conn.execute(update(Ladder).where(Ladder.id == ladder_id).values(rated_games=seq))
    conn.execute(update(LadderGame).where(LadderGame.game_id == game_id).values(rated_seq=seq))
    return changes


def _new_member(ladder_id: int, account_id: int) -> Executable:
    new = Rating()
    return insert(LadderMember).values(
        ladder_id=ladder_id,
        account_id=account_id,
        mu=new.mu,
        sigma=new.sigma,
        games=0,
        wins=0,
        draws=0,
        losses=0,
        joined_at=utcnow(),
    )


class LadderStore:
    """The ladder queries the server and `partida ladder` call."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def create(
        self,
        name: str,
        game: str,
        options: dict[str, Any],
        seats: int,
        clock: dict[str, Any],
        concurrency: int,
        pairing: str = "rating",
    ) -> LadderInfo:
        """A new ladder. The caller has checked the game, options, seats and clock against the
        rules; the name, concurrency and pairing are checked here."""
        problem = check_ladder_name(name)
        if problem is not None:
            raise StorageError(f"{problem} ({name!r} is not).")
        if concurrency < 1:
            raise StorageError(f"a ladder plays at least one game at a time, not {concurrency}.")
        if pairing not in PAIRINGS:
            raise StorageError(f"pairing is one of {', '.join(PAIRINGS)}, not {pairing!r}.")
        try:
            async with self.db.write() as conn:
                await conn.execute(
                    insert(Ladder).values(
                        name=name,
                        game=game,
                        options=options,
                        seats=seats,
                        clock=clock,
                        concurrency=concurrency,
                        pairing=pairing,
                        rated_games=0,
                        created_at=utcnow(),
                    )
                )
        except IntegrityError:
            raise LadderExists(f"there is already a ladder named {name!r}.") from None
        ladder = await self.get(name)
        assert ladder is not None
        return ladder

    async def get(self, name: str) -> LadderInfo | None:
        ladders = await self._ladders(select(Ladder).where(Ladder.name == name))
        return ladders[0] if ladders else None

    async def require(self, name: str) -> LadderInfo:
        ladder = await self.get(name)
        if ladder is None:
            raise NoSuchLadder(f"there is no ladder named {name!r} (see `partida ladder list`).")
        return ladder

    async def all(self) -> list[LadderInfo]:
        return await self._ladders(select(Ladder).order_by(Ladder.name))

    async def _ladders(self, query: Any) -> list[LadderInfo]:
        async with self.db.session() as session:
            ladders = list(await session.scalars(query))
            counts = dict(
                (
                    await session.execute(select(LadderMember.ladder_id, func.count()).group_by(LadderMember.ladder_id))
                ).all()
            )
        return [
            LadderInfo(
                id=ladder.id,
                name=ladder.name,
                game=ladder.game,
                options=dict(ladder.options or {}),
                seats=ladder.seats,
                clock=dict(ladder.clock or {}),
                concurrency=ladder.concurrency,
                pairing=ladder.pairing,
                rated_games=ladder.rated_games,
                created_at=ladder.created_at,
                members=int(counts.get(ladder.id, 0)),
            )
            for ladder in ladders
        ]

    async def join(self, ladder_id: int, account_id: int) -> None:
        """Make the account a member (a no-op for a member)."""
        async with self.db.write() as conn:
            exists = await conn.scalar(
                select(LadderMember.id).where(
                    LadderMember.ladder_id == ladder_id, LadderMember.account_id == account_id
                )
            )
            if exists is None:
                await conn.execute(_new_member(ladder_id, account_id))

    async def standings(self, ladder_id: int) -> list[Standing]:
        """Members, best displayed rating first (ties: more games, then name)."""
        async with self.db.session() as session:
            rows = (
                await session.execute(
                    select(LadderMember, Account.name)
                    .join(Account, Account.id == LadderMember.account_id)
                    .where(LadderMember.ladder_id == ladder_id)
                )
            ).all()
        table = [Standing(m.account_id, name, m.mu, m.sigma, m.games, m.wins, m.draws, m.losses) for m, name in rows]
        return sort_standings(table)

    async def add_game(self, ladder_id: int, game_id: int) -> None:
        """Mark a game as played for the ladder (before it starts, so its end is rated)."""
        async with self.db.write() as conn:
            await conn.execute(insert(LadderGame).values(ladder_id=ladder_id, game_id=game_id))

    async def game_ratings(self, game_id: int) -> list[RatingChange]:
        """The rating changes of one game (empty if it was not rated)."""
        return await self._changes(select(RatingRecord).where(RatingRecord.game_id == game_id))

    async def history(self, ladder_id: int) -> list[RatingChange]:
        """Every rating change of the ladder, in rating order."""
        return await self._changes(select(RatingRecord).where(RatingRecord.ladder_id == ladder_id))

    async def _changes(self, query: Any) -> list[RatingChange]:
        async with self.db.session() as session:
            rows = (
                await session.execute(
                    query.add_columns(Account.name)
                    .join(Account, Account.id == RatingRecord.account_id)
                    .order_by(RatingRecord.seq, RatingRecord.seat)
                )
            ).all()
        return [
            RatingChange(
                r.game_id,
                r.seq,
                r.account_id,
                name,
                r.seat,
                r.rank,
                Rating(r.mu_before, r.sigma_before),
                Rating(r.mu, r.sigma),
            )
            for r, name in rows
        ]

    async def games(self, ladder_id: int, limit: int | None = None, live: bool = False) -> list[LadderGameInfo]:
        """The ladder's games, newest first (`live`: only those waiting or in play)."""
        query = (
            select(GameRecord, LadderGame.rated_seq)
            .join(LadderGame, LadderGame.game_id == GameRecord.id)
            .where(LadderGame.ladder_id == ladder_id)
            .order_by(GameRecord.id.desc())
        )
        if live:
            query = query.where(GameRecord.status.in_(("waiting", "playing")))
        if limit is not None:
            query = query.limit(limit)
        async with self.db.session() as session:
            rows = (await session.execute(query)).all()
            ids = [g.id for g, _ in rows]
            seats: dict[int, list[tuple[int, int | None, str]]] = defaultdict(list)
            if ids:
                for game_id, seat, account_id, name in await session.execute(
                    select(SeatRecord.game_id, SeatRecord.seat, SeatRecord.account_id, SeatRecord.name)
                    .where(SeatRecord.game_id.in_(ids))
                    .order_by(SeatRecord.game_id, SeatRecord.seat)
                ):
                    seats[game_id].append((seat, account_id, name))
        return [
            LadderGameInfo(g.id, g.room_code, g.status, g.result, seq, seats.get(g.id, []), g.created_at, g.finished_at)
            for g, seq in rows
        ]

    async def rerate(self, ladder_id: int, attempts: int = 20) -> Rerate:
        """Rebuild every rating from the stored results, in rating order, and compare.

        The reads are several statements, and a live ladder rates games meanwhile; a game rated
        between two of them would show as a difference that is not one. Rating a game raises the
        ladder's `rated_games` in the same transaction, so equal counts before and after the reads
        mean they saw one state; otherwise read again."""
        for _ in range(attempts):
            before = await self._rated_count(ladder_id)
            report = await self._rerate_once(ladder_id)
            if await self._rated_count(ladder_id) == before:
                return report
        return report

    async def _rated_count(self, ladder_id: int) -> int:
        async with self.db.session() as session:
            return int(await session.scalar(select(Ladder.rated_games).where(Ladder.id == ladder_id)) or 0)

    async def _rerate_once(self, ladder_id: int) -> Rerate:
        async with self.db.session() as session:
            rated = (
                await session.execute(
                    select(LadderGame.game_id, LadderGame.rated_seq, GameRecord.status, GameRecord.result)
                    .join(GameRecord, GameRecord.id == LadderGame.game_id)
                    .where(LadderGame.ladder_id == ladder_id, LadderGame.rated_seq.is_not(None))
                    .order_by(LadderGame.rated_seq)
                )
            ).all()
            seat_rows = await session.execute(
                select(SeatRecord.game_id, SeatRecord.seat, SeatRecord.account_id)
                .join(LadderGame, LadderGame.game_id == SeatRecord.game_id)
                .where(LadderGame.ladder_id == ladder_id)
                .order_by(SeatRecord.game_id, SeatRecord.seat)
            )
            seats: dict[int, list[int | None]] = defaultdict(list)
            for game_id, _seat, account_id in seat_rows:
                seats[game_id].append(account_id)
        live = {s.account_id: s for s in await self.standings(ladder_id)}
        stored = {(c.game_id, c.seat): c for c in await self.history(ladder_id)}
        rebuilt = {a: Standing(a, s.name, Rating().mu, Rating().sigma) for a, s in live.items()}
        differences: list[str] = []
        for expected_seq, (game_id, seq, status, result) in enumerate(rated, start=1):
            if seq != expected_seq:
                differences.append(f"game {game_id} is rated as number {seq}, expected {expected_seq}")
            accounts = seats.get(game_id, [])
            ranks = [int(r) for r in (result or {}).get("ranks", [])]
            if status != "finished" or len(ranks) != len(accounts) or None in accounts:
                differences.append(f"game {game_id} is rated but its stored result cannot be ({status})")
                continue
            for account in accounts:
                assert account is not None
                rebuilt.setdefault(account, Standing(account, f"account {account}", Rating().mu, Rating().sigma))
            before = [rebuilt[a].rating for a in accounts]  # type: ignore[index]
            after = rate(before, ranks)
            for seat, (account, old, new) in enumerate(zip(accounts, before, after, strict=True)):
                assert account is not None
                line = rebuilt[account]
                won, drew, lost = outcome(ranks, seat)
                line.mu, line.sigma = new.mu, new.sigma
                line.games, line.wins, line.draws, line.losses = (
                    line.games + 1,
                    line.wins + won,
                    line.draws + drew,
                    line.losses + lost,
                )
                change = stored.pop((game_id, seat), None)
                if change is None:
                    differences.append(f"game {game_id} seat {seat}: no stored rating change")
                elif (change.before, change.after, change.rank, change.account_id) != (old, new, ranks[seat], account):
                    differences.append(
                        f"game {game_id} seat {seat}: stored {change.before} -> {change.after}, rebuilt {old} -> {new}"
                    )
        for game_id, seat in sorted(stored):
            differences.append(f"game {game_id} seat {seat}: a stored rating change for a game not rated")
        for account, line in sorted(rebuilt.items()):
            current = live.get(account)
            if current is None:
                differences.append(f"{line.name}: rated but not a member")
            elif current.record() != line.record():
                differences.append(f"{line.name}: live {current.record()}, rebuilt {line.record()}")
        return Rerate(sort_standings(list(rebuilt.values())), len(rated), differences)


def sort_standings(table: list[Standing]) -> list[Standing]:
    return sorted(table, key=lambda s: (-s.rating.display, -s.games, s.name))
