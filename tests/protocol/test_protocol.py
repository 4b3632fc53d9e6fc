"""The protocol package on its own: plain function calls, no sockets."""

from __future__ import annotations

import re

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
        # the databases hold signed 64-bit integers: an id past them is refused before any query
        ({"type": "game", "game_id": 2**63}, ErrorCode.BAD_FIELD, "'game_id' must be an integer from -2**63"),
        ({"type": "act", "room": "R", "action": 0, "seq": -(2**63) - 1}, ErrorCode.BAD_FIELD, "'seq' must be"),
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


def nested(levels: int, inner: object = 1) -> object:
    for n in range(levels):
        inner = {"k": inner} if n % 2 else [inner]
    return inner


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ({"a": "plain", "b": 7, "c": None, "d": True, "e": 1.5, "f": -(2**63), "g": 2**64 - 1}, None),
        ({"é": "ünïcode", "✓": ["x", {"y": "z"}]}, None),
        ({"a\x00": 1}, "holds a NUL character"),
        ({"a": "b\x00"}, "holds a NUL character"),
        ({"a": ["b", {"c": "\x00"}]}, "holds a NUL character"),
        ({"a": 2**64}, "holds an integer outside the 64-bit range"),
        ({"a": -(2**63) - 1}, "holds an integer outside the 64-bit range"),
        ({"a": float("nan")}, "holds a number that is not finite|NaN is not a number"),
        ({"a": [float("inf")]}, "holds a number that is not finite|Infinity is not a number"),
        ({"a": b"bytes"}, "holds binary data"),
        ({"a": nested(31)}, None),  # the message and 31 levels in it: 32 in all
        ({"a": nested(32)}, "nests deeper than 32 levels"),
    ],
)
def test_what_cannot_be_encoded_is_refused_at_the_edge(extra: dict, problem: str | None) -> None:
    """Every value of a request, at every depth, in the format it came in (JSON cannot carry
    binary data or NaN, MessagePack cannot carry integers outside its range)."""
    message = {"type": "ping", **extra}
    frames = []
    try:
        frames.append(msgpack.packb(message))
    except (OverflowError, TypeError, ValueError):
        pass
    try:
        frames.append(encode(message, Encoding.JSON))
    except (TypeError, ValueError):
        pass
    if problem and "64-bit" in problem:
        frames.append(str(message).replace("'", '"').replace("None", "null"))
    assert frames
    for frame in frames:
        if problem is None:
            assert decode(frame) == message
        else:
            with pytest.raises(ProtocolError) as exc:
                decode(frame)
            assert exc.value.code == ErrorCode.BAD_FRAME and re.search(problem, exc.value.message)


def test_map_keys_that_cannot_be_encoded_are_refused() -> None:
    """MessagePack keys may be any value (integers, nil, binary); JSON's are text."""
    assert decode(msgpack.packb({"type": "ping", 5: 1, None: 2, True: 3})) == {"type": "ping", 5: 1, None: 2, True: 3}
    for key, problem in [(b"bin", "holds binary data"), ("a\x00", "NUL"), (-1.5, None)]:
        frame = msgpack.packb({"type": "ping", key: 1})
        if problem is None:
            assert decode(frame)[key] == 1
            continue
        with pytest.raises(ProtocolError) as exc:
            decode(frame)
        assert problem in exc.value.message
