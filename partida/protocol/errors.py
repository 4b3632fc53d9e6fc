"""Stable error codes. Clients switch on the code; the sentence beside it is for people.

A code never changes meaning once published; new situations get new codes.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    # frames and messages
    BAD_FRAME = "bad_frame"  # not decodable MessagePack / JSON
    BAD_MESSAGE = "bad_message"  # decodable, but not a map with a string "type"
    UNKNOWN_TYPE = "unknown_type"
    BAD_FIELD = "bad_field"  # a missing field, a field of the wrong type, an unknown field
    FRAME_TOO_LARGE = "frame_too_large"  # closes the connection
    # handshake
    HELLO_REQUIRED = "hello_required"
    UNSUPPORTED_VERSION = "unsupported_version"  # closes the connection
    AUTH_FAILED = "auth_failed"  # closes the connection
    ALREADY_GREETED = "already_greeted"
    NAME_RESERVED = "name_reserved"  # a guest asked for an account's name
    NOT_A_BOT = "not_a_bot"  # a guest or user declared an agent: only bot accounts may
    # accounts from the browser (sign-up, passwords)
    SIGN_UP_CLOSED = "sign_up_closed"  # the server takes no sign-ups (`serve --sign-up closed`)
    BAD_INVITE = "bad_invite"  # sign-up on an invite-only server without a live invite code
    NAME_TAKEN = "name_taken"  # a sign-up for an account's name, or one that passes for it
    BAD_PASSWORD = "bad_password"  # a new password too short or too long
    # lobby
    UNKNOWN_GAME = "unknown_game"
    BAD_OPTIONS = "bad_options"
    NO_SUCH_ROOM = "no_such_room"
    NO_SUCH_PLAYER = "no_such_player"  # `challenge` to a name no connected account has
    NO_SUCH_CHALLENGE = "no_such_challenge"  # `accept`/`decline` of a challenge not open to you
    NO_SUCH_GAME = "no_such_game"  # `game` for an id that is not stored, or private to others
    NO_SUCH_SEAT = "no_such_seat"
    SEAT_TAKEN = "seat_taken"
    ROOM_FULL = "room_full"
    SEAT_KEPT = "seat_kept"
    NOT_SEATED = "not_seated"
    NOT_OWNER = "not_owner"
    ALREADY_STARTED = "already_started"
    NOT_STARTED = "not_started"
    SEATS_EMPTY = "seats_empty"
    UNKNOWN_AGENT = "unknown_agent"
    NO_BOT_AVAILABLE = "no_bot_available"
    BOT_DECLINES = "bot_declines"  # the bot's hello does not accept this game, seat count, clock or load
    RATED_NEEDS_ACCOUNT = "rated_needs_account"  # a guest creating or joining a rated room
    RATED_NEEDS_CLOCK = "rated_needs_clock"  # a rated room without a clock: nothing makes it end
    RATED_SEAT_TWICE = "rated_seat_twice"  # one account in two seats of a rated room: it would play itself
    # ladders
    NO_SUCH_LADDER = "no_such_ladder"
    BOTS_ONLY = "bots_only"  # ladder_join from a guest or a user account
    WRONG_GAME = "wrong_game"  # ladder_join by a bot that does not play the ladder's game
    LADDER_JOINED_ELSEWHERE = "ladder_joined_elsewhere"  # the bot is in the ladder from another connection
    NOT_IN_LADDER = "not_in_ladder"
    # tournaments
    NO_SUCH_TOURNAMENT = "no_such_tournament"
    TOURNAMENT_EXISTS = "tournament_exists"
    ACCOUNTS_ONLY = "accounts_only"  # a guest cannot create or enter a tournament
    ENTRY_REFUSED = "entry_refused"  # a bot in a people-only event, a person in a bots-only one
    TOURNAMENT_CLOSED = "tournament_closed"  # joining a finished one, or a running round robin
    NOT_ENTERED = "not_entered"
    TOO_MANY_TOURNAMENTS = "too_many_tournaments"  # the account (or its address) has its cap of live ones
    # seeks
    NO_SUCH_SEEK = "no_such_seek"  # cancelling or taking a seek that is not open (or, to cancel, not yours)
    TOO_MANY_SEEKS = "too_many_seeks"  # an owner has MAX_SEEKS open seeks, or an address seeks_per_address
    BAD_SEEK = "bad_seek"  # a seek that cannot be posted: an empty rating range, not two seats
    SEEK_REFUSED = "seek_refused"  # taking a seek that does not accept you (yours, rated, range, bots)
    # play
    NOT_YOUR_TURN = "not_your_turn"
    ILLEGAL_ACTION = "illegal_action"
    GAME_OVER = "game_over"
    STALE_DECISION = "stale_decision"
    # endings (clocks, resign, draw offers, abort, rematch)
    BAD_CLOCK = "bad_clock"  # a clock spec that is not one, or negative, zero-initial, over a day
    ALREADY_RESIGNED = "already_resigned"
    DRAW_UNAVAILABLE = "draw_unavailable"  # draw offers are for two-seat games
    NO_DRAW_OFFER = "no_draw_offer"  # accepting or declining an offer that does not exist or lapsed
    ABORT_TOO_LATE = "abort_too_late"  # every seat has moved
    GAME_NOT_OVER = "game_not_over"  # a rematch before the end
    # takebacks
    TAKEBACK_UNAVAILABLE = "takeback_unavailable"  # rated, tournament, ladder, a bot; chance or hidden cards
    NOTHING_TO_TAKE_BACK = "nothing_to_take_back"  # the asker has no move standing
    NO_TAKEBACK_OFFER = "no_takeback_offer"  # accepting or declining an offer that does not exist or lapsed
    TAKEBACK_WAIT = "takeback_wait"  # asking again, before a move is made, after a decline
    TOO_MANY_TAKEBACKS = "too_many_takebacks"  # a game holds at most 20 (room/takebacks.py)
    # chat
    CHAT_EMPTY = "chat_empty"  # nothing left of a line once control characters and white space are out
    CHAT_TOO_LONG = "chat_too_long"  # a line past the cap (partida/room/chat.py)
    CHAT_NOT_ALLOWED = "chat_not_allowed"  # not in the room, or a channel that is not yours
    SILENCED = "silenced"  # the operator silenced the account (`until` says till when; null: for good)
    # hosted bots (docs/hosted-bots.md)
    HOSTING_DISABLED = "hosting_disabled"  # this server runs no submitted bots (`serve --host-bots`)
    USERS_ONLY = "users_only"  # submitting and managing hosted bots needs a person's account
    NO_SUCH_BOT = "no_such_bot"  # no hosted bot of yours has that name
    NO_SUCH_VERSION = "no_such_version"
    HOSTING_FULL = "hosting_full"  # the server's disk is short of room for another bundle; try later
    NO_SUCH_UPLOAD = "no_such_upload"  # a chunk for an upload not open on this connection
    BAD_UPLOAD = "bad_upload"  # not a tar or zip, damaged, empty, a chunk out of order, a digest that differs
    UPLOAD_TOO_LARGE = "upload_too_large"  # past the packed cap (16 MiB)
    UPLOAD_UNPACKED_TOO_LARGE = "upload_unpacked_too_large"  # its files unpack past the cap (a tar bomb)
    UPLOAD_TOO_MANY_FILES = "upload_too_many_files"
    UPLOAD_UNSAFE_PATH = "upload_unsafe_path"  # an absolute path, `..`, a path twice
    UPLOAD_LINK = "upload_link"  # a symlink or hard link (a submission that is a link to `/`)
    UPLOAD_SPECIAL_FILE = "upload_special_file"  # a device, FIFO or socket
    # the server
    RATE_LIMITED = "rate_limited"
    INTERNAL = "internal_error"
    STORAGE = "storage_unavailable"
    # several nodes
    MOVED = "moved"  # the room lives on another node: the error carries its `url` (and `room`)


class ProtocolError(Exception):
    """An error to report to the peer as an `error` message. `close` says whether the server
    closes the connection after sending it (only where carrying on makes no sense). `request_id`
    is the id of the refused request when it could be read although the rest could not. `details`
    are further fields of the message (`moved` carries the node's `url` and the `room`)."""

    def __init__(
        self,
        code: ErrorCode | str,
        message: str,
        close: bool = False,
        request_id: int | str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = str(code)
        self.message = message
        self.close = close
        self.request_id = request_id
        self.details = details
