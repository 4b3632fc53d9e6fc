"""Chat's rules, without I/O: what a line may hold, and who reads and writes which channel.

A room has two channels. Its players talk in `players`, which the spectators read too (table
talk: the replay shows it to everyone). Spectators talk in `spectators`, which no player reads
while the game runs: in a game with hidden information a spectator sees what a player must not
(every hand, in some games), and a line could carry it. Once the game is over the players read
the spectators' channel as well (Lichess shows its players the spectators' room after the game),
and so does the replay of a finished game; before that, a replay of a game in play leaves the
spectators' channel out, since a player may ask for it. A tournament has one channel,
`tournament`, for its entrants and watchers alike.

Text is plain text, never markup: control characters (and the bidirectional overrides that
would make a line read backwards) are taken out, runs of white space become one space, and a
line is 1 to `MAX_CHARS` characters. Clients render it as text.
"""

from __future__ import annotations

import re
import unicodedata

from partida.protocol import ErrorCode, ProtocolError

MAX_CHARS = 300  # characters in a line, after cleaning (Lichess allows 140; a card game's talk needs more)
PLAYERS, SPECTATORS, TOURNAMENT = "players", "spectators", "tournament"
ROOM_CHANNELS = (PLAYERS, SPECTATORS)
# Bidirectional embeddings, overrides and isolates: format characters that reorder what follows.
_BIDI = {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)}
_SPACES = re.compile(r"\s+")


def clean(text: str) -> str:
    """`text` as a chat line: control and bidi characters out, white space folded, stripped.
    Raises `chat_empty` if nothing is left, `chat_too_long` past `MAX_CHARS`."""
    if len(text) > 4 * MAX_CHARS:  # checked before the work: a frame may carry far more
        raise ProtocolError(ErrorCode.CHAT_TOO_LONG, f"a chat line is at most {MAX_CHARS} characters")
    kept = "".join(
        " " if ch in "\t\n\r\x0b\x0c" else ch
        for ch in text
        if ch in "\t\n\r\x0b\x0c" or (unicodedata.category(ch) not in ("Cc", "Cs") and ch not in _BIDI)
    )
    line = _SPACES.sub(" ", kept).strip()
    if not line:
        raise ProtocolError(ErrorCode.CHAT_EMPTY, "a chat line needs some text")
    if len(line) > MAX_CHARS:
        raise ProtocolError(ErrorCode.CHAT_TOO_LONG, f"a chat line is at most {MAX_CHARS} characters, not {len(line)}")
    return line


def channel_to_post(asked: str | None, player: bool, spectator: bool) -> str:
    """The room channel a connection's line goes to: a player's is `players`, a spectator's
    `spectators` (a connection both seated and watching is a player). Refused with
    `chat_not_allowed` for a connection in neither role or asking for the other's channel."""
    if not player and not spectator:
        raise ProtocolError(ErrorCode.CHAT_NOT_ALLOWED, "join or watch the room to chat in it")
    own = PLAYERS if player else SPECTATORS
    if asked is not None and asked not in ROOM_CHANNELS:
        raise ProtocolError(ErrorCode.BAD_FIELD, f"chat: a room's channel is one of {', '.join(ROOM_CHANNELS)}")
    if asked is not None and asked != own:
        who = "players" if player else "spectators"
        raise ProtocolError(ErrorCode.CHAT_NOT_ALLOWED, f"{who} talk in the {own} channel, not {asked}")
    return own


def players_read(channel: str, over: bool) -> bool:
    """Whether a room's players read `channel` now (its spectators read both)."""
    return channel == PLAYERS or over


def channels_read(player: bool, over: bool) -> tuple[str, ...]:
    """The room channels a connection reads: a spectator both, a player the spectators' only
    once the game is over. A finished game's replay is read as a spectator's."""
    return ROOM_CHANNELS if not player or over else (PLAYERS,)


def replay_channels(over: bool) -> tuple[str, ...]:
    """The channels a game's record shows: anyone may ask for it, a player in the game too,
    so the spectators' channel only once the game is over."""
    return ROOM_CHANNELS if over else (PLAYERS,)
