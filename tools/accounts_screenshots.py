"""Take the account pictures of docs/web.md: a real server, Debian's Chromium, at the desktop size
and a phone's 390x844.

    .venv/bin/python -m tools.accounts_screenshots [--out docs/img]

The entry page with its sign-up form, an invite link's card (the game, who invites, the seat
waiting), the account page (ratings, recent games, bots, a new password), a player's page with
its Challenge form, and the notice a challenged person sees wherever they are.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from partida.client import Client
from partida.server.app import Server
from tools.screenshots import DESKTOP, PHONE, chromium, open_page, run, shots_server

PASSWORD = "correct horse battery"
BLITZ = {"initial": 180, "increment": 2}


async def history(server: Server) -> None:
    """Ada's rated games against Bo and Cy, stored and rated as the server would."""
    ids = {name: (await server.store.create_user(name, PASSWORD)).id for name in ("ada", "bo", "cy")}
    for n, (winner, loser) in enumerate([("ada", "bo"), ("cy", "ada"), ("ada", "cy"), ("ada", "bo"), ("bo", "ada")]):
        store = server.store
        game_id = await store.create_game("tictactoe", {}, n, "hash", 2, f"SHOT{n}", True, clock=BLITZ, rated=True)
        await store.start_game(game_id, [(0, ids[winner], winner), (1, ids[loser], loser)])
        await store.finish_game(game_id, {"scores": [1, 0], "ranks": [1, 2], "winners": [0]})
        await store.rate_game(game_id)


async def blank(browser: Any, url: str, viewport: dict[str, int]) -> Any:
    context = await browser.new_context(viewport=viewport, device_scale_factor=1)
    page = await context.new_page()
    page.set_default_timeout(20_000)
    await page.goto(url)
    return page


async def main(out: Path) -> None:
    async with shots_server("accounts.db") as server:
        await history(server)
        async with chromium() as browser:
            url = server.http_url
            for suffix, viewport in (("", DESKTOP), ("-phone", PHONE)):
                page = await blank(browser, url, viewport)
                await page.wait_for_selector("#signup-form")
                await page.fill("#signup-name", "dee")
                await page.screenshot(path=out / f"web-sign-up{suffix}.png", full_page=True)

                host = await Client.connect(server.url, name="ada", password=PASSWORD)
                code = (await host.create_room("othello", seat=0, public=False, clock=BLITZ))["room"]
                page = await blank(browser, f"{url}r/{code}", viewport)
                await page.wait_for_selector("#invitation")
                await page.screenshot(path=out / f"web-invitation{suffix}.png", full_page=True)
                await host.close()

                page = await open_page(browser, url, "ada", viewport, password=PASSWORD)
                await page.click("#account-link")
                await page.wait_for_selector("#account-games li")
                await page.wait_for_selector("#account-ratings table")
                await page.screenshot(path=out / f"web-account{suffix}.png", full_page=True)

                bo = await open_page(browser, url, "bo", viewport, password=PASSWORD)
                await page.goto(f"{url}#/player/bo")
                await page.wait_for_selector("#challenge-form")
                await page.wait_for_selector("#player-games li")
                await page.select_option("#challenge-clock", "3+2")
                await page.check("#challenge-rated")
                await page.screenshot(path=out / f"web-player-challenge{suffix}.png", full_page=True)
                await page.click("#challenge-send")
                await bo.wait_for_selector(".notice[data-kind='challenge']")
                await asyncio.sleep(0.2)
                await bo.screenshot(path=out / f"web-challenge-notice{suffix}.png")
                await bo.context.close()
                await page.context.close()


if __name__ == "__main__":
    run(main, __doc__)
