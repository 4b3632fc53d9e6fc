"""The browser client, in a real browser: Playwright drives Debian's Chromium against a real server
on a loopback port, and people play by clicking.

Browser tests are few and each covers a lot (the machine is small): two people and a spectator
through an invite link, a reload mid-game and the seed check at the end; a person against a bot
at Othello; a RECYCLE card game; a Duel opening; a rated room, the leaderboard and a player's
ratings; the New room form's bots. Every page must log no console error.
"""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from typing import Any

import pytest

from partida.client import Client
from partida.room.seed import seed_hash
from partida.server.app import Server
from tests.helpers import local_states, play_to_the_end, rated_results

playwright_api = pytest.importorskip("playwright.async_api")

MOVED_ON = """seq => {
  const board = document.querySelector('#board');
  return !board || board.dataset.seq !== seq || document.querySelector('#result');
}"""
STEP = 15_000  # ms: the longest any single step (a click and the server's answer) may take
BLITZ_CHOICE = "3+2"  # the new-room form's 3 minutes + 2 s a move


class Person:
    """One browser context (its own storage: a different person) with one page, recording every
    console error and uncaught exception."""

    def __init__(self, context: Any, page: Any) -> None:
        self.context = context
        self.page = page
        self.errors: list[str] = []
        page.on("console", lambda msg: self.errors.append(msg.text) if msg.type == "error" else None)
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))

    @classmethod
    async def open(cls, browser: Any, url: str, name: str, password: str = "", **context_args: Any) -> Person:
        context = await browser.new_context(**context_args)
        person = cls(context, await context.new_page())
        person.page.set_default_timeout(STEP)
        await person.page.goto(url)
        await person.page.fill("#name", name)
        if password:
            await person.page.fill("#password", password)
        await person.page.click("#enter")
        return person

    async def seq(self) -> str | None:
        return await self.page.locator("#board").get_attribute("data-seq")

    async def click_and_wait(self, selector: str) -> None:
        """Click, then wait until the board has moved on (so the next click sees a new board)."""
        before = await self.seq()
        await self.page.click(selector)
        await self.page.wait_for_function(MOVED_ON, arg=before)


