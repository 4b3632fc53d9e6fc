"""Ratings as people read them, in a real browser (Playwright, Debian's Chromium, a real server on
a loopback port), two people in two browser contexts: a rated room says so with a badge, in its
header and in the lobby's list; every seated account's rating in the room's game and class stands
beside its name (a newcomer's `1500?`), in the room and in the lobby; the leaderboard lists the
provisional players, marked, after the established ones, instead of leaving them out."""

from __future__ import annotations

from typing import Any

import pytest

from partida.server.app import Server
from tests.helpers import rated_results

playwright_api = pytest.importorskip("playwright.async_api")

STEP = 15_000  # ms: the longest any single step (a click and the server's answer) may take
BLITZ = {"initial": 180, "increment": 2}
BLITZ_CHOICE = "3+2"  # the new-room form's 3 min + 2 s


async def open_page(browser: Any, url: str, name: str, password: str) -> tuple[Any, list[str]]:
    """A new browser context (a different person) logged in; the list collects console errors."""
    context = await browser.new_context()
    page = await context.new_page()
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_default_timeout(STEP)
    await page.goto(url)
    await page.fill("#name", name)
    await page.fill("#password", password)
    await page.click("#enter")
    await page.wait_for_selector("#create-room")
    return page, errors


async def seat_ratings(page: Any) -> list[str | None]:
    return await page.locator("#seats li[data-seat]").evaluate_all(
        "items => items.map(li => { const r = li.querySelector('.rating'); return r ? r.dataset.rating : null; })"
    )


async def established_ada(server: Server) -> str:
    """ada has played 20 rated blitz games against ann (established); cy beat dee once (both
    provisional); bob is a newcomer. ada's rating as shown."""
    pairs = [("ada", "ann") if n % 3 else ("ann", "ada") for n in range(20)] + [("cy", "dee")]
    await rated_results(server.store, pairs, BLITZ)
    await server.store.create_user("bob", "bob horse battery")
    (line,) = await server.store.person_ratings.of_account((await server.store.get_account_by_name("ada")).id)
    assert not line.rating.provisional
    return line.rating.shown()


async def test_the_rated_badge_and_ratings_beside_names_in_the_room_and_the_lobby(server: Server, browser: Any) -> None:
    ada_shown = await established_ada(server)
    ada, ada_errors = await open_page(browser, server.http_url, "ada", "ada horse battery")
    bob, bob_errors = await open_page(browser, server.http_url, "bob", "bob horse battery")

    # ada opens a public rated blitz room: the badge, and her rating beside her name
    await ada.select_option("#game", "tictactoe")
    await ada.select_option("#clock", BLITZ_CHOICE)
    await ada.check("#rated")
    await ada.click("#create-room")
    code = await ada.locator("#room-code").inner_text()
    assert await ada.locator("#room-rated").inner_text() == "rated"
    assert await seat_ratings(ada) == [ada_shown, None]
    assert ada_shown in await ada.locator('#seats li[data-seat="0"]').inner_text()

    # bob sees it in the lobby with ada's rating and the badge, and joins
    listed = bob.locator(f'ul.rooms li[data-room="{code}"]')
    await listed.wait_for()
    assert f"ada ({ada_shown})" in await listed.inner_text()
    assert await listed.locator(".badge.rated").inner_text() == "rated"
    await listed.locator("button", has_text="Join").click()
    await bob.wait_for_selector("#board")
    assert await bob.locator("#room-rated").inner_text() == "rated"
    assert await seat_ratings(bob) == [ada_shown, "1500?"]  # bob: a newcomer
    await ada.wait_for_function("() => document.querySelectorAll('#seats .rating').length === 2")
    assert await seat_ratings(ada) == [ada_shown, "1500?"]
    assert ada_errors == [] and bob_errors == []


async def test_the_leaderboard_lists_provisional_players_marked(server: Server, browser: Any) -> None:
    ada_shown = await established_ada(server)
    bob, errors = await open_page(browser, server.http_url, "bob", "bob horse battery")
    await bob.select_option("#board-game", "tictactoe")
    await bob.wait_for_selector('#leaderboard table[data-clock-class="blitz"]')
    rows = await bob.locator("#leaderboard tbody tr").evaluate_all(
        "rows => rows.map(r => [r.dataset.player, r.dataset.provisional, r.cells[2].textContent])"
    )
    # ada and ann established, then cy (rated above them after one win) and dee, marked provisional
    assert [(name, provisional) for name, provisional, _ in rows] == [
        ("ada", "false"), ("ann", "false"), ("cy", "true"), ("dee", "true")
    ]  # fmt: skip
    assert rows[0][2] == ada_shown and rows[2][2].endswith("?") and rows[3][2].endswith("?")
    assert "provisional" in await bob.locator("#leaderboard").inner_text()
    assert errors == []


async def test_a_casual_room_has_no_badge_and_a_room_without_a_clock_no_ratings(server: Server, browser: Any) -> None:
    await server.store.create_user("ada", "ada horse battery")
    ada, errors = await open_page(browser, server.http_url, "ada", "ada horse battery")
    await ada.select_option("#game", "tictactoe")
    await ada.click("#create-room")
    await ada.wait_for_selector("#room-code")
    assert await ada.locator("#room-rated").count() == 0
    assert await seat_ratings(ada) == [None, None]  # no clock: no class, never rated
    assert errors == []
