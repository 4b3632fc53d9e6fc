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

import asyncio
import time
from pathlib import Path
from typing import Any

from partida.bots.runner import BotRunner
from partida.client import Client
from tools.screenshots import DESKTOP, PHONE, cancel, chromium, open_page, play, run, shots_server

MINUTE = {"initial": 60.0, "increment": 0.0}
BOTS = ["rando", "mcts-mia", "alpha-al", "greedy-gus", "lucky-lu"]


async def enter(browser: Any, url: str, name: str, viewport: dict[str, int], password: str = "") -> Any:
    """Waits for the tournaments card (drawn empty or not), and gives every wait 30 s: round two
    comes only once each game of round one has ended."""
    ready = "#tournaments li, #tournaments.muted"
    return await open_page(browser, url, name, viewport, password, ready=ready, timeout_ms=30_000)


async def main(out: Path) -> None:
    async with shots_server("shots.db") as server:
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
            async with chromium() as browser:
                url = server.http_url
                ada = await enter(browser, url, "ada", DESKTOP, "a long password")
                await ada.goto(f"{url}#/tournament/spring-swiss")
                await ada.click("#join")
                async with asyncio.timeout(30):
                    while {t["name"]: t for t in await org.tournament_list()}["spring-swiss"]["entrants"] < 6:
                        await asyncio.sleep(0.2)
                await ada.goto(url)
                await ada.wait_for_selector('#tournaments li[data-tournament="spring-swiss"]')
                await ada.click("#tournament-new summary")  # the create form, open
                await ada.locator("#tournaments-card").screenshot(path=out / "web-tournaments.png")

                server.tournament_director.now = lambda: time.time() + 660  # the Swiss's start comes now
                server.tournament_director.wake()
                await ada.wait_for_selector("#board")  # pushed to her round-one seat
                await play(ada, 9, ".cell.playable")  # to the end: tic-tac-toe has at most 5 moves a side
                await ada.wait_for_function(
                    "() => document.querySelector('#room-code') && !document.querySelector('#result')"
                )
                await ada.wait_for_selector("#board")  # round two: pushed to her next seat

                cy = await enter(browser, url, "cy", DESKTOP)
                await cy.goto(f"{url}#/tournament/spring-swiss")
                await cy.wait_for_selector('#tournament[data-round="2"] #t-live li')
                await cy.screenshot(path=out / "web-tournament.png", full_page=True)
                phone = await enter(browser, url, "bo", PHONE)
                await phone.goto(f"{url}#/tournament/spring-swiss")
                await phone.wait_for_selector('#tournament[data-round="2"] #t-pairings li')
                await phone.screenshot(path=out / "web-phone-tournament.png", full_page=True)
            await org.close()
        finally:
            await cancel(runners)


if __name__ == "__main__":
    run(main, __doc__)
