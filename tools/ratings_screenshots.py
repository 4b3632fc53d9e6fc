"""Take the screenshots of ratings in docs/ratings.md: a real server whose accounts have played
rated blitz Othello (stored and rated as the server rates them), then, in Debian's Chromium, a
rated room with each player's rating beside their name and the *rated* badge (desktop and phone),
and the lobby's leaderboard with the provisional players listed after the established ones
(desktop and phone).

    .venv/bin/python -m tools.ratings_screenshots [--out docs/img]
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers import rated_results
from tools.screenshots import DESKTOP, PHONE, chromium, open_page, run, shots_server

BLITZ = {"initial": 180, "increment": 2}
BLITZ_CHOICE = "3+2"


async def main(out: Path) -> None:
    async with shots_server("ratings.db") as server:
        # mira and theo play 24 games (mira wins two of three), kofi and lena one each: provisional
        pairs = [("mira", "theo") if n % 3 else ("theo", "mira") for n in range(24)]
        pairs += [("kofi", "lena"), ("ines", "kofi")]
        await rated_results(server.store, pairs, BLITZ)
        async with chromium() as browser:
            mira = await open_page(browser, server.http_url, "mira", DESKTOP, password="mira horse battery")
            await mira.select_option("#game", "tictactoe")
            await mira.select_option("#clock", BLITZ_CHOICE)
            await mira.check("#rated")
            await mira.click("#create-room")
            code = await mira.locator("#room-code").inner_text()
            room = f"{server.http_url}r/{code}"
            lena = await open_page(browser, room, "lena", PHONE, password="lena horse battery", ready="#board")
            await mira.wait_for_function("() => document.querySelectorAll('#seats .rating').length === 2")
            await mira.screenshot(path=out / "web-rated-room.png")
            await lena.wait_for_function("() => document.querySelectorAll('#seats .rating').length === 2")
            await lena.screenshot(path=out / "web-phone-rated-room.png")
            board = await open_page(browser, server.http_url, "ines", DESKTOP, password="ines horse battery")
            await board.select_option("#board-game", "tictactoe")
            await board.locator('#leaderboard tr[data-provisional="true"]').first.wait_for()
            await board.locator("#ratings-card").screenshot(path=out / "web-leaderboard.png")
            phone = await open_page(browser, server.http_url, "kofi", PHONE, password="kofi horse battery")
            await phone.select_option("#board-game", "tictactoe")
            await phone.locator('#leaderboard tr[data-provisional="true"]').first.wait_for()
            await phone.locator("#ratings-card").screenshot(path=out / "web-phone-leaderboard.png")


if __name__ == "__main__":
    run(main, __doc__)
