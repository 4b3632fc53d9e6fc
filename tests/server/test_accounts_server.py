"""People's accounts over the protocol, on a real server: sign-up (a `hello` with `sign_up`) in each
of the operator's modes, its refusals (look-alike names, weak passwords, hostile names, used-up
invites, the pace per address), a new password, and logging out, each ending the session tokens
given before. Every refusal leaves the connection open for another hello and changes nothing."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from partida.client import Client
from partida.server.app import Server, ServerConfig
from partida.server.limits import Limits
from partida.storage.invites import InviteStore
from tests.helpers import Raw

PASSWORD = "a long enough password"


@pytest.fixture
async def serve(db_url: str) -> AsyncIterator[Callable[..., Awaitable[Server]]]:
    """Start a server with a sign-up mode and limits of the test's choice."""
    servers: list[Server] = []

    async def start(sign_up: str = "open", **limits: Any) -> Server:
        server = Server(ServerConfig(port=0, db_url=db_url, sign_up=sign_up, limits=Limits(**limits)))
        await server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        with contextlib.suppress(Exception):
            await server.stop()


@contextlib.asynccontextmanager
async def raw(server: Server) -> AsyncIterator[Raw]:
    async with ws_connect(server.url) as ws:
        yield Raw(ws)


async def hello(conn: Raw, **fields: Any) -> dict[str, Any]:
    return await conn.request("hello", version=2, **fields)


async def test_a_person_signs_up_and_is_logged_in_at_once(serve: Callable[..., Awaitable[Server]]) -> None:
    server = await serve()
    async with raw(server) as conn:
        welcome = await hello(conn, name="ada", password=PASSWORD, sign_up=True)
        assert welcome["type"] == "welcome", welcome
        assert welcome["you"] == {"name": "ada", "kind": "user", "agent": None}
        assert welcome["resume"] and welcome["sign_up"] == "open"
        assert (await conn.request("ratings"))["name"] == "ada"  # an account's request, answered
    account = await server.store.get_account_by_name("ada")
    assert account is not None and account.kind == "user"
    # The new account logs in with its password, and by its session token.
    async with raw(server) as conn:
        assert (await hello(conn, name="ada", password=PASSWORD))["you"]["kind"] == "user"
    async with raw(server) as conn:
        assert (await hello(conn, name="ada", resume=welcome["resume"]))["you"]["kind"] == "user"


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("ada", "name_taken"),  # the same name
        ("ADA", "name_taken"),  # another case
        ("\u0430da", "name_taken"),  # a Cyrillic a
        ("ａｄａ", "name_taken"),  # full-width
        ("pool-x", "name_taken"),  # the built-in bots' prefix
        ("p\u043e\u043el-x", "name_taken"),  # the prefix in Cyrillic o's
        ("\uff50ool-x", "name_taken"),  # with a full-width p
        ("\x1b[31mred", "bad_field"),  # a terminal escape
        ("abc\u202edcba", "bad_field"),  # a bidi override
        ("a\u200bb", "bad_field"),  # a zero-width space
        ("line\nbreak", "bad_field"),
        (" ada", "bad_field"),
        ("x" * 33, "bad_field"),
        ("", "bad_field"),
    ],
)
async def test_a_sign_up_is_refused_a_name_that_is_taken_looks_taken_or_is_not_printable(
    serve: Callable[..., Awaitable[Server]], name: str, code: str
) -> None:
    server = await serve()
    await server.store.create_user("ada", PASSWORD)
    async with raw(server) as conn:
        refused = await hello(conn, name=name, password=PASSWORD, sign_up=True)
        assert (refused["type"], refused["code"]) == ("error", code), refused
        # The connection stays open for another hello, and nothing was made.
        assert (await hello(conn, name="bo", password=PASSWORD, sign_up=True))["you"]["name"] == "bo"
    async with server.db.session() as session:
        from sqlalchemy import func, select

        from partida.storage.models import Account

        assert await session.scalar(select(func.count()).select_from(Account)) == 2


async def test_a_sign_up_is_refused_a_short_or_huge_password_a_missing_one_and_a_stray_invite(
    serve: Callable[..., Awaitable[Server]],
) -> None:
    server = await serve()
    async with raw(server) as conn:
        assert (await hello(conn, name="ada", password="short", sign_up=True))["code"] == "bad_password"
        assert (await hello(conn, name="ada", password="x" * 257, sign_up=True))["code"] == "bad_password"
        assert (await hello(conn, name="ada", sign_up=True))["code"] == "bad_field"
        assert (await hello(conn, password=PASSWORD, sign_up=True))["code"] == "bad_field"
        assert (await hello(conn, name="ada", password=PASSWORD, invite="abc"))["code"] == "bad_field"
        assert (await hello(conn, name="ada", password=PASSWORD, sign_up="yes"))["code"] == "bad_field"
    assert await server.store.get_account_by_name("ada") is None


