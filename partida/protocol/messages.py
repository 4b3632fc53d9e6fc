"""The message catalogue: every request a client may send, as a typed definition.

Each request is a dataclass whose field annotations are the wire schema; `parse_request` checks a
decoded map against it, so a missing field, a wrong type or an unknown field becomes a
`bad_field` error naming the field, and handlers receive well-typed values.

Server-to-client messages are built by `server_message` (plain maps: they are on the hot path and
their fields are documented in docs/protocol.md).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from partida.protocol.errors import ErrorCode, ProtocolError

# Version 2: `room` is always a room's code; a room's summary travels as `summary`. Version 1
# (still served) put the summary itself under `room` in some messages.
PROTOCOL_VERSION = 2
SUPPORTED_VERSIONS = frozenset({1, 2})
# Every integer field of a request: what both databases store (signed 64-bit), so that no id, seat
# or count a client sends can overflow a query. (Decoding already bounds every integer to
# MessagePack's range, which reaches 2**64 - 1: `action` and `options` keep that range.)
MIN_INT, MAX_INT = -(2**63), 2**63 - 1


@dataclass
class Request:
    type: ClassVar[str]
    id: int | str | None = field(default=None, kw_only=True)


@dataclass
class Hello(Request):
    """First message of a connection. No credentials: a guest. `name` + `password`: an account.
    `token`: a bot account. `agent` tells the server which agent a bot runs, so that rooms can
    ask for it by name (the built-in bot pool)."""

    type: ClassVar[str] = "hello"
    version: int
    name: str | None = None
    password: str | None = None
    token: str | None = None
    agent: str | None = None
    # What a bot accepts (protocol/accepts.py): games as a list (any seat count) or a map of
    # game -> seat counts (null: any), and the rest of its declaration.
    games: list[str] | dict[str, list[int] | None] | None = None
    hidden_information: bool | None = None
    clock_min: float | None = None
    clock_max: float | None = None
    max_games: int | None = None
    max_games_per_opponent: int | None = None
    resume: str | None = None  # the `resume` of an earlier welcome, with `name`: no password needed
    sign_up: bool | None = None  # with `name` and `password`: create that person's account first
    invite: str | None = None  # with `sign_up`, on an invite-only server: a code from its operator


@dataclass
class Ping(Request):
    type: ClassVar[str] = "ping"


@dataclass
class ListGames(Request):
    type: ClassVar[str] = "list_games"


@dataclass
class ListRooms(Request):
    """A page of public rooms, oldest first; `cursor` is the `next` of the page before (None:
    the first page). `watch`: be pushed `lobby` changes for the same filter (False: stop)."""

    type: ClassVar[str] = "list_rooms"
    game: str | None = None
    status: str | None = None
    cursor: str | None = None
    limit: int | None = None
    watch: bool | None = None


@dataclass
class CreateRoom(Request):
    """Create a room. `seat`: the seat the creator takes at once (None: none). `bots` maps seat
    numbers (as strings, or ints in MessagePack) to agent names to seat at once."""

    type: ClassVar[str] = "create_room"
    game: str
    options: dict[str, Any] | None = None
    seats: int | None = None
    public: bool = True
    seat: int | None = None
    bots: dict[Any, str] | None = None
    auto_start: bool = True
    clock: dict[str, Any] | None = None
    abandon_after: float | None = None
    rated: bool = False


@dataclass
class Join(Request):
    """Take a seat (any free one when `seat` is None). `token` reclaims a held seat after a
    disconnect or a server restart."""

    type: ClassVar[str] = "join"
    room: str
    seat: int | None = None
    token: str | None = None


@dataclass
class Leave(Request):
    type: ClassVar[str] = "leave"
    room: str


@dataclass
class Watch(Request):
    type: ClassVar[str] = "watch"
    room: str


@dataclass
class AddBot(Request):
    type: ClassVar[str] = "add_bot"
    room: str
    agent: str
    seat: int | None = None


@dataclass
class Start(Request):
    type: ClassVar[str] = "start"
    room: str


@dataclass
class Act(Request):
    """Answer the open decision. `seq` (the number of actions applied so far, as in the update
    that carried the decision) lets the server reject an answer to a decision that has passed."""

    type: ClassVar[str] = "act"
    room: str
    action: Any
    seq: int | None = None
    seat: int | None = None


@dataclass
class SeatRequest(Request):
    """A request about one's own seat in a room; `seat` is needed only when one connection holds
    several seats of the room."""

    room: str
    seat: int | None = None


@dataclass
class Resign(SeatRequest):
    type: ClassVar[str] = "resign"
    note: str | None = None  # why, kept in the result (an engine that failed); at most 300 characters


@dataclass
class OfferDraw(SeatRequest):
    type: ClassVar[str] = "offer_draw"


@dataclass
class AcceptDraw(SeatRequest):
    type: ClassVar[str] = "accept_draw"


@dataclass
class DeclineDraw(SeatRequest):
    type: ClassVar[str] = "decline_draw"


@dataclass
class Abort(SeatRequest):
    type: ClassVar[str] = "abort"


@dataclass
class Rematch(SeatRequest):
    type: ClassVar[str] = "rematch"


# Takebacks (casual games: docs/protocol.md, "Takebacks and export") and a stored game's export.


@dataclass
class OfferTakeback(SeatRequest):
    type: ClassVar[str] = "takeback_offer"


@dataclass
class AcceptTakeback(SeatRequest):
    type: ClassVar[str] = "takeback_accept"


@dataclass
class DeclineTakeback(SeatRequest):
    type: ClassVar[str] = "takeback_decline"


@dataclass
class Export(Request):
    """A stored game as a file: `text` (tags and moves; Othello's GGF) or `json` (what a replay
    loads), under the rules of `game` (who may see which game, and what of it)."""

    type: ClassVar[str] = "export"
    game_id: int
    format: str = "text"


@dataclass
class Games(Request):
    """Stored games, newest first: public ones, and private ones the asker's account sat in."""

    type: ClassVar[str] = "games"
    player: str | None = None
    game: str | None = None
    status: str | None = None
    limit: int = 50