def http_get(url: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read()


def http_headers(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.headers


async def test_http_serves_the_client_and_nothing_else(server: Server) -> None:
    base = server.http_url
    status, kind, body = await _in_thread(http_get, base)
    assert status == 200 and kind.startswith("text/html") and b'src="/app.js"' in body
    status, kind, body = await _in_thread(http_get, base + "r/K7QX2M")
    assert status == 200 and b'src="/app.js"' in body
    status, kind, _ = await _in_thread(http_get, base + "app.js")
    assert status == 200 and kind.startswith("text/javascript")
    headers = await _in_thread(http_headers, base)
    assert "Server" not in headers  # no software and versions to look up
    policy = dict(part.strip().split(" ", 1) for part in headers["Content-Security-Policy"].split(";"))
    assert policy["connect-src"] == "'self'"  # websockets to the page's own host only
    for path in ("../pyproject.toml", "__init__.py", "%2e%2e/server/app.py", "nope.js", "r/../../etc/passwd"):
        status, _, _ = await _in_thread(http_get, base + path)
        assert status == 404, path


async def _in_thread(fn: Any, *args: Any) -> Any:
    return await asyncio.to_thread(fn, *args)


async def test_two_people_and_a_spectator_play_tictactoe_through_an_invite_link(server: Server, browser: Any) -> None:
    ada = await Person.open(browser, server.http_url, "ada")
    page = ada.page
    await page.select_option("#game", "tictactoe")
    await page.uncheck("#public")  # private: only the link leads there
    await page.click("#create-room")
    invite = await page.locator("#invite").input_value()
    code = await page.locator("#room-code").inner_text()
    assert invite.endswith(f"/r/{code}")
    await page.wait_for_selector("#waiting")
    # Leaving before the start frees the seat; the invite link brings ada back to it.
    await page.click("#leave")
    await page.wait_for_selector("#create-room")
    assert server.rooms[code].core.seats[0] is None
    await page.goto(invite)
    await page.wait_for_selector("#waiting")
    assert await page.locator("li.me").count() == 1

    bob = await Person.open(browser, invite, "bob")
    await bob.page.wait_for_selector("#board")
    watcher = await Person.open(browser, invite, "cy")  # the seats are taken: cy watches
    await watcher.page.wait_for_selector("#watching")

    await ada.click_and_wait('[data-square="0"]')
    await bob.click_and_wait('[data-square="3"]')
    await ada.click_and_wait('[data-square="1"]')
    # Bob reloads mid-game: the seat token kept in the browser brings him back to his seat.
    await bob.page.reload()
    await bob.page.wait_for_selector("#prompt")
    assert await bob.page.locator("li.me").count() == 1
    await bob.click_and_wait('[data-square="4"]')
    await ada.click_and_wait('[data-square="2"]')

    for person in (ada, bob, watcher):
        await person.page.wait_for_selector("#result")
        await person.page.wait_for_selector('#fair[data-ok="yes"]')
    assert "ada (you) wins" in await page.locator("#result").inner_text()
    assert "ada wins" in await watcher.page.locator("#result").inner_text()
    seed = await page.locator("#seed").inner_text()
    room = server.rooms[code]
    assert seed == str(room.core.seed)  # exact, though seeds exceed 2^53
    assert (await watcher.page.locator('[data-square="4"]').inner_text()) == "O"
    log = await watcher.page.locator("#log").inner_text()
    assert "bob plays b2" in log
    assert await watcher.page.locator("#replay-this").count() == 0  # a private game's history is its accounts'
    for person in (ada, bob, watcher):
        assert person.errors == [], person.errors


async def test_a_person_plays_othello_against_a_bot_to_the_end_by_clicking(
    server: Server, browser: Any, bots: Any
) -> None:
    await bots("random")
    await server.store.create_user("ada", "correct horse")
    context = await browser.new_context(viewport={"width": 390, "height": 844})  # a phone
    ada = Person(context, await context.new_page())
    page = ada.page
    page.set_default_timeout(STEP)
    await page.goto(server.http_url)
    await page.fill("#name", "ada")
    await page.fill("#password", "correct horse")  # an account, not a guest
    await page.click("#enter")
    await page.wait_for_selector("#create-room")
    assert await page.locator("#you").inner_text() == "ada (user)"
    await page.select_option("#game", "othello")
    await page.select_option("#seat1", "bot:random")  # the lobby lists the bots connected for the game
    await page.click("#create-room")
    await page.wait_for_selector("#board")
    assert await page.locator('[data-count="black"]').inner_text() == "ada (you): 2"
    # Coordinates around the board (the log says `plays G5`), and the prompt in sight on a phone.
    assert await page.locator(".othello-frame .files span").all_inner_texts() == list("abcdefgh")
    assert await page.locator(".othello-frame .ranks span").all_inner_texts() == [str(r) for r in range(1, 9)]
    await page.wait_for_selector("#prompt")
    prompt = await page.locator("#prompt").bounding_box()
    assert prompt is not None and prompt["y"] + prompt["height"] <= 844
    moves = 0
    while True:
        await page.wait_for_selector(".sq.playable, #result")
        if await page.locator("#result").count():
            break
        assert await page.locator(".sq.legal").count() == 0  # our own legal moves are the playable ones
        await ada.click_and_wait(".sq.playable >> nth=0")
        moves += 1
        if moves == 3:  # the connection drops: the page comes back to its seat by itself
            dropped = [s for s in server.sessions if s.name == "ada"]
            for session in dropped:
                session.websocket.transport.abort()  # type: ignore[union-attr]  # as a network failure would
            await page.wait_for_function("() => document.querySelector('#status').dataset.kind === 'error'")
            await page.wait_for_function("() => document.querySelector('#status').textContent === ''")
            assert dropped and all(s not in server.sessions for s in dropped)
    assert moves >= 2
    view = server.rooms[await page.locator("#room-code").inner_text()].core.state.view(None)  # type: ignore[union-attr]
    black, white = view["counts"]
    assert await page.locator('[data-count="black"]').inner_text() == f"ada (you): {black}"
    assert await page.locator('[data-count="white"]').inner_text() == f"test-random: {white}"
    headline = await page.locator("#result .headline").inner_text()
    expected = "ada (you) wins" if black > white else "test-random wins" if white > black else "Draw"
    assert expected in headline
    assert await page.locator(".sq.last").count() == 1
    assert "ada (you) plays" in await page.locator("#log").inner_text()
    # The phone layout: one column (the side panel under the board), nothing wider than the screen.
    assert await page.evaluate("document.documentElement.scrollWidth") <= 390
    board = await page.locator("#board").bounding_box()
    side = await page.locator("aside.side").bounding_box()
    assert board is not None and side is not None
    assert board["x"] >= 0 and board["x"] + board["width"] <= 390
    assert side["y"] >= board["y"] + board["height"]
    assert ada.errors == [], ada.errors


async def test_a_recycle_card_game_plays_to_the_end_in_the_generic_renderer(
    server: Server, browser: Any, bots: Any
) -> None:
    await bots("random")
    ada = await Person.open(browser, f"{server.http_url}r/ZZZZZZ", "ada")  # a link to no room: the lobby
    page = ada.page
    await page.wait_for_selector("#create-room")
    # The lobby is drawn first; the sentence follows once the lobby's listing has come back.
    await page.wait_for_function("() => document.querySelector('#status').textContent.includes('no room ZZZZZZ')")
    assert "There is no room ZZZZZZ" in await page.locator("#status").inner_text()
    await page.select_option("#game", "agram")
    for seat in (1, 2, 3):
        await page.select_option(f"#seat{seat}", "bot:random")
    await page.click("#create-room")
    await page.wait_for_selector("#board .recycle")
    code = await page.locator("#room-code").inner_text()
    # Someone in the lobby sees the public room and watches it.
    cy = await Person.open(browser, server.http_url, "cy")
    await cy.page.click(f'[data-room="{code}"] button:text-is("Watch")')
    await cy.page.wait_for_selector("#watching")
    await cy.page.wait_for_selector("#board .recycle")
    assert await cy.page.locator('[data-zone="HAND"] .pcard:not(.back)').count() == 0
    # Our hand face up, the others' face down with counts: the view hides them, so does the page.
    assert await page.locator('[data-seat-area="0"] [data-zone="HAND"] .pcard:not(.back)').count() == 6
    assert await page.locator('[data-seat-area="1"] [data-zone="HAND"] .pcard.back').count() == 6
    clicks = 0
    while True:
        await page.wait_for_selector(".pcard.playable, #result")
        if await page.locator("#result").count():
            break
        card = page.locator(".pcard.playable >> nth=0")
        chosen = await card.get_attribute("data-card")
        assert "choose one" not in await page.locator("#prompt .prompt-text").inner_text()
        await ada.click_and_wait(".pcard.playable >> nth=0")
        if await page.locator("#result").count() == 0 and clicks == 0:
            # the card just played lies on the table under its player's name (unless the trick closed)
            mine = page.locator(f'.table .played[data-by="0"] [data-card="{chosen}"]')
            bots_cards = page.locator('.table .played:not([data-by="0"])')
            assert await mine.count() == 1 or await bots_cards.count() == 0
        assert await page.locator(f'[data-seat-area="0"] [data-zone="HAND"] [data-card="{chosen}"]').count() == 0
        clicks += 1
    assert clicks == 6  # one card per trick, six tricks
    assert await page.locator("table.rounds tbody tr").count() >= 1
    assert await page.locator('#fair[data-ok="yes"]').count() == 1
    await cy.page.wait_for_selector('#fair[data-ok="yes"]')
    # The finished public game, replayed from its end: every hand face down at every step.
    await cy.page.click("#replay-this")
    await cy.page.wait_for_selector("#replay-board .recycle")
    moves = len(server.rooms[code].core.actions)
    assert await cy.page.locator("#replay-step").inner_text() == f"move {moves} of {moves}"
    await cy.page.click("#replay-first")
    assert await cy.page.locator('#replay-board [data-zone="HAND"] .pcard.back').count() == 24
    assert await cy.page.locator('#replay-board [data-zone="HAND"] .pcard:not(.back)').count() == 0
    for person in (ada, cy):
        assert person.errors == [], person.errors


DUEL_SEED = 83  # a deal where the scripted players below reach every step within a dozen decisions


async def test_a_duel_through_mulligan_land_creature_attack_and_block(
    server: Server, browser: Any, connect: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person (white, in the browser) against a scripted opponent (red, a protocol client that
    plays lands and creatures, attacks with everything and never blocks)."""
    from partida.server import entropy
    from partida.server.rooms import codes

    fixed = [(DUEL_SEED, seed_hash(DUEL_SEED))]
    monkeypatch.setattr(codes, "_SEEDS", entropy.Pool(lambda n: fixed * n))  # every room's seed is DUEL_SEED
    games = {g["name"]: g for g in await (await connect(name="warm-up")).list_games()}
    cards = games["duel"]["cards"]
    red = await connect(name="red")
    created = await red.create_room("duel", seat=1)
    code = created["room"]
    opponent = asyncio.create_task(red.play(code, scripted_opponent(cards)))

    ada = await Person.open(browser, f"{server.http_url}r/{code}", "ada")
    page = ada.page
    await page.wait_for_selector("#board .duel")
    done: set[str] = set()
    for _ in range(60):
        if done >= {"keep", "land", "creature", "attack", "block"}:
            break
        await page.wait_for_selector("#prompt, #result")
        assert not await page.locator("#result").count(), "the game ended before every step was seen"
        name = await page.locator("#prompt").get_attribute("data-name")
        if name == "mulligan":
            await ada.click_and_wait('#prompt [data-option="0"]')  # keep
            done.add("keep")
        elif name == "scry":
            await ada.click_and_wait('#prompt [data-option="0"]')
        elif name == "main":
            if await page.locator(".dcard.playable.land").count():
                await ada.click_and_wait(".dcard.playable.land >> nth=0")
                done.add("land")
            elif await page.locator(".dcard.playable.creature").count():
                before = await ada.seq()
                await page.click(".dcard.playable.creature >> nth=0")
                await page.wait_for_function(f"s => ({MOVED_ON})(s) || document.querySelector('.target')", arg=before)
                if await page.locator(".target").count():  # a creature whose arrival has a target
                    await ada.click_and_wait(".target >> nth=0")
                done.add("creature")
            else:
                await ada.click_and_wait('#prompt button.choice:text-is("pass")')
        elif name == "attackers":  # click each of our creatures that may attack, then confirm
            if "attack" not in done and await page.locator(".perm.candidate").count():
                for _ in range(await page.locator(".perm.candidate").count()):
                    await page.click(".perm.candidate:not(.chosen-attacker) >> nth=0")
                done.add("attack")
            await ada.click_and_wait("#prompt [data-confirm]")
        elif name == "blockers":  # click one of ours, then the attacker it blocks, then confirm
            if await page.locator(".perm.candidate").count():
                await page.click(".perm.candidate >> nth=0")
                await page.click(".perm.target >> nth=0")
                await page.wait_for_selector(".perm.assigned")
                done.add("block")
            await ada.click_and_wait("#prompt [data-confirm]")
        else:
            await ada.click_and_wait("#prompt [data-confirm]")
    assert done >= {"keep", "land", "creature", "attack", "block"}, done
    log = await page.locator("#log").inner_text()
    for words in ("ada (you) keeps 7 cards", "ada (you) plays Plains", "ada (you) casts", "ada (you) attacks with"):
        assert words in log, (words, log)
    assert "ada (you) blocks: " in log, log
    # The board: our creatures with power/toughness, the opponent's hand only as a count.
    assert await page.locator('[data-side="0"] .perm.creature').count() >= 1
    hand = server.rooms[code].core.state.view(0)["hand"]  # type: ignore[union-attr]
    assert await page.locator("[data-hand]").count() == len(hand)
    assert "in hand" in await page.locator('[data-player="1"]').inner_text()
    # A spectator (the seats are full, so the link means watching) sees the table, no hand.
    cy = await Person.open(browser, f"{server.http_url}r/{code}", "cy")
    await cy.page.wait_for_selector("#watching")
    await cy.page.wait_for_selector("#board .duel")
    assert await cy.page.locator("[data-hand], #hand, #prompt").count() == 0
    assert await cy.page.locator(".perm.creature").count() == await page.locator(".perm.creature").count()
    opponent.cancel()
    for person in (ada, cy):
        assert person.errors == [], person.errors


def scripted_opponent(cards: dict[str, Any]) -> Any:
    def decide(update: dict[str, Any], prompt: Any) -> Any:
        view = update["view"]
        hand = {c["id"]: c["name"] for c in view.get("hand", [])}
        if prompt.name == "mulligan":
            return "keep"
        if prompt.name == "scry":
            return "top"
        if prompt.name == "main":
            options = [o for o in prompt.options if o != "pass"]
            lands = [o for o in options if "play" in o]
            creatures = [o for o in options if "cast" in o and cards[hand[o["cast"]]]["type"] == "creature"]
            return (lands or creatures or ["pass"])[0]
        if prompt.name == "attackers":
            return list(prompt.candidates)
        if prompt.name == "blockers":
            return []
        if prompt.name == "discard":
            return list(prompt.candidates[: prompt.min])
        return list(prompt.items)

    return decide


async def test_client_modules_read_big_seeds_check_hashes_and_announce_passes(server: Server, browser: Any) -> None:
    """The page's own modules, run in the browser: seeds beyond 2^53 survive (as numbers or as
    strings), the SHA-256 check agrees with the server's (the browser's SHA-256 and the bundled one
    used where browsers withhold theirs), and Othello's automatic passes are told."""
    page = await browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    await page.goto(server.http_url)
    seed = 2**63 - 25  # far beyond what a float holds exactly
    result = await page.evaluate(
        """async (seed) => {
          const proto = await import('/proto.js');
          const boards = await import('/board_basic.js');
          const asNumber = proto.parseFrame(`{"type":"game_over","room":"AB","seed":${seed},"n":1}`);
          const asString = proto.parseFrame(`{"type":"game_over","room":"AB","seed":"${seed}"}`);
          return {
            number: asNumber.seed, string: asString.seed, n: asNumber.n,
            hash: await proto.seedHash(asNumber.seed),
            pass: boards.othello.passNote({last: {seat: 0, action: 'd3'}, view: {to_move: 0, over: false}}),
            noPass: boards.othello.passNote({last: {seat: 0, action: 'd3'}, view: {to_move: 1, over: false}}),
            fallback: await Promise.all([0, 1, 55, 56, 63, 64, 119, 1000].map(async (n) => {
              const bytes = new Uint8Array(n).map((_, i) => (i * 7 + n) & 255);
              const subtle = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
              const hex = [...subtle].map((b) => b.toString(16).padStart(2, '0')).join('');
              return hex === (await import('/sha256.js')).sha256Hex(bytes);
            })),
          };
        }""",
        str(seed),
    )
    assert result["number"] == result["string"] == str(seed)
    assert result["n"] == 1
    assert result["hash"] == seed_hash(seed)
    assert result["pass"] == "white has no legal move and passes"
    assert result["noPass"] is None
    assert result["fallback"] == [True] * 8  # the bundled SHA-256 (plain-http LAN pages) agrees
    assert errors == []


async def test_clocks_draw_offers_rematch_and_resigning(server: Server, browser: Any) -> None:
    ada = await Person.open(browser, server.http_url, "ada")
    page = ada.page
    await page.select_option("#game", "tictactoe")
    await page.select_option("#clock", "5+3")
    await page.click("#create-room")
    bob = await Person.open(browser, await page.locator("#invite").input_value(), "bob")
    await bob.page.wait_for_selector("#board")
    await page.wait_for_selector('[data-clock="0"]')
    assert await page.locator(".clock.running").count() == 1  # only the seat to move runs
    await ada.click_and_wait('[data-square="4"]')
    await page.click("#offer-draw")
    await page.wait_for_selector("#draw-offered")
    await bob.page.click("#accept-draw")
    for person in (ada, bob):
        await person.page.wait_for_selector("#result")
        assert "Draw by agreement" in await person.page.locator("#result .headline").inner_text()
    old = await page.locator("#room-code").inner_text()
    # Both ask for a rematch: a new room opens, colours swapped, each browser in its new seat.
    await page.click("#rematch")
    await bob.page.wait_for_selector("text=ada asks for a rematch")
    await bob.page.click("#rematch")
    for person in (ada, bob):
        await person.page.wait_for_function(
            "old => { const c = document.querySelector('#room-code'); return c && c.textContent !== old; }", arg=old
        )
        await person.page.wait_for_selector("#board")
    new = await page.locator("#room-code").inner_text()
    assert await bob.page.locator("#room-code").inner_text() == new
    assert (await page.locator("li.me").get_attribute("data-seat")) == "1"  # ada now plays O
    # Bob (X now) resigns: two clicks, the second to confirm.
    await bob.page.click("#resign")
    assert not await bob.page.locator("#result").count()
    await bob.page.click("#resign")
    await page.wait_for_selector("#result")
    assert "ada (you) wins by resignation" in await page.locator("#result .headline").inner_text()
    assert bob.page.url.endswith(f"/r/{new}")
    for person in (ada, bob):
        assert person.errors == [], person.errors


async def test_a_stored_game_replays_move_by_move(server: Server, browser: Any, connect: Any) -> None:
    x, o = await connect(name="xena"), await connect(name="oscar")
    created = await x.create_room("tictactoe", seat=0)
    code = created["room"]
    await o.join(code)
    moves = iter([0, 3, 1, 4, 2])
    await asyncio.gather(x.play(code, lambda u, p: next(moves)), o.play(code, lambda u, p: next(moves)))
    ada = await Person.open(browser, server.http_url, "ada")
    page = ada.page
    assert "xena won" in await page.locator("#stored").inner_text()  # finished games say who won
    await page.click('#stored [data-game-id] button:text-is("Replay")')
    await page.wait_for_selector("#replay")
    assert await page.locator("#replay-step").inner_text() == "move 5 of 5"
    await page.click("#replay-first")
    assert await page.locator("#replay-board .cell.mark0").count() == 0
    await page.click("#replay-next")
    await page.click("#replay-next")
    assert await page.locator("#replay-step").inner_text() == "move 2 of 5"
    assert await page.locator('#replay-board [data-square="3"]').inner_text() == "O"
    assert await page.locator('#replay-board [data-square="1"]').inner_text() == ""
    assert ada.errors == [], ada.errors


async def test_finished_othello_duel_and_agram_games_replay_board_by_board(
    server: Server, browser: Any, connect: Any
) -> None:
    """Every game steps back and forth on its own board, from the spectators' views the server
    replays: the discs of each Othello position, each Duel battlefield and no hand in any step,
    Agram's hands face down at every step."""

    games = (("othello", 2), ("duel", 2), ("agram", 4))
    ids = {game: await play_to_the_end(connect, game, seats) for game, seats in games}
    reader = await connect(name="reader")
    expected = {}
    for game, game_id in ids.items():
        record = await reader.game(game_id)
        expected[game] = (record, [state.view(None) for state in local_states(server, record)])
    ada = await Person.open(browser, server.http_url, "ada")
    page = ada.page

    async def open_replay(game: str) -> int:
        await page.click("#home")
        await page.click(f'#stored [data-game-id="{ids[game]}"] button')
        await page.wait_for_selector(f'#replay-board[data-game="{game}"]')
        last = len(expected[game][1]) - 1
        assert await page.locator("#replay-step").inner_text() == f"move {last} of {last}"
        return last

    async def to_step(step: int) -> None:
        await page.fill("#replay-slider", str(step))
        await page.wait_for_selector(f'#replay-board[data-step="{step}"]')

    # Othello: the discs of every position, the last move marked, passes told.
    last = await open_replay("othello")
    record, views = expected["othello"]
    await page.click("#replay-first")
    assert await page.locator("#replay-board .othello .disc.black").count() == 2
    assert await page.locator("#replay-board .othello .disc.white").count() == 2
    for step in (1, 2, last // 2, last - 1, last):
        await to_step(step)
        black, white = views[step]["counts"]
        assert await page.locator("#replay-board .othello .disc.black").count() == black, step
        assert await page.locator("#replay-board .othello .disc.white").count() == white, step
        marked = await page.locator("#replay-board .sq.last").get_attribute("data-square")
        assert marked == record["log"][step - 1]["action"], step
    await page.click("#replay-prev")
    assert await page.locator("#replay-step").inner_text() == f"move {last - 1} of {last}"
    await page.click('#replay-log [data-step="3"]')  # a move in the list jumps there
    assert await page.locator("#replay-step").inner_text() == f"move 3 of {last}"

    # Duel: each step's battlefield, phase and life; never a hand.
    last = await open_replay("duel")
    record, views = expected["duel"]
    for step in sorted({0, 1, 2, 5, last // 3, last // 2, (2 * last) // 3, last - 1, last}):
        await to_step(step)
        view = views[step]
        assert await page.locator("#replay-board .perm").count() == len(view["battlefield"]), step
        assert await page.locator("#phase").get_attribute("data-phase") == view["phase"]
        assert await page.locator("#replay-board #hand, #replay-board [data-hand]").count() == 0
        for seat, player in enumerate(view["players"]):
            assert f"{player['hand_count']} in hand" in await page.locator(f'[data-player="{seat}"]').inner_text()
            assert (await page.locator(f'[data-life="{seat}"]').inner_text()).strip() == f"{player['life']} life"

    # Agram: the hands face down (as counts) at every step; the table's cards face up.
    last = await open_replay("agram")
    record, views = expected["agram"]
    for step in range(last + 1):
        await to_step(step)
        assert await page.locator('#replay-board [data-zone="HAND"] .pcard:not(.back)').count() == 0, step
        hidden = sum(min(loc["count"], 13) for loc in views[step]["locations"] if "cards" not in loc)
        assert await page.locator("#replay-board .pcard.back").count() == hidden, step
        shown = sum(len(loc.get("cards", [])) for loc in views[step]["locations"])
        assert await page.locator("#replay-board .pcard:not(.back)").count() == shown, step
    assert ada.errors == [], ada.errors


async def test_ladder_standings_and_rating_plot(server: Server, browser: Any, runners: Any, connect: Any) -> None:
    """A real ladder: three bots play tic-tac-toe until six games are rated, then the scheduler
    stops (so the figures hold still) and the page shows the standings and one line per bot."""
    ladder = await server.store.ladders.create("ttt", "tictactoe", {}, 2, {"per_move": 5.0}, 2)
    for name in ("ann", "bob", "cid"):
        await runners(name, ladders=["ttt"])
    for _ in range(1200):
        if (await server.store.ladders.require("ttt")).rated_games >= 6:
            break
        await asyncio.sleep(0.05)
    await server.ladder_director.stop()
    for _ in range(1200):
        if all(g.status != "playing" for g in await server.store.ladders.games(ladder.id, live=True)):
            break
        await asyncio.sleep(0.05)
    watcher = await connect(name="watcher")
    standings = await watcher.ladder_standings("ttt")
    rated = (await server.store.ladders.require("ttt")).rated_games
    assert rated >= 6

    ada = await Person.open(browser, server.http_url, "ada", viewport={"width": 390, "height": 844})  # a phone
    page = ada.page
    await page.click('#ladders [data-ladder="ttt"] button:text-is("Standings")')
    await page.wait_for_selector(f'#ladder[data-rated="{rated}"]')
    rows = page.locator("table.standings tbody tr")
    assert await rows.count() == 3
    for i, row in enumerate(standings):
        cells = await rows.nth(i).locator("td").all_inner_texts()
        assert cells[:3] == [str(row["rank"]), row["name"], f"{row['rating']:.2f}"]
        assert cells[5:] == [str(row[k]) for k in ("games", "wins", "draws", "losses")]
        line = page.locator(f'#rating-plot g[data-bot="{row["name"]}"]')
        assert await line.locator("polyline").get_attribute("data-points") == str(row["games"] + 1)
        assert await line.locator("circle").get_attribute("data-mu") == f"{row['mu']:.3f}"
    assert await page.locator("#rating-plot .legend li").all_inner_texts() == [r["name"] for r in standings]
    # The phone shows the whole plot: nothing wider than the screen.
    assert await page.evaluate("document.documentElement.scrollWidth") <= 390
    # The whole table too, `lost` included, without a sideways scroll of its own.
    fits = "(() => { const t = document.querySelector('#standings'); return t.scrollWidth <= t.clientWidth; })()"
    assert await page.evaluate(fits)
    assert "clock 5 s per move" in await page.locator("#ladder-info").inner_text()
    assert (await page.locator("#ladder-info").inner_text()).startswith("Tic-tac-toe, 2 seats")  # a title, not a name
    # The ladder has an address: a reload stays on it.
    assert page.url.endswith("/#/ladder/ttt")
    await page.reload()
    await page.wait_for_selector(f'#ladder[data-rated="{rated}"]')
    assert ada.errors == [], ada.errors


async def test_the_move_record_reaches_a_reload_and_a_late_spectator_and_replays_have_addresses(
    server: Server, browser: Any, connect: Any
) -> None:
    """The move list is the whole record from the server with true move numbers: after a reload,
    and for someone who opens a finished game; a replay keeps its address through a reload."""
    xena = await connect(name="xena")
    code = (await xena.create_room("tictactoe", seat=0))["room"]
    moves = iter([0, 1, 2])
    playing = asyncio.create_task(xena.play(code, lambda u, p: next(moves)))
    ada = await Person.open(browser, f"{server.http_url}r/{code}", "ada")
    page = ada.page
    await page.wait_for_selector('[data-square="3"].playable')
    await ada.click_and_wait('[data-square="3"]')
    await page.wait_for_selector('[data-square="4"].playable')
    await page.reload()
    await page.wait_for_selector('#log [data-move="3"]')
    assert await page.locator("#log [data-move]").all_inner_texts() == [
        "1.xena plays a1",
        "2.ada (you) plays a2",
        "3.xena plays b1",
    ]
    await ada.click_and_wait('[data-square="4"]')
    await playing
    await page.wait_for_selector("#result")
    # Someone opens the finished game's link on a phone: every move, numbered.
    cy = await Person.open(browser, f"{server.http_url}r/{code}", "cy", viewport={"width": 390, "height": 844})
    await cy.page.wait_for_selector('#log [data-move="5"]')
    lines = await cy.page.locator("#log [data-move]").all_inner_texts()
    assert [line.split(".", 1)[0] for line in lines] == ["1", "2", "3", "4", "5"]
    assert lines[0].startswith("1.xena") and lines[1].startswith("2.ada")
    assert "xena wins" in await cy.page.locator("#result .headline").inner_text()
    assert "1 a win" in await cy.page.locator("#scores").inner_text()
    # Its replay has an address: a reload stays there, and the phone never scrolls sideways.
    game_id = server.rooms[code].core.game_id
    await cy.page.click("#replay-this")
    await cy.page.wait_for_selector("#replay")
    assert cy.page.url.endswith(f"/#/replay/{game_id}")
    await cy.page.reload()
    await cy.page.wait_for_selector("#replay")
    assert await cy.page.locator("#replay-step").inner_text() == "move 5 of 5"
    assert await cy.page.evaluate("document.documentElement.scrollWidth") <= 390
    await cy.page.go_back()
    await cy.page.wait_for_selector("#result")
    for person in (ada, cy):
        assert person.errors == [], person.errors


async def test_a_link_carrying_a_seat_token_asks_before_taking_the_seat(
    server: Server, browser: Any, connect: Any
) -> None:
    """A crafted `/r/CODE#name=...&seat=0:TOKEN` neither renames the visitor nor seats them
    unless they say yes."""
    xena = await connect(name="xena")
    created = await xena.create_room("tictactoe", seat=0)
    code = created["room"]
    newcomer = await browser.new_context()
    first = await newcomer.new_page()
    await first.goto(server.http_url)
    await first.wait_for_selector("#name")
    assert not await first.locator("#logout").is_visible()  # no "change name" before a name exists
    await newcomer.close()
    dan = await Person.open(browser, server.http_url, "dan")
    page = dan.page
    await page.wait_for_selector("#create-room")
    asked: list[str] = []

    async def decline(dialog: Any) -> None:
        asked.append(dialog.message)
        await dialog.dismiss()

    page.on("dialog", decline)
    await page.goto(f"{server.http_url}r/{code}#name=mallory&seat=0:{created['token']}")
    await page.wait_for_selector("#board")
    assert len(asked) == 1 and f"room {code}" in asked[0] and "mallory" in asked[0]
    assert await page.evaluate("localStorage.getItem('partida.name')") == "dan"
    assert await page.locator("#you").inner_text() == "dan (guest)"
    assert server.rooms[code].core.seats[0] is not None and await page.locator('li.me[data-seat="1"]').count() == 1
    assert "#" not in page.url
    assert dan.errors == [], dan.errors


async def test_the_lobby_shows_rooms_as_the_server_pushes_them_without_polling(
    server: Server, browser: Any, connect: Any
) -> None:
    context = await browser.new_context()
    page = await context.new_page()
    page.set_default_timeout(STEP)
    sent: list[str] = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(str(payload))))
    await page.clock.install()  # the page's timers, run ahead below instead of waited for
    await page.goto(server.http_url)
    await page.fill("#name", "ada")
    await page.click("#enter")
    await page.wait_for_selector("#rooms")
    bob = await connect(name="bob")
    code = (await bob.create_room("tictactoe", seat=0))["room"]
    await page.wait_for_selector(f'[data-room="{code}"]')
    assert "waiting" in await page.locator(f'[data-room="{code}"]').inner_text()
    cy = await connect(name="cy")
    await cy.join(code)  # the room starts: its line says so
    await page.wait_for_function(
        "code => document.querySelector(`[data-room=\"${code}\"]`)?.textContent.includes('playing')", arg=code
    )
    listed = sum('"tournament_list"' in frame for frame in sent)
    await page.clock.run_for(180_000)  # three minutes of the page's time: far past the lobby's old polling period
    # the lobby lists tournaments once a minute as a safety net (changes are pushed): frames come
    # in order, so every frame sent before the third such listing is in
    for _ in range(200):
        if sum('"tournament_list"' in frame for frame in sent) >= listed + 3:
            break
        await asyncio.sleep(0.05)
    assert sum('"tournament_list"' in frame for frame in sent) >= listed + 3, sent
    listings = [frame for frame in sent if '"list_rooms"' in frame]
    assert len(listings) == 1 and '"watch":true' in listings[0], listings
    await context.close()


async def test_the_new_room_form_offers_a_bot_only_for_the_games_it_plays(
    server: Server, browser: Any, bots: Any
) -> None:
    """mcts and alphabeta were offered for the card games; seated there they never moved."""
    await bots("mcts", "alphabeta", "random")
    ada = await Person.open(browser, server.http_url, "ada")
    page = ada.page
    await page.wait_for_selector("#create-room")

    async def bot_choices(game: str) -> set[str]:
        await page.select_option("#game", game)
        await page.wait_for_selector("#seat1")
        values = await page.locator("#seat1 option").evaluate_all("options => options.map(o => o.value)")
        return {v.removeprefix("bot:") for v in values if v.startswith("bot:")}

    for game in ("crazyeights", "hearts"):
        assert await bot_choices(game) == {"random"}, game
    assert await bot_choices("tictactoe") == {"mcts", "alphabeta", "random"}
    assert await bot_choices("crazyeights") == {"random"}  # and back again
    assert ada.errors == [], ada.errors
    await ada.context.close()


async def test_two_people_pair_through_seeks_and_a_listed_seek_is_taken_by_a_click(
    server: Server, browser: Any, connect: Any
) -> None:
    """The lobby's seeks, live: bob sees ada's seek appear, posts the same and both are in one
    room at once; ada's click on a seek someone else posted takes it."""
    bob = await Person.open(browser, server.http_url, "bob")
    await bob.page.wait_for_selector("#seeks-card")
    ada = await Person.open(browser, server.http_url, "ada")
    per_move = "move:30"
    for person in (ada, bob):
        await person.page.select_option("#seek-game", "tictactoe")
        await person.page.select_option("#seek-clock", per_move)
    await ada.page.click("#seek")
    await ada.page.wait_for_selector("#seeking:not([hidden])")
    assert "Tic-tac-toe, casual 30 s a move (rapid)" in await ada.page.locator("#seeking").inner_text()
    line = bob.page.locator("[data-seek]")  # pushed to bob's lobby: no reload, no polling
    await line.wait_for()
    assert "ada (guest)" in await line.inner_text()
    await bob.page.click("#seek")
    for person in (ada, bob):
        await person.page.wait_for_selector("#board")
    (room,) = [r for r in server.rooms.values() if r.core.status == "playing"]
    assert not room.public and room.core.clock_spec.per_move == 30
    x, o = (ada, bob) if room.core.seats[0].name == "ada" else (bob, ada)
    await x.click_and_wait('[data-square="0"]')
    await o.click_and_wait('[data-square="3"]')
    await x.click_and_wait('[data-square="1"]')
    await o.click_and_wait('[data-square="4"]')
    await x.click_and_wait('[data-square="2"]')
    await x.page.wait_for_selector("#result")
    assert "(you) wins" in await x.page.locator("#result").inner_text()
    assert "Paired with" in await ada.page.locator("#log").inner_text()

    cy = await connect(name="cy")
    posted = (await cy.seek("othello", clock={"initial": 300, "increment": 3}))["seek"]
    await ada.page.click("#to-lobby")
    await ada.page.click(f'[data-seek="{posted["id"]}"] .take-seek')
    await ada.page.wait_for_selector("#board")
    paired = await asyncio.wait_for(cy.seek_events.get(), 10)
    assert paired["seek"] == posted["id"] and paired["opponent"] == "ada"
    assert ada.page.url.endswith(f"/r/{paired['room']}")
    await bob.page.click("#to-lobby")
    await bob.page.wait_for_selector("#seeks-card")
    assert await bob.page.locator("[data-seek]").count() == 0  # taken: gone from every lobby
    for person in (ada, bob):
        assert person.errors == [], person.errors


async def test_the_lobbys_seeks_come_a_page_at_a_time_and_follow_the_pushes(limited: Any, browser: Any) -> None:
    """Fifty seeks a page: the lobby shows the first and the next on *More seeks*; a seek that
    goes is dropped at once, and a new one is shown once the last page is."""
    server = await limited(seeks_per_address=100)
    guests = [await Client.connect(server.url, name=f"g{i}") for i in range(19)]
    try:
        posted = []
        for i in range(3):
            for n, guest in enumerate(guests[:18]):  # all different clocks: nothing pairs
                posted.append((await guest.seek("tictactoe", clock={"per_move": 10 + n * 10 + i}))["seek"])
        ada = await Person.open(browser, server.http_url, "ada")
        lines = ada.page.locator("[data-seek]")
        await ada.page.wait_for_selector("#more-seeks:not([hidden])")
        assert await lines.count() == 50
        await guests[0].seek_cancel(posted[0]["id"])
        await ada.page.wait_for_selector(f'[data-seek="{posted[0]["id"]}"]', state="detached")
        late = (await guests[18].seek("othello", clock={"per_move": 30}))["seek"]  # after the pages not shown
        await ada.page.click("#more-seeks")
        await ada.page.wait_for_selector("#more-seeks", state="hidden")
        assert await lines.count() == 49 + 4 + 1
        assert await ada.page.locator(f'[data-seek="{late["id"]}"]').count() == 1
        later = (await guests[18].seek("duel", clock={"per_move": 30}))["seek"]  # the last page shown: pushed
        await ada.page.wait_for_selector(f'[data-seek="{later["id"]}"]')
        assert ada.errors == [], ada.errors
    finally:
        for guest in guests:
            await guest.close()


async def test_rated_rooms_ratings_and_the_leaderboard_in_the_browser(server: Server, browser: Any) -> None:
    pairs = [("ann", "bea") if n % 3 else ("bea", "ann") for n in range(20)] + [("cy", "dee")]
    await rated_results(server.store, pairs, {"initial": 180, "increment": 2})  # ann and bea established
    gus = await Person.open(browser, server.http_url, "gus")
    guest = gus.page
    await guest.wait_for_selector("#create-room")
    await guest.select_option("#game", "tictactoe")
    await guest.select_option("#clock", BLITZ_CHOICE)
    await guest.check("#rated")
    await guest.click("#create-room")
    await guest.wait_for_function("() => document.querySelector('#status').dataset.kind === 'error'")
    assert "only an account can play rated" in await guest.locator("#status").inner_text()
    assert not server.rooms  # refused: nothing opened

    await server.store.create_user("ada", "ada horse battery")
    await server.store.create_user("bob", "bob horse battery")
    person = await Person.open(browser, server.http_url, "ada", "ada horse battery")
    ada = person.page
    await ada.wait_for_selector("#create-room")
    # the lobby's leaderboard: established ratings, then provisional ones (cy and dee played once)
    await ada.select_option("#board-game", "tictactoe")
    await ada.wait_for_selector('#leaderboard table[data-clock-class="blitz"]')
    assert await ada.locator("#leaderboard tbody tr").evaluate_all("rows => rows.map(r => r.dataset.player)") == [
        "ann",
        "bea",
        "cy",
        "dee",
    ]
    await ada.select_option("#game", "tictactoe")
    await ada.select_option("#clock", BLITZ_CHOICE)
    await ada.check("#rated")
    await ada.click("#create-room")
    code = await ada.locator("#room-code").inner_text()
    assert server.rooms[code].rated
    bob = await Client.connect(server.url, name="bob", password="bob horse battery")
    await bob.join(code)
    for seq, cell in enumerate([0, 3, 1, 4, 2]):
        if seq % 2 == 0:
            await ada.wait_for_selector(f'#board[data-seq="{seq}"] [data-square="{cell}"]')
            await ada.click(f'[data-square="{cell}"]')
        else:
            await bob.next_update(code)
            await bob.act(code, cell, seq=seq)
    await ada.wait_for_selector("#result")
    rated = "() => document.querySelector('#log').textContent.includes('Ratings (tictactoe, blitz)')"
    await ada.wait_for_function(rated)
    log = await ada.locator("#log").inner_text()
    assert "ada 1500? →" in log and "bob 1500? →" in log
    await bob.close()

    # a player's page: ratings (provisional marked) and the history plot, one point a game
    await ada.goto(server.http_url + "#/player/bea")
    await ada.wait_for_selector("#player-ratings")
    row = ada.locator('#player-ratings tr[data-game="tictactoe"]')
    assert await row.get_attribute("data-provisional") == "false"
    await ada.wait_for_selector("#rating-history polyline")
    assert await ada.locator("#rating-history polyline").get_attribute("data-points") == "21"  # before + 20 games
    assert person.errors == [] and gus.errors == []


async def test_a_refusal_in_the_browser_says_when_to_try_again(limited: Any, browser: Any) -> None:
    """The page's protocol module reads `retry_after`: the error it raises says "try again in N
    s", and the same request sent after that long is answered."""
    server = await limited(requests_per_second=2, request_burst=3)
    page = await browser.new_page()
    await page.goto(server.http_url)
    result = await page.evaluate(
        """async (url) => {
          const proto = await import('/proto.js');
          const conn = new proto.Connection(url);
          await conn.open();
          await conn.request('hello', {version: 2, name: 'hasty'});
          let refused = null;
          for (let i = 0; i < 5 && !refused; i++) {
            try { await conn.request('ping'); } catch (error) { refused = error; }
          }
          await new Promise((done) => setTimeout(done, refused.retryAfter * 1000));
          const again = await conn.request('ping');
          conn.close();
          return {code: refused.code, wait: refused.retryAfter, message: refused.message, again: again.type};
        }""",
        server.url,
    )
    assert result["code"] == "rate_limited" and 0 < result["wait"] <= 1.01
    assert result["message"].endswith("(try again in 1 s)") and result["again"] == "pong"


async def test_two_people_on_two_nodes_pair_through_seeks(three: list[Server], browser: Any) -> None:
    """Three nodes (PostgreSQL, Mosquitto): ada's page is on node A, bob's on node B. Bob's lobby
    is pushed ada's seek; he posts the same and B pairs them, opening the room there; ada's page,
    told through A with B's URL, goes to B's page with her seat (she confirms the seat the link
    carries) and both play the game to its end."""
    a, b, _ = three
    ada = await Person.open(browser, a.http_url, "ada")
    ada.page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
    bob = await Person.open(browser, b.http_url, "bob")
    per_move = "move:30"
    for person in (ada, bob):
        await person.page.wait_for_selector("#seeks-card")
        await person.page.select_option("#seek-game", "tictactoe")
        await person.page.select_option("#seek-clock", per_move)
    await ada.page.click("#seek")
    await ada.page.wait_for_selector("#seeking:not([hidden])")
    line = bob.page.locator("[data-seek]")  # pushed to bob's lobby on another node
    await line.wait_for()
    assert "ada (guest)" in await line.inner_text()
    await bob.page.click("#seek")
    await bob.page.wait_for_selector("#board")
    await ada.page.wait_for_url(f"{b.http_url}r/*")
    await ada.page.wait_for_selector("#board")
    (room,) = [r for r in b.rooms.values() if r.core.status == "playing"]
    assert not [r for r in a.rooms.values() if r.core.status == "playing"]
    x, o = (ada, bob) if room.core.seats[0].name == "ada" else (bob, ada)
    await x.click_and_wait('[data-square="0"]')
    await o.click_and_wait('[data-square="3"]')
    await x.click_and_wait('[data-square="1"]')
    await o.click_and_wait('[data-square="4"]')
    await x.click_and_wait('[data-square="2"]')
    await x.page.wait_for_selector("#result")
    assert "(you) wins" in await x.page.locator("#result").inner_text()
    for person in (ada, bob):
        assert person.errors == [], person.errors
