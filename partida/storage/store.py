"""The storage API the server and the command line call: accounts, games, seats, action logs.

Every method opens its own short session or transaction and returns plain values (`Account` rows
detached from their session, `StoredGame` dataclasses), so callers never hold an ORM session.

Every write a room makes (`create_game`, `set_seat`, `start_game`, `append_action`,
`finish_game`) is on the hot path: the server stores it before it tells anyone. They are Core
statements built once, committed before the call returns, with no ORM object loaded, and the
writes of concurrent rooms share transactions (`batching.GroupWriter`).
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import CTE, Integer, String, bindparam, delete, func, insert, or_, select, update
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from partida.storage import accounts
from partida.storage.batching import GroupWriter, MissingRow, Step
from partida.storage.chat import ChatStore
from partida.storage.database import Database, StorageError, describe_error
from partida.storage.fencing import Fence
from partida.storage.ladders import (
    UNRATED_LADDER_GAME,
    UNRATED_LADDER_GAME_ROW,
    LadderStore,
    RatingChange,
    rate_finished_games,
)
from partida.storage.lookups import Lookups
from partida.storage.models import Account, ActionRecord, GameRecord, SeatRecord, utcnow
from partida.storage.person_ratings import PersonRatingReads, judge_farming, rate_games

GAME_STATUSES = ("waiting", "playing", "finished", "aborted")
END_STATUSES = ("finished", "aborted")


class NameTaken(StorageError):
    """An account with that name exists already."""


class BadName(StorageError):
    """The name cannot be an account name (empty, too long, control characters)."""


class DuplicateAction(StorageError):
    """An action with that index is already in the game's log."""


class NoSuchGame(StorageError):
    """No game has that id."""


@dataclass
class StoredGame:
    """A game as stored, as plain data. `seats` is the seat count; `seat_list` holds
    (seat, account_id, name); `actions` holds (seat, action) in log order and is empty in
    listings, where `action_count` still says how long the log is."""

    id: int
    game: str
    options: dict[str, Any]
    seats: int
    seed: int
    seed_hash: str
    room_code: str
    public: bool
    status: str
    result: dict[str, Any] | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    seat_list: list[tuple[int, int | None, str]] = field(default_factory=list)
    seat_kinds: dict[int, str] = field(default_factory=dict)  # seat -> guest | user | bot
    seat_versions: dict[int, int] = field(default_factory=dict)  # seat -> the hosted bot's version that played it
    clock: dict[str, Any] | None = None  # the time control, None for none
    endings: dict[str, Any] | None = None  # the ending bookkeeping (see room.endings)
    clock_state: list[float] | None = None  # remaining seconds per seat at the last action
    actions: list[tuple[int, Any]] = field(default_factory=list)
    action_count: int = 0
    seat_tokens: dict[int, str | None] = field(default_factory=dict)
    rated: bool = False  # created rated, and not refused as farming at its start


# The methods of `Store` that write a game's rows: each is one write through the group writer,
# which the node's fence guards (`fencing`). tests/storage/test_storage_fencing.py checks that each is
# refused past the fence and that every other public method of `Store` is known not to write one.
GAME_WRITES = (
    "create_game",
    "set_seat",
    "start_game",
    "append_action",
    "finish_game",
    "save_endings",
    "judge_farming",
    "rate_game",
)