@dataclass
class GameRecord(Request):
    """One stored game: seats, result, moves and revealed seed once finished; a live game as its
    spectators see it. With `steps`, also the spectators' view after every move (a replay)."""

    type: ClassVar[str] = "game"
    game_id: int
    steps: bool = False


@dataclass
class Challenge(Request):
    """Ask the account named `to` (a person or a bot, any case) for a game. Answered by
    `challenge_sent`; the outcome comes as a pushed `challenge_accepted` or `challenge_declined`."""

    type: ClassVar[str] = "challenge"
    to: str
    game: str
    options: dict[str, Any] | None = None
    seats: int | None = None
    clock: dict[str, Any] | None = None
    rated: bool = False  # as `create_room`'s: both accounts' ratings change (needs a clock)


@dataclass
class AcceptChallenge(Request):
    type: ClassVar[str] = "accept"
    challenge: str


@dataclass
class DeclineChallenge(Request):
    type: ClassVar[str] = "decline"
    challenge: str


@dataclass
class LadderJoin(Request):
    """A bot account joins a ladder for as long as this connection lasts; the scheduler then
    seats it in up to `max_games` ladder games at a time (default 1)."""

    type: ClassVar[str] = "ladder_join"
    ladder: str
    max_games: int | None = None


@dataclass
class LadderLeave(Request):
    type: ClassVar[str] = "ladder_leave"
    ladder: str


@dataclass
class LadderList(Request):
    type: ClassVar[str] = "ladder_list"


@dataclass
class LadderStandings(Request):
    type: ClassVar[str] = "ladder_standings"
    ladder: str


@dataclass
class LadderHistory(Request):
    """Each member's rating after each of its rated games: what a rating plot draws."""

    type: ClassVar[str] = "ladder_history"
    ladder: str


