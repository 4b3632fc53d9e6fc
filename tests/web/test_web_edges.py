"""Rough edges of the browser client, in a real browser: Playwright drives Debian's Chromium against
a real server on a loopback port. The clock field and its notation (one table of cases with the
command line's), the note on a bot's clock, a room opening at its top on a phone, the prompt said
once, replays (passes, one labelling, arrow keys, addresses of no game), no rematch after an
abort, the seed's sentence for a game without chance, a rated verdict said once, and Hearts (the
pass, stored values in words, a sorted hand, the trick just taken, the cards received)."""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from pathlib import Path
from typing import Any

import pytest

from partida.bots.runner import BotRunner
from partida.client import Client
from partida.games.registry import default_registry
from partida.server.app import Server

playwright_api = pytest.importorskip("playwright.async_api")

STEP = 15_000  # ms: the longest any single step (a click and the server's answer) may take
CASES = json.loads((Path(__file__).parent.parent / "data" / "clock_notation.json").read_text())["cases"]
PHONE = {"width": 390, "height": 844}


async def open_page(
    browser: Any, url: str, name: str, password: str = "", ready: str = "#create-room", **context: Any
) -> tuple[Any, list[str]]:
    """A new browser context (a different person) at `url` once `ready` is drawn (the lobby's
    form); the list collects console errors."""
    page = await (await browser.new_context(**context)).new_page()
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_default_timeout(STEP)
    await page.goto(url)
    await page.fill("#name", name)
    if password:
        await page.fill("#password", password)
    await page.click("#enter")
    await page.wait_for_selector(ready)
    return page, errors


async def test_the_browsers_clock_notation_reads_the_same_table_as_the_command_line(
    server: Server, browser: Any
) -> None:
    page, errors = await open_page(browser, server.http_url, "ada")
    answers = await page.evaluate(
        """async (cases) => {
          const notation = await import("/clock_notation.js");
          return cases.map(([text]) => {
            try {
              const clock = notation.parseClock(text);
              return { clock, written: notation.clockText(clock) };
            } catch (error) {
              return { refused: error.message, forms: error.message.endsWith(notation.FORMS) };
            }
          });
        }""",
        CASES,
    )
    for (text, clock, written), answer in zip(CASES, answers, strict=True):
        if clock is None:
            assert answer.get("forms") is True, (text, answer)
        else:
            assert answer["clock"] == pytest.approx(clock), (text, answer)
            assert answer["written"] == written, (text, answer)
    assert errors == []


async def test_the_new_room_form_on_a_phone_clock_text_bot_clock_and_the_top_of_the_room(
    server: Server, browser: Any, bots: Any
) -> None:
    """ "No clock" with a bot said nothing of the 15 minutes a move the server gives; a clock could
    only be one of five presets; the room opened scrolled halfway down; the prompt said "Your
    move: black to move: choose a square"."""
    await bots("random")
    page, errors = await open_page(browser, server.http_url, "ada", viewport=PHONE)
    await page.select_option("#game", "othello")
    note = page.locator("#bot-clock-note")
    assert await note.is_hidden()
    await page.select_option("#seat1", "bot:random")
    await note.wait_for(state="visible")
    assert "15 minutes" in await note.inner_text()
    await page.select_option("#clock", "5+3")
    assert await note.is_hidden()  # a clock of one's own: nothing to warn of
    await page.select_option("#clock", "other")
    await page.fill("#clock-other", "300")
    await page.click("#create-room")
    await page.wait_for_function("() => document.querySelector('#status').dataset.kind === 'error'")
    refusal = await page.locator("#status").inner_text()
    assert "'300' is not a clock" in refusal and "2s+0.05" in refusal and "5+3" in refusal
    assert not server.rooms
    await page.fill("#clock-other", "90s+1")
    await page.evaluate("window.scrollTo(0, document.body.scrollHeight)")  # the form is low on a phone
    assert await page.evaluate("window.scrollY") > 0
    await page.click("#create-room")
    await page.wait_for_selector("#board")
    code = await page.locator("#room-code").inner_text()
    spec = server.rooms[code].core.clock_spec
    assert spec is not None and (spec.initial, spec.increment) == (90.0, 1.0)
    assert await page.evaluate("window.scrollY") == 0  # the room opens at its top
    await page.wait_for_selector("#prompt")
    assert await page.locator("#prompt .prompt-text").inner_text() == "Your move (black): choose a square"
    assert errors == []


def othello_with_passes() -> list[str]:
    """A random Othello game (always the same) in which a side has to pass twice."""
    game = default_registry().get("othello")
    state = game.create(game.resolve_options({}), seed=0, seats=2)
    rng = random.Random(2)
    moves = []
    while not state.is_over():
        decision = state.pending()[0]
        moves.append(rng.choice(decision.prompt.options))
        state.apply(decision.seat, moves[-1])
    return moves


