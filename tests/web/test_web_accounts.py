"""People's accounts, challenges, invite links and public tournament games in a real browser:
Playwright drives Debian's Chromium against a real server on a loopback port, one browser context
per person. Every page must log no console error, and names render as text, never as HTML."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from partida.client import Client
from partida.server.app import Server, ServerConfig
from tests.helpers import random_decider

playwright_api = pytest.importorskip("playwright.async_api")

STEP = 15_000  # ms: the longest any single step (a click and the server's answer) may take
PASSWORD = "correct horse battery"
BLITZ = {"initial": 180, "increment": 2}
# Names a browser must show as text: markup that would run or draw if it were parsed as HTML.
XSS_NAMES = ["<img src=x onerror=alert(1)>", "<script>alert(1)</script>", '"><svg onload=alert(1)>']
PARSED = "() => document.querySelectorAll('img[src=\"x\"], svg[onload], script:not([src])').length"


@pytest.fixture
async def serve(db_url: str) -> AsyncIterator[Callable[..., Awaitable[Server]]]:
    """A server with the sign-up mode the test asks for."""
    servers: list[Server] = []

    async def start(sign_up: str) -> Server:
        server = Server(ServerConfig(host="127.0.0.1", port=0, db_url=db_url, sign_up=sign_up))
        await server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        with contextlib.suppress(Exception):
            await server.stop()


class Person:
    """One browser context (its own storage: another person) with one page, recording console
    errors, uncaught exceptions and any dialog a script opened."""

    def __init__(self, context: Any, page: Any) -> None:
        self.context, self.page = context, page
        self.errors: list[str] = []
        page.on("console", lambda msg: self.errors.append(msg.text) if msg.type == "error" else None)
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        page.on("dialog", lambda dialog: self.errors.append(f"dialog: {dialog.message}"))
        page.set_default_timeout(STEP)

    @classmethod
    async def new(cls, browser: Any, url: str, **context_args: Any) -> Person:
        context = await browser.new_context(**context_args)
        person = cls(context, await context.new_page())
        await person.page.goto(url)
        return person

    @classmethod
    async def entered(cls, browser: Any, url: str, name: str, password: str = "", **context_args: Any) -> Person:
        person = await cls.new(browser, url, **context_args)
        await person.page.fill("#name", name)
        if password:
            await person.page.fill("#password", password)
        await person.page.click("#enter")
        await person.page.wait_for_selector("#create-room, #board, #waiting, #watching")
        return person

    async def you(self) -> str:
        return await self.page.locator("#you").inner_text()


async def rated_game(server: Server, winner: str, loser: str, n: int = 0) -> int:
    """A rated tic-tac-toe game between two accounts, stored and rated as the server would."""
    ids = {}
    for name in (winner, loser):
        account = await server.store.get_account_by_name(name)
        assert account is not None
        ids[name] = account.id
    store = server.store
    game_id = await store.create_game("tictactoe", {}, n, "hash", 2, f"RATED{n}", True, clock=BLITZ, rated=True)
    await store.start_game(game_id, [(0, ids[winner], winner), (1, ids[loser], loser)])
    await store.finish_game(game_id, {"scores": [1, 0], "ranks": [1, 2], "winners": [0]})
    assert await store.rate_game(game_id)
    return game_id


async def test_sign_up_log_out_log_in_change_password_and_the_account_page(server: Server, browser: Any) -> None:
    """A newcomer signs up from the entry page and is logged in at once, stays logged in over a
    reload, reads their ratings, games (each with its replay) and the way to their bots on the
    account page, changes their password there, logs out, and logs in with the new password only."""
    ada = await Person.new(browser, server.http_url)
    page = ada.page
    await page.wait_for_selector("#signup-form[data-mode='open']")
    await page.fill("#signup-name", "ada")
    await page.fill("#signup-password", PASSWORD)
    await page.fill("#signup-password2", "not the same")
    await page.click("#signup")
    assert "differ" in await page.locator("#signup-error").inner_text()  # checked before anything is sent
    assert await server.store.get_account_by_name("ada") is None
    await page.fill("#signup-password2", PASSWORD)
    await page.click("#signup")
    await page.wait_for_selector("#create-room")
    assert await ada.you() == "ada (user)"
    assert await page.locator("#logout").inner_text() == "log out"
    assert (await server.store.get_account_by_name("ada")) is not None
    # A reload keeps her logged in (the session token), with no password kept in the page.
    await page.reload()
    await page.wait_for_selector("#create-room")
    assert await ada.you() == "ada (user)"

    await server.store.create_user("bo", "bo's long password")
    game_id = await rated_game(server, "ada", "bo")
    await page.click("#account-link")
    await page.wait_for_selector("#account-ratings table")
    assert page.url.endswith("/#/account")
    row = page.locator("#account-ratings tr[data-game='tictactoe']")
    assert "blitz" in await row.inner_text()
    await page.wait_for_selector(f"#account-games li[data-game-id='{game_id}']")
    assert "ada vs bo" in await page.locator(f"#account-games li[data-game-id='{game_id}']").inner_text()
    assert await page.locator("#account-bots-link").get_attribute("href") == "/#/bots"
    await page.click(f"#account-games li[data-game-id='{game_id}'] .replay-link")
    await page.wait_for_selector("#replay-board")
    await page.go_back()
    await page.wait_for_selector("#password-form")

    await page.fill("#old-password", "a wrong password")
    await page.fill("#new-password", "a brand new password")
    await page.fill("#new-password2", "a brand new password")
    await page.click("#change-password")
    await page.wait_for_selector("#password-status.error")
    assert "old password is wrong" in await page.locator("#password-status").inner_text()
    await page.fill("#old-password", PASSWORD)
    await page.fill("#new-password", "a brand new password")
    await page.fill("#new-password2", "a brand new password")
    await page.click("#change-password")
    await page.wait_for_selector("#password-status.ok")

    await page.click("#logout")
    await page.wait_for_selector("#enter")
    assert await page.locator("#you").inner_text() == ""
    await page.reload()  # logged out: no session comes back, and no guest of her name
    await page.wait_for_selector("#signup-form")
    assert await page.locator("form.login .error:not([hidden])").count() == 0
    await page.fill("#name", "ada")
    await page.fill("#password", PASSWORD)
    await page.click("#enter")
    await page.wait_for_selector("form.login:not(#signup-form) .error:has-text('wrong account name or password')")
    await page.fill("#password", "a brand new password")
    await page.click("#enter")
    await page.wait_for_selector("#create-room")
    assert await ada.you() == "ada (user)"
    assert ada.errors == [], ada.errors


async def test_sign_up_closed_and_invite_only(serve: Callable[..., Awaitable[Server]], browser: Any) -> None:
    """A closed server says so where the form would be; an invite-only one asks for the code and
    takes one the operator made, once."""
    closed = await serve("closed")
    visitor = await Person.new(browser, closed.http_url)
    await visitor.page.wait_for_selector("#signup-closed")
    assert await visitor.page.locator("#signup").count() == 0
    assert "takes no sign-ups" in await visitor.page.locator("#signup-closed").inner_text()
    assert visitor.errors == [], visitor.errors
    await visitor.context.close()
    await closed.stop()

    from partida.storage.invites import InviteStore

    invite = await serve("invite")
    assert invite.db is not None
    code = await InviteStore(invite.db).create()
    ada = await Person.new(browser, invite.http_url)
    page = ada.page
    await page.wait_for_selector("#signup-form[data-mode='invite'] #signup-invite")
    for field, value in (("#signup-name", "ada"), ("#signup-password", PASSWORD), ("#signup-password2", PASSWORD)):
        await page.fill(field, value)
    await page.click("#signup")
    await page.wait_for_selector("#signup-error:not([hidden])")
    assert "needs an invite code" in await page.locator("#signup-error").inner_text()
    for field, value in (("#signup-password", PASSWORD), ("#signup-password2", PASSWORD), ("#signup-invite", code)):
        await page.fill(field, value)
    await page.click("#signup")
    await page.wait_for_selector("#create-room")
    assert await ada.you() == "ada (user)"
    bo = await Person.new(browser, invite.http_url)  # the code was for one sign-up
    for field, value in (("#signup-name", "bo"), ("#signup-password", PASSWORD), ("#signup-password2", PASSWORD)):
        await bo.page.fill(field, value)
    await bo.page.fill("#signup-invite", code)
    await bo.page.click("#signup")
    await bo.page.wait_for_selector("#signup-error:not([hidden])")
    assert "used up" in await bo.page.locator("#signup-error").inner_text()
    assert await invite.store.get_account_by_name("bo") is None
    assert ada.errors == [] and bo.errors == [], (ada.errors, bo.errors)


async def test_dead_ends_for_guests_lead_to_sign_up(server: Server, browser: Any) -> None:
    """The Tournaments card, a tournament's page and the rated check boxes (a new room's, a
    seek's) offer a guest the sign-up form."""
    guest = await Person.entered(browser, server.http_url, "gus")
    page = guest.page
    await page.click("#tournament-sign-up")
    await page.wait_for_selector("#signup-form")
    await page.fill("#name", "gus")
    await page.click("#enter")
    await page.wait_for_selector("#rated-sign-up")
    await page.click("#rated-sign-up")
    await page.wait_for_selector("#signup-name")
    await page.fill("#name", "gus")
    await page.click("#enter")
    await page.click("#seek-sign-up")  # the seeks' "rated (accounts only)"
    await page.wait_for_selector("#signup-name")
    await server.store.create_user("org", PASSWORD)
    org = await Client.connect(server.url, name="org", password=PASSWORD)
    await org.tournament_create("cup", "tictactoe", "swiss", {"initial": 60.0}, starts_in=3600)
    await page.fill("#name", "gus")
    await page.click("#enter")
    await page.wait_for_selector("#create-room")
    await page.goto(f"{server.http_url}#/tournament/cup")
    await page.click("#tournament-page-sign-up")  # a tournament's own page
    await page.wait_for_selector("#signup-name")
    await org.close()
    assert guest.errors == [], guest.errors


