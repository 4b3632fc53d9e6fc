"""Tournaments in a real browser: Playwright drives Debian's Chromium against a real server on a
loopback port, with a real bot runner entered in the same event."""

from __future__ import annotations

import asyncio
import contextlib
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from partida.bots.runner import BotRunner
from partida.client import Client
from partida.server.app import Server

playwright_api = pytest.importorskip("playwright.async_api")

STEP = 15_000  # ms: the longest any single step (a click and the server's answer) may take


async def open_page(browser: Any, url: str, name: str, password: str = "") -> tuple[Any, list[str]]:
    """A new browser context (a different person) logged in; the list collects console errors."""
    context = await browser.new_context()
    page = await context.new_page()
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_default_timeout(STEP)
    await page.goto(url)
    await page.fill("#name", name)
    if password:
        await page.fill("#password", password)
    await page.click("#enter")
    await page.wait_for_selector("#tournaments-card")
    return page, errors


async def test_a_person_joins_a_mixed_tournament_in_the_browser_and_plays_a_bot(server: Server, browser: Any) -> None:
    """Ada creates a people-and-bots Swiss on the page and joins it; a random bot enters; when the
    round is paired the server's `tournament_game` takes her page to her seat, she plays the game
    to its end by clicking, and the tournament's page shows the standings with the bot marked,
    equal to what the server computes. A guest watches the game from the tournament's page."""
    await server.store.create_user("ada", "a long password")
    ada, ada_errors = await open_page(browser, server.http_url, "ada", "a long password")
    await ada.click("#tournament-new summary")
    await ada.fill("#t-name", "mixed")
    await ada.select_option("#t-game", "tictactoe")
    await ada.select_option("#t-format", "swiss")
    await ada.fill("#t-rounds", "1")
    await ada.select_option("#t-clock", "1+0")
    await ada.select_option("#t-entry", "both")
    await ada.fill("#t-starts", "60")  # an hour: the test moves the service's clock instead of waiting
    await ada.click("#create-tournament")
    await ada.wait_for_selector('#tournament[data-tournament="mixed"][data-status="registering"]')
    assert await ada.locator("#tournament .badge.entry").inner_text() == "people and bots"
    await ada.click("#join")
    await ada.wait_for_selector("#entered")
    await ada.click("#withdraw")  # changed her mind, then back in
    await ada.wait_for_selector('#t-standings tr[data-entrant="ada"].away')
    await ada.click("#join")
    await ada.wait_for_selector("#entered")
    assert await ada.locator('#t-standings tr[data-entrant="ada"] .badge.bot').count() == 0

    _, token = await server.store.create_bot("rando")
    runner = BotRunner(server.url, "random", name="rando", token=token, tournaments=["mixed"])
    bot = asyncio.get_running_loop().create_task(runner.run(reconnect=False))
    guest = await Client.connect(server.url, name="cy")
    try:
        async with asyncio.timeout(30):
            while (await guest.tournament_list())[0]["entrants"] < 2:
                await asyncio.sleep(0.1)
        # The page asks again every few seconds while registering: the bot shows up, marked.
        await ada.wait_for_selector('#t-standings tr[data-entrant="rando"] .badge.bot')

        # The lobby's list says who may enter before anyone joins.
        cy, cy_errors = await open_page(browser, server.http_url, "cy")
        listed = cy.locator('#tournaments li[data-tournament="mixed"]')
        assert "people and bots" in await listed.inner_text() and "2 entrants" in await listed.inner_text()
        await listed.locator("button").click()
        await cy.wait_for_selector("#why-not")  # a guest cannot enter
        assert await cy.locator("#join").count() == 0

        server.tournament_director.now = lambda: time.time() + 3700  # what was due within the hour starts now
        server.tournament_director.wake()
        # The pushed `tournament_game` takes Ada to her seat.
        await ada.wait_for_selector("#board")
        assert await ada.locator("li.me").count() == 1
        code = await ada.locator("#room-code").inner_text()

        # Cy, on the tournament's page, sees the game in play and watches it.
        await cy.wait_for_selector(f'#t-live li[data-room="{code}"] .badge.bot')
        await cy.locator(f'#t-live li[data-room="{code}"] button.watch').click()
        await cy.wait_for_selector("#watching")
        assert await cy.locator("#room-code").inner_text() == code

        # Ada opens the tournament's page mid-game (a reload): it leads her back to her seat.
        await ada.goto(f"{server.http_url}#/tournament/mixed")
        await ada.click("#your-game")
        await ada.wait_for_selector("#board")
        assert await ada.locator("#room-code").inner_text() == code and await ada.locator("li.me").count() == 1

        while True:
            await ada.wait_for_selector(".cell.playable, #result")
            if await ada.locator("#result").count():
                break
            before = await ada.locator("#board").get_attribute("data-seq")
            await ada.locator(".cell.playable >> nth=0").click()
            await ada.wait_for_function(
                "s => document.querySelector('#board')?.dataset.seq !== s || !!document.querySelector('#result')",
                arg=before,
            )
        await cy.wait_for_selector("#result")
        assert await ada.locator("#rematch").count() == 0  # the tournament pairs the next game

        # Back to the tournament: one round, so it is over; the standings are the server's.
        await ada.click("#to-tournament")
        await ada.wait_for_selector('#tournament[data-status="finished"]')
        expected = await guest.tournament_standings("mixed")
        rows = ada.locator("#t-standings tbody tr")
        assert await rows.count() == 2
        for i, row in enumerate(expected):
            line = rows.nth(i)
            assert await line.get_attribute("data-entrant") == row["name"]
            assert float(await line.get_attribute("data-points") or "nan") == row["points"]
            assert await line.locator(".badge.bot").count() == (1 if row["bot"] else 0)
            assert await line.locator("td").nth(3).inner_text() == "1"  # one game each
        assert {r["name"]: r["bot"] for r in expected} == {"ada": False, "rando": True}
        assert sum(r["points"] for r in expected) == 1
        table = ada.locator('#t-pairings li[data-round="1"]')
        assert await table.get_attribute("data-status") == "finished"
        assert await table.locator('[data-player="rando"] .badge.bot').count() == 1
        assert await table.locator('[data-player="ada"] .badge.bot').count() == 0
        shown = await table.locator(".pts").all_inner_texts()
        assert sorted(float(p.strip().replace("½", "0.5")) for p in shown) == sorted(r["points"] for r in expected)
        assert await table.locator("button.replay").count() == 1  # she sat there: her game's record
        assert await ada.locator("#withdraw, #join").count() == 0
        assert ada_errors == [] and cy_errors == [], ada_errors + cy_errors
    finally:
        bot.cancel()
        with contextlib.suppress(BaseException):
            await bot
        await guest.close()


