"""Take the chat pictures in docs/web.md: a real server, two people playing Othello in Debian's
Chromium who talk in the room's chat while a spectator talks in the spectators' channel (kept
from the players), on a desktop and on a 390x844 phone, and the chat box as another spectator
sees it (both channels).

    .venv/bin/python -m tools.chat_screenshots [--out docs/img]
"""

from __future__ import annotations

from pathlib import Path

from partida.client import Client
from tools.screenshots import DESKTOP, PHONE, chromium, open_page, play, run, shots_server


async def say(page: object, text: str) -> None:
    await page.fill("#chat-input", text)  # type: ignore[attr-defined]
    await page.click("#chat-send")  # type: ignore[attr-defined]
    await page.locator("#chat-lines .chat-text", has_text=text).first.wait_for()  # type: ignore[attr-defined]


async def main(out: Path) -> None:
    async with shots_server("chat.db") as server, chromium() as browser:
        ada = await open_page(browser, server.http_url, "ada", DESKTOP)
        await ada.select_option("#game", "othello")
        await ada.click("#create-room")
        invite = await ada.locator("#invite").input_value()
        code = await ada.locator("#room-code").inner_text()
        bob = await open_page(browser, invite, "bob", PHONE, ready="#board")
        sam = await Client.connect(server.url, name="sam")
        try:
            await sam.watch(code)
            await say(ada, "Hi Bob! Good luck, have fun.")
            await say(bob, "Thanks, you too. I'll take the corners this time :)")
            await sam.chat("bob always opens like this", room=code)  # the spectators' channel
            await play(ada, 1, ".sq.playable")
            await play(bob, 1, ".sq.playable")
            await say(ada, "Nice reply. Tea after this game?")
            await bob.locator("#chat-lines .chat-text", has_text="Tea after").wait_for()
            await ada.locator(".room").screenshot(path=out / "web-chat.png")
            await bob.locator("#chat").scroll_into_view_if_needed()
            await bob.screenshot(path=out / "web-phone-chat.png")
            # a spectator's view: both channels, each line marked with its own
            cy = await open_page(browser, f"{server.http_url}r/{code}", "cy", DESKTOP, ready="#watching")
            await cy.locator("#chat-lines .chat-text", has_text="Tea after").wait_for()
            await cy.locator("#chat").screenshot(path=out / "web-chat-spectator.png")
        finally:
            await sam.close()


if __name__ == "__main__":
    run(main, __doc__)