async def test_sign_up_closed_refuses_and_says_so_in_every_welcome(serve: Callable[..., Awaitable[Server]]) -> None:
    server = await serve("closed")
    async with raw(server) as conn:
        refused = await hello(conn, name="ada", password=PASSWORD, sign_up=True)
        assert refused["code"] == "sign_up_closed"
        assert (await hello(conn, name="guest"))["sign_up"] == "closed"
    assert await server.store.get_account_by_name("ada") is None


async def test_an_invite_only_server_takes_a_code_for_as_many_sign_ups_as_it_was_made_for(
    serve: Callable[..., Awaitable[Server]],
) -> None:
    server = await serve("invite")
    assert server.db is not None
    code = await InviteStore(server.db).create(uses=2)
    async with raw(server) as conn:
        assert (await hello(conn, name="guest"))["sign_up"] == "invite"
    async with raw(server) as conn:
        assert (await hello(conn, name="ada", password=PASSWORD, sign_up=True))["code"] == "bad_invite"
        assert (await hello(conn, name="ada", password=PASSWORD, sign_up=True, invite="guess"))["code"] == "bad_invite"
        huge = await hello(conn, name="ada", password=PASSWORD, sign_up=True, invite="x" * 5000)
        assert huge["code"] == "bad_invite"
        assert (await hello(conn, name="ada", password=PASSWORD, sign_up=True, invite=code))["you"]["kind"] == "user"
    # A name taken does not spend the code: it is still good for one more.
    async with raw(server) as conn:
        assert (await hello(conn, name="Ada", password=PASSWORD, sign_up=True, invite=code))["code"] == "name_taken"
        assert (await hello(conn, name="bo", password=PASSWORD, sign_up=True, invite=code))["you"]["name"] == "bo"
    async with raw(server) as conn:
        assert (await hello(conn, name="cy", password=PASSWORD, sign_up=True, invite=code))["code"] == "bad_invite"


async def test_wrong_invite_codes_are_paced_as_failed_logins(serve: Callable[..., Awaitable[Server]]) -> None:
    """A guesser of codes meets the login back-off: past the address's allowance, `rate_limited`
    with the wait, before any code is looked at."""
    server = await serve("invite", login_failures_per_address=1)
    assert server.db is not None
    code = await InviteStore(server.db).create()
    for _ in range(2):  # the allowance, then one past it: a back-off
        async with raw(server) as conn:
            guessed = await hello(conn, name="ada", password=PASSWORD, sign_up=True, invite="guess")
            assert guessed["code"] == "bad_invite", guessed
    async with raw(server) as conn:
        refused = await hello(conn, name="ada", password=PASSWORD, sign_up=True, invite=code)
        assert refused["code"] == "rate_limited" and "retry_after" in refused, refused
    assert await server.store.get_account_by_name("ada") is None


async def test_an_address_makes_a_few_accounts_then_is_told_how_long_to_wait(
    serve: Callable[..., Awaitable[Server]],
) -> None:
    server = await serve(sign_up_burst=2, sign_ups_per_hour=1)
    for name in ("ada", "bo"):
        async with raw(server) as conn:
            assert (await hello(conn, name=name, password=PASSWORD, sign_up=True))["you"]["name"] == name
    async with raw(server) as conn:
        refused = await hello(conn, name="cy", password=PASSWORD, sign_up=True)
        assert refused["code"] == "rate_limited" and refused["retry_after"] > 60, refused
        # Refused sign-ups count nothing: a name already taken never reaches the count.
        assert (await hello(conn, name="ADA", password=PASSWORD, sign_up=True))["code"] == "name_taken"
        assert (await hello(conn, name="cy"))["you"]["kind"] == "guest"  # playing as a guest is still open
    assert await server.store.get_account_by_name("cy") is None


