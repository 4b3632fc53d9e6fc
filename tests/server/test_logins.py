"""Logins under attack: a crowd of guessers neither starves a person logging in from elsewhere nor
locks out a person behind the guessers' address, and a session token skips the password check."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest
from websockets.asyncio.client import connect as ws_connect

from partida.client import Client, ServerError
from partida.server.app import Server, ServerConfig
from tests.helpers import REPO, login


@pytest.fixture
def limited(limited: Callable[..., Any]) -> Callable[..., Any]:
    """The shared fixture's servers, each with ada's account."""

    async def start(**changes: Any) -> Server:
        server = await limited(**changes)
        await server.store.create_user("ada", "correct horse")
        return server

    return start


CROWD = """
import asyncio, contextlib, sys
from tests.helpers import guess_forever
async def crowd():
    guessers = [guess_forever(sys.argv[1], f"127.0.0.{host}") for host in range(2, 42) for _ in range(2)]
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.gather(*guessers), 60)
asyncio.run(crowd())
"""


@pytest.mark.processes
async def test_a_crowd_of_guessers_does_not_starve_a_login_from_a_clean_address(limited) -> None:
    """40 addresses, two connections each, guess ada's password without pause (from a process of
    their own, as attackers are); ada logs in from another network. Before, the queue of 64
    checks was full of guesses and ada was refused."""
    server = await limited(hashing_at_once=1, hashing_queue=64, login_failures_allowed=1000)
    root = REPO
    crowd = await asyncio.create_subprocess_exec(sys.executable, "-c", CROWD, server.url, cwd=root)
    try:
        guessers = [f"127.0.0.{host}" for host in range(2, 42)]
        for _ in range(600):  # until every guesser has failed: the queue is theirs from then on
            if all(server.logins.has_failures(address) for address in guessers):
                break
            await asyncio.sleep(0.05)
        assert all(server.logins.has_failures(address) for address in guessers)
        started = time.monotonic()
        replies = [await login(server.url, f"127.0.1.{i}", "ada", "correct horse") for i in range(1, 4)]
        took = time.monotonic() - started
    finally:
        crowd.kill()
        await crowd.wait()
    assert [r["type"] for r in replies] == ["welcome"] * 3, replies
    assert took < 30  # a bound for a loaded machine; ada waits for the clean checks ahead only


@pytest.mark.slow
async def test_a_person_behind_a_guessers_address_can_still_log_in(limited) -> None:
    """A NAT or a proxy: the same address guesses bob's password; ada's own login is not locked."""
    server = await limited(login_failures_allowed=3)
    await server.store.create_user("bob", "battery staple")
    for _ in range(4):
        assert (await login(server.url, "127.0.0.9", "bob", "wrong guess"))["code"] == "auth_failed"
    assert (await login(server.url, "127.0.0.9", "bob", "battery staple"))["code"] == "rate_limited"
    assert (await login(server.url, "127.0.0.9", "ada", "correct horse"))["type"] == "welcome"


@pytest.mark.slow
async def test_an_address_that_guesses_many_accounts_is_backed_off(limited) -> None:
    server = await limited(login_failures_per_address=4)
    for i in range(5):  # four allowed, then a back-off from the fifth failure on
        assert (await login(server.url, "127.0.0.9", f"user{i}", "wrong guess"))["code"] == "auth_failed"
    assert (await login(server.url, "127.0.0.9", "ada", "correct horse"))["code"] == "rate_limited"
    assert (await login(server.url, "127.0.3.9", "ada", "correct horse"))["type"] == "welcome"


@pytest.mark.slow
async def test_twenty_one_wrong_guesses_lock_only_the_accounts_guessed(limited) -> None:
    """Per address and account name, with the address's own ceiling far above: a guesser's
    twenty-two failures over seven names back off the name guessed past its allowance from that
    address, not a person's login to another account there (before, the twenty-first failure
    locked every login from the address)."""
    server = await limited(login_failures_allowed=3)
    await server.store.create_user("bob", "battery staple")
    for i in range(21):
        assert (await login(server.url, "127.0.0.9", f"user{i % 7}", "wrong guess"))["code"] == "auth_failed"
    assert (await login(server.url, "127.0.0.9", "user0", "wrong guess"))["code"] == "auth_failed"  # its 4th
    assert (await login(server.url, "127.0.0.9", "user0", "wrong guess"))["code"] == "rate_limited"
    assert (await login(server.url, "127.0.0.9", "ada", "correct horse"))["type"] == "welcome"
    assert (await login(server.url, "127.0.0.9", "bob", "battery staple"))["type"] == "welcome"


@pytest.mark.slow
async def test_a_success_forgives_only_its_own_account_from_its_address(limited) -> None:
    """ada's right password behind a guesser's address does not wipe the guesser's count (it
    once reset the address's count, so a guesser beside a person logging in now and then was
    never backed off): the address's ceiling is reached all the same."""
    server = await limited(login_failures_allowed=100, login_failures_per_address=4)
    for _ in range(4):
        assert (await login(server.url, "127.0.0.9", "bob", "wrong guess"))["code"] == "auth_failed"
    assert (await login(server.url, "127.0.0.9", "ada", "correct horse"))["type"] == "welcome"
    assert (await login(server.url, "127.0.0.9", "cid", "wrong guess"))["code"] == "auth_failed"  # the 5th: over
    assert (await login(server.url, "127.0.0.9", "ada", "correct horse"))["code"] == "rate_limited"
    assert (await login(server.url, "127.0.3.9", "ada", "correct horse"))["type"] == "welcome"


