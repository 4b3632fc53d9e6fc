"""Take the screenshot of the lobby's seeks in docs/web.md: a real server, people and a bot
seeking games through the protocol, and one person's lobby in Debian's Chromium with a seek of
her own waiting.

    .venv/bin/python -m tools.seeks_screenshot [--out docs/img]
"""

from __future__ import annotations

from pathlib import Path

from partida.client import Client
from tools.screenshots import DESKTOP, chromium, open_page, run, shots_server

PASSWORD = "correct horse battery"


async def main(out: Path) -> None:
    async with shots_server("seeks.db") as server:
        clients: list[Client] = []
        try:
            await server.store.create_user("mira", PASSWORD)
            mira = await Client.connect(server.url, name="mira", password=PASSWORD)
            theo = await Client.connect(server.url, name="theo")
            _, token = await server.store.create_bot("edax-ish")
            bot = await Client.connect(server.url, token=token, agent="alphabeta", games=["othello"])
            clients += [mira, theo, bot]
            await mira.seek("othello", clock={"initial": 300, "increment": 3}, rated=True)
            await theo.seek("tictactoe", clock={"initial": 180, "increment": 2}, allow_bots=True)
            await bot.seek("othello", clock={"initial": 60, "increment": 0}, allow_bots=True)
            await theo.seek("duel", clock={"initial": 600, "increment": 5})
            async with chromium() as browser:
                page = await open_page(browser, server.http_url, "ada", DESKTOP)
                await page.select_option("#seek-game", "othello")
                await page.select_option("#seek-clock", "move:30")
                await page.check("#seek-bots")
                await page.click("#seek")
                await page.wait_for_selector("#seeking:not([hidden])")
                await page.locator("[data-seek]").nth(4).wait_for()
                await page.locator("#seeks-card").screenshot(path=out / "web-seeks.png")
        finally:
            for client in clients:
                await client.close()


if __name__ == "__main__":
    run(main, __doc__)
