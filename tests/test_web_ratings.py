"""Ratings in the browser (Playwright, Debian's Chromium, a real server): a guest's rated room is
refused in words, an account creates a rated room and sees its rating change in the room's log
once the game ends, the lobby's leaderboard lists established ratings only, and a player's page
shows their ratings and history plot. No page logs a console error."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from partida.client import Client
from partida.server.app import Server
from tests.services import CHROMIUM_ARGS, ensure_chromium

playwright_api = pytest.importorskip("playwright.async_api")

STEP = 15_000  # ms: the longest any single step may take
BLITZ = {"initial": 180, "increment": 2}
BLITZ_CHOICE = '{"initial":180,"increment":2}'


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    executable = ensure_chromium()
    async with playwright_api.async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            await browser.close()


async def open_page(browser: Any, server: Server, name: str, password: str = "") -> tuple[Any, list[str]]:
    page = await (await browser.new_context()).new_page()
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_default_timeout(STEP)
    await page.goto(server.http_url)
    await page.fill("#name", name)
    if password:
        await page.fill("#password", password)
    await page.click("#enter")
    await page.wait_for_selector("#create-room")
    return page, errors


async def established(server: Server) -> None:
    """ann and bea, 14 rated blitz games of tic-tac-toe (ann wins two of three); cy beats dee once."""
    store = server.store
    ids = {n: (await store.create_user(n, f"{n} horse battery")).id for n in ("ann", "bea", "cy", "dee")}
    pairs = [("ann", "bea") if n % 3 else ("bea", "ann") for n in range(14)] + [("cy", "dee")]
    for n, (winner, loser) in enumerate(pairs):
        game_id = await store.create_game("tictactoe", {}, n, "hash", 2, f"R{n}", False, clock=BLITZ, rated=True)
        await store.start_game(game_id, [(0, ids[winner], winner), (1, ids[loser], loser)])
        await store.finish_game(game_id, {"scores": [1, 0], "ranks": [1, 2], "winners": [0]})
        assert await store.rate_game(game_id)


async def test_rated_rooms_ratings_and_the_leaderboard_in_the_browser(server: Server, browser: Any) -> None:
    await established(server)
    guest, guest_errors = await open_page(browser, server, "gus")
    await guest.select_option("#game", "tictactoe")
    await guest.select_option("#clock", BLITZ_CHOICE)
    await guest.check("#rated")
    await guest.click("#create-room")
    await guest.wait_for_function("() => document.querySelector('#status').dataset.kind === 'error'")
    assert "only an account can play rated" in await guest.locator("#status").inner_text()
    assert not server.rooms  # refused: nothing opened

    await server.store.create_user("ada", "ada horse battery")
    await server.store.create_user("bob", "bob horse battery")
    ada, errors = await open_page(browser, server, "ada", "ada horse battery")
    # the lobby's leaderboard: established ratings only (cy and dee have played once)
    await ada.select_option("#board-game", "tictactoe")
    await ada.wait_for_selector('#leaderboard table[data-clock-class="blitz"]')
    assert await ada.locator("#leaderboard tbody tr").evaluate_all("rows => rows.map(r => r.dataset.player)") == [
        "ann",
        "bea",
    ]
    await ada.select_option("#game", "tictactoe")
    await ada.select_option("#clock", BLITZ_CHOICE)
    await ada.check("#rated")
    await ada.click("#create-room")
    code = await ada.locator("#room-code").inner_text()
    assert server.rooms[code].rated
    bob = await Client.connect(server.url, name="bob", password="bob horse battery")
    await bob.join(code)
    for seq, cell in enumerate([0, 3, 1, 4, 2]):
        if seq % 2 == 0:
            await ada.wait_for_selector(f'#board[data-seq="{seq}"] [data-square="{cell}"]')
            await ada.click(f'[data-square="{cell}"]')
        else:
            await bob.next_update(code)
            await bob.act(code, cell, seq=seq)
    await ada.wait_for_selector("#result")
    rated = "() => document.querySelector('#log').textContent.includes('Ratings (tictactoe, blitz)')"
    await ada.wait_for_function(rated)
    log = await ada.locator("#log").inner_text()
    assert "ada 0.0? →" in log and "bob 0.0? →" in log
    await bob.close()

    # a player's page: ratings (provisional marked) and the history plot, one point a game
    await ada.goto(server.http_url + "#/player/bea")
    await ada.wait_for_selector("#player-ratings")
    row = ada.locator('#player-ratings tr[data-game="tictactoe"]')
    assert await row.get_attribute("data-provisional") == "false"
    await ada.wait_for_selector("#rating-history polyline")
    assert await ada.locator("#rating-history polyline").get_attribute("data-points") == "15"  # before + 14 games
    assert errors == [] and guest_errors == []
