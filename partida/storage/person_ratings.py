"""People's ratings in the database: the farming verdict taken at a rated game's start, the
rating of a finished rated game, and the reads (an account's ratings, its history, leaderboards).

Both writes are hooks of the group writer (`batching.GroupWriter.hook`), so they pass the node's
fence and run in a transaction of their own batch, on a synchronous connection:

- `judge_farming` (at the start) counts the flagged rated games the seats that share an address
  played together in the last `FARM_WINDOW`, takes `farming_verdict`, and stores it on the game
  (`games.farming`; a refused game is made casual: `games.rated` false).
- `rate_games` (at the end) rates a finished game whose row says rated: its accounts' ratings in
  the game's clock class are read, `rating_changes` applied, the new ratings written and one
  history row per account added. A game that has history rows is not rated again, and the rows'
  UNIQUE (game, account) makes a second rating of the same game fail whole: a game is rated
  exactly once, whoever asks (the room that ended it, or a server catching up after a restart).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Select, case, distinct, exists, func, insert, select, update
from sqlalchemy.engine import Connection

from partida.competition.rating_evaluation import RatedResult
from partida.competition.ratings import (
    FARM_WINDOW,
    GLICKO2,
    PROVISIONAL_DEVIATION,
    ClockLike,
    FarmingVerdict,
    PersonRating,
    RatedSeat,
    aged,
    clock_class,
    farming_verdict,
    model_for,
    newcomer,
    rating_changes,
)
from partida.room.clocks import BadClock, ClockSpec
from partida.storage.database import Database
from partida.storage.models import Account, GameRecord, PersonRatingChange, SeatRecord
from partida.storage.models import PersonRating as RatingRow


def rating_data(rating: PersonRating) -> dict[str, Any]:
    """A rating as the protocol shows it: `rating` in whole points on the 1500-centred scale,
    `provisional` while its deviation is above 110, `shown` as people read it (`1500?`)."""
    return {
        "rating": rating.display,
        "deviation": round(rating.deviation, 1),
        "games": rating.games,
        "provisional": rating.provisional,
        "shown": rating.shown(),
    }


def judge_farming(conn: Connection, writes: list[dict[str, Any]]) -> list[str]:
    """The verdict on each rated game starting (`game_id`, `accounts` and `addresses` in seat
    order, `now` in epoch seconds), stored on the game; see the module's docstring."""
    verdicts = []
    for write in writes:
        game_id, accounts, addresses = int(write["game_id"]), write["accounts"], write["addresses"]
        by_address: dict[str, set[int]] = defaultdict(set)
        for account, address in zip(accounts, addresses, strict=True):
            if address is not None and account is not None:
                by_address[address].add(account)
        shared = sorted({a for group in by_address.values() if len(group) > 1 for a in group})
        recent = 0
        if shared:
            since = datetime.fromtimestamp(float(write["now"]) - FARM_WINDOW, UTC)
            together = (
                select(SeatRecord.game_id)
                .join(GameRecord, GameRecord.id == SeatRecord.game_id)
                .where(
                    GameRecord.farming == FarmingVerdict.FLAG.value,
                    GameRecord.started_at >= since,
                    GameRecord.id != game_id,
                    SeatRecord.account_id.in_(shared),
                )
                .group_by(SeatRecord.game_id)
                .having(func.count(distinct(SeatRecord.account_id)) == len(shared))
            )
            recent = len(conn.execute(together).all())
        verdict = farming_verdict(addresses, recent)
        if verdict is not FarmingVerdict.OK:
            conn.execute(
                update(GameRecord)
                .where(GameRecord.id == game_id)
                .values(farming=verdict.value, rated=verdict is FarmingVerdict.FLAG)
            )
        verdicts.append(verdict.value)
    return verdicts


def _spec(data: Any) -> ClockSpec | None:
    try:
        return ClockSpec.parse(data)
    except BadClock:
        return None


def _days_since(then: datetime, now: datetime) -> float:
    if then.tzinfo is None:  # SQLite keeps no zone: every time here is written in UTC
        then = then.replace(tzinfo=UTC)
    return max(0.0, (now - then).total_seconds() / 86400.0)


