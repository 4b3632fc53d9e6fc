"""Takebacks and export in a real browser (Playwright, Debian's Chromium), two people in two
browser contexts: a takeback declined, then one accepted, the taken-back moves struck through in
both move lists and in the replay, and the replay's Download of the game's record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from partida.server.app import Server

playwright_api = pytest.importorskip("playwright.async_api")

STEP = 15_000  # ms: the longest any single step (a click and the server's answer) may take


async def open_page(browser: Any, url: str, name: str) -> tuple[Any, list[str]]:
    """A new browser context (another person) on `url`, entered as `name`; its console errors."""
    context = await browser.new_context(accept_downloads=True)
    page = await context.new_page()
    page.set_default_timeout(STEP)
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    await page.goto(url)
    await page.fill("#name", name)
    await page.click("#enter")
    return page, errors


async def move(page: Any, square: int, seq: int) -> None:
    """Click a square and wait for the board of move `seq`."""
    await page.click(f'[data-square="{square}"]')
    await page.wait_for_selector(f'#board[data-seq="{seq}"]')


async def test_a_takeback_declined_then_accepted_and_the_replay_downloaded(
    server: Server, browser: Any, tmp_path: Path
) -> None:
    ada, ada_errors = await open_page(browser, server.http_url, "ada")
    await ada.select_option("#game", "tictactoe")
    await ada.click("#create-room")
    bob, bob_errors = await open_page(browser, await ada.locator("#invite").input_value(), "bob")
    await bob.wait_for_selector("#board")
    await ada.wait_for_selector('#board[data-seq="0"]')
    await move(ada, 4, 1)
    await bob.wait_for_selector('#board[data-seq="1"]')
    await move(bob, 0, 2)
    await ada.wait_for_selector('#board[data-seq="2"]')

    # Declined: the request shows on bob's side, goes away on both, the game goes on as it was.
    await ada.click("#takeback")
    await ada.wait_for_selector("#takeback-asked")
    await bob.wait_for_selector("text=ada asks to take back a move:")
    await bob.click("#decline-takeback")
    await ada.wait_for_selector("text=The takeback was declined")
    await ada.wait_for_selector("#takeback")
    assert await ada.locator('#board[data-seq="2"]').count() == 1

    # Accepted: ada's last move and bob's reply go; ada is to move again at the same position.
    await move(ada, 8, 3)
    await bob.wait_for_selector('#board[data-seq="3"]')
    await move(bob, 2, 4)
    await ada.wait_for_selector('#board[data-seq="4"]')
    await ada.click("#takeback")
    await bob.click("#accept-takeback")
    for page in (ada, bob):
        await page.wait_for_selector('#board[data-seq="5"]')
        await page.wait_for_selector("#log >> text=takes back 2 moves")
        assert await page.locator("#log li.taken-back").count() == 2
    await ada.wait_for_selector("#prompt")  # ada plays again
    await bob.reload()  # the stored game's moves so far, the takeback told and its moves struck through
    await bob.wait_for_selector('#board[data-seq="5"]')
    await bob.wait_for_selector("#log >> text=ada takes back 2 moves")
    assert await bob.locator("#log li.taken-back").count() == 2
    room = server.rooms[await ada.locator("#room-code").inner_text()]
    assert room.core.state.view(None)["board"] == [1, -1, -1, -1, 0, -1, -1, -1, -1]

    # The replay marks the moves taken back and downloads the game's record.
    await ada.click("#resign")
    await ada.click("#resign")
    await ada.wait_for_selector("#result")
    await ada.click("#replay-this")
    await ada.wait_for_selector("#replay-log li")
    assert await ada.locator("#replay-log li.taken-back").count() == 2
    assert "ada takes back 2 moves" in await ada.locator("#replay-log").inner_text()
    async with ada.expect_download() as info:
        await ada.click("#download-text")
    download = await info.value
    assert download.suggested_filename == f"partida-tictactoe-{room.core.game_id}.txt"
    saved = tmp_path / download.suggested_filename
    await download.save_as(saved)
    text = saved.read_text()
    assert '[Player1 "ada (X)"]' in text and "5. ada takes back 2 moves" in text and "{taken back}" in text
    async with ada.expect_download() as info:
        await ada.click("#download-json")
    assert (await info.value).suggested_filename.endswith(".json")
    assert ada_errors == [] and bob_errors == []