@dataclass
class Ratings(Request):
    """An account's ratings, per game and clock class (`name` None: your own; `game`: only it)."""

    type: ClassVar[str] = "ratings"
    name: str | None = None
    game: str | None = None


@dataclass
class RatingHistory(Request):
    """An account's rating before and after each of its rated games in one game and class."""

    type: ClassVar[str] = "rating_history"
    game: str
    clock_class: str
    name: str | None = None
    limit: int | None = None


@dataclass
class Leaderboard(Request):
    """The best ratings of a game, per clock class: the established ones, then the provisional."""

    type: ClassVar[str] = "leaderboard"
    game: str
    clock_class: str | None = None
    limit: int | None = None


@dataclass
class TournamentCreate(Request):
    """Create a tournament (accounts only). `rounds`: the rounds of a Swiss, the cycles of a round
    robin (1 single, 2 double); `duration`: an arena's length in seconds; `starts_in`: seconds
    from now until it starts (registration is open until then)."""

    type: ClassVar[str] = "tournament_create"
    name: str
    game: str
    format: str
    clock: dict[str, Any]
    entry: str = "both"
    options: dict[str, Any] | None = None
    seats: int | None = None
    rounds: int | None = None
    duration: float | None = None
    starts_in: float = 60.0


@dataclass
class TournamentList(Request):
    """One page of tournaments, soonest first, without their options; `cursor`: the `next` of
    the page before (None: the first page)."""

    type: ClassVar[str] = "tournament_list"
    status: str | None = None
    cursor: str | None = None
    limit: int | None = None
    watch: bool | None = None  # True: `lobby_tournaments` pushed when tournaments change (False: no more)


@dataclass
class TournamentJoin(Request):
    """Enter a tournament (accounts only): its games are pushed to this account's connections
    (`tournament_game`); a bot account is seated by itself."""

    type: ClassVar[str] = "tournament_join"
    tournament: str


@dataclass
class TournamentWithdraw(Request):
    type: ClassVar[str] = "tournament_withdraw"
    tournament: str


@dataclass
class TournamentStandings(Request):
    type: ClassVar[str] = "tournament_standings"
    tournament: str


@dataclass
class TournamentPairings(Request):
    """Every table of one round (None: of every round), with its game and result."""

    type: ClassVar[str] = "tournament_pairings"
    tournament: str
    round: int | None = None


@dataclass
class Seek(Request):
    """Ask for a game with anyone: paired at once with the oldest compatible waiting seek, or
    listed in the lobby (`list_seeks`) until someone takes it, it is cancelled, or its poster's
    connection ends. `range`: [low, high], the ratings (in the seek's clock class) it accepts;
    `allow_bots`: bot accounts may answer it."""

    type: ClassVar[str] = "seek"
    game: str
    options: dict[str, Any] | None = None
    seats: int | None = None
    clock: dict[str, Any] | None = None
    rated: bool = False
    range: list[float] | None = None
    allow_bots: bool = False


@dataclass
class SeekCancel(Request):
    type: ClassVar[str] = "seek_cancel"
    seek: int


@dataclass
class SeekTake(Request):
    """Answer a listed seek: the room opens at once with both seated."""

    type: ClassVar[str] = "seek_take"
    seek: int


@dataclass
class ListSeeks(Request):
    """A page of the open seeks of this server, oldest first (of `game`: one game's); `cursor` is
    the `next` of the page before (None: the first page). `watch`: be pushed `lobby_seeks`
    changes (False: stop)."""

    type: ClassVar[str] = "list_seeks"
    game: str | None = None
    watch: bool | None = None
    cursor: str | None = None
    limit: int | None = None


# Accounts from the browser: a password changed, a session ended, an invitation read before
# taking its seat (sign-up itself is a `hello`: a connection starts as who it says it is).


@dataclass
class ChangePassword(Request):
    """A user account's new password, its old one proving who asks (a connection left open on a
    shared computer is not enough). Every session token given before it stops working."""

    type: ClassVar[str] = "change_password"
    old: str
    new: str