async def test_the_lobby_lists_tournaments_a_page_at_a_time(server: Server, browser: Any) -> None:
    """The lobby's card shows the first page of tournaments and *More tournaments* the pages
    after it, each tournament once, until there are no more."""
    store = server.tournaments.store
    base = datetime.now(UTC) + timedelta(hours=1)
    made = [f"cup{i:02}" for i in range(45)]
    for i, name in enumerate(made):
        await store.create(name, "tictactoe", {}, 2, {"initial": 60.0}, "swiss", "both", base + timedelta(minutes=i))
    page, errors = await open_page(browser, server.http_url, "cy")
    lines = page.locator("#tournaments li.tournament-line")
    await page.wait_for_selector('#tournaments li[data-tournament="cup19"]')
    assert await lines.count() == 20
    for shown in (40, 45):
        await page.click("#tournaments-more")
        await page.wait_for_selector(f"#tournaments li.tournament-line:nth-child({shown})")
    assert [await line.get_attribute("data-tournament") for line in await lines.all()] == made
    assert await page.locator("#tournaments-more").is_hidden()
    assert errors == [], errors


async def test_a_person_on_another_node_is_called_to_a_swiss_game(three: list[Server], browser: Any) -> None:
    """Three nodes (PostgreSQL, Mosquitto). Ada's page is on a node that does not run the
    tournaments; when the Swiss is paired, her node pushes her `tournament_game` with the running
    node's URL: her page goes there (`moved`), she logs in again (a page of another address has
    its own storage, and the password never travels), sits in the seat kept for her account and
    plays the game to its end by clicking."""
    holder = None
    async with asyncio.timeout(15):
        while holder is None:
            holder = await three[0].tournament_director.lock.holder()  # type: ignore[union-attr]
            await asyncio.sleep(0.2)
    runner = next(s for s in three if s.cluster is not None and s.cluster.name == holder)
    elsewhere = next(s for s in three if s is not runner)
    await runner.store.create_user("ada", "a long password")
    org = await Client.connect(runner.url, name="ada", password="a long password")
    await org.tournament_create("far", "tictactoe", "swiss", {"initial": 60, "increment": 1}, rounds=1, starts_in=3600)
    await org.close()
    ada, ada_errors = await open_page(browser, elsewhere.http_url, "ada", "a long password")
    await ada.goto(f"{elsewhere.http_url}#/tournament/far")
    await ada.click("#join")
    await ada.wait_for_selector("#entered")
    _, token = await runner.store.create_bot("rando")
    bot = asyncio.get_running_loop().create_task(
        BotRunner(runner.url, "random", name="rando", token=token, tournaments=["far"]).run(reconnect=False)
    )
    try:
        guest = await Client.connect(runner.url, name="cy")
        async with asyncio.timeout(30):
            while (await guest.tournament_list())[0]["entrants"] < 2:
                await asyncio.sleep(0.1)
        await guest.close()
        runner.tournament_director.now = lambda: time.time() + 3700  # what was due within the hour starts now
        runner.tournament_director.wake()
        # Called through her own node, her page goes to the running node's, where she logs in again.
        await ada.wait_for_url(f"{runner.http_url}r/*", timeout=STEP)
        await ada.wait_for_selector("#password")
        await ada.fill("#password", "a long password")
        await ada.click("#enter")
        await ada.wait_for_selector("#board")
        assert await ada.locator("li.me").count() == 1
        while True:
            await ada.wait_for_selector(".cell.playable, #result")
            if await ada.locator("#result").count():
                break
            before = await ada.locator("#board").get_attribute("data-seq")
            await ada.locator(".cell.playable >> nth=0").click()
            await ada.wait_for_function(
                "s => document.querySelector('#board')?.dataset.seq !== s || !!document.querySelector('#result')",
                arg=before,
            )
        store = runner.tournament_director.store
        async with asyncio.timeout(30):
            while (await store.require("far")).status != "finished":
                await asyncio.sleep(0.2)
        tables = await store.tables((await store.require("far")).id)
        assert len(tables) == 1 and tables[0].result is not None and tables[0].result.get("reason") == "normal"
        assert not [e for e in ada_errors if "moved" not in e], ada_errors
    finally:
        bot.cancel()
        await asyncio.gather(bot, return_exceptions=True)
