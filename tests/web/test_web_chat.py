"""Chat in a real browser: Playwright drives Debian's Chromium against a real server on a
loopback port. Two people chat across two browser contexts; a spectator's message never
reaches them while the game runs and does once it is over; a person mutes another; a line the
operator removes leaves the live views and the replay; the XSS
payloads show as text with the page's CSP and without it; a tournament's page and a replay show
their chat; and the room works on a 390x844 phone."""

from __future__ import annotations

from typing import Any

import pytest

from partida.client import Client
from partida.room.chat import clean
from partida.server.app import Server
from tests.helpers import XSS_PAYLOADS

playwright_api = pytest.importorskip("playwright.async_api")

STEP = 15_000  # ms: the longest any single step (a click and the server's answer) may take
PHONE = {"width": 390, "height": 844}
MOVED_ON = "seq => document.querySelector('#board').dataset.seq !== seq || document.querySelector('#result')"
INJECTED = """() => window.__xss === undefined
  && !document.querySelector('#chat script, #chat img, #chat svg, #chat a[href]')"""


class Person:
    """One browser context (its own storage: a different person), its console errors and any
    dialog a script opened."""

    def __init__(self, context: Any, page: Any) -> None:
        self.context, self.page = context, page
        self.errors: list[str] = []
        page.on("console", lambda msg: self.errors.append(msg.text) if msg.type == "error" else None)
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        page.on("dialog", lambda dialog: self.errors.append(f"dialog: {dialog.message}"))

    @classmethod
    async def open(cls, browser: Any, url: str, name: str, **context_args: Any) -> Person:
        context = await browser.new_context(**context_args)
        person = cls(context, await context.new_page())
        person.page.set_default_timeout(STEP)
        await person.page.goto(url)
        await person.page.fill("#name", name)
        await person.page.click("#enter")
        return person

    async def say(self, text: str) -> None:
        await self.page.fill("#chat-input", text)
        await self.page.click("#chat-send")
        await self.page.wait_for_function("() => document.querySelector('#chat-input').value === ''")

    async def lines(self) -> list[str]:
        return await self.page.locator("#chat-lines li.chat-line .chat-text").all_inner_texts()

    async def sees(self, text: str) -> None:
        await self.page.locator("#chat-lines .chat-text", has_text=text).first.wait_for()


async def test_two_players_chat_a_spectator_stays_apart_and_a_mute_hides_a_player(server: Server, browser: Any) -> None:
    ada = await Person.open(browser, server.http_url, "ada")
    await ada.page.select_option("#game", "tictactoe")
    await ada.page.click("#create-room")
    invite = await ada.page.locator("#invite").input_value()
    code = await ada.page.locator("#room-code").inner_text()
    bob = await Person.open(browser, invite, "bob", viewport=PHONE)  # a phone
    await bob.page.wait_for_selector("#board")
    cy = await Person.open(browser, invite, "cy")  # the seats are taken: cy watches
    await cy.page.wait_for_selector("#watching")

    await ada.say("hello bob, good luck")
    await bob.sees("hello bob, good luck")
    await cy.sees("hello bob, good luck")  # spectators read the players
    await bob.say("thanks, you too")
    await ada.sees("thanks, you too")
    # on the phone the chat box fits the screen's width
    box = await bob.page.locator("#chat").bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]

    await cy.say("ada: play the centre")  # the spectators' channel
    await cy.sees("ada: play the centre")
    await ada.page.click('[data-square="0"]')  # a move, and a round trip for bob, after cy's line
    await bob.page.wait_for_selector('[data-square="0"]:has-text("X")')
    await bob.say("I see your move")
    await ada.sees("I see your move")
    for player in (ada, bob):
        assert "ada: play the centre" not in await player.lines()

    # ada mutes bob: his lines are gone from her view, and stay gone after a reload
    await ada.page.click('#chat-lines li[data-name="bob"] button.mute >> nth=0')
    await ada.page.wait_for_function("() => !document.querySelector('#chat-lines li[data-name=\"bob\"]')")
    await ada.page.reload()
    await ada.page.wait_for_selector("#board")
    await bob.say("can you hear me")
    await cy.sees("can you hear me")
    await ada.page.wait_for_selector("#chat-muted button.unmute")
    assert not [line for line in await ada.lines() if "hear me" in line or "thanks" in line]

    # the game ends: the players read the spectators' channel now, and so does the replay
    for square, who in (("3", bob), ("1", ada), ("4", bob), ("2", ada)):
        before = await who.page.locator("#board").get_attribute("data-seq")
        await who.page.click(f'[data-square="{square}"]')
        await who.page.wait_for_function(MOVED_ON, arg=before)
    await bob.page.wait_for_selector("#result")
    await bob.sees("ada: play the centre")
    # the operator removes a line (`partida db chat-remove ID`): gone from the live views and the replay
    hello = bob.page.locator("#chat-lines li.chat-line", has_text="hello bob, good luck")
    await server.store.chat.remove(int(await hello.get_attribute("data-id")))
    await hello.wait_for(state="detached")
    game_id = server.rooms[code].core.game_id
    await cy.page.goto(f"{server.http_url}#/replay/{game_id}")
    await cy.page.wait_for_selector("#replay #chat")
    replayed = await cy.lines()
    assert "thanks, you too" in replayed and "ada: play the centre" in replayed
    assert "hello bob, good luck" not in replayed
    for person in (ada, bob, cy):
        assert person.errors == [], person.errors


@pytest.mark.parametrize("csp", [True, False], ids=["with-csp", "without-csp"])
async def test_xss_payloads_in_chat_show_as_text(limited: Any, browser: Any, csp: bool) -> None:
    """Lines said over the protocol (as any client may) in a room and a tournament: the page shows
    each as the very text that was sent, runs nothing and adds no element, whether the page's
    Content-Security-Policy is in force or bypassed (the text handling alone must hold)."""
    server = await limited(chat_burst=20)  # every payload at once
    await server.store.create_user("carol", "a long password")
    carol = await Client.connect(server.url, name="carol", password="a long password")
    mallory = await Client.connect(server.url, name="mallory")
    try:
        code = (await carol.create_room("tictactoe", seat=0))["room"]
        await mallory.join(code)
        for payload in XSS_PAYLOADS:
            await mallory.chat(payload, room=code)
        await carol.tournament_create("cup", "tictactoe", "swiss", {"initial": 60.0}, starts_in=3600)
        for payload in XSS_PAYLOADS[:3]:
            await carol.chat(payload, tournament="cup")
        person = await Person.open(browser, f"{server.http_url}r/{code}", "ann", bypass_csp=not csp)
        await person.page.wait_for_selector("#watching")
        count = "n => document.querySelectorAll('#chat-lines li.chat-line').length === n"
        await person.page.wait_for_function(count, arg=len(XSS_PAYLOADS))
        shown = await person.lines()
        assert shown == [clean(p) for p in XSS_PAYLOADS]  # exactly the text (bidi controls out, as stored)
        assert await person.page.evaluate(INJECTED)
        await person.page.goto(f"{server.http_url}#/tournament/cup")
        await person.page.wait_for_function(count, arg=3)
        assert await person.lines() == [clean(p) for p in XSS_PAYLOADS[:3]]
        assert await person.page.evaluate(INJECTED)
        await person.say("<b>from the page</b>")  # a watcher of the tournament says something
        await person.sees("<b>from the page</b>")
        assert person.errors == [], person.errors
    finally:
        await carol.close()
        await mallory.close()