@dataclass
class LogOut(Request):
    """End this person's sessions: the session tokens given so far stop working, and the
    connection is closed."""

    type: ClassVar[str] = "log_out"


@dataclass
class Invitation(Request):
    """What an invite link leads to, before taking a seat there: the game, who opened the room
    and the seats free, without sitting or watching."""

    type: ClassVar[str] = "invitation"
    room: str


# Chat (partida/room/chat.py has its rules; docs/protocol.md, "Chat").


@dataclass
class Chat(Request):
    """A line in a room's channel (`players` or `spectators`: yours, when left out) or in a
    tournament's chat. Plain text: control characters are taken out, at most 300 characters."""

    type: ClassVar[str] = "chat"
    text: str
    room: str | None = None
    tournament: str | None = None
    channel: str | None = None


@dataclass
class ChatHistory(Request):
    """The newest lines of a room's channels you may read, or of a tournament's chat (whose
    lines are then pushed to you, one tournament at a time)."""

    type: ClassVar[str] = "chat_history"
    room: str | None = None
    tournament: str | None = None


# Hosted bots (docs/hosted-bots.md): a person submits a program that the server runs as a bot
# account they own. An upload travels in chunks (`bot_upload`), so that no frame passes the
# server's one frame cap.


@dataclass
class BotSubmit(Request):
    """Start submitting a version of the hosted bot `name` (created, owned by you, on its first
    submission): a tar (gzipped or not) or zip of `size` bytes whose sha256 is `sha256`, the
    command `run` run in its directory, and the games it plays."""

    type: ClassVar[str] = "bot_submit"
    name: str
    games: list[str]
    run: str
    size: int
    sha256: str


@dataclass
class BotUpload(Request):
    """The next chunk of the upload `bot_submit` opened: `data` in base64, starting at byte
    `offset` (the bytes received so far)."""

    type: ClassVar[str] = "bot_upload"
    upload: str
    offset: int
    data: str


@dataclass
class BotList(Request):
    """Your hosted bots, with their versions and state."""

    type: ClassVar[str] = "bot_list"


@dataclass
class BotLogs(Request):
    """A hosted bot's log (its verdicts, and the stderr of its latest games) and its latest games."""

    type: ClassVar[str] = "bot_logs"
    name: str
    limit: int | None = None


@dataclass
class BotActivate(Request):
    """Make version `version` of your hosted bot the one that plays (lifts a pause)."""

    type: ClassVar[str] = "bot_activate"
    name: str
    version: int


@dataclass
class BotWithdraw(Request):
    """Stop your hosted bot playing (its versions are kept)."""

    type: ClassVar[str] = "bot_withdraw"
    name: str


REQUESTS: dict[str, type[Request]] = {
    cls.type: cls
    for cls in (
        Hello,
        Ping,
        ListGames,
        ListRooms,
        CreateRoom,
        Join,
        Leave,
        Watch,
        AddBot,
        Start,
        Act,
        Resign,
        OfferDraw,
        AcceptDraw,
        DeclineDraw,
        Abort,
        Rematch,
        OfferTakeback,
        AcceptTakeback,
        DeclineTakeback,
        Export,
        Games,
        GameRecord,
        Challenge,
        AcceptChallenge,
        DeclineChallenge,
        LadderJoin,
        LadderLeave,
        LadderList,
        LadderStandings,
        LadderHistory,
        Ratings,
        RatingHistory,
        Leaderboard,
        TournamentCreate,
        TournamentList,
        TournamentJoin,
        TournamentWithdraw,
        TournamentStandings,
        TournamentPairings,
        Seek,
        SeekCancel,
        SeekTake,
        ListSeeks,
        ChangePassword,
        LogOut,
        Invitation,
        Chat,
        ChatHistory,
        BotSubmit,
        BotUpload,
        BotList,
        BotLogs,
        BotActivate,
        BotWithdraw,
    )
}