async def test_a_new_password_needs_the_old_one_and_ends_the_sessions_given_before(server: Server) -> None:
    await server.store.create_user("ada", PASSWORD)
    async with raw(server) as other_computer:
        old_resume = (await hello(other_computer, name="ada", password=PASSWORD))["resume"]
    async with raw(server) as left_open, raw(server) as conn:
        await hello(left_open, name="ada", password=PASSWORD)
        await hello(conn, name="ada", password=PASSWORD)
        wrong = await conn.request("change_password", old="not it at all", new="the new password")
        assert wrong["code"] == "auth_failed"
        assert (await conn.request("change_password", old=PASSWORD, new="short"))["code"] == "bad_password"
        assert (await conn.request("change_password", old=PASSWORD))["code"] == "bad_field"
        assert (await conn.request("change_password", old=PASSWORD, new=7))["code"] == "bad_field"
        changed = await conn.request("change_password", old=PASSWORD, new="the new password")
        assert changed["type"] == "password_changed" and changed["resume"]
        with pytest.raises(ConnectionClosed):  # the other computer's connection ends with its sessions
            await left_open.next()
        assert (await conn.request("ping"))["type"] == "pong"  # the asker's own goes on
    async with raw(server) as conn:
        assert (await hello(conn, name="ada", resume=old_resume))["code"] == "auth_failed"
    async with raw(server) as conn:
        assert (await hello(conn, name="ada", password=PASSWORD))["code"] == "auth_failed"
    async with raw(server) as conn:
        assert (await hello(conn, name="ada", resume=changed["resume"]))["you"]["kind"] == "user"
    ada = await Client.connect(server.url, name="ada", password="the new password")
    await ada.close()


async def test_a_guest_and_a_bot_have_no_password_to_change(server: Server) -> None:
    async with raw(server) as conn:
        await hello(conn, name="guest")
        assert (await conn.request("change_password", old=PASSWORD, new="the new password"))["code"] == "accounts_only"


async def test_logging_out_ends_the_connection_and_every_session_token(server: Server) -> None:
    await server.store.create_user("ada", PASSWORD)
    async with raw(server) as left_open, raw(server) as conn:  # a tab left open on another computer
        await hello(left_open, name="ada", password=PASSWORD)
        resume = (await hello(conn, name="ada", password=PASSWORD))["resume"]
        assert (await conn.request("log_out"))["type"] == "logged_out"
        with pytest.raises(ConnectionClosed):
            await conn.next()
        with pytest.raises(ConnectionClosed):  # logged out too, not only at its next reload
            await left_open.next()
    async with raw(server) as conn:
        assert (await hello(conn, name="ada", resume=resume))["code"] == "auth_failed"
    async with raw(server) as conn:  # the password still lets her in, with a new token
        assert (await hello(conn, name="ada", password=PASSWORD, resume=resume))["you"]["kind"] == "user"


async def test_an_invitation_tells_the_game_its_host_and_the_seats_free_without_seating(server: Server) -> None:
    ada = await Client.connect(server.url, name="ada")
    created = await ada.create_room("othello", seat=0, public=False, clock={"initial": 180, "increment": 2})
    code = created["room"]
    async with raw(server) as conn:
        await hello(conn, name="bo")
        invitation = await conn.request("invitation", room=code.lower())
        assert invitation["type"] == "invitation", invitation
        assert invitation["host"] == {"name": "ada", "kind": "guest"}
        assert invitation["free"] == [1] and invitation["summary"]["game"] == "othello"
        assert invitation["summary"]["spectators"] == 0 and invitation["summary"]["seats"][1]["name"] is None
        assert (await conn.request("invitation", room="NOSUCH"))["code"] == "no_such_room"
    assert server.rooms[code].core.seats[1] is None and not server.rooms[code].spectators
    await ada.close()


async def test_a_rated_challenge_opens_a_rated_room_and_a_guests_or_clockless_one_is_refused(server: Server) -> None:
    for name in ("ada", "bo"):
        await server.store.create_user(name, PASSWORD)
    ada = await Client.connect(server.url, name="ada", password=PASSWORD)
    bo = await Client.connect(server.url, name="bo", password=PASSWORD)
    guest = await Client.connect(server.url, name="cy")
    async with raw(server) as conn:
        await hello(conn, name="dee")
        refused = await conn.request("challenge", to="bo", game="othello", clock={"initial": 60}, rated=True)
        assert refused["code"] == "rated_needs_account"
        assert (await conn.request("ping"))["type"] == "pong"  # the connection is still usable
    async with raw(server) as conn:
        await hello(conn, name="ada", password=PASSWORD)
        assert (await conn.request("challenge", to="bo", game="othello", rated=True))["code"] == "rated_needs_clock"
        sent = await conn.request("challenge", to="bo", game="othello", clock={"initial": 60}, rated=True)
        assert sent["challenge"]["rated"] is True
        told = await asyncio.wait_for(bo.challenges.get(), 5)
        assert told["challenge"]["rated"] is True and told["challenge"]["from"]["name"] == "ada"
        accepted = await bo.accept(told["challenge"]["id"])
        assert accepted["summary"]["rated"] is True
    sent = await ada.challenge("bo", "tictactoe", clock={"initial": 60}, rated=True)  # the SDK's way
    assert sent["rated"] is True
    for client in (ada, bo, guest):
        await client.close()
