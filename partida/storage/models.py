"""The tables, as SQLAlchemy 2 typed declarative models.

A game is stored as what determines it: (game, options, seed, seats, action log). Everything a
replay or a restart needs comes from these rows; views are never stored. Times are UTC and come
back timezone-aware on every backend (SQLite keeps no zone, so `UTCDateTime` restores it).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    UniqueConstraint,
    false,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator


def utcnow() -> datetime:
    """The current time, timezone-aware in UTC."""
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp stored in UTC and always read back as an aware datetime, whatever the backend."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is not UTC:  # the server's own times are (`utcnow`), and need no change
            value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# JSON that stores Python None as SQL NULL (for optional documents such as a result).
NullableJSON = JSON(none_as_null=True)


# Named constraints, so that later migrations can drop or alter them by name on every backend
# (SQLite's batch mode rebuilds tables and needs the names).
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """The declarative base; `Base.metadata` is what the migrations create."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)

    type_annotation_map = {  # noqa: RUF012 (SQLAlchemy reads this class attribute)
        datetime: UTCDateTime(),
        dict[str, Any]: JSON(),
    }


class Account(Base):
    """A person (`kind='user'`, logs in with a password) or a bot (`kind='bot'`, logs in with a token).

    Only hashes are stored: argon2 for passwords, sha256 for bot tokens (random 256-bit tokens need
    no slow hash, and a plain digest can be looked up by index)."""

    __tablename__ = "accounts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    kind: Mapped[str] = mapped_column(String(8))
    password_hash: Mapped[str | None] = mapped_column(String(255), default=None)
    token_hash: Mapped[str | None] = mapped_column(String(64), unique=True, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # `accounts.name_keys(name)`: names sharing either are twins (`Store.reserved_name`, asked at
    # every guest's hello, and the check on new accounts), found by these indexes.
    name_key: Mapped[str | None] = mapped_column(String(64), index=True, default=None)
    shape_key: Mapped[str | None] = mapped_column(String(64), index=True, default=None)
    # The account id of the person whose bot this is (a hosted bot: `partida bots submit`); NULL
    # for a bot made with `partida db create-bot` and for people. Only the owner may submit,
    # activate or read its logs. No reference constraint (migration 0014 says why); accounts are
    # never deleted.
    owner_id: Mapped[int | None] = mapped_column(Integer, index=True, default=None)


class GameRecord(Base):
    """One game (one room's match): the facts that determine it, its status and its result."""

    __tablename__ = "games"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game: Mapped[str] = mapped_column(String(64), index=True)
    options: Mapped[dict[str, Any]] = mapped_column(JSON)
    seats: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int] = mapped_column(BigInteger)
    seed_hash: Mapped[str] = mapped_column(String(128))
    room_code: Mapped[str] = mapped_column(String(32), index=True)
    public: Mapped[bool] = mapped_column(Boolean, default=True)
    status: Mapped[str] = mapped_column(String(16), index=True, default="waiting")
    result: Mapped[dict[str, Any] | None] = mapped_column(NullableJSON, default=None)
    # The time control (`clocks.ClockSpec.to_data`), or NULL for a game without a clock.
    clock: Mapped[dict[str, Any] | None] = mapped_column(NullableJSON, default=None)
    # How the game may end besides its rules (`endings.Endings.to_data`: grace period,
    # resignations, timeouts, seats played by the server's bot).
    endings: Mapped[dict[str, Any] | None] = mapped_column(NullableJSON, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(default=None)
    finished_at: Mapped[datetime | None] = mapped_column(default=None)
    # Created rated (`RoomTerms.rated`); set back to false when the farming verdict at the start
    # refuses it, so the stored flag is what the finished game is rated by.
    rated: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # The farming verdict taken at a rated game's start: NULL (none taken, or ok), flag, refuse.
    farming: Mapped[str | None] = mapped_column(String(8), default=None)


class SeatRecord(Base):
    """Who sits in a seat of a game: an account, or nobody (`account_id` NULL) with a display name."""

    __tablename__ = "seats"
    __table_args__ = (UniqueConstraint("game_id", "seat"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    seat: Mapped[int] = mapped_column(Integer)
    account_id: Mapped[int | None] = mapped_column(
        ForeignKey("accounts.id", ondelete="SET NULL"), index=True, default=None
    )
    name: Mapped[str] = mapped_column(String(64), default="")
    # The secret that reclaims this seat (drawn for each holder; NULL for games stored before
    # tokens were). As secret as the game's seed beside it, and useless once the game is over.
    token: Mapped[str | None] = mapped_column(String(64), default=None)
    # The hosted bot's version (`HostedVersion.number`) that played this seat; NULL otherwise.
    bot_version: Mapped[int | None] = mapped_column(Integer, default=None)


class ActionRecord(Base):
    """One accepted action of a game's log. `index` is the move number from 0; the unique
    (game_id, index) constraint makes a replayed or doubled write fail instead of forking the log."""

    __tablename__ = "actions"
    __table_args__ = (UniqueConstraint("game_id", "index"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    index: Mapped[int] = mapped_column(Integer)
    seat: Mapped[int] = mapped_column(Integer)
    action: Mapped[Any] = mapped_column(JSON)
    # Under a clock, each seat's remaining seconds once this action was charged: what a restarted
    # server resumes from (the time it was down is charged to nobody).
    clock: Mapped[list[float] | None] = mapped_column(NullableJSON, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class LabRun(Base):
    """One lab simulation run: a game variant played `n` times by the given agents."""

    __tablename__ = "lab_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game: Mapped[str] = mapped_column(String(64), index=True)
    options: Mapped[dict[str, Any]] = mapped_column(JSON)
    agents: Mapped[list[Any]] = mapped_column(JSON)
    seats: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int] = mapped_column(BigInteger)
    n: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    seconds: Mapped[float] = mapped_column(Float, default=0.0)
    summary: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class LabMatch(Base):
    """One simulated match of a lab run, with its per-round scores and its metric values."""

    __tablename__ = "lab_matches"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("lab_runs.id", ondelete="CASCADE"), index=True)
    index: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int] = mapped_column(BigInteger)
    result: Mapped[dict[str, Any]] = mapped_column(JSON)
    rounds: Mapped[list[Any]] = mapped_column(JSON)
    metrics: Mapped[dict[str, Any]] = mapped_column(JSON)


class Ladder(Base):
    """A bot ladder: the game, options, seats and clock every one of its games is played with.
    `rated_games` counts the games rated so far; the next one gets this number plus one as its
    place in the rating order, and updating it locks the ladder's row, so two servers rating
    games of one ladder at once take turns."""

    __tablename__ = "ladders"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(32), unique=True)
    game: Mapped[str] = mapped_column(String(64))
    options: Mapped[dict[str, Any]] = mapped_column(JSON)
    seats: Mapped[int] = mapped_column(Integer)
    clock: Mapped[dict[str, Any]] = mapped_column(JSON)
    concurrency: Mapped[int] = mapped_column(Integer)
    pairing: Mapped[str] = mapped_column(String(16), default="rating")
    rated_games: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class LadderMember(Base):
    """A bot account's place in a ladder: its current rating and record. Derived data: `partida
    ladder rerate` rebuilds every number here from the stored results."""

    __tablename__ = "ladder_members"
    __table_args__ = (UniqueConstraint("ladder_id", "account_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    ladder_id: Mapped[int] = mapped_column(ForeignKey("ladders.id", ondelete="CASCADE"))
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    games: Mapped[int] = mapped_column(Integer, default=0)
    wins: Mapped[int] = mapped_column(Integer, default=0)
    draws: Mapped[int] = mapped_column(Integer, default=0)
    losses: Mapped[int] = mapped_column(Integer, default=0)
    joined_at: Mapped[datetime] = mapped_column(default=utcnow)


class LadderGame(Base):
    """A game played for a ladder. `rated_seq` is its place in the ladder's rating order (1, 2,
    ...), set in the transaction that stores its result; it stays NULL for a game not rated
    (aborted, or still in play)."""

    __tablename__ = "ladder_games"
    __table_args__ = (UniqueConstraint("ladder_id", "rated_seq"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    ladder_id: Mapped[int] = mapped_column(ForeignKey("ladders.id", ondelete="CASCADE"))
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), unique=True)
    rated_seq: Mapped[int | None] = mapped_column(Integer, default=None)


class RatingRecord(Base):
    """One seat's rating change in one rated ladder game: the history `ladder plot` draws."""

    __tablename__ = "ladder_ratings"
    __table_args__ = (UniqueConstraint("game_id", "seat"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    ladder_id: Mapped[int] = mapped_column(ForeignKey("ladders.id", ondelete="CASCADE"), index=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    seat: Mapped[int] = mapped_column(Integer)
    rank: Mapped[int] = mapped_column(Integer)
    mu_before: Mapped[float] = mapped_column(Float)
    sigma_before: Mapped[float] = mapped_column(Float)
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)


class Node(Base):
    """A server node of a deployment with several (`partida serve --node NAME`): where clients
    reach it, and until when it is known to be alive. A node renews its lease every third of the
    lease time; one whose lease has run out is taken for dead, and its games are taken over."""

    __tablename__ = "nodes"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    public_url: Mapped[str] = mapped_column(String(255))
    lease_until: Mapped[datetime] = mapped_column()
    started_at: Mapped[datetime] = mapped_column(default=utcnow)


class RoomLease(Base):
    """The directory of rooms across nodes: which node holds a game's room (under that node's
    lease: the room is the node's while the node's lease runs), and the room's public summary
    for every node's lobby. At most one row per game and one per live room code, so a game has
    one owner at a time."""

    __tablename__ = "room_leases"

    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), primary_key=True)
    code: Mapped[str] = mapped_column(String(32), unique=True)
    node: Mapped[str] = mapped_column(String(64), index=True)
    public: Mapped[bool] = mapped_column(Boolean, default=True)
    status: Mapped[str] = mapped_column(String(16), default="waiting")
    summary: Mapped[dict[str, Any]] = mapped_column(JSON)


class NodeAccount(Base):
    """Which node each account (a person or a bot) is connected to, so that a challenge or an
    `add_bot` on one node finds an account connected to another. One row per node and account
    while it has a connection there; rows of a node whose lease has run out are ignored."""

    __tablename__ = "node_accounts"

    node: Mapped[str] = mapped_column(String(64), primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True)
    name: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(8))  # user or bot
    agent: Mapped[str | None] = mapped_column(String(64), default=None)
    games: Mapped[list[str] | None] = mapped_column(NullableJSON, default=None)  # a bot's declared games


class LadderLive(Base):
    """A ladder as its scheduler's node sees it: the members connected (all to that node) and the
    games in play, so that every node's `ladder_list` and `ladder_standings` show them."""

    __tablename__ = "ladder_live"

    ladder_id: Mapped[int] = mapped_column(ForeignKey("ladders.id", ondelete="CASCADE"), primary_key=True)
    node: Mapped[str] = mapped_column(String(64))
    members: Mapped[list[int]] = mapped_column(JSON)  # account ids
    playing: Mapped[int] = mapped_column(Integer, default=0)


class Tournament(Base):
    """A tournament: the game, options, seats and clock its games are played with, its format
    (round-robin, swiss, arena), who may enter (people, bots or both), and where it stands
    (`registering`, `running`, `finished`). `round` is the last round paired (0 before the first)."""

    __tablename__ = "tournaments"
    # `tournament_list` pages in this order (soonest first), a page found by its cursor
    __table_args__ = (Index("ix_tournaments_starts", "starts_at", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(32), unique=True)
    # `accounts.name_keys(name)`, as for accounts: a new name sharing either with a tournament is refused
    name_key: Mapped[str | None] = mapped_column(String(64), index=True, default=None)
    shape_key: Mapped[str | None] = mapped_column(String(64), index=True, default=None)
    game: Mapped[str] = mapped_column(String(64))
    options: Mapped[dict[str, Any]] = mapped_column(JSON)
    seats: Mapped[int] = mapped_column(Integer)
    clock: Mapped[dict[str, Any]] = mapped_column(JSON)
    format: Mapped[str] = mapped_column(String(16))
    entry: Mapped[str] = mapped_column(String(8))
    rounds: Mapped[int | None] = mapped_column(Integer, default=None)
    duration: Mapped[float | None] = mapped_column(Float, default=None)  # seconds, for arenas
    starts_at: Mapped[datetime] = mapped_column()
    # indexed: the scheduler reads the live ones every second; finished ones pile up for good
    status: Mapped[str] = mapped_column(String(16), default="registering", index=True)
    round: Mapped[int] = mapped_column(Integer, default=0)
    created_by: Mapped[int | None] = mapped_column(ForeignKey("accounts.id", ondelete="SET NULL"), default=None)
    # the creator's network address: an address holds a bounded number of live tournaments
    created_from: Mapped[str | None] = mapped_column(String(64), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    ended_at: Mapped[datetime | None] = mapped_column(default=None)


class TournamentEntry(Base):
    """An account entered in a tournament; `withdrawn` ones keep their games and points."""

    __tablename__ = "tournament_entries"
    __table_args__ = (UniqueConstraint("tournament_id", "account_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"))
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    joined_at: Mapped[datetime] = mapped_column(default=utcnow)
    withdrawn: Mapped[bool] = mapped_column(Boolean, default=False)


class TournamentPairing(Base):
    """One table of one round: the accounts in seat order and the game they play, or a bye (no
    game, one account). A game's result is read from its game row, so a result is counted
    exactly once whatever happens to the server between the game's end and the next round."""

    __tablename__ = "tournament_pairings"
    __table_args__ = (UniqueConstraint("tournament_id", "round", "table"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"), index=True)
    round: Mapped[int] = mapped_column(Integer)
    table: Mapped[int] = mapped_column(Integer)
    accounts: Mapped[list[int]] = mapped_column(JSON)
    game_id: Mapped[int | None] = mapped_column(ForeignKey("games.id", ondelete="SET NULL"), default=None, unique=True)
    # Set only for a table decided without a played game (a bye, a no-show): its ranks.
    result: Mapped[dict[str, Any] | None] = mapped_column(NullableJSON, default=None)


class PersonRating(Base):
    """An account's rating in one game and clock class (`partida.competition.ratings`), on
    people's 1500-centred scale whatever the model (migration 0016). Derived data: every row
    follows from the rated games' changes below."""

    __tablename__ = "person_ratings"
    __table_args__ = (
        UniqueConstraint("account_id", "game", "clock_class"),
        Index("ix_person_ratings_game", "game", "clock_class"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    game: Mapped[str] = mapped_column(String(64))
    clock_class: Mapped[str] = mapped_column(String(16))
    rating: Mapped[float] = mapped_column(Float)
    deviation: Mapped[float] = mapped_column(Float)
    volatility: Mapped[float] = mapped_column(Float)
    games: Mapped[int] = mapped_column(Integer)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class PersonRatingChange(Base):
    """One account's rating change in one rated game: the history, and the mark that the game was
    rated (one row per account and game, so a game is never rated twice)."""

    __tablename__ = "person_rating_changes"
    __table_args__ = (UniqueConstraint("game_id", "account_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    game: Mapped[str] = mapped_column(String(64))
    clock_class: Mapped[str] = mapped_column(String(16))
    seat: Mapped[int] = mapped_column(Integer)
    rank: Mapped[int] = mapped_column(Integer)
    rating_before: Mapped[float] = mapped_column(Float)
    deviation_before: Mapped[float] = mapped_column(Float)
    rating: Mapped[float] = mapped_column(Float)
    deviation: Mapped[float] = mapped_column(Float)
    volatility: Mapped[float] = mapped_column(Float)
    games: Mapped[int] = mapped_column(Integer)
    rated_at: Mapped[datetime] = mapped_column(default=utcnow)


class SignUpInvite(Base):
    """An invite code an operator gave out (`partida db invite`), for a server whose sign-up
    needs one. Only its sha256 is stored, as bot tokens are: a copy of the database lets no one
    sign up; `uses_left` counts down to 0 with each account made with it."""

    __tablename__ = "sign_up_invites"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    uses_left: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ChatMessage(Base):
    """One line of chat, in a room's game (`channel` players or spectators) or a tournament
    (`channel` tournament). Kept with the game so its replay shows it; `removed_at` set by the
    operator hides it everywhere (live views are told, replays leave it out), the row kept as
    evidence. `name` and `kind` are the sender's as the room showed them (a guest has no account)."""

    __tablename__ = "chat_messages"
    __table_args__ = (
        Index("ix_chat_messages_game", "game_id", "id"),
        Index("ix_chat_messages_tournament", "tournament_id", "id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[int | None] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), default=None)
    tournament_id: Mapped[int | None] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"), default=None)
    channel: Mapped[str] = mapped_column(String(16))
    account_id: Mapped[int | None] = mapped_column(
        ForeignKey("accounts.id", ondelete="SET NULL"), default=None, index=True
    )
    name: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(8))  # guest | user | bot
    seat: Mapped[int | None] = mapped_column(Integer, default=None)  # a player's seat, None for a spectator
    text: Mapped[str] = mapped_column(String(500))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    removed_at: Mapped[datetime | None] = mapped_column(default=None, index=True)


class ChatSilence(Base):
    """An account the operator silenced: its chat is refused until `until` (None: for good).
    A table of its own rather than a column of accounts: most accounts are never silenced."""

    __tablename__ = "chat_silences"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True)
    until: Mapped[datetime | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class HostedBot(Base):
    """A bot account the server runs itself (docs/hosted-bots.md): which version plays, and
    whether it plays at all. `status`: active, paused (it kept failing: `reason` says how, until
    its owner submits or activates again) or withdrawn (by its owner)."""

    __tablename__ = "hosted_bots"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True)
    active_version: Mapped[int | None] = mapped_column(Integer, default=None)  # a `HostedVersion.number`
    status: Mapped[str] = mapped_column(String(16), default="active")
    reason: Mapped[str | None] = mapped_column(String(300), default=None)
    failures_in_row: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class HostedVersion(Base):
    """One submission of a hosted bot: its bundle (unpacked on disk under the server's hosting
    directory, named by `sha256`, the digest of the upload), the command run in it and the games
    it declares. Numbered 1, 2, ... per bot; never changed once stored."""

    __tablename__ = "hosted_versions"
    __table_args__ = (UniqueConstraint("account_id", "number"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column(Integer)
    sha256: Mapped[str] = mapped_column(String(64))
    run: Mapped[str] = mapped_column(String(1000))
    games: Mapped[list[str]] = mapped_column(JSON)
    packed_bytes: Mapped[int] = mapped_column(BigInteger)
    unpacked_bytes: Mapped[int] = mapped_column(BigInteger)
    files: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class HostedLog(Base):
    """What a hosted bot's owner reads with `partida bots logs`: a verdict on its program
    (`partida.hosting.verdicts`), or `finished` for a game that ended without one and left lines
    on its stderr, with the tail of its stderr either way."""

    __tablename__ = "hosted_logs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    version: Mapped[int | None] = mapped_column(Integer, default=None)
    game_id: Mapped[int | None] = mapped_column(ForeignKey("games.id", ondelete="SET NULL"), default=None)
    verdict: Mapped[str] = mapped_column(String(32))
    detail: Mapped[str] = mapped_column(String(500))
    stderr_tail: Mapped[list[str]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class SharedSeek(Base):
    """An open seek of a deployment of several nodes, so that every node lists it and any node
    may pair it: its node (whose lease it lives under), its owner's key (the per-owner cap
    counts across nodes), its terms' key (the seeks it could meet share it), what pairing reads
    of it (`party`, `terms`), its listing entry, and, once claimed, the node that claimed it and
    the room it was paired into (seat and seat token for its poster: they never cross the broker).
    `claimed_by` set is the one mark that a seek is taken: set by one conditional UPDATE, so each
    seek is paired at most once."""

    __tablename__ = "shared_seeks"
    __table_args__ = (Index("ix_shared_seeks_terms_open", "terms_key", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    node: Mapped[str] = mapped_column(String(64), index=True)
    owner: Mapped[str] = mapped_column(String(80), index=True)
    address: Mapped[str] = mapped_column(String(64))
    terms_key: Mapped[str] = mapped_column(String(64))
    party: Mapped[dict[str, Any]] = mapped_column(JSON)
    terms: Mapped[dict[str, Any]] = mapped_column(JSON)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    claimed_by: Mapped[str | None] = mapped_column(String(64), default=None)
    paired: Mapped[dict[str, Any] | None] = mapped_column(NullableJSON, default=None)
    posted_at: Mapped[datetime] = mapped_column(default=utcnow)
