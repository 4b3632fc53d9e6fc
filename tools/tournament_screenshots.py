"""Take the tournament screenshots of docs/tournaments.md and docs/web.md: a real server, real bot
runners, Debian's Chromium.

    .venv/bin/python -m tools.tournament_screenshots [--out docs/img]

Three tournaments are created over the protocol (a Swiss for people and bots, a bots-only round
robin and a people-only arena, the last two still registering); ada, in the browser, enters the
Swiss with five random bots and plays her round-one game by clicking; a guest's page is shot
during round two, with ada's game in play. The bots move at random, so the results differ from
run to run; what the pages draw does not. About 15 seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import tempfile
import time
from pathlib import Path
from typing import Any

from playwright.async_api import async_playwright

from partida.bots.runner import BotRunner
from partida.client import Client
from partida.server.app import Server, ServerConfig
from tests.services import CHROMIUM_ARGS, ensure_chromium
from tools.web_screenshots import play

DESKTOP = {"width": 1200, "height": 860}
PHONE = {"width": 390, "height": 844}
MINUTE = {"initial": 60.0, "increment": 0.0}
BOTS = ["rando", "mcts-mia", "alpha-al", "greedy-gus", "lucky-lu"]


async def open_page(browser: Any, url: str, name: str, viewport: dict[str, int], password: str = "") -> Any:
    context = await browser.new_context(viewport=viewport, device_scale_factor=1)
    page = await context.new_page()
    page.set_default_timeout(30_000)
    await page.goto(url)
    await page.fill("#name", name)
    if password:
        await page.fill("#password", password)
    await page.click("#enter")
    await page.wait_for_selector("#tournaments li, #tournaments.muted")
    return page


async def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(ServerConfig(host="127.0.0.1", port=0, db_url=f"sqlite+aiosqlite:///{tmp}/shots.db"))
        await server.start()
        runners: list[asyncio.Task[None]] = []
        try:
            await server.store.create_user("ada", "a long password")
            await server.store.create_user("org", "a long password")
            org = await Client.connect(server.url, name="org", password="a long password")
            await org.tournament_create(
                "spring-swiss", "tictactoe", "swiss", MINUTE, entry="both", rounds=3, starts_in=600
            )
            await org.tournament_create(
                "othello-bots",
                "othello",
                "round-robin",
                {"initial": 120.0, "increment": 1.0},
                entry="bots",
                starts_in=1800,
            )
            await org.tournament_create(
                "evening-arena", "tictactoe", "arena", MINUTE, entry="people", duration=1800, starts_in=7200
            )
            for name in BOTS:
                _, token = await server.store.create_bot(name)
                runner = BotRunner(
                    server.url, "random", name=name, token=token, tournaments=["spring-swiss", "othello-bots"]
                )
                runners.append(asyncio.create_task(runner.run(reconnect=False)))
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(executable_path=ensure_chromium(), args=CHROMIUM_ARGS)
                url = server.http_url
                ada = await open_page(browser, url, "ada", DESKTOP, "a long password")
                await ada.goto(f"{url}#/tournament/spring-swiss")
                await ada.click("#join")
                async with asyncio.timeout(30):
                    while {t["name"]: t for t in await org.tournament_list()}["spring-swiss"]["entrants"] < 6:
                        await asyncio.sleep(0.2)
                await ada.goto(url)
                await ada.wait_for_selector('#tournaments li[data-tournament="spring-swiss"]')
                await ada.click("#tournament-new summary")  # the create form, open
                await ada.locator("#tournaments-card").screenshot(path=out / "web-tournaments.png")

                server.tournaments.now = lambda: time.time() + 660  # the Swiss's start comes now
                server.tournaments.wake()
                await ada.wait_for_selector("#board")  # pushed to her round-one seat
                await play(ada, 9, ".cell.playable")  # to the end: tic-tac-toe has at most 5 moves a side
                await ada.wait_for_function(
                    "() => document.querySelector('#room-code') && !document.querySelector('#result')"
                )
                await ada.wait_for_selector("#board")  # round two: pushed to her next seat

                cy = await open_page(browser, url, "cy", DESKTOP)
                await cy.goto(f"{url}#/tournament/spring-swiss")
                await cy.wait_for_selector('#tournament[data-round="2"] #t-live li')
                await cy.screenshot(path=out / "web-tournament.png", full_page=True)
                phone = await open_page(browser, url, "bo", PHONE)
                await phone.goto(f"{url}#/tournament/spring-swiss")
                await phone.wait_for_selector('#tournament[data-round="2"] #t-pairings li')
                await phone.screenshot(path=out / "web-phone-tournament.png", full_page=True)
                await browser.close()
            await org.close()
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
