"""The limiter's rules (`server/limits.py`) without sockets: what one connection and one address
may cost, which refusal closes, who is exempt, and what a refusal says about when to retry. A
bucket's time is moved by hand by moving back its last refill (`stamp`)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from websockets.datastructures import Headers
from websockets.http11 import Request

from partida.protocol import ErrorCode, ProtocolError
from partida.server import limits, web
from partida.server.limits import Limiter, Limits, TokenBucket
from tests.fakes import FakeClock

HOME, OTHER = "192.0.2.1", "198.51.100.1"


def later(bucket: TokenBucket, seconds: float) -> None:
    """As if `seconds` passed since the bucket was last refilled."""
    bucket.stamp -= seconds


def refusal(call, *args) -> ProtocolError:  # type: ignore[no-untyped-def]
    with pytest.raises(ProtocolError) as refused:
        call(*args)
    assert refused.value.code == ErrorCode.RATE_LIMITED
    return refused.value


def test_a_bucket_refills_at_its_rate_up_to_its_burst_and_a_debt_past_a_burst_is_exhaustion() -> None:
    bucket = TokenBucket(rate=2, burst=3)
    assert all(bucket.take() for _ in range(3))
    assert bucket.wait() == pytest.approx(0.5, abs=0.01)
    later(bucket, 0.5)
    assert bucket.take()  # one token back after half a second
    assert not bucket.take()
    assert bucket.wait() == pytest.approx(1.0, abs=0.01)  # a refused take went into debt
    later(bucket, 100)
    assert bucket.full() and bucket.tokens == 3
    for _ in range(7):
        bucket.take()
    assert bucket.exhausted and bucket.tokens == -3  # the debt stops at one burst


def test_an_address_holds_a_bounded_number_of_connections_and_a_closed_one_frees_its_place() -> None:
    limiter = Limiter(Limits(connections_per_address=2))
    first, second = limiter.admit(HOME), limiter.admit(HOME)
    assert first is not None and second is not None
    assert limiter.admit(HOME) is None
    assert limiter.admit(OTHER) is not None
    limiter.release(first)
    assert limiter.admit(HOME) is not None


def test_requests_past_the_rate_are_refused_with_a_wait_and_close_once_ignored_for_a_whole_burst() -> None:
    limiter = Limiter(Limits(requests_per_second=10, request_burst=5))
    conn = limiter.admit(HOME)
    assert conn is not None
    for _ in range(5):
        limiter.request(conn)
    refused = refusal(limiter.request, conn)
    assert not refused.close and refused.details is not None and 0 < refused.details["retry_after"] <= 0.21
    refusals = []
    for _ in range(10):  # a whole burst of refusals ignored
        with pytest.raises(ProtocolError) as refused_again:
            limiter.request(conn)
        refusals.append(refused_again.value.close)
    assert refusals[-1] and not refusals[0]
    later(conn.requests, 10)
    limiter.request(conn)  # paid off: let through again


def test_an_addresss_connections_share_its_own_rate_and_a_bot_account_is_exempt() -> None:
    limiter = Limiter(Limits(request_burst=100, address_request_burst=6, address_requests_per_second=0))
    one, two = limiter.admit(HOME), limiter.admit(HOME)
    assert one is not None and two is not None
    for _ in range(3):
        limiter.request(one)
        limiter.request(two)
    refusal(limiter.request, one)
    bot = limiter.admit(HOME)
    assert bot is not None
    bot.exempt = True
    for _ in range(50):
        limiter.request(bot)
    limiter.charge(bot, 1000)
    assert bot.requests.tokens == bot.requests.burst


def test_a_large_frame_costs_a_request_per_kib() -> None:
    limiter = Limiter(Limits(requests_per_second=0, request_burst=100))
    conn = limiter.admit(HOME)
    assert conn is not None
    limiter.received(conn, 1024)  # one request's worth: nothing more
    assert conn.requests.tokens == 100
    limiter.received(conn, 10 * 1024)
    assert conn.requests.tokens == 91


def test_guessing_room_codes_is_refused_once_too_many_named_rooms_did_not_exist() -> None:
    limiter = Limiter(Limits(guess_burst=3, guesses_per_second=1))
    conn = limiter.admit(HOME)
    assert conn is not None
    for _ in range(3):
        limiter.may_guess(conn)
        limiter.guessed(conn)
    refused = refusal(limiter.may_guess, conn)
    assert refused.details == {"retry_after": 1.0}
    later(conn.guesses, 1)
    limiter.may_guess(conn)


def test_rooms_bots_and_watching_are_bounded_per_address_and_exemptions_hold() -> None:
    limiter = Limiter(
        Limits(
            waiting_rooms_per_address=2,
            rooms_created_burst=3,
            rooms_created_per_second=0,
            public_rooms_per_address=1,
            bot_games_per_address=1,
            games_per_bot_per_address=1,
            rooms_watched=2,
        )
    )
    conn = limiter.admit(HOME)
    assert conn is not None
    refusal(limiter.may_create_room, conn, 2)
    for _ in range(3):
        limiter.may_create_room(conn, 0)
    assert "wait a moment" in refusal(limiter.may_create_room, conn, 0).message
    for check in (limiter.may_open_public_room, limiter.may_play_bots):
        check(conn, 0)
        refusal(check, conn, 1)
    limiter.may_take_bot(conn, "deep", 0)
    assert "deep" in refusal(limiter.may_take_bot, conn, "deep", 1).message
    limiter.may_watch(1)
    refusal(limiter.may_watch, 2)
    conn.exempt = True
    limiter.may_open_public_room(conn, 50)
    limiter.may_play_bots(conn, 50)
    limiter.may_take_bot(conn, "deep", 50)


def test_connections_opened_and_files_fetched_are_refused_with_the_wait_and_a_refused_fetch_costs_nothing() -> None:
    limiter = Limiter(Limits(connections_per_second=1, connection_burst=2, connections_per_address=2))
    assert limiter.may_open(HOME) == 0 and limiter.may_open(HOME) == 0
    assert limiter.may_open(HOME) == pytest.approx(2.0, abs=0.01)  # a refused handshake is a debt
    limiter = Limiter(Limits(http_pages_per_second=1, http_page_burst=1))
    assert limiter.may_fetch(HOME, 0.75) == 0
    assert limiter.may_fetch(HOME, 0.75) == pytest.approx(0.5, abs=0.01)
    assert limiter.may_fetch(HOME, 0.25) == 0  # the refusal took nothing


def test_settings_by_name_are_checked() -> None:
    changed = Limits().with_settings(["idle-timeout=5", "rooms_watched=3"])
    assert (changed.idle_timeout, changed.rooms_watched) == (5.0, 3)
    for wrong in (["nope=1"], ["rooms_watched=x"], ["rooms_watched=-1"], ["rooms_watched"]):
        with pytest.raises(ValueError):
            Limits().with_settings(wrong)


def test_a_crowd_behind_one_address_gets_every_file_of_every_page_and_thirty_more_pages_ten_seconds_later(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """30 people behind one address (a class, an office's NAT) load the page at once, and 30
    more 10 s later: under the default limits every file of every page is served. (The server
    test serves the first crowd over HTTP; here the limiter's clock moves by hand.)"""
    clock = FakeClock()
    monkeypatch.setattr(limits, "time", SimpleNamespace(monotonic=clock))
    limiter = Limiter(Limits())
    paths = ["/", *(path for path in web.FILES if path != "/index.html")]  # what a browser fetches

    def page_load() -> list[float]:
        return [limiter.may_fetch("127.0.0.5", web.cost(web.respond(Request(p, Headers())))) for p in paths]

    first = [page_load() for _ in range(30)]
    clock.advance(10)
    second = [page_load() for _ in range(30)]
    assert all(wait == 0 for load in first + second for wait in load)
    # The limit is there all the same: 60 pages of burst and 10 s at a page a second, 60 spent.
    assert limiter.may_fetch("127.0.0.5", 9.9) == 0
    assert limiter.may_fetch("127.0.0.5", 1.0) > 0
