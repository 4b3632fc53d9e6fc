"""What the screenshot tools share, so that the pictures in docs/ are taken alike: a real server on
a throwaway SQLite file, Debian's Chromium (as the browser tests drive it), pages of the same two
sizes at a device scale of 1, a person entering the lobby, and a game played by clicking.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import tempfile
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any

from playwright.async_api import async_playwright

from partida.server.app import Server, ServerConfig
from tests.fixtures.programs import CHROMIUM_ARGS, ensure_chromium

DESKTOP = {"width": 1200, "height": 860}
PHONE = {"width": 390, "height": 844}


@contextlib.asynccontextmanager
async def shots_server(db_name: str) -> AsyncIterator[Server]:
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(ServerConfig(host="127.0.0.1", port=0, db_url=f"sqlite+aiosqlite:///{tmp}/{db_name}"))
        await server.start()
        try:
            yield server
        finally:
            await server.stop()


@contextlib.asynccontextmanager
async def chromium() -> AsyncIterator[Any]:
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=ensure_chromium(), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            await browser.close()


async def open_page(
    browser: Any,
    url: str,
    name: str,
    viewport: dict[str, int],
    password: str = "",
    ready: str = "#create-room",
    timeout_ms: float = 20_000,
) -> Any:
    """A page of its own context, so each person has their own session; returned once `ready`
    shows the lobby drawn as far as the picture needs."""
    context = await browser.new_context(viewport=viewport, device_scale_factor=1)
    page = await context.new_page()
    page.set_default_timeout(timeout_ms)
    await page.goto(url)
    await page.fill("#name", name)
    if password:
        await page.fill("#password", password)
    await page.click("#enter")
    await page.wait_for_selector(ready)
    return page


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


async def cancel(tasks: list[asyncio.Task[None]]) -> None:
    """Cancelled and awaited whatever they raise: a bot runner's end is no failure of the tool."""
    for task in tasks:
        task.cancel()
    with contextlib.suppress(BaseException):
        await asyncio.gather(*tasks, return_exceptions=True)


def run(main: Callable[[Path], Coroutine[Any, Any, None]], doc: str | None) -> None:
    """A tool's command line: `--out`, the folder its pictures go to (docs/img by default)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("docs/img"))
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    asyncio.run(main(out))