class Store:
    """Async storage operations on one `Database`; its game writes are `GAME_WRITES`."""

    def __init__(self, db: Database, fence: Fence | None = None) -> None:
        """`fence`: a node's lease on its games, which every game write must pass
        (`fencing`); None for a single server."""
        self.db = db
        self.ladders = LadderStore(db)
        # Registered in the order they must run within a shared transaction (see `batching`).
        self._writer = writer = GroupWriter(db, fence)
        # Asked at every guest's hello (see `lookups`); by the indexes on the name keys.
        self._lookups = Lookups(db)
        self._twins = Lookups.query(
            "twins",
            select(Account.name).where(
                or_(Account.name_key == bindparam("name_key"), Account.shape_key == bindparam("shape_key"))
            ),
        )
        self._create = writer.statement("create game", insert(GameRecord).returning(GameRecord.id), returning=True)
        self._clear_seat = writer.statement(
            "clear seat",
            delete(SeatRecord).where(SeatRecord.game_id == bindparam("b_game"), SeatRecord.seat == bindparam("b_seat")),
        )
        self._seat = writer.statement("seat", insert(SeatRecord))
        start = (
            update(GameRecord)
            .where(GameRecord.id == bindparam("b_game"))
            .values(status="playing", started_at=bindparam("b_at"))
        )
        # On PostgreSQL a game's start writes its seats itself, and its finish the action that
        # ended it (data-modifying CTEs): one statement, one round trip each.
        self._in_one_statement = db.dialect == "postgresql"
        if self._in_one_statement:
            start = start.add_cte(_seats_from_arrays())
        self._start = writer.statement("start game", start, must_change=True)
        self._endings = writer.statement(
            "save endings",
            update(GameRecord).where(GameRecord.id == bindparam("b_game")).values(endings=bindparam("b_endings")),
            must_change=True,
        )
        self._action = writer.statement("action", insert(ActionRecord))
        finish = (
            update(GameRecord)
            .where(GameRecord.id == bindparam("b_game"))
            .values(status=bindparam("b_status"), result=bindparam("b_result"), finished_at=bindparam("b_at"))
        )
        self._finish = writer.statement("finish game", finish, must_change=True, answer=UNRATED_LADDER_GAME_ROW)
        # On PostgreSQL the action that ends a game goes in its finish: one statement, as the start.
        self._finishing_action = (
            writer.statement(
                "finishing action",
                finish.add_cte(_action_for_finish()),
                must_change=True,
                answer=UNRATED_LADDER_GAME_ROW,
            )
            if self._in_one_statement
            else None
        )
        # A finished ladder game is rated in the transaction that stores its result.
        finishes = [s for s in (self._finish, self._finishing_action) if s is not None]
        self._rate = writer.hook(
            "rate ladder games", rate_finished_games, when=UNRATED_LADDER_GAME, answered_by=finishes
        )
        # People's ratings: written only for rated games, each in a write of its own.
        self.person_ratings = PersonRatingReads(db)
        self._judge_farming = writer.hook("judge farming", judge_farming)
        self._rate_people = writer.hook("rate people", rate_games)
        # Chat lines: through the same writer, so a line shares the transaction of the moves of its moment.
        self.chat = ChatStore(db, writer)

    # Accounts.

    async def create_user(self, name: str, password: str) -> Account:
        """A new person's account. Raises `NameTaken` if any account has that name."""
        _check_name(name)
        problem = accounts.check_password_rule(password)
        if problem is not None:
            raise StorageError(f"{problem}.")
        await self._check_no_twin(name)
        password_hash = await asyncio.to_thread(accounts.hash_password, password)
        folded, shaped = accounts.name_keys(name)
        account = Account(name=name, kind="user", password_hash=password_hash, name_key=folded, shape_key=shaped)
        try:
            async with self.db.session() as session:
                session.add(account)
                await session.commit()
        except IntegrityError:
            raise NameTaken(f"the name {name!r} is taken; choose another.") from None
        return account

    async def check_password(self, name: str, password: str) -> Account | None:
        """The user account if `password` is right for `name`, else None (bots have no password).
        A wrong name takes as long as a wrong password. Hashes made with older argon2 parameters are
        upgraded on a successful login."""
        async with self.db.session() as session:
            account = await session.scalar(select(Account).where(Account.name == name, Account.kind == "user"))
        stored_hash = account.password_hash if account is not None else None
        if not await asyncio.to_thread(accounts.verify_password, stored_hash, password):
            return None
        assert account is not None and stored_hash is not None
        if accounts.needs_rehash(stored_hash):
            new_hash = await asyncio.to_thread(accounts.hash_password, password)
            async with self.db.write() as conn:
                await conn.execute(update(Account).where(Account.id == account.id).values(password_hash=new_hash))
            account.password_hash = new_hash
        return account

    async def set_password(self, account_id: int, password: str) -> None:
        """A person's new password (its rule checked by the caller, as `create_user` checks it)."""
        problem = accounts.check_password_rule(password)
        if problem is not None:
            raise StorageError(f"{problem}.")
        new_hash = await asyncio.to_thread(accounts.hash_password, password)
        async with self.db.write() as conn:
            await conn.execute(
                update(Account).where(Account.id == account_id, Account.kind == "user").values(password_hash=new_hash)
            )

    async def create_bot(self, name: str) -> tuple[Account, str]:
        """A bot account and its new token, shown to the caller once. If the bot exists, its token
        is replaced (the old one stops working). Raises `NameTaken` if a user has the name."""
        _check_name(name)
        await self._check_no_twin(name)
        token = accounts.new_token()
        token_hash = accounts.hash_token(token)
        try:
            async with self.db.session() as session:
                account = await session.scalar(select(Account).where(Account.name == name))
                if account is None:
                    folded, shaped = accounts.name_keys(name)
                    account = Account(name=name, kind="bot", token_hash=token_hash, name_key=folded, shape_key=shaped)
                    session.add(account)
                elif account.kind != "bot":
                    raise NameTaken(f"the name {name!r} belongs to a user account, not a bot; choose another.")
                else:
                    account.token_hash = token_hash
                await session.commit()
        except IntegrityError:
            raise NameTaken(f"the name {name!r} was taken meanwhile; try again or choose another.") from None
        return account, token

    async def _check_no_twin(self, name: str) -> None:
        """Names that pass for each other (`accounts.name_keys`: in another case, with Cyrillic or
        full-width letters, other accents) would be taken for each other: refuse a new one that
        is another account's twin (the same name is left to the caller)."""
        twin = next((other for other in await self._twins_of(name) if other != name), None)
        if twin is not None:
            raise NameTaken(f"the name {name!r} is too like the account {twin!r}; choose another.")

    async def _twins_of(self, name: str) -> list[str]:
        """Account names that `name` would pass for (itself included, if it is one)."""
        folded, shaped = accounts.name_keys(name)
        return await self._lookups.column(self._twins, {"name_key": folded, "shape_key": shaped})

    async def check_token(self, token: str) -> Account | None:
        """The bot account whose current token this is, else None."""
        if not token:
            return None
        async with self.db.session() as session:
            return await session.scalar(select(Account).where(Account.token_hash == accounts.hash_token(token)))

    async def get_account(self, account_id: int) -> Account | None:
        async with self.db.session() as session:
            return await session.get(Account, account_id)

    async def reserved_name(self, name: str) -> str | None:
        """The account name that `name` would pass for (`accounts.name_keys`), or None. Guests
        may not take it: a name on a seat must say who is behind it."""
        return next(iter(await self._twins_of(name)), None)

    async def get_account_by_name(self, name: str) -> Account | None:
        async with self.db.session() as session:
            return await session.scalar(select(Account).where(Account.name == name))

    # Games.

    async def create_game(
        self,
        game: str,
        options: dict[str, Any],
        seed: int,
        seed_hash: str,
        seats: int,
        room_code: str,
        public: bool,
        clock: dict[str, Any] | None = None,
        endings: dict[str, Any] | None = None,
        rated: bool = False,
    ) -> int:
        """Record a new game in status 'waiting' and return its id, once its row is committed.
        `clock` is its time control (None: no clock), `endings` its ending bookkeeping (see
        `partida.room.endings`). `rated`: its result changes its accounts' ratings."""
        values = {
            "game": game,
            "options": options,
            "seed": seed,
            "seed_hash": seed_hash,
            "seats": seats,
            "room_code": room_code,
            "public": public,
            "clock": clock,
            "endings": endings,
            "rated": rated,
            "farming": None,
            "status": "waiting",
            "created_at": utcnow(),
            "result": None,
            "started_at": None,
            "finished_at": None,
        }
        try:
            return int(await self._writer.write(Step(self._create, values)))
        except SQLAlchemyError as exc:
            raise StorageError(f"could not store a new {game} game: {describe_error(exc)}.") from exc

    async def set_seat(self, game_id: int, seat: int, account_id: int | None, name: str) -> None:
        """Who sits in `seat` now (whoever sat there before is replaced); `account_id=None` with
        an empty name frees it."""
        clear = Step(self._clear_seat, {"b_game": game_id, "b_seat": seat})
        await self._write(game_id, clear, *self._seat_steps(game_id, [(seat, account_id, name)], {}))

    def _seat_steps(self, game_id: int, seats: list[tuple[int, int | None, str]], tokens: dict[int, str]) -> list[Step]:
        return [
            Step(
                self._seat,
                {"game_id": game_id, "seat": seat, "account_id": account_id, "name": name, "token": tokens.get(seat)},
            )
            for seat, account_id, name in seats
        ]

    async def start_game(
        self,
        game_id: int,
        seats: list[tuple[int, int | None, str]] | None = None,
        tokens: dict[int, str] | None = None,
    ) -> None:
        """Mark the game 'playing' (it is then resumed after a restart). `seats` (seat, account id,
        name) are recorded in the same transaction, with each seat's token (`tokens`: seat -> the
        secret its holder reclaims it with): the server writes seats once, at the start, rather
        than paying a durable commit for every join and leave of a waiting room. They are new
        rows: a seat stored already (`set_seat`) fails the start (a UNIQUE constraint), where
        clearing each seat first cost every game a DELETE per seat for nothing."""
        seats, tokens = seats or [], tokens or {}
        start: dict[str, Any] = {"b_game": game_id, "b_at": utcnow()}
        if self._in_one_statement:  # each column of the seats an array (`_seats_from_arrays`)
            start["b_seats"] = [seat for seat, _, _ in seats]
            start["b_accounts"] = [account_id for _, account_id, _ in seats]
            start["b_names"] = [name for _, _, name in seats]
            start["b_tokens"] = [tokens.get(seat) for seat, _, _ in seats]
            steps = [Step(self._start, start)]
        else:
            steps = [*self._seat_steps(game_id, seats, tokens), Step(self._start, start)]
        await self._write(game_id, *steps)

    async def append_action(
        self,
        game_id: int,
        index: int,
        seat: int,
        action: Any,
        result: dict[str, Any] | None = None,
        clock: list[float] | None = None,
    ) -> None:
        """Append one action to the game's log, committed when this returns. `index` is the move
        number from 0; storing an index twice raises `DuplicateAction` and changes nothing.
        With `result`, the action ended the game: the game is recorded finished with that result
        (and rated, if it is a ladder game) in the same transaction. `clock`: under a time
        control, each seat's remaining seconds after this action. Concurrent writes from many
        rooms share transactions (see `batching`)."""
        if result is not None and self._finishing_action is not None:  # the finish writes it
            last = {"b_index": index, "b_seat": seat, "b_action": action, "b_clock": clock}
            steps = self._finish_steps(game_id, result, "finished", last)
        else:
            row = {
                "game_id": game_id,
                "index": index,
                "seat": seat,
                "action": action,
                "clock": clock,
                "created_at": utcnow(),
            }
            steps = [Step(self._action, row)]
            if result is not None:
                steps += self._finish_steps(game_id, result, "finished")
        try:
            await self._writer.submit(*steps)  # the future itself: one frame fewer to suspend, every move
        except IntegrityError as exc:
            if _is_unique_violation(exc):
                raise DuplicateAction(f"game {game_id} already has an action number {index}.") from None
            raise _missing_game(game_id, exc) from None
        except MissingRow:
            raise NoSuchGame(f"there is no game {game_id}.") from None
        except SQLAlchemyError as exc:
            raise StorageError(f"could not store action {index} of game {game_id}: {describe_error(exc)}.") from exc

    def _finish_steps(
        self, game_id: int, result: dict[str, Any] | None, status: str, last: dict[str, Any] | None = None
    ) -> list[Step]:
        """`last`: the action that ended the game, for the finish to write (`_action_for_finish`)."""
        finish = {"b_game": game_id, "b_status": status, "b_result": result, "b_at": utcnow()}
        if last is None:
            step = Step(self._finish, finish)
        else:
            assert self._finishing_action is not None
            step = Step(self._finishing_action, finish | last)
        return [step, Step(self._rate, {"game_id": game_id, "result": result, "status": status})]

    async def _write(self, game_id: int, *steps: Step) -> Any:
        """One write of a game through the group writer, its errors in words."""
        try:
            return await self._writer.write(*steps)
        except IntegrityError as exc:
            raise _missing_game(game_id, exc) from None
        except MissingRow:
            raise NoSuchGame(f"there is no game {game_id}.") from None
        except SQLAlchemyError as exc:
            raise StorageError(f"could not store game {game_id}: {describe_error(exc)}.") from exc

    async def finish_game(
        self, game_id: int, result: dict[str, Any] | None, status: str = "finished"
    ) -> list[RatingChange]:
        """Record the end of a game: 'finished' with its result, or 'aborted'. A finished ladder
        game is rated in the same transaction; its seats' rating changes are returned (an empty
        list for any other game)."""
        if status not in END_STATUSES:
            raise StorageError(f"a game ends as one of {', '.join(END_STATUSES)}, not {status!r}.")
        return await self._write(game_id, *self._finish_steps(game_id, result, status)) or []

    async def save_endings(self, game_id: int, endings: dict[str, Any]) -> None:
        """Record a change of a game's ending bookkeeping (a resignation, a timeout, a seat the
        server's bot took over): rare, so a write of its own."""
        await self._write(game_id, Step(self._endings, {"b_game": game_id, "b_endings": endings}))

    async def judge_farming(
        self, game_id: int, accounts: list[int | None], addresses: list[str | None], now: float
    ) -> str:
        """Take and store the farming verdict on a rated game that has just started (`accounts`
        and `addresses` in seat order; `now` in epoch seconds): ok, flag or refuse (the game is
        then stored casual). See `person_ratings`."""
        write = {"game_id": game_id, "accounts": accounts, "addresses": addresses, "now": now}
        verdict = await self._write(game_id, Step(self._judge_farming, write))
        return str(verdict)

    async def rate_game(self, game_id: int) -> list[dict[str, Any]]:
        """Rate a finished rated game, once: each seat's change (empty when the game is not rated,
        not finished, or rated already). See `person_ratings`."""
        return list(await self._write(game_id, Step(self._rate_people, {"game_id": game_id})) or [])

    async def load_game(self, game_id: int) -> StoredGame | None:
        """The game with its seats and its whole log, or None."""
        games = await self._load(select(GameRecord).where(GameRecord.id == game_id), with_actions=True)
        return games[0] if games else None

    async def unfinished_games(self, ids: list[int] | None = None) -> list[StoredGame]:
        """Games in play (status 'playing'), with seats and logs, oldest first: what a restarting
        server rebuilds (`ids`: only those, as a node taking over a dead node's games asks)."""
        query = select(GameRecord).where(GameRecord.status == "playing").order_by(GameRecord.id)
        if ids is not None:
            query = query.where(GameRecord.id.in_(ids))
        return await self._load(query, with_actions=True)

    async def ended_games(self, ids: list[int]) -> list[int]:
        """Which of these games have ended (finished or aborted)."""
        if not ids:
            return []
        query = select(GameRecord.id).where(GameRecord.id.in_(ids), GameRecord.status.in_(END_STATUSES))
        async with self.db.session() as session:
            return list(await session.scalars(query))

    async def list_games(
        self,
        limit: int = 50,
        game: str | None = None,
        status: str | None = None,
        *,
        player: str | None = None,
        only_visible: bool = False,
        account_id: int | None = None,
    ) -> list[StoredGame]:
        """The newest games first, with seats and action counts but without the logs. `player`:
        only games where a seat bore that name (any case). `only_visible`: public games and the
        private ones that `account_id` sat in (a guest, None, sees no private game); without it,
        every game (the operator's view)."""
        query = select(GameRecord).order_by(GameRecord.id.desc()).limit(limit)
        if game is not None:
            query = query.where(GameRecord.game == game)
        if status is not None:
            query = query.where(GameRecord.status == status)
        if player is not None:
            named = select(SeatRecord.game_id).where(func.lower(SeatRecord.name) == player.lower())
            query = query.where(GameRecord.id.in_(named))
        if only_visible and account_id is None:
            query = query.where(GameRecord.public.is_(True))
        elif only_visible:
            mine = select(SeatRecord.game_id).where(SeatRecord.account_id == account_id)
            query = query.where(or_(GameRecord.public.is_(True), GameRecord.id.in_(mine)))
        return await self._load(query, with_actions=False)

    async def _load(self, query: Any, with_actions: bool) -> list[StoredGame]:
        """Run a games query and attach seats and actions (or counts) in one query each."""
        async with self.db.session() as session:
            records = list(await session.scalars(query))
            if not records:
                return []
            ids = [r.id for r in records]
            seats: dict[int, list[tuple[int, int | None, str]]] = defaultdict(list)
            tokens: dict[int, dict[int, str | None]] = defaultdict(dict)
            kinds: dict[int, dict[int, str]] = defaultdict(dict)
            versions: dict[int, dict[int, int]] = defaultdict(dict)
            seat_rows = await session.execute(
                select(
                    SeatRecord.game_id,
                    SeatRecord.seat,
                    SeatRecord.account_id,
                    SeatRecord.name,
                    SeatRecord.token,
                    Account.kind,
                    SeatRecord.bot_version,
                )
                .outerjoin(Account, Account.id == SeatRecord.account_id)
                .where(SeatRecord.game_id.in_(ids))
                .order_by(SeatRecord.game_id, SeatRecord.seat)
            )
            for game_id, seat, account_id, name, token, kind, version in seat_rows:
                seats[game_id].append((seat, account_id, name))
                tokens[game_id][seat] = token
                kinds[game_id][seat] = kind or "guest"
                if version is not None:
                    versions[game_id][seat] = version
            logs: dict[int, list[tuple[int, Any]]] = defaultdict(list)
            clocks: dict[int, list[float] | None] = {}
            counts: dict[int, int] = {}
            if with_actions:
                action_rows = await session.execute(
                    select(ActionRecord.game_id, ActionRecord.seat, ActionRecord.action, ActionRecord.clock)
                    .where(ActionRecord.game_id.in_(ids))
                    .order_by(ActionRecord.game_id, ActionRecord.index)
                )
                for game_id, seat, action, clock in action_rows:
                    logs[game_id].append((seat, action))
                    clocks[game_id] = clock
                counts = {game_id: len(log) for game_id, log in logs.items()}
            else:
                count_rows = await session.execute(
                    select(ActionRecord.game_id, func.count())
                    .where(ActionRecord.game_id.in_(ids))
                    .group_by(ActionRecord.game_id)
                )
                counts = {game_id: int(count) for game_id, count in count_rows}
        return [
            StoredGame(
                id=r.id,
                game=r.game,
                options=dict(r.options or {}),
                seats=r.seats,
                seed=r.seed,
                seed_hash=r.seed_hash,
                room_code=r.room_code,
                public=r.public,
                status=r.status,
                result=r.result,
                created_at=r.created_at,
                started_at=r.started_at,
                finished_at=r.finished_at,
                seat_list=seats.get(r.id, []),
                seat_kinds=kinds.get(r.id, {}),
                seat_versions=versions.get(r.id, {}),
                actions=logs.get(r.id, []),
                action_count=counts.get(r.id, 0),
                seat_tokens=tokens.get(r.id, {}),
                clock=r.clock,
                endings=r.endings,
                clock_state=clocks.get(r.id),
                rated=r.rated,
            )
            for r in records
        ]