async def test_a_replay_shows_passes_labels_moves_as_the_room_does_steps_by_key_and_says_no_such_game(
    server: Server, browser: Any
) -> None:
    moves = othello_with_passes()
    xena, oscar = await Client.connect(server.url, name="xena"), await Client.connect(server.url, name="oscar")
    code = (await xena.create_room("othello", seat=0))["room"]
    await oscar.join(code)
    answers = iter(moves)
    await asyncio.gather(xena.play(code, lambda u, p: next(answers)), oscar.play(code, lambda u, p: next(answers)))
    async with asyncio.timeout(30):
        while not await server.store.list_games(5, None, "finished"):
            await asyncio.sleep(0.1)
    game_id = (await server.store.list_games(5, None, "finished"))[0].id
    page, errors = await open_page(browser, server.http_url, "ada")
    stored = page.locator(f'#stored [data-game-id="{game_id}"]')
    assert (await stored.text_content() or "").startswith("Othello · xena vs oscar")  # its title, not "othello #1"
    await stored.locator("button").click()
    await page.wait_for_selector("#replay")
    assert await page.locator("#replay h2").inner_text() == "Replay: Othello"
    log = page.locator("#replay-log")
    assert await log.locator("li[data-step]").count() == len(moves)
    assert await log.locator("li.note").count() == 2  # the two passes, as the room's list tells them
    assert "has no legal move and passes" in await log.locator("li.note >> nth=0").inner_text()
    first = await log.locator('li[data-step="1"]').inner_text()
    assert first == f"xena plays {moves[0].upper()}", first  # as the live list writes it: D3, not d3
    step = page.locator("#replay-step")
    assert await step.inner_text() == f"move {len(moves)} of {len(moves)}"
    await page.keyboard.press("ArrowLeft")
    assert await step.inner_text() == f"move {len(moves) - 1} of {len(moves)}"
    await page.keyboard.press("Home")
    await page.keyboard.press("ArrowRight")
    assert await step.inner_text() == f"move 1 of {len(moves)}"
    # An address of no game, after a replay and reloaded: says so, keeps no board of another game.
    await page.goto(f"{server.http_url}#/replay/9999")
    await page.wait_for_selector("#replay-missing")
    assert await page.locator("#replay-board").count() == 0
    await page.reload()  # the tab keeps its name: straight back to the same address
    await page.wait_for_selector("#replay-missing")
    assert "No game 9999" in await page.locator("#replay-missing").inner_text()
    assert "Loading" not in await page.locator("main").inner_text()
    await xena.close()
    await oscar.close()
    assert errors == []


async def test_a_rated_game_aborted_says_its_verdict_once_offers_no_rematch_and_claims_no_deal(
    server: Server, browser: Any
) -> None:
    """Both seats come from one address: the verdict said "Rated, and flagged: ... it is rated,
    and flagged for review". An aborted game offered a rematch; tic-tac-toe's seed check said
    "the deal was fixed in advance" of a game with no deal."""
    for name in ("ada", "bob"):
        await server.store.create_user(name, "a long password")
    page, errors = await open_page(browser, server.http_url, "ada", "a long password")
    await page.select_option("#game", "tictactoe")
    await page.select_option("#clock", "5+3")
    await page.check("#rated")
    await page.click("#create-room")
    await page.wait_for_selector("#waiting")
    code = await page.locator("#room-code").inner_text()
    bob = await Client.connect(server.url, name="bob", password="a long password")
    await bob.join(code)
    await page.wait_for_selector("#abort")
    await page.wait_for_function("() => document.querySelector('#log').textContent.includes('flagged')")
    log = await page.locator("#log").inner_text()
    assert log.count("flagged") == 1, log
    assert "This rated game's seats share an address: it is rated, and flagged for review." in log
    await page.click("#abort")
    await page.wait_for_selector("#result")
    assert "Aborted" in await page.locator("#result .headline").inner_text()
    await page.wait_for_selector('#fair[data-ok="yes"]')
    fair = await page.locator("#fair").inner_text()
    assert "deal" not in fair and "nothing in this game is left to chance" in fair
    assert await page.locator("#rematch").count() == 0
    await bob.close()
    assert errors == []


def hand_order(labels: list[str]) -> list[tuple[int, int]]:
    suits = ["CLUBS", "DIAMONDS", "SPADES", "HEARTS"]
    ranks = {"J": 11, "Q": 12, "K": 13, "A": 14}
    return [(suits.index(s), ranks.get(r) or int(r)) for r, s in (label.split(" ") for label in labels)]


