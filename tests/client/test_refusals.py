"""The refusals of partida/client/refusals.py on plain values: which `retry_after` a reply
carries, what a `Retry-After` header asks for, and how `patiently` acts on them."""

from __future__ import annotations

import math

import pytest

from partida.client import ConnectionLost, ServerError, patiently
from partida.client.refusals import retry_after_header


def test_an_error_reply_keeps_its_code_message_and_wait() -> None:
    reply = {"type": "error", "code": "rate_limited", "message": "slow down", "retry_after": 2}
    refused = ServerError.from_reply(reply)
    assert (refused.code, refused.message, refused.retry_after) == ("rate_limited", "slow down", 2.0)
    assert isinstance(refused.retry_after, float)
    assert str(refused) == "rate_limited: slow down"


@pytest.mark.parametrize("wait", [None, True, False, -1, math.inf, math.nan, "3", [3]])
def test_a_wait_that_is_no_finite_count_of_seconds_is_no_wait(wait: object) -> None:
    reply: dict[str, object] = {"type": "error", "code": "x", "message": "y"}
    if wait is not None:
        reply["retry_after"] = wait
    assert ServerError.from_reply(reply).retry_after is None


def test_an_error_reply_without_code_or_message() -> None:
    refused = ServerError.from_reply({"type": "error"})
    assert (refused.code, refused.message) == ("error", "")


def test_a_lost_connection_is_a_refusal_that_may_say_when() -> None:
    lost = ConnectionLost()
    assert isinstance(lost, ServerError) and lost.code == "connection_lost" and lost.retry_after is None
    assert ConnectionLost("refused for now", 5.0).retry_after == 5.0


@pytest.mark.parametrize(
    ("header", "seconds"), [("7", 7.0), ("0", 0.0), ("", None), ("1.5", None), ("Wed, 21 Oct 2015 07:28:00 GMT", None)]
)
def test_retry_after_header(header: str, seconds: float | None) -> None:
    assert retry_after_header(header) == seconds


class Refuser:
    """A call that is refused `refusals` times (with `retry_after`), then answers `answer`."""

    def __init__(self, refusals: int, retry_after: float | None, answer: str = "done") -> None:
        self.refusals = refusals
        self.retry_after = retry_after
        self.answer = answer
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.refusals:
            raise ServerError("rate_limited", "not yet", self.retry_after)
        return self.answer


async def test_patiently_asks_again_after_a_refusal_that_says_when() -> None:
    call = Refuser(refusals=3, retry_after=0.0)
    assert await patiently(call) == "done"
    assert call.calls == 4


async def test_patiently_raises_a_refusal_that_waiting_does_not_cure_at_once() -> None:
    call = Refuser(refusals=1, retry_after=None)
    with pytest.raises(ServerError):
        await patiently(call)
    assert call.calls == 1


async def test_patiently_gives_up_after_its_tries() -> None:
    call = Refuser(refusals=10, retry_after=0.0)
    with pytest.raises(ServerError) as refused:
        await patiently(call, tries=3)
    assert call.calls == 3 and refused.value.code == "rate_limited"


async def test_patiently_waits_no_longer_than_longest() -> None:
    """A server asking for an hour is waited `longest` seconds (here none) and asked again."""
    call = Refuser(refusals=1, retry_after=3600.0)
    assert await patiently(call, longest=0.0) == "done"
    assert call.calls == 2


async def test_patiently_asks_again_after_a_lost_connection_that_says_when() -> None:
    calls = 0

    async def opening() -> str:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise ConnectionLost("refused a new connection for now", 0.0)
        return "connected"

    assert await patiently(opening) == "connected"
    assert calls == 2
