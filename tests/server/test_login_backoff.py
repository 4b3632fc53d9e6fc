"""The rules of `server/logins.py` on a clock moved by hand: the three counts of failed logins
and their back-off, what a right password forgives, when a count is forgotten, the order of
password checks, and session tokens."""

from __future__ import annotations

import asyncio

import pytest

from partida.protocol import ErrorCode, ProtocolError
from partida.server.limits import Limits
from partida.server.logins import RECENT, Logins
from tests.fakes import FakeClock

HOME, NEIGHBOUR, ELSEWHERE = "192.0.2.1", "192.0.2.77", "198.51.100.1"


def logins(**limits: float) -> tuple[Logins, FakeClock]:
    clock = FakeClock()
    return Logins(Limits(**limits), clock), clock  # type: ignore[arg-type]


async def refused_for(logins: Logins, address: str, name: str | None) -> float | None:
    """The `retry_after` of a refused login (None: it would be checked)."""
    try:
        await logins.check(address, name, pause=False)
    except ProtocolError as exc:
        assert exc.code == ErrorCode.RATE_LIMITED and exc.close
        return exc.details["retry_after"] if exc.details else None
    return None


async def test_one_accounts_failures_past_the_allowance_back_off_doubling_up_to_the_most() -> None:
    guard, clock = logins(login_failures_allowed=3, login_backoff_max=5.0)
    for _ in range(3):
        guard.failed(HOME, "ann")
    assert await refused_for(guard, HOME, "ann") is None
    waits = []
    for _ in range(5):
        guard.failed(HOME, "ann")
        waits.append(await refused_for(guard, HOME, "ann"))
        clock.advance(waits[-1] or 0)
        assert await refused_for(guard, HOME, "ann") is None  # the wait named is the wait kept
    assert waits == [1.0, 2.0, 4.0, 5.0, 5.0]


async def test_an_accounts_lock_holds_only_that_account_from_that_address() -> None:
    guard, _ = logins(login_failures_allowed=1)
    guard.failed(HOME, "Ann")
    guard.failed(HOME, "ann")
    assert await refused_for(guard, HOME, "ANN") == 1.0  # names in any case
    assert await refused_for(guard, HOME, "bob") is None
    assert await refused_for(guard, ELSEWHERE, "ann") is None  # the person at home is not locked out
    assert await refused_for(guard, HOME, None) is None  # nor a bot token from that address


async def test_guessing_many_accounts_backs_off_the_address_and_spreading_over_a_network_the_network() -> None:
    guard, _ = logins(login_failures_per_address=3, login_failures_per_network=5)
    for i in range(4):
        guard.failed(HOME, f"victim{i}")
    assert await refused_for(guard, HOME, "someone-else") == 1.0
    assert await refused_for(guard, NEIGHBOUR, "someone-else") is None
    guard.failed(NEIGHBOUR, "victim9")
    guard.failed(NEIGHBOUR, "victim8")
    assert await refused_for(guard, "192.0.2.200", "anyone") == 1.0  # a sixth failure in the /24
    assert await refused_for(guard, ELSEWHERE, "anyone") is None


async def test_a_right_password_forgives_its_own_account_from_its_address_only() -> None:
    guard, _ = logins(login_failures_allowed=1, login_failures_per_address=2)
    guard.failed(HOME, "ann")
    guard.failed(HOME, "ann")
    guard.failed(HOME, "bob")
    guard.succeeded(HOME, "ann")
    assert await refused_for(guard, HOME, "ann") == 1.0  # the address's count stands: a guesser is here
    guard.succeeded(HOME, None)  # a bot token names no account: forgives nothing
    assert await refused_for(guard, HOME, "bob") == 1.0


async def test_a_count_is_forgotten_after_a_quiet_while_and_the_address_is_clean_again() -> None:
    guard, clock = logins(login_failures_allowed=2)
    guard.failed(HOME, "ann")
    guard.failed(HOME, "ann")
    assert guard.has_failures(HOME) and guard.has_failures(NEIGHBOUR)  # its network failed
    clock.advance(RECENT + 1)
    assert not guard.has_failures(HOME)
    guard.failed(HOME, "ann")  # the count starts again: within the allowance
    assert await refused_for(guard, HOME, "ann") is None


async def test_a_refusal_waits_for_its_answer_when_asked_to_pause() -> None:
    guard, _ = logins(login_failures_allowed=0, login_backoff_max=0.05)
    guard.failed(HOME, "ann")
    with pytest.raises(ProtocolError) as refused:
        await guard.check(HOME, "ann")  # paused for the back-off's 0.05 s, then still refused
    assert refused.value.details == {"retry_after": 0.01}  # the shortest a refusal names


async def test_checks_from_clean_addresses_go_before_those_from_addresses_that_failed() -> None:
    guard, _ = logins(hashing_at_once=1)
    guard.failed(ELSEWHERE, "x")
    order: list[str] = []
    release = asyncio.Event()

    async def check(address: str, hold: bool = False) -> None:
        async with guard.turn(address):
            order.append(address)
            if hold:
                await release.wait()

    first = asyncio.create_task(check("203.0.113.5", hold=True))
    await asyncio.sleep(0)
    suspect = asyncio.create_task(check(ELSEWHERE))  # asked first, but its address failed
    await asyncio.sleep(0)
    clean = asyncio.create_task(check(HOME))
    await asyncio.sleep(0)
    release.set()
    await asyncio.gather(first, suspect, clean)
    assert order == ["203.0.113.5", HOME, ELSEWHERE]


def test_a_session_token_is_good_only_from_this_server_and_unchanged() -> None:
    guard, _ = logins()
    token = guard.resume_token(42)
    assert guard.resumed(token) == 42
    other, _ = logins()
    assert other.resumed(token) is None  # another process: another secret
    body, _, signature = token.rpartition(".")
    account, _, expires = body.partition(".")
    assert guard.resumed(f"43.{expires}.{signature}") is None
    assert guard.resumed(f"{account}.1.{signature}") is None
    assert guard.resumed("not a token") is None and guard.resumed(token + "x" * 200) is None
