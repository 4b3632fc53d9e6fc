"""Chat's pure rules (`partida/room/chat.py`): what a line may hold once cleaned, and who writes
and reads which channel of a room before and after its game."""

from __future__ import annotations

import pytest

from partida.protocol import ErrorCode, ProtocolError
from partida.room import chat


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("  good   game\n\nwell played\t", "good game well played"),
        ("bell\x07 and escape\x1b[31m red", "bell and escape[31m red"),
        ("right\u202eto left\u2066isolate\u2069", "rightto leftisolate"),
        ("<script>alert(1)</script>", "<script>alert(1)</script>"),  # text stays text: clients show it as such
        ("emoji 👍🏽 and zero-width\u200djoiner", "emoji 👍🏽 and zero-width\u200djoiner"),
    ],
)
def test_a_line_is_cleaned_of_controls_and_extra_space(said: str, kept: str) -> None:
    assert chat.clean(said) == kept


@pytest.mark.parametrize(
    ("said", "code"),
    [
        ("", ErrorCode.CHAT_EMPTY),
        (" \n\t\x07\u202e ", ErrorCode.CHAT_EMPTY),
        ("x" * (chat.MAX_CHARS + 1), ErrorCode.CHAT_TOO_LONG),
        ("x" * 100_000, ErrorCode.CHAT_TOO_LONG),
    ],
)
def test_an_empty_or_long_line_is_refused(said: str, code: ErrorCode) -> None:
    with pytest.raises(ProtocolError) as refused:
        chat.clean(said)
    assert refused.value.code == code
    assert chat.clean("x" * chat.MAX_CHARS + "\x07") == "x" * chat.MAX_CHARS  # the cap counts what is kept


def test_each_role_posts_in_its_own_channel() -> None:
    assert chat.channel_to_post(None, player=True, spectator=False) == chat.PLAYERS
    assert chat.channel_to_post(None, player=True, spectator=True) == chat.PLAYERS  # seated and watching
    assert chat.channel_to_post("spectators", player=False, spectator=True) == chat.SPECTATORS
    for asked, player, spectator, code in [
        (None, False, False, ErrorCode.CHAT_NOT_ALLOWED),
        ("players", False, True, ErrorCode.CHAT_NOT_ALLOWED),
        ("spectators", True, False, ErrorCode.CHAT_NOT_ALLOWED),
        ("tournament", True, False, ErrorCode.BAD_FIELD),
    ]:
        with pytest.raises(ProtocolError) as refused:
            chat.channel_to_post(asked, player, spectator)
        assert refused.value.code == code


def test_players_read_the_spectators_only_once_the_game_is_over() -> None:
    assert chat.channels_read(player=True, over=False) == (chat.PLAYERS,)
    assert chat.channels_read(player=True, over=True) == chat.ROOM_CHANNELS
    assert chat.channels_read(player=False, over=False) == chat.ROOM_CHANNELS
    assert not chat.players_read(chat.SPECTATORS, over=False)
    assert chat.players_read(chat.SPECTATORS, over=True) and chat.players_read(chat.PLAYERS, over=False)
    assert chat.replay_channels(over=False) == (chat.PLAYERS,)  # a player may ask for a live game's record
    assert chat.replay_channels(over=True) == chat.ROOM_CHANNELS