def rate_games(conn: Connection, writes: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Rate each finished game of `writes` (`game_id`) that is rated and not rated yet; each
    game's changes, seat by seat (empty when nothing was rated)."""
    return [_rate(conn, int(write["game_id"])) for write in writes]


def _rate(conn: Connection, game_id: int) -> list[dict[str, Any]]:
    game = conn.execute(
        select(GameRecord.game, GameRecord.status, GameRecord.rated, GameRecord.clock, GameRecord.result).where(
            GameRecord.id == game_id
        )
    ).first()
    if game is None or not game.rated or game.status != "finished" or not game.result:
        return []
    if conn.execute(select(exists().where(PersonRatingChange.game_id == game_id))).scalar():
        return []  # rated already
    spec = _spec(game.clock)
    kind = clock_class(spec)
    seats = conn.execute(
        select(SeatRecord.seat, SeatRecord.account_id, SeatRecord.name)
        .where(SeatRecord.game_id == game_id)
        .order_by(SeatRecord.seat)
    ).all()
    ranks = list(game.result.get("ranks") or [])
    accounts = [s.account_id for s in seats]
    if kind is None or len(ranks) != len(seats) or None in accounts:
        return []
    rows = conn.execute(
        select(
            RatingRow.account_id,
            RatingRow.rating,
            RatingRow.deviation,
            RatingRow.volatility,
            RatingRow.games,
            RatingRow.updated_at,
        )
        .where(RatingRow.account_id.in_(accounts), RatingRow.game == game.game, RatingRow.clock_class == kind.value)
        .with_for_update()
    ).all()
    now = datetime.now(UTC)
    glicko = model_for(len(accounts)) == GLICKO2
    before = {}
    for r in rows:
        rating = PersonRating(r.rating, r.deviation, r.volatility, r.games)
        # Glicko-2's deviation widens with the days since the account's last game in this class.
        before[r.account_id] = aged(rating, _days_since(r.updated_at, now)) if glicko else rating
    rated_seats = [RatedSeat(a, before.get(a)) for a in accounts]
    fresh = newcomer(len(accounts))
    after = rating_changes(rated_seats, ranks, created_rated=True, clock=spec, aborted=False)
    if not after:
        return []
    changes = []
    for seat, rated, rank in zip(seats, rated_seats, ranks, strict=True):
        new = after[seat.account_id]
        values = {
            "rating": new.rating,
            "deviation": new.deviation,
            "volatility": new.volatility,
            "games": new.games,
            "updated_at": now,
        }
        if seat.account_id in before:
            conn.execute(
                update(RatingRow)
                .where(
                    RatingRow.account_id == seat.account_id,
                    RatingRow.game == game.game,
                    RatingRow.clock_class == kind.value,
                )
                .values(**values)
            )
        else:
            conn.execute(
                insert(RatingRow).values(account_id=seat.account_id, game=game.game, clock_class=kind.value, **values)
            )
        conn.execute(
            insert(PersonRatingChange).values(
                game_id=game_id,
                account_id=seat.account_id,
                game=game.game,
                clock_class=kind.value,
                seat=seat.seat,
                rank=int(rank),
                rating_before=(rated.rating or fresh).rating,
                deviation_before=(rated.rating or fresh).deviation,
                rating=new.rating,
                deviation=new.deviation,
                volatility=new.volatility,
                games=new.games,
                rated_at=now,
            )
        )
        changes.append(
            {
                "seat": seat.seat,
                "name": seat.name,
                "rank": int(rank),
                "game": game.game,
                "clock_class": kind.value,
                "before": rating_data(rated.rating or fresh),
                "after": rating_data(new),
            }
        )
    return changes


@dataclass
class RatingLine:
    """An account's rating in one game and class, as the reads return it."""

    name: str
    game: str
    clock_class: str
    rating: PersonRating

    def to_data(self) -> dict[str, Any]:
        return {"name": self.name, "game": self.game, "clock_class": self.clock_class, **rating_data(self.rating)}


@dataclass
class HistoryPoint:
    """One rated game of an account: its rating before and after."""

    game_id: int
    rated_at: datetime
    rank: int
    before: PersonRating
    after: PersonRating

    def to_data(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "time": self.rated_at.timestamp(),
            "rank": self.rank,
            "before": rating_data(self.before),
            "after": rating_data(self.after),
        }


def board_data(lines: list[RatingLine]) -> list[dict[str, Any]]:
    """A leaderboard as the protocol and `partida leaderboard --json` show it: places from 1."""
    return [{"place": i, **line.to_data()} for i, line in enumerate(lines, start=1)]


# Established ratings before provisional ones, in SQL: what the leaderboards are ordered by.
PROVISIONAL = case((RatingRow.deviation > PROVISIONAL_DEVIATION, 1), else_=0)


def _lines() -> Select[Any]:
    """The rating rows with their accounts' names, as `_line` reads them."""
    columns = (
        Account.name,
        RatingRow.game,
        RatingRow.clock_class,
        RatingRow.rating,
        RatingRow.deviation,
        RatingRow.volatility,
        RatingRow.games,
    )
    return select(*columns).join(Account, Account.id == RatingRow.account_id)


def _line(row: Any) -> RatingLine:
    rating = PersonRating(row.rating, row.deviation, row.volatility, row.games)
    return RatingLine(row.name, row.game, row.clock_class, rating)


class PersonRatingReads:
    """The reads of people's ratings (`store.person_ratings`): each a short session of its own."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def of_account(self, account_id: int, game: str | None = None) -> list[RatingLine]:
        """An account's ratings, by game then class (`game`: only that game's)."""
        query = _lines().where(RatingRow.account_id == account_id).order_by(RatingRow.game, RatingRow.clock_class)
        if game is not None:
            query = query.where(RatingRow.game == game)
        async with self.db.session() as session:
            rows = (await session.execute(query)).all()
        return [_line(r) for r in rows]

    async def rating_of(self, account_id: int | None, game: str, clock: ClockLike | None) -> PersonRating | None:
        """The rating an account has in `game` under `clock`'s class, as a seek shows it and its
        rating range reads it: a newcomer's (`1500?`) for an account not rated there yet; None
        for a guest or a game without a clock class."""
        kind = clock_class(clock)
        if account_id is None or kind is None:
            return None
        query = select(RatingRow.rating, RatingRow.deviation, RatingRow.volatility, RatingRow.games).where(
            RatingRow.account_id == account_id, RatingRow.game == game, RatingRow.clock_class == kind.value
        )
        async with self.db.session() as session:
            row = (await session.execute(query)).first()
        return PersonRating() if row is None else PersonRating(row.rating, row.deviation, row.volatility, row.games)

    async def shown_ratings(self, account_ids: list[int], game: str, clock: ClockLike | None) -> dict[int, str]:
        """The ratings shown beside these accounts' names in a room of `game` under `clock`
        (`1500?` for a newcomer); empty for a game without a clock class, which is never rated."""
        kind = clock_class(clock)
        if kind is None or not account_ids:
            return {}
        query = select(RatingRow.account_id, RatingRow.rating, RatingRow.deviation).where(
            RatingRow.account_id.in_(account_ids), RatingRow.game == game, RatingRow.clock_class == kind.value
        )
        async with self.db.session() as session:
            rows = (await session.execute(query)).all()
        found = {r.account_id: PersonRating(r.rating, r.deviation).shown() for r in rows}
        return {a: found.get(a, PersonRating().shown()) for a in account_ids}

    async def everyone(self, game: str | None = None, limit: int = 1000) -> list[RatingLine]:
        """Every account's ratings, by game and class, best first, established before provisional
        (`game`: only that game's)."""
        order = (RatingRow.game, RatingRow.clock_class, PROVISIONAL, RatingRow.rating.desc(), Account.name)
        query = _lines().order_by(*order).limit(limit)
        if game is not None:
            query = query.where(RatingRow.game == game)
        async with self.db.session() as session:
            rows = (await session.execute(query)).all()
        return [_line(r) for r in rows]

    async def history(self, account_id: int, game: str, kind: str, limit: int = 1000) -> list[HistoryPoint]:
        """An account's rated games in one game and class, oldest first (the last `limit`)."""
        query = (
            select(PersonRatingChange)
            .where(
                PersonRatingChange.account_id == account_id,
                PersonRatingChange.game == game,
                PersonRatingChange.clock_class == kind,
            )
            .order_by(PersonRatingChange.id.desc())
            .limit(limit)
        )
        async with self.db.session() as session:
            rows = list(await session.scalars(query))
        return [
            HistoryPoint(
                r.game_id,
                r.rated_at,
                r.rank,
                PersonRating(r.rating_before, r.deviation_before, r.volatility, r.games - 1),
                PersonRating(r.rating, r.deviation, r.volatility, r.games),
            )
            for r in reversed(rows)
        ]

    async def leaderboard(self, game: str, kind: str, limit: int = 50) -> list[RatingLine]:
        """The best ratings in one game and class: the established ones first, then the
        provisional ones (marked by their `provisional`), each best first. A new server's boards
        are all provisional for a while; leaving those out showed empty boards."""
        query = (
            _lines()
            .where(RatingRow.game == game, RatingRow.clock_class == kind)
            .order_by(PROVISIONAL, RatingRow.rating.desc(), Account.name)
            .limit(limit)
        )
        async with self.db.session() as session:
            rows = (await session.execute(query)).all()
        return [_line(r) for r in rows]

    async def rated_results(self) -> list[RatedResult]:
        """Every finished rated game that the rules rate (a clock class, every seat an account,
        ranks for every seat), oldest end first: what `partida ratings evaluate` replays."""
        query = (
            select(GameRecord.id, GameRecord.game, GameRecord.clock, GameRecord.result, SeatRecord.account_id)
            .join(SeatRecord, SeatRecord.game_id == GameRecord.id)
            .where(GameRecord.rated.is_(True), GameRecord.status == "finished")
            .order_by(GameRecord.finished_at, GameRecord.id, SeatRecord.seat)
        )
        async with self.db.session() as session:
            rows = (await session.execute(query)).all()
        games: dict[int, tuple[Any, list[int | None]]] = {}
        for row in rows:
            games.setdefault(row.id, (row, []))[1].append(row.account_id)
        results = []
        for game, accounts in games.values():
            kind = clock_class(_spec(game.clock))
            ranks = list((game.result or {}).get("ranks") or [])
            if kind is None or len(ranks) != len(accounts) or len(accounts) < 2 or None in accounts:
                continue
            results.append(RatedResult((game.game, kind.value), tuple(accounts), tuple(int(r) for r in ranks)))
        return results

    async def unrated_games(self) -> list[int]:
        """Finished rated games with no rating yet (a server that stopped between a game's end and
        its rating), oldest end first."""
        query = (
            select(GameRecord.id)
            .where(
                GameRecord.rated.is_(True),
                GameRecord.status == "finished",
                ~exists().where(PersonRatingChange.game_id == GameRecord.id),
            )
            .order_by(GameRecord.finished_at, GameRecord.id)
        )
        async with self.db.session() as session:
            return list(await session.scalars(query))