@pytest.mark.slow
async def test_a_success_forgives_its_own_mistakes(limited) -> None:
    server = await limited(login_failures_allowed=2)
    for _ in range(2):
        assert (await login(server.url, "127.0.0.8", "ada", "mistyped"))["code"] == "auth_failed"
    assert (await login(server.url, "127.0.0.8", "ada", "correct horse"))["type"] == "welcome"
    for _ in range(3):  # two more mistakes allowed after the success, then a back-off
        assert (await login(server.url, "127.0.0.8", "ada", "mistyped"))["code"] == "auth_failed"
    assert (await login(server.url, "127.0.0.8", "ada", "correct horse"))["code"] == "rate_limited"


@pytest.mark.slow
async def test_one_password_check_at_a_time_per_address(limited) -> None:
    server = await limited()
    replies = await asyncio.gather(*(login(server.url, "127.0.0.7", "ada", "wrong guess") for _ in range(6)))
    codes = sorted(r["code"] for r in replies)
    assert "rate_limited" in codes and "auth_failed" in codes


async def hello(url: str, **fields: Any) -> dict[str, Any]:
    async with ws_connect(url) as ws:
        await ws.send(json.dumps({"type": "hello", "version": 2, **fields}))
        return json.loads(await asyncio.wait_for(ws.recv(), 10))


@pytest.mark.slow
async def test_a_session_token_logs_in_again_without_a_password_check(limited) -> None:
    server = await limited()
    ada = await Client.connect(server.url, name="ada", password="correct horse")
    token = ada.welcome["resume"]
    await ada.close()
    server.logins.limits.hashing_queue = 0  # from now on every password check is refused
    with pytest.raises(ServerError) as refused:
        await Client.connect(server.url, name="ada", password="correct horse")
    assert refused.value.code == "rate_limited"
    welcome = await hello(server.url, name="ada", resume=token)
    assert welcome["type"] == "welcome" and welcome["you"] == {"name": "ada", "kind": "user", "agent": None}
    assert welcome["resume"]
    forged = token[:-1] + ("A" if token[-1] != "A" else "B")
    await server.store.create_user("bob", "battery staple")
    for name, bad in (("bob", token), ("ada", forged), ("ada", "1.99999999999.x")):
        reply = await hello(server.url, name=name, resume=bad)
        assert reply["code"] == "auth_failed", (name, bad)


@pytest.mark.slow
async def test_a_session_token_from_before_a_restart_falls_back_to_the_password(limited, db_url: str) -> None:
    server = await limited()
    ada = await Client.connect(server.url, name="ada", password="correct horse")
    token = ada.welcome["resume"]
    await ada.close()
    await server.stop()
    restarted = Server(ServerConfig(port=0, db_url=db_url))
    await restarted.start()
    try:
        assert (await hello(restarted.url, name="ada", resume=token))["code"] == "auth_failed"
        both = await hello(restarted.url, name="ada", resume=token, password="correct horse")
        assert both["type"] == "welcome"
    finally:
        await restarted.stop()
