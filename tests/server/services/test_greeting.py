"""`hello` (`server/services/greeting.py`) with a stand-in store and presence: who a connection
becomes (guest, person, bot), what each kind of credential is refused with, what a failure
counts against, and what a session token spares."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from partida.protocol import ErrorCode, ProtocolError
from partida.protocol import messages as m
from partida.server.limits import Limits
from partida.server.logins import Logins
from partida.server.services.greeting import Greeting
from partida.server.session import Session
from tests.fakes import sent, session

ANN = SimpleNamespace(id=1, name="Ann", kind="user")
DEEP = SimpleNamespace(id=2, name="deep", kind="bot")


class FakeStore:
    """The accounts: Ann's password is "secret", deep's bot token "t0ken"; counts password checks."""

    def __init__(self) -> None:
        self.password_checks = 0

    async def check_password(self, name: str, password: str) -> Any:
        self.password_checks += 1
        return ANN if name.lower() == "ann" and password == "secret" else None

    async def check_token(self, token: str) -> Any:
        return DEEP if token == "t0ken" else None

    async def get_account(self, account_id: int) -> Any:
        return {1: ANN, 2: DEEP}.get(account_id)

    async def reserved_name(self, name: str) -> str | None:
        return "Ann" if name.lower() == "ann" else None


class FakePresence:
    """Where accounts are connected, for one node: keeps who arrived."""

    def __init__(self) -> None:
        self.arrived_here: list[Session] = []
        self.node_urls: list[str] | None = None

    async def arrived(self, who: Session) -> None:
        self.arrived_here.append(who)


@pytest.fixture
def parts() -> SimpleNamespace:
    bots_back: list[Session] = []

    async def bot_arrived(who: Session) -> None:
        bots_back.append(who)

    store, presence, logins = FakeStore(), FakePresence(), Logins(Limits())
    greeting = Greeting(store, logins, presence, bot_arrived)  # type: ignore[arg-type]
    return SimpleNamespace(greeting=greeting, store=store, presence=presence, logins=logins, bots_back=bots_back)


async def refused(parts: SimpleNamespace, hello: m.Hello, who: Session | None = None) -> ProtocolError:
    with pytest.raises(ProtocolError) as error:
        await parts.greeting.on_hello(who or session(None), hello)
    return error.value


async def test_a_guest_is_welcomed_by_the_name_it_gave_or_one_made_for_it(parts: SimpleNamespace) -> None:
    guest = session(None)
    await parts.greeting.on_hello(guest, m.Hello(version=1, name="  zed  ", id=5))
    welcome = sent(guest)[-1]
    assert welcome["type"] == "welcome" and welcome["id"] == 5 and welcome["version"] == 1
    assert welcome["you"] == {"name": "zed", "kind": "guest", "agent": None}
    assert "resume" not in welcome and "nodes" not in welcome
    assert guest.version == 1 and parts.presence.arrived_here == []  # a guest is nobody to find
    nameless = session(None)
    await parts.greeting.on_hello(nameless, m.Hello(version=2))
    assert nameless.name == f"guest-{nameless.id}"


async def test_a_connection_says_hello_once_in_a_version_the_server_speaks(parts: SimpleNamespace) -> None:
    error = await refused(parts, m.Hello(version=2), session("ann"))
    assert error.code == ErrorCode.ALREADY_GREETED
    error = await refused(parts, m.Hello(version=99))
    assert error.code == ErrorCode.UNSUPPORTED_VERSION and error.close


async def test_a_guest_may_not_take_an_accounts_name_or_a_pool_bots(parts: SimpleNamespace) -> None:
    for name in ("ANN", "pool-random"):
        error = await refused(parts, m.Hello(version=2, name=name))
        assert error.code == ErrorCode.NAME_RESERVED, name
    error = await refused(parts, m.Hello(version=2, name="bad\x00name"))
    assert error.code == ErrorCode.BAD_FIELD


async def test_only_a_bot_token_may_declare_an_agent_or_games(parts: SimpleNamespace) -> None:
    for hello in (
        m.Hello(version=2, agent="mcts"),
        m.Hello(version=2, games=["tictactoe"]),
        m.Hello(version=2, clock_max=5.0),
    ):
        assert (await refused(parts, hello)).code == ErrorCode.NOT_A_BOT


async def test_a_bot_token_logs_in_its_account_exempt_from_rate_limits(parts: SimpleNamespace) -> None:
    bot = session(None, limited=True)
    await parts.greeting.on_hello(bot, m.Hello(version=2, token="t0ken", games=["tictactoe"], clock_min=1.0))
    assert bot.identity is not None and (bot.identity.kind, bot.identity.name, bot.identity.agent) == (
        "bot",
        "deep",
        "deep",
    )
    assert bot.identity.games == ["tictactoe"] and bot.limits is not None and bot.limits.exempt
    assert parts.presence.arrived_here == [bot] and parts.bots_back == [bot]

    wrong = session(None, address="198.51.100.9")
    error = await refused(parts, m.Hello(version=2, token="guess"), wrong)
    assert error.code == ErrorCode.AUTH_FAILED and error.close
    assert parts.logins.has_failures("198.51.100.9")  # counted against its address


async def test_a_bots_declaration_that_offers_it_nowhere_is_refused(parts: SimpleNamespace) -> None:
    for hello in (
        m.Hello(version=2, token="t0ken", clock_min=10.0, clock_max=5.0),
        m.Hello(version=2, token="t0ken", games={"tictactoe": [0]}),
        m.Hello(version=2, token="t0ken", max_games=0),
        m.Hello(version=2, token="t0ken", clock_max=-1.0),
        m.Hello(version=2, token="t0ken", agent="has space\n"),
    ):
        assert (await refused(parts, hello)).code == ErrorCode.BAD_FIELD


async def test_a_person_logs_in_by_password_and_again_by_the_session_token_it_was_given(parts: SimpleNamespace) -> None:
    ann = session(None)
    await parts.greeting.on_hello(ann, m.Hello(version=2, name="ann", password="secret"))
    welcome = sent(ann)[-1]
    assert welcome["you"] == {"name": "Ann", "kind": "user", "agent": None} and parts.presence.arrived_here == [ann]
    again = session(None)
    await parts.greeting.on_hello(again, m.Hello(version=2, name="ANN", resume=welcome["resume"]))
    assert again.identity is not None and again.identity.account_id == 1
    assert parts.store.password_checks == 1  # the token spared the second check

    # A token is good only for the account it was given to; a password still works beside it.
    error = await refused(parts, m.Hello(version=2, name="deep", resume=welcome["resume"]))
    assert error.code == ErrorCode.AUTH_FAILED and "session has ended" in error.message
    stale = session(None)
    await parts.greeting.on_hello(stale, m.Hello(version=2, name="ann", password="secret", resume="1.2.bad"))
    assert stale.identity is not None and stale.identity.kind == "user"


async def test_a_wrong_password_is_refused_and_counted(parts: SimpleNamespace) -> None:
    error = await refused(
        parts, m.Hello(version=2, name="ann", password="guess"), session(None, address="198.51.100.9")
    )
    assert error.code == ErrorCode.AUTH_FAILED and error.close
    assert parts.logins.has_failures("198.51.100.9")
    error = await refused(parts, m.Hello(version=2, password="secret"))
    assert error.code == ErrorCode.AUTH_FAILED and "needs an account name" in error.message


async def test_ping_is_answered_by_pong(parts: SimpleNamespace) -> None:
    who = session("ann")
    await parts.greeting.on_ping(who, m.Ping(id="p"))
    assert sent(who) == [{"type": "pong", "id": "p"}]
