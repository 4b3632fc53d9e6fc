"""Take the screenshots of docs/web.md: a real server, real bots, Debian's Chromium.

    .venv/bin/python -m tools.web_screenshots [--out docs/img]

Each board is shown mid-game against built-in bots (random moves), so the pictures differ from run
to run but always show what the client draws. Besides the boards: a game under a clock, the end of
a game with its seed checked, a Duel replayed step by step, and a bot ladder's standings and rating
plot (three bots play tic-tac-toe for a few seconds first).
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

from partida.bots.runner import BotRunner
from partida.client import Client
from partida.server.app import Server
from tools.screenshots import DESKTOP, PHONE, cancel, chromium, open_page, play, run, shots_server


async def create(page: Any, game: str, seats: dict[int, str], count: int | None = None, clock: str = "") -> None:
    await page.select_option("#game", game)
    if clock:  # after the game: choosing a game redraws the form
        await page.select_option("#clock", clock)  # a value in the clock notation
    if count is not None:
        await page.fill("#seats", str(count))
        await page.dispatch_event("#seats", "change")
    for seat, choice in seats.items():
        await page.select_option(f"#seat{seat}", choice)
    await page.click("#create-room")
    await page.wait_for_selector("#board")


async def finished_game(url: str, game: str) -> int:
    """Two protocol clients play `game` to the end with random answers; its stored id."""
    rng = random.Random(4)
    x, o = await Client.connect(url, name="xena"), await Client.connect(url, name="oscar")
    try:
        created = await x.create_room(game, seat=0)
        code = created["room"]
        await o.join(code)
        final, _ = await asyncio.gather(
            x.play(code, lambda u, p: p.random_answer(rng)), o.play(code, lambda u, p: p.random_answer(rng))
        )
        return int(final["game_id"])
    finally:
        await x.close()
        await o.close()


async def start_ladder(server: Server) -> list[asyncio.Task[None]]:
    """A tic-tac-toe ladder: a perfect player, a tree searcher and two random players."""
    await server.store.ladders.create("arena", "tictactoe", {}, 2, {"per_move": 5.0}, 2)
    tasks = []
    for name, agent in (("perfect", "alphabeta"), ("searcher", "mcts"), ("dice", "random"), ("coin", "random")):
        _, token = await server.store.create_bot(name)
        params = {"iterations": 40} if agent == "mcts" else None
        runner = BotRunner(server.url, agent, token=token, ladders=["arena"], params=params)
        tasks.append(asyncio.create_task(runner.run(reconnect=False)))
    return tasks


async def main(out: Path) -> None:
    async with shots_server("shots.db") as server:
        runners: list[asyncio.Task[None]] = []
        try:
            for agent in ("random", "duel-lookahead"):
                _, token = await server.store.create_bot(f"{agent}-bot")  # only bot accounts are seated as bots
                runners.append(asyncio.create_task(BotRunner(server.url, agent, token=token).run(reconnect=False)))
            runners += await start_ladder(server)
            await asyncio.sleep(1.0)
            async with chromium() as browser:
                url = server.http_url
                page = await open_page(browser, url, "ada", DESKTOP)
                await page.screenshot(path=out / "web-lobby.png")

                await create(page, "tictactoe", {1: "bot:random"})
                await play(page, 2, ".cell.playable")
                await page.screenshot(path=out / "web-tictactoe.png")

                page = await open_page(browser, url, "ada", DESKTOP)
                await create(page, "othello", {1: "bot:random"})
                await play(page, 12, ".sq.playable")
                await page.screenshot(path=out / "web-othello.png")

                page = await open_page(browser, url, "ada", DESKTOP)
                await create(page, "hearts", {1: "bot:random", 2: "bot:random", 3: "bot:random"})
                await play(page, 5, ".pcard.playable")
                await page.screenshot(path=out / "web-hearts.png", full_page=True)

                page = await open_page(browser, url, "ada", DESKTOP)
                await create(page, "duel", {1: "bot:duel-lookahead"})
                await play(page, 14, "#prompt button.choice, #prompt [data-confirm]")
                await page.screenshot(path=out / "web-duel.png", full_page=True)

                phone = await open_page(browser, url, "bo", PHONE)
                await create(phone, "othello", {1: "bot:random"})
                await play(phone, 4, ".sq.playable")
                await phone.screenshot(path=out / "web-phone.png", full_page=True)

                phone = await open_page(browser, url, "bo", PHONE)
                await create(phone, "duel", {1: "bot:duel-lookahead"})
                await play(phone, 10, "#prompt button.choice, #prompt [data-confirm]")
                await phone.screenshot(path=out / "web-phone-duel.png")

                page = await open_page(browser, url, "ada", DESKTOP)
                await create(page, "othello", {1: "bot:random"}, clock="3+2")
                await play(page, 6, ".sq.playable")
                await page.screenshot(path=out / "web-clock.png")

                page = await open_page(browser, url, "ada", DESKTOP)
                await create(page, "tictactoe", {1: "bot:random"}, clock="1+0")
                await play(page, 5, ".cell.playable")
                await page.wait_for_selector('#fair[data-ok="yes"]')
                await page.screenshot(path=out / "web-ending.png")

                duel = await finished_game(server.url, "duel")
                page = await open_page(browser, url, "ada", DESKTOP)
                await page.click(f'#stored [data-game-id="{duel}"] button')
                await page.wait_for_selector("#replay-board .duel")
                middle = int(await page.locator("#replay-slider").get_attribute("max")) // 2
                await page.fill("#replay-slider", str(middle))
                await page.wait_for_selector(f'#replay-board[data-step="{middle}"]')
                await page.screenshot(path=out / "web-replay.png", full_page=True)
                phone = await open_page(browser, url, "bo", PHONE)
                await phone.goto(f"{url}#/replay/{duel}")
                await phone.wait_for_selector("#replay-board .duel")
                await phone.screenshot(path=out / "web-phone-replay.png")

                while (await server.store.ladders.require("arena")).rated_games < 40:
                    await asyncio.sleep(0.2)
                page = await open_page(browser, url, "ada", DESKTOP)
                await page.click('#ladders [data-ladder="arena"] button')
                await page.wait_for_selector("#rating-plot svg")
                await page.screenshot(path=out / "web-ladder.png", full_page=True)
                phone = await open_page(browser, url, "bo", PHONE)
                await phone.goto(f"{url}#/ladder/arena")
                await phone.wait_for_selector("#rating-plot svg")
                await phone.screenshot(path=out / "web-phone-ladder.png", full_page=True)
        finally:
            await cancel(runners)


if __name__ == "__main__":
    run(main, __doc__)