def parse_request(message: dict[str, Any]) -> Request:
    kind = message["type"]
    cls = REQUESTS.get(kind)
    if cls is None:
        raise ProtocolError(ErrorCode.UNKNOWN_TYPE, f"unknown message type {kind!r}; known: {', '.join(REQUESTS)}")
    checks, required = _schema(cls)
    values: dict[str, Any] = {}
    for name, value in message.items():
        if name == "type":
            continue
        check = checks.get(name)
        if check is None:
            raise ProtocolError(ErrorCode.BAD_FIELD, f"{kind}: unknown field {name!r}")
        if not check(value):
            raise ProtocolError(ErrorCode.BAD_FIELD, f"{kind}: field {name!r} must be {_describe(_hints(cls)[name])}")
        values[name] = value
    for name in required:
        if name not in values:
            raise ProtocolError(ErrorCode.BAD_FIELD, f"{kind}: missing field {name!r}")
    return cls(**values)


def server_message(kind: str, request_id: int | str | None = None, **fields: Any) -> dict[str, Any]:
    message = {"type": kind, **fields}
    if request_id is not None:
        message["id"] = request_id
    return message


def error_message(code: str, text: str, request_id: int | str | None = None, **details: Any) -> dict[str, Any]:
    return server_message("error", request_id, code=code, message=text, **details)


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type[Request]) -> dict[str, Any]:
    if cls not in _HINTS:
        hints = typing.get_type_hints(cls)
        _HINTS[cls] = {f.name: hints[f.name] for f in dataclasses.fields(cls)}
    return _HINTS[cls]


_SCHEMAS: dict[type, tuple[dict[str, Callable[[Any], bool]], tuple[str, ...]]] = {}


def _schema(cls: type[Request]) -> tuple[dict[str, Callable[[Any], bool]], tuple[str, ...]]:
    """Each field's check, built once per request type from its annotations (every request a
    server receives goes through here), and the fields that have no default."""
    if cls not in _SCHEMAS:
        checks = {name: _checker(hint) for name, hint in _hints(cls).items()}
        required = tuple(
            f.name
            for f in dataclasses.fields(cls)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        )
        _SCHEMAS[cls] = (checks, required)
    return _SCHEMAS[cls]


def _checker(hint: Any) -> Callable[[Any], bool]:
    """A function telling whether a decoded value fits the annotation `hint`."""
    if hint is Any:
        return lambda value: True
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(hint)
        options = [_checker(arg) for arg in args if arg is not type(None)]
        if len(options) == 1 and len(args) == 2:  # `X | None`, the common case, without a loop
            only = options[0]
            return lambda value: value is None or only(value)
        if len(options) < len(args):
            options.insert(0, _checker(type(None)))
        return lambda value: any(check(value) for check in options)
    if hint is type(None):
        return lambda value: value is None
    if hint is int:
        return lambda value: isinstance(value, int) and not isinstance(value, bool) and MIN_INT <= value <= MAX_INT
    if hint in (str, bool):
        return lambda value: isinstance(value, hint)
    if hint is float:
        return lambda value: isinstance(value, int | float) and not isinstance(value, bool)
    if origin is list:
        (item,) = typing.get_args(hint)
        check_item = _checker(item)
        return lambda value: isinstance(value, list) and all(check_item(v) for v in value)
    if origin is dict:
        key, item = typing.get_args(hint)
        check_key, check_value = _checker(key), _checker(item)
        return lambda value: isinstance(value, dict) and all(check_key(k) and check_value(v) for k, v in value.items())
    raise TypeError(f"unsupported annotation {hint!r}")


def _describe(hint: Any) -> str:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(arg) for arg in typing.get_args(hint))
    if hint is type(None):
        return "null"
    if hint is Any:
        return "any value"
    if origin is list:
        return f"a list of {_describe(typing.get_args(hint)[0])}"
    if origin is dict:
        return "a map"
    names = {int: "an integer from -2**63 to 2**63-1", float: "a number", str: "a string", bool: "a boolean"}
    return names.get(hint, str(hint))
