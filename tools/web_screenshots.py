"""Take the screenshots of docs/web.md: a real server, real bots, Debian's Chromium.

    .venv/bin/python -m tools.web_screenshots [--out docs/img]

Each board is shown mid-game against built-in bots (random moves), so the pictures differ from run
to run but always show what the client draws.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import tempfile
from pathlib import Path
from typing import Any

from playwright.async_api import async_playwright

from partida.bots.runner import BotRunner
from partida.server.app import Server, ServerConfig
from tests.services import CHROMIUM_ARGS, ensure_chromium

DESKTOP = {"width": 1200, "height": 860}
PHONE = {"width": 390, "height": 844}


async def login(browser: Any, url: str, name: str, viewport: dict[str, int]) -> Any:
    context = await browser.new_context(viewport=viewport, device_scale_factor=1)
    page = await context.new_page()
    page.set_default_timeout(20_000)
    await page.goto(url)
    await page.fill("#name", name)
    await page.click("#enter")
    await page.wait_for_selector("#create-room")
    return page


async def create(page: Any, game: str, seats: dict[int, str], count: int | None = None) -> None:
    await page.select_option("#game", game)
    if count is not None:
        await page.fill("#seats", str(count))
        await page.dispatch_event("#seats", "change")
    for seat, choice in seats.items():
        await page.select_option(f"#seat{seat}", choice)
    await page.click("#create-room")
    await page.wait_for_selector("#board")


async def play(page: Any, moves: int, pick: str) -> None:
    """Answer `moves` decisions by clicking the first element matching `pick`."""
    for _ in range(moves):
        await page.wait_for_selector(f"{pick}, #result")
        if await page.locator("#result").count():
            return
        before = await page.locator("#board").get_attribute("data-seq")
        await page.locator(pick).first.click()
        await page.wait_for_function(
            "s => document.querySelector('#board')?.dataset.seq !== s || !!document.querySelector('#result')",
            arg=before,
        )


async def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(ServerConfig(host="127.0.0.1", port=0, db_url=f"sqlite+aiosqlite:///{tmp}/shots.db"))
        await server.start()
        runners = [
            asyncio.create_task(BotRunner(server.url, agent, name=f"{agent}-bot").run(reconnect=False))
            for agent in ("random", "duel-lookahead")
        ]
        await asyncio.sleep(1.0)
        try:
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(executable_path=ensure_chromium(), args=CHROMIUM_ARGS)
                url = server.http_url
                page = await login(browser, url, "ada", DESKTOP)
                await page.screenshot(path=out / "web-lobby.png")

                await create(page, "tictactoe", {1: "bot:random"})
                await play(page, 2, ".cell.playable")
                await page.screenshot(path=out / "web-tictactoe.png")

                page = await login(browser, url, "ada", DESKTOP)
                await create(page, "othello", {1: "bot:random"})
                await play(page, 12, ".sq.playable")
                await page.screenshot(path=out / "web-othello.png")

                page = await login(browser, url, "ada", DESKTOP)
                await create(page, "hearts", {1: "bot:random", 2: "bot:random", 3: "bot:random"})
                await play(page, 5, ".pcard.playable")
                await page.screenshot(path=out / "web-hearts.png", full_page=True)

                page = await login(browser, url, "ada", DESKTOP)
                await create(page, "duel", {1: "bot:duel-lookahead"})
                await play(page, 14, "#prompt button.choice, #prompt [data-confirm]")
                await page.screenshot(path=out / "web-duel.png", full_page=True)

                phone = await login(browser, url, "bo", PHONE)
                await create(phone, "othello", {1: "bot:random"})
                await play(phone, 4, ".sq.playable")
                await phone.screenshot(path=out / "web-phone.png", full_page=True)
                await browser.close()
        finally:
            for task in runners:
                task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.gather(*runners, return_exceptions=True)
            await server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("docs/img"))
    asyncio.run(main(parser.parse_args().out))