async def open_player(person: Person, name: str) -> None:
    await person.page.fill("#player-name", name)
    await person.page.click("#player-go")
    await person.page.wait_for_selector("#challenge-form")


async def test_a_challenge_from_a_players_page_declined_expired_then_accepted_and_from_a_finished_games_names(
    server: Server, browser: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ada challenges Bo from his page: Bo, on the lobby, is told by a notice and declines, and both
    read so; a challenge left unanswered lapses and Ada reads that; the next one Bo accepts, and
    both are seated in a rated room. At its end, Bo goes from a player's name to Ada's page and
    challenges her back."""
    monkeypatch.setattr("partida.server.challenges.CHALLENGE_TTL", 3.0)
    for name in ("ada", "bo"):
        await server.store.create_user(name, PASSWORD)
    ada = await Person.entered(browser, server.http_url, "ada", PASSWORD)
    bo = await Person.entered(browser, server.http_url, "bo", PASSWORD)
    await open_player(ada, "bo")
    await ada.page.select_option("#challenge-game", "tictactoe")
    await ada.page.select_option("#challenge-clock", "3+2")
    await ada.page.check("#challenge-rated")
    await ada.page.click("#challenge-send")
    notice = bo.page.locator(".notice[data-kind='challenge']")
    await notice.wait_for()
    assert await notice.locator("p").inner_text() == "ada challenges you: Tic-tac-toe, 3 min + 2 s, rated."
    await notice.locator(".decline-challenge").click()
    await bo.page.wait_for_selector(".notice:has-text('You declined ada')")
    await ada.page.wait_for_selector(".notice[data-kind='declined']:has-text('bo declined your challenge')")
    assert "bo declined" in await ada.page.locator("#challenge-status").inner_text()

    await ada.page.click("#challenge-send")  # unanswered: it lapses
    await bo.page.locator(".notice[data-kind='challenge']").wait_for()
    await ada.page.wait_for_selector(".notice:has-text('expired unanswered')", timeout=STEP + 5000)
    await bo.page.locator(".notice[data-kind='challenge'] .accept-challenge").click()  # too late
    await bo.page.wait_for_selector(".notice:has-text('no longer open')")

    await ada.page.click("#challenge-send")
    await bo.page.locator(".notice[data-kind='challenge'] .accept-challenge").click()
    for person in (ada, bo):
        await person.page.wait_for_selector("#board")
    await ada.page.wait_for_selector(".notice:has-text('bo accepted your challenge')")
    code = (await ada.page.locator("#room-code").inner_text()).strip()
    assert await bo.page.locator("#room-code").inner_text() == code
    assert server.rooms[code].rated
    assert [s and s.name for s in server.rooms[code].core.seats] == ["ada", "bo"]
    for person, square in ((ada, 0), (bo, 3), (ada, 1), (bo, 4), (ada, 2)):
        await person.page.wait_for_selector("#prompt")
        await person.page.click(f'[data-square="{square}"]')
        await person.page.wait_for_function(
            "sq => document.querySelector(`[data-square=\"${sq}\"]`)?.textContent.trim() !== ''", arg=square
        )
    await bo.page.wait_for_selector("#result #players")
    await bo.page.click("#players .player-link[data-player='ada']")
    await bo.page.wait_for_selector("#challenge-form")
    assert "ada" in await bo.page.locator("#player-extras h3").first.inner_text()
    await bo.page.click("#challenge-send")
    await ada.page.wait_for_selector(".notice[data-kind='challenge']:has-text('bo challenges you')")
    assert ada.errors == [] and bo.errors == [], (ada.errors, bo.errors)


async def test_a_stranger_watches_a_tournament_game_from_the_lobby_and_replays_it(server: Server, browser: Any) -> None:
    """Tournament games are public: a guest who entered nothing finds the game in the lobby's
    public rooms, watches it to the end, and replays it."""
    for name in ("org", "ada", "bo"):
        await server.store.create_user(name, PASSWORD)
    org = await Client.connect(server.url, name="org", password=PASSWORD)
    clock = {"initial": 120.0}
    await org.tournament_create("open-cup", "tictactoe", "round-robin", clock, entry="people", starts_in=3600)
    players = [await Client.connect(server.url, name=name, password=PASSWORD) for name in ("ada", "bo")]
    for player in players:
        await player.tournament_join("open-cup")
    server.tournament_director.now = lambda: time.time() + 3660  # the start is due
    server.tournament_director.wake()
    games = []
    for player in players:
        while (event := await asyncio.wait_for(player.tournament_events.get(), 30))["type"] != "tournament_game":
            pass
        games.append(event)
    code = games[0]["room"]
    stranger = await Person.entered(browser, server.http_url, "cy")
    page = stranger.page
    await page.locator(f"#rooms li[data-room='{code}'] button", has_text="Watch").click()
    await page.wait_for_selector("#watching")
    await asyncio.gather(*(p.play(code, random_decider(i)) for i, p in enumerate(players)))
    await page.wait_for_selector("#result")
    await page.click("#replay-this")
    await page.wait_for_selector("#replay-board")
    assert "/#/replay/" in page.url
    await page.reload()  # the replay's address, for anyone
    await page.wait_for_selector("#replay-log li")
    for client in (org, *players):
        await client.close()
    assert stranger.errors == [], stranger.errors


async def test_an_invite_link_shows_the_game_who_invites_and_the_seat_waiting(server: Server, browser: Any) -> None:
    ada = await Person.entered(browser, server.http_url, "ada")
    await ada.page.select_option("#game", "othello")
    await ada.page.select_option("#clock", "3+2")
    await ada.page.uncheck("#public")
    await ada.page.click("#create-room")
    await ada.page.wait_for_selector("#waiting")
    invite = await ada.page.locator("#invite").input_value()
    bo = await Person.new(browser, invite)
    card = bo.page.locator("#invitation")
    await card.wait_for()
    assert await card.locator("h2").inner_text() == "ada invites you to play Othello"
    assert "3 min + 2 s, casual, private" in await card.inner_text()
    assert await bo.page.locator("#invitation-seat").inner_text() == "Seat 2 (white) is waiting for you."
    assert not server.rooms[invite.rsplit("/", 1)[1]].spectators  # reading it made nobody a spectator
    await bo.page.fill("#name", "bo")
    await bo.page.click("#enter")
    for person in (ada, bo):
        await person.page.wait_for_selector("#board")
    assert await bo.page.locator("li.me").inner_text() != ""
    assert ada.errors == [] and bo.errors == [], (ada.errors, bo.errors)


@pytest.mark.parametrize("csp", [True, False], ids=["with-csp", "without-csp"])
async def test_account_names_made_of_markup_render_as_text_in_every_view(
    server: Server, browser: Any, csp: bool
) -> None:
    """Account names that are HTML render as the characters they are on the entry page's
    invitation, in the header, the account page, a player's page, a challenge's notice and a
    finished game's names, with the page's Content-Security-Policy and without it."""
    for name in XSS_NAMES:
        await server.store.create_user(name, PASSWORD)
    host, other = XSS_NAMES[0], XSS_NAMES[1]
    first = await Person.entered(browser, server.http_url, host, PASSWORD, bypass_csp=not csp)
    page = first.page
    assert await first.you() == f"{host} (user)"
    await page.select_option("#game", "tictactoe")
    await page.uncheck("#public")
    await page.click("#create-room")
    await page.wait_for_selector("#waiting")
    invite = await page.locator("#invite").input_value()
    second = await Person.new(browser, invite, bypass_csp=not csp)
    await second.page.locator("#invitation").wait_for()
    assert await second.page.locator("#invitation h2 .who").inner_text() == host
    await second.page.fill("#name", other)
    await second.page.fill("#password", PASSWORD)
    await second.page.click("#enter")
    await second.page.wait_for_selector("#board")
    for person, square in ((first, 0), (second, 3), (first, 1), (second, 4), (first, 2)):
        await person.page.wait_for_selector("#prompt")
        await person.page.click(f'[data-square="{square}"]')
        await person.page.wait_for_function(
            "sq => document.querySelector(`[data-square=\"${sq}\"]`)?.textContent.trim() !== ''", arg=square
        )
    await second.page.wait_for_selector("#players")
    assert await second.page.locator(".player-link").all_inner_texts() == [host, other]
    await second.page.locator(".player-link").first.click()
    await second.page.wait_for_selector("#challenge-form")
    assert await second.page.locator("#challenge-form h3 .who").inner_text() == host
    await second.page.click("#challenge-send")
    notice = page.locator(".notice[data-kind='challenge'] p")
    await notice.wait_for()
    assert (await notice.inner_text()).startswith(f"{other} challenges you")
    await page.click("#account-link")
    await page.wait_for_selector("#account-games li")
    assert await page.locator("#account h2 .who").inner_text() == host
    assert other in await page.locator("#account-games").inner_text()
    for person in (first, second):
        assert await person.page.evaluate(PARSED) == 0
        assert person.errors == [], person.errors
