"""Your hosted bots in a real browser (/#/bots): Playwright drives Debian's Chromium against a
real server taking submissions; a person submits a zip, sees its versions, activates and
withdraws, and reads its log, where a program's stderr shows as text."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from partida.server.app import Server, ServerConfig
from partida.server.services.hosted_bots import HostingSettings
from partida.storage.hosted import HostedStore
from tests.hostile_archives import honest_zip, symlink_to_root

playwright_api = pytest.importorskip("playwright.async_api")

STEP = 15_000  # ms: the longest any single step (a click and the server's answer) may take


@pytest.fixture
async def hosting(db_url: str, tmp_path: Path) -> AsyncIterator[Server]:
    server = Server(ServerConfig(port=0, db_url=db_url, hosting=HostingSettings(tmp_path / "bundles")))
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


async def test_a_person_submits_activates_withdraws_and_reads_a_log_on_the_bots_page(
    hosting: Server, browser: Any, tmp_path: Path
) -> None:
    await hosting.store.create_user("ada", "a long password")
    page = await (await browser.new_context()).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_default_timeout(STEP)
    await page.goto(hosting.http_url)
    await page.fill("#name", "ada")
    await page.fill("#password", "a long password")
    await page.click("#enter")
    await page.wait_for_selector("#tournaments-card")
    await page.goto(hosting.http_url + "#/bots")
    await page.reload()
    await page.wait_for_selector("#hosted-submit")
    archive = tmp_path / "bot.zip"
    archive.write_bytes(honest_zip())
    for version in (1, 2):
        await page.fill("#hosted-name", "adabot")
        await page.fill("#hosted-run", f"python3 bot.py --v{version}")
        await page.select_option("#hosted-games", ["othello"])
        await page.set_input_files("#hosted-file", str(archive))
        await page.click("#hosted-send")
        await page.wait_for_selector(f"#hosted-status:has-text('version {version} submitted')")
    row = page.locator('tr[data-bot="adabot"]')
    assert await row.locator("option").count() == 2
    await row.locator("select").select_option("1")
    await row.locator(".hosted-activate").click()
    await page.wait_for_function("document.querySelector('tr[data-bot=\"adabot\"] select').value === '1'")
    await page.locator('tr[data-bot="adabot"] .hosted-withdraw').click()
    await page.wait_for_selector('tr[data-bot="adabot"][data-status="withdrawn"]')
    bot = await hosting.store.get_account_by_name("adabot")
    assert bot is not None
    info = await HostedStore(hosting.db).bot(bot.id)
    assert info is not None and info.active_version == 1 and info.status == "withdrawn"
    await HostedStore(hosting.db).record_failure(
        bot.id, 1, None, "crashed", "the program ended (exit code 1)", ["<b>not bold</b>", "Traceback: boom"], 3
    )
    await page.locator('tr[data-bot="adabot"] .hosted-logs').click()
    entry = page.locator('#hosted-entries li[data-verdict="crashed"]')
    await entry.wait_for()
    assert "<b>not bold</b>" in await entry.locator("pre.stderr").inner_text()  # text, never HTML
    assert await entry.locator("b").count() == 0
    archive.write_bytes(symlink_to_root())  # refused: said on the page, nothing stored
    await page.fill("#hosted-name", "evil")
    await page.fill("#hosted-run", "python3 bot.py")
    await page.set_input_files("#hosted-file", str(archive))
    await page.click("#hosted-send")
    await page.wait_for_selector('#status[data-kind="error"]:has-text("link")')
    assert await hosting.store.get_account_by_name("evil") is None
    assert errors == []