def _seats_from_arrays() -> CTE:
    """The INSERT of a starting game's seats, one array parameter per column (`b_seats`,
    `b_accounts`, `b_names`, `b_tokens`, a seat's values at the same place in each), as a
    data-modifying CTE for the start's UPDATE (PostgreSQL's): run to its end whatever the UPDATE
    returns, in the same statement. A game that does not exist still fails the INSERT (a foreign
    key), a seat stored already the UNIQUE constraint, as the seats' own INSERT did."""
    columns = (
        func.unnest(
            bindparam("b_seats", type_=ARRAY(Integer)),
            bindparam("b_accounts", type_=ARRAY(Integer)),
            bindparam("b_names", type_=ARRAY(String)),
            bindparam("b_tokens", type_=ARRAY(String)),
        )
        .table_valued("seat", "account_id", "name", "token")
        .render_derived("seat_rows")
    )
    seats = select(
        bindparam("b_game", type_=Integer), columns.c.seat, columns.c.account_id, columns.c.name, columns.c.token
    )
    return insert(SeatRecord).from_select(["game_id", "seat", "account_id", "name", "token"], seats).cte("seated")


def _action_for_finish() -> CTE:
    """The INSERT of the action that ends a game (`b_index`, `b_seat`, `b_action`, `b_clock`,
    stored at the finish's `b_at`), as a data-modifying CTE for the finish's UPDATE
    (PostgreSQL's): run to its end whatever the UPDATE returns, in the same statement. An index
    stored already still fails the INSERT (the UNIQUE constraint), a game that does not exist
    the foreign key, as the action's own INSERT did."""
    return (
        insert(ActionRecord)
        .values(
            game_id=bindparam("b_game"),
            index=bindparam("b_index"),
            seat=bindparam("b_seat"),
            action=bindparam("b_action"),
            clock=bindparam("b_clock"),
            created_at=bindparam("b_at"),
        )
        .cte("acted")
    )


def _check_name(name: str) -> None:
    problem = accounts.check_name(name)
    if problem is not None:
        raise BadName(f"{problem} ({name!r} is not).")


def _is_unique_violation(exc: IntegrityError) -> bool:
    """True for a UNIQUE violation, as opposed to a foreign key one (both are IntegrityError)."""
    message = str(exc.orig).lower()
    sqlstate = getattr(exc.orig, "sqlstate", None) or getattr(getattr(exc.orig, "__cause__", None), "sqlstate", None)
    return sqlstate == "23505" or "unique" in message


def _missing_game(game_id: int, exc: IntegrityError) -> StorageError:
    if _is_unique_violation(exc):
        return StorageError(f"game {game_id}: {exc.orig}.")
    return NoSuchGame(f"there is no game {game_id}.")
