"""The protocol package on its own: plain function calls, no sockets."""

from __future__ import annotations

import msgpack
import pytest

from partida.protocol import Encoding, ErrorCode, ProtocolError, decode, encode, parse_request
from partida.protocol.messages import Act, CreateRoom, Hello


def test_messages_round_trip_in_both_encodings() -> None:
    message = {"type": "act", "room": "ABC", "action": [["a", 1], ["b", None]], "seq": 3}
    for encoding in Encoding:
        frame = encode(message, encoding)
        assert isinstance(frame, str if encoding is Encoding.JSON else bytes)
        assert decode(frame) == message


def test_requests_are_typed() -> None:
    assert parse_request({"type": "hello", "version": 1, "name": "ada"}) == Hello(version=1, name="ada")
    request = parse_request({"type": "create_room", "game": "othello", "bots": {1: "random"}, "id": "x"})
    assert isinstance(request, CreateRoom) and request.bots == {1: "random"} and request.id == "x"
    assert parse_request({"type": "act", "room": "R", "action": None}) == Act(room="R", action=None)


@pytest.mark.parametrize(
    ("message", "code", "words"),
    [
        ({"type": "nope"}, ErrorCode.UNKNOWN_TYPE, "unknown message type"),
        ({"type": "hello"}, ErrorCode.BAD_FIELD, "missing field 'version'"),
        ({"type": "hello", "version": "1"}, ErrorCode.BAD_FIELD, "'version' must be an integer"),
        ({"type": "hello", "version": True}, ErrorCode.BAD_FIELD, "'version' must be an integer"),
        ({"type": "hello", "version": 1, "colour": "red"}, ErrorCode.BAD_FIELD, "unknown field 'colour'"),
        ({"type": "create_room", "game": "x", "public": "yes"}, ErrorCode.BAD_FIELD, "'public' must be a boolean"),
        ({"type": "hello", "version": 1, "games": ["a", 2]}, ErrorCode.BAD_FIELD, "a list of a string"),
    ],
)
def test_bad_requests_name_the_problem(message: dict, code: ErrorCode, words: str) -> None:
    with pytest.raises(ProtocolError) as exc:
        parse_request(message)
    assert exc.value.code == code
    assert words in exc.value.message


def test_bad_frames() -> None:
    for frame, code in [
        (b"\xc1", ErrorCode.BAD_FRAME),
        (msgpack.packb({"type": 3}), ErrorCode.BAD_MESSAGE),
        ("[1, 2]", ErrorCode.BAD_MESSAGE),
        ("{", ErrorCode.BAD_FRAME),
    ]:
        with pytest.raises(ProtocolError) as exc:
            decode(frame)
        assert exc.value.code == code and not exc.value.close
    with pytest.raises(ProtocolError) as exc:
        decode(b"x" * 100, limit=10)
    assert exc.value.code == ErrorCode.FRAME_TOO_LARGE and exc.value.close
