"""People's ratings through a real server: a rated game's result changes its accounts' ratings
once (pushed to its seats as `rating_changed`, stored with its history), a casual or aborted
game changes nothing, a loss on time by a disconnect is rated, two accounts of one address are
flagged and then played casual, a game left unrated by a stop is rated at the next start and
never twice, and the reads (`ratings`, `rating_history`, `leaderboard`) say what is stored."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import delete, func, select
from websockets.asyncio.client import connect as ws_connect

from partida.client import Client, ServerError
from partida.server.app import Server, ServerConfig
from partida.storage.models import GameRecord, PersonRating, PersonRatingChange
from tests.helpers import Raw, wait_for

BLITZ = {"initial": 180, "increment": 2}
X_WINS = [(0, 0), (1, 3), (0, 1), (1, 4), (0, 2)]  # (seat, cell): seat 0 takes the top row


async def account(server: Server, name: str) -> Client:
    await server.store.create_user(name, f"{name} horse battery")
    return await Client.connect(server.url, name=name, password=f"{name} horse battery")


async def pushed(client: Client, code: str, kind: str, timeout: float = 10.0) -> dict[str, Any]:
    while True:
        message = await client.next_message(code, timeout)
        if message["type"] == kind:
            return message


async def rated_game(first: Client, second: Client, clock: dict[str, Any] = BLITZ) -> str:
    code = (await first.create_room("tictactoe", seat=0, public=False, clock=clock, rated=True))["room"]
    await second.join(code)
    return code


async def play(code: str, clients: list[Client], moves: list[tuple[int, int]]) -> None:
    for seq, (seat, cell) in enumerate(moves):
        await clients[seat].act(code, cell, seq=seq)


async def count(server: Server, table: Any) -> int:
    async with server.db.session() as session:
        return int(await session.scalar(select(func.count()).select_from(table)) or 0)


@pytest.mark.slow
async def test_a_rated_win_changes_both_ratings_once_and_tells_the_seats(server: Server) -> None:
    ada, bob = await account(server, "ada"), await account(server, "bob")
    code = await rated_game(ada, bob)
    verdict = await pushed(ada, code, "rating_verdict")  # both on 127.0.0.1: rated, and flagged
    assert verdict["verdict"] == "flag" and verdict["rated"] is True
    await play(code, [ada, bob], X_WINS)
    told = [await pushed(client, code, "rating_changed") for client in (ada, bob)]
    assert told[0] == told[1]
    changes = {c["name"]: c for c in told[0]["changes"]}
    assert told[0]["clock_class"] == "blitz" and told[0]["game"] == "tictactoe"
    assert changes["ada"]["rank"] == 1 and changes["bob"]["rank"] == 2
    assert changes["ada"]["after"]["rating"] > changes["ada"]["before"]["rating"] == 1500
    assert changes["ada"]["before"]["shown"] == "1500?" and 1000 < changes["bob"]["after"]["rating"] < 1500
    assert changes["ada"]["after"]["games"] == 1 and changes["ada"]["after"]["provisional"] is True

    mine = await ada.ratings()
    assert mine["name"] == "ada"
    (line,) = mine["ratings"]
    assert line["game"] == "tictactoe" and line["clock_class"] == "blitz" and line["provisional"] is True
    assert line["rating"] == changes["ada"]["after"]["rating"] and line["shown"] == f"{line['rating']}?"
    history = await bob.rating_history("ada", "tictactoe", "blitz")
    assert [p["game_id"] for p in history] == [told[0]["game_id"]]
    assert history[0]["after"]["rating"] == line["rating"] and history[0]["rank"] == 1
    board = await bob.leaderboard("tictactoe")
    assert set(board) == {"bullet", "blitz", "rapid", "classical", "correspondence"} and board["bullet"] == []
    # a new server's board is all provisional: listed, marked, rather than empty
    assert [(p["place"], p["name"], p["provisional"]) for p in board["blitz"]] == [(1, "ada", True), (2, "bob", True)]
    assert await count(server, PersonRatingChange) == 2 and await count(server, PersonRating) == 2
    # the same game rated again (a restart's catch-up, a result told twice) changes nothing
    assert await server.store.rate_game(told[0]["game_id"]) == []
    assert await count(server, PersonRatingChange) == 2
    for client in (ada, bob):
        await client.close()


@pytest.mark.slow
async def test_casual_and_aborted_games_change_nothing(server: Server) -> None:
    ada, bob = await account(server, "ada"), await account(server, "bob")
    casual = (await ada.create_room("tictactoe", seat=0, public=False, clock=BLITZ))["room"]
    await bob.join(casual)
    await play(casual, [ada, bob], X_WINS)
    await ada.next_update(casual)
    aborted = await rated_game(ada, bob)
    await ada.abort(aborted)
    # a third game, rated and played, so that the two before had their chance to be rated
    code = await rated_game(ada, bob)
    await play(code, [ada, bob], X_WINS)
    told = await pushed(ada, code, "rating_changed")
    assert [c["after"]["games"] for c in told["changes"]] == [1, 1]
    assert await count(server, PersonRatingChange) == 2
    for client in (ada, bob):
        await client.close()


@pytest.mark.slow
async def test_a_disconnect_under_a_clock_loses_on_time_and_is_rated(server: Server) -> None:
    ada, bob = await account(server, "ada"), await account(server, "bob")
    code = await rated_game(ada, bob, clock={"initial": 1, "increment": 0})
    await ada.act(code, 4, seq=0)
    await bob.close()  # bob's clock runs out while he is away
    told = await pushed(ada, code, "rating_changed")
    ranks = {c["name"]: c["rank"] for c in told["changes"]}
    assert ranks == {"ada": 1, "bob": 2} and told["clock_class"] == "bullet"
    await ada.close()


@pytest.mark.slow
async def test_two_accounts_of_one_address_are_flagged_then_play_casual(server: Server) -> None:
    ada, bob = await account(server, "ada"), await account(server, "bob")
    for _ in range(3):
        code = await rated_game(ada, bob)
        assert (await pushed(bob, code, "rating_verdict"))["verdict"] == "flag"
        await play(code, [ada, bob], X_WINS)
        await pushed(bob, code, "rating_changed")
    code = await rated_game(ada, bob)
    verdict = await pushed(bob, code, "rating_verdict")
    assert verdict["verdict"] == "refuse" and verdict["rated"] is False
    assert server.rooms[code].summary()["rated"] is False
    await play(code, [ada, bob], X_WINS)
    await ada.next_update(code)
    async with server.db.session() as session:
        stored = (
            await session.execute(select(GameRecord.rated, GameRecord.farming).where(GameRecord.room_code == code))
        ).one()
    assert tuple(stored) == (False, "refuse")
    await pushed(ada, code, "game_over")  # sent as the room hands its end to the rating service

    async def no_rating_at_work() -> bool:
        return not server.ratings._tasks

    await wait_for(no_rating_at_work, "the rating service to finish with the game", timeout=10)
    assert (await ada.ratings())["ratings"][0]["games"] == 3
    for client in (ada, bob):
        await client.close()


@pytest.mark.slow
async def test_a_game_left_unrated_by_a_stop_is_rated_once_at_the_next_start(db_url: str) -> None:
    first = Server(ServerConfig(port=0, db_url=db_url))
    await first.start()
    ada, bob = await account(first, "ada"), await account(first, "bob")
    code = await rated_game(ada, bob)
    await play(code, [ada, bob], X_WINS)
    told = await pushed(ada, code, "rating_changed")
    for client in (ada, bob):
        await client.close()
    # as if the server had stopped between storing the result and rating it
    async with first.db.session() as session:
        await session.execute(delete(PersonRatingChange))
        await session.execute(delete(PersonRating))
        await session.commit()
    await first.stop()

    for _ in range(2):  # the first start rates it; the second finds nothing to do
        server = Server(ServerConfig(port=0, db_url=db_url))
        await server.start()
        try:
            await wait_for(lambda s=server: rows_are(s, 2), "the unrated game rated at the start", timeout=20)
            ada_id = (await server.store.get_account_by_name("ada")).id
            lines = await server.store.person_ratings.of_account(ada_id)
            assert [(line.rating.display, line.rating.games) for line in lines] == [
                (c["after"]["rating"], 1) for c in told["changes"] if c["name"] == "ada"
            ]
        finally:
            await server.stop()


async def rows_are(server: Server, n: int) -> bool:
    return await count(server, PersonRatingChange) == n


async def raw_player(server: Server, name: str, address: str) -> Raw:
    await server.store.create_user(name, f"{name} horse battery")
    raw = Raw(await ws_connect(server.url, local_addr=(address, 0)))
    welcome = await raw.request("hello", version=2, name=name, password=f"{name} horse battery")
    assert welcome["type"] == "welcome"
    return raw


@pytest.mark.slow
async def test_a_leaderboard_lists_established_ratings_then_provisional_ones(server: Server) -> None:
    """Two accounts from two addresses (no farming verdict) trade wins until they are no longer
    provisional; two more play one game: the winner, rated above both, is listed after them,
    marked provisional, and so is the loser."""
    ann = await raw_player(server, "ann", "127.0.0.2")
    bea = await raw_player(server, "bea", "127.0.0.3")
    games = 0
    while True:
        first, second = (ann, bea) if games % 2 == 0 else (bea, ann)
        created = await first.request("create_room", game="tictactoe", seat=0, public=False, clock=BLITZ, rated=True)
        code = created["room"]
        assert (await second.request("join", room=code))["type"] == "joined"
        players = [first, second]
        for seq, (seat, cell) in enumerate(X_WINS):
            assert (await players[seat].request("act", room=code, action=cell, seq=seq))["type"] == "acted"
        while not any(m["type"] == "rating_changed" and m["room"] == code for m in first.seen):
            await first.next()
        games += 1
        mine = await ann.request("ratings")
        if not mine["ratings"][0]["provisional"] and games % 2 == 0:
            break
        assert games < 40
    assert not any(m["type"] == "rating_verdict" for m in ann.seen + bea.seen)
    cy = await raw_player(server, "cy", "127.0.0.4")
    dee = await raw_player(server, "dee", "127.0.0.5")
    code = (await cy.request("create_room", game="tictactoe", seat=0, public=False, clock=BLITZ, rated=True))["room"]
    await dee.request("join", room=code)
    for seq, (seat, cell) in enumerate(X_WINS):
        await [cy, dee][seat].request("act", room=code, action=cell, seq=seq)
    while not any(m["type"] == "rating_changed" for m in cy.seen):
        await cy.next()
    board = await cy.request("leaderboard", game="tictactoe", clock_class="blitz")
    rows = board["boards"]["blitz"]
    assert {r["name"] for r in rows[:2]} == {"ann", "bea"} and [r["place"] for r in rows] == [1, 2, 3, 4]
    assert rows[0]["rating"] >= rows[1]["rating"] and not any(r["provisional"] for r in rows[:2])
    assert [(r["name"], r["provisional"], r["shown"][-1]) for r in rows[2:]] == [("cy", True, "?"), ("dee", True, "?")]
    assert rows[2]["rating"] > rows[0]["rating"]
    assert list(board["boards"]) == ["blitz"]


async def test_bad_reads_are_refused_with_a_code(server: Server, connect) -> None:
    guest = await connect(name="gus")
    for call, code in (
        (guest.ratings(), "no_such_player"),
        (guest.ratings("nobody"), "no_such_player"),
        (guest.rating_history("nobody", "tictactoe", "blitz"), "no_such_player"),
        (guest.leaderboard("chess960"), "unknown_game"),
        (guest.leaderboard("tictactoe", "hyperbullet"), "bad_field"),
    ):
        with pytest.raises(ServerError) as refused:
            await call
        assert refused.value.code == code