@pytest.mark.slow
async def test_hearts_pass_words_sorted_hand_the_trick_taken_and_the_cards_received(
    server: Server, browser: Any, bots: Any
) -> None:
    await bots("random")
    page, errors = await open_page(browser, server.http_url, "ada")
    await page.select_option("#game", "hearts")
    for seat in (1, 2, 3):
        await page.select_option(f"#seat{seat}", "bot:random")
    await page.click("#create-room")
    await page.wait_for_selector("#board .recycle")
    code = await page.locator("#room-code").inner_text()
    hand = page.locator('[data-seat-area="0"] [data-zone="HAND"] .pcard')
    await page.wait_for_selector(".pcard.playable")
    dealt = await hand.evaluate_all("cards => cards.map(c => c.dataset.card)")
    assert len(dealt) == 13 and hand_order(dealt) == sorted(hand_order(dealt))  # by suit, then rank
    # The pass: said as a pass, counters in words or not at all, no empty stock.
    assert await page.locator("#prompt .prompt-text").inner_text() == "Your move: click a card to pass it (face down)"
    table = await page.locator(".table .seat-title").inner_text()
    assert "pass to the next player" in table and "deal 1" in table
    assert not re.search(r"passed|shift|broken", table), table
    assert await page.locator('[data-zone="STOCK"]').count() == 0
    passed = []
    for _ in range(3):
        seq = await page.locator("#board").get_attribute("data-seq")
        card = page.locator('[data-seat-area="0"] .pcard.playable >> nth=0')
        passed.append(await card.get_attribute("data-card"))
        await card.click()
        await page.wait_for_function(
            "seq => document.querySelector('#board').dataset.seq !== seq", arg=seq
        )  # fmt: skip
    assert "ada (you) puts a card face down in their pass" in await page.locator("#log").inner_text()
    assert "plays a card face down" not in await page.locator("#log").inner_text()
    # Every seat has passed: the three cards received are shown, and they are the room's.
    await page.wait_for_selector("#received")
    received = await page.locator('[data-seat-area="0"] .pcard.received').evaluate_all(
        "cards => cards.map(c => c.dataset.card)"
    )
    assert len(received) == 3 and not set(received) & set(dealt)
    view = server.rooms[code].core.state.view(0)  # type: ignore[union-attr]
    hands = [loc for loc in view["locations"] if loc["owner"] == 0 and loc["name"] == "HAND"]
    held = {" ".join(str(v) for v in c["attrs"].values()) for loc in hands for c in loc["cards"]}
    assert set(received) <= held and held == (set(dealt) - set(passed)) | set(received)
    said = await page.locator("#received").inner_text()
    assert all(label in said for label in received), said
    # The others' hands stay face down: the page shows no card of theirs.
    assert await page.locator('[data-seat-area="1"] [data-zone="HAND"] .pcard:not(.back)').count() == 0
    # Play on until a trick has been taken: it stays in sight, with its four cards, during the next.
    for _ in range(13):
        await page.wait_for_selector(".pcard.playable, #result")
        if await page.locator("#last-trick").count():
            break
        seq = await page.locator("#board").get_attribute("data-seq")
        await page.click('[data-seat-area="0"] .pcard.playable >> nth=0')
        await page.wait_for_function("seq => document.querySelector('#board').dataset.seq !== seq", arg=seq)
    await page.wait_for_selector("#last-trick")
    assert await page.locator("#last-trick .pcard").count() == 4
    assert errors == []


async def test_the_taker_of_a_seek_reads_whom_it_was_paired_with(server: Server, browser: Any) -> None:
    dee = await Client.connect(server.url, name="dee")
    await dee.seek("tictactoe", clock={"per_move": 30.0})
    page, errors = await open_page(browser, server.http_url, "ada")
    await page.click('#seeks .take-seek:text-is("Play")')
    await page.wait_for_selector("#board")
    await page.wait_for_function("() => document.querySelector('#log').textContent.includes('Paired with')")
    assert "Paired with dee." in await page.locator("#log").inner_text()
    await dee.close()
    assert errors == []


@pytest.mark.slow
async def test_a_round_robins_rest_is_a_bye_as_the_command_line_says(server: Server, browser: Any) -> None:
    """Three bots in a round robin: one rests each round. The page said "rests" where `partida
    tournament pairings` says "(bye)"."""
    await server.store.create_user("org", "a long password")
    org = await Client.connect(server.url, name="org", password="a long password")
    clock = {"initial": 60.0, "increment": 0.0}
    await org.tournament_create("trio", "tictactoe", "round-robin", clock, entry="bots", starts_in=3600)
    tasks = []
    for name in ("one", "two", "three"):
        _, token = await server.store.create_bot(name)
        runner = BotRunner(server.url, "random", name=name, token=token, tournaments=["trio"])
        tasks.append(asyncio.get_running_loop().create_task(runner.run(reconnect=False)))
    try:
        async with asyncio.timeout(90):
            while {t["name"]: t for t in await org.tournament_list()}["trio"]["entrants"] < 3:
                await asyncio.sleep(0.1)
            server.tournament_director.now = lambda: time.time() + 3660  # it is due: start it
            server.tournament_director.wake()
            while {t["name"]: t for t in await org.tournament_list()}["trio"]["status"] != "finished":
                await asyncio.sleep(0.3)
        page, errors = await open_page(
            browser, f"{server.http_url}#/tournament/trio", "ada", ready='#tournament[data-status="finished"]'
        )
        byes = page.locator('#t-pairings li[data-status="bye"]')
        assert await byes.count() == 3
        assert await byes.locator(".outcome").all_inner_texts() == ["· bye"] * 3
        assert "rests" not in await page.locator("#t-pairings").inner_text()
        assert errors == []
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await org.close()
