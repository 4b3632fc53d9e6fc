"""`export` through a real server: an Othello game as GGF against a known game, the JSON equal to
what the replay loads, a tic-tac-toe record with a takeback, who may export what, and a Duel
game's hidden cards absent from every export."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from partida.client import Client, ServerError
from partida.games.othello.notation import read_ggf
from partida.server.app import Server
from tests.helpers import final_update, update_at

# A whole game of nine moves, black wiping white out (found by search; replayed here).
WIPEOUT = ["d3", "c3", "b3", "d2", "e1", "d6", "d7", "e3", "f4"]


async def refused(code: str, call: Any) -> None:
    with pytest.raises(ServerError) as exc:
        await call
    assert exc.value.code == code, exc.value.message


async def played_othello(connect) -> tuple[Client, Client, int]:  # type: ignore[no-untyped-def]
    alice, bob = await connect(name="alice"), await connect(name="bob")
    code = (await alice.create_room("othello", seat=0, public=True, clock={"initial": 300, "increment": 3}))["room"]
    await bob.join(code)
    for seq, square in enumerate(WIPEOUT):
        await (alice if seq % 2 == 0 else bob).act(code, square, seq=seq)
    final = await final_update(alice, code)
    return alice, bob, final["game_id"]


async def test_an_othello_game_exports_as_the_ggf_of_its_moves(connect, server: Server) -> None:
    _alice, _, game_id = await played_othello(connect)
    carol = await connect(name="carol")  # a public finished game: anyone
    exported = await carol.export(game_id)
    assert exported["filename"] == f"partida-othello-{game_id}.ggf" and exported["format"] == "text"
    ggf = exported["content"].strip()
    stored = await server.store.load_game(game_id)
    date = stored.created_at.strftime("%Y.%m.%d")
    assert ggf == (
        f"(;GM[Othello]TY[8]PC[Partida]DT[{date}]PB[alice]PW[bob]TI[05:00/00:03]RE[+64.000]"
        "BO[8 -------- -------- -------- ---O*--- ---*O--- -------- -------- -------- *]"
        "B[d3]W[c3]B[b3]W[d2]B[e1]W[d6]B[d7]W[e3]B[f4];)"
    )
    read = read_ggf(ggf)
    assert read.tags["PB"] == "alice" and read.replay().is_over()


async def test_the_json_export_is_what_the_replay_loads(connect, server: Server) -> None:
    _alice, bob, game_id = await played_othello(connect)
    exported = await bob.export(game_id, "json")
    assert exported["filename"] == f"partida-othello-{game_id}.json"
    assert json.loads(exported["content"]) == await bob.game(game_id, steps=True)


async def test_a_text_record_tells_a_takeback_in_its_place(connect, server: Server) -> None:
    alice, bob = await connect(name="alice"), await connect(name="bob")
    code = (await alice.create_room("tictactoe", seat=0, public=True))["room"]
    await bob.join(code)
    await alice.act(code, 4, seq=0)
    await bob.act(code, 0, seq=1)
    await update_at(bob, code, 2)
    await bob.offer_takeback(code)
    await alice.accept_takeback(code)
    await update_at(bob, code, 3)
    await bob.act(code, 2, seq=3)
    await alice.resign(code)
    final = await final_update(bob, code)
    text = (await alice.export(final["game_id"]))["content"]
    lines = text.splitlines()
    assert '[Player1 "alice (X)"]' in lines and '[Player2 "bob (O)"]' in lines
    assert '[Result "0-1"]' in lines and '[Termination "resign"]' in lines and '[TimeControl "-"]' in lines
    moves = [line for line in lines if re.match(r"\d+\. ", line)]
    assert moves == ["1. alice: b2", "2. bob: a1 {taken back}", "3. bob takes back a move", "4. bob: c1"]


async def test_a_private_game_exports_only_for_its_players(connect, server: Server) -> None:
    alice, bob = await connect(name="alice"), await connect(name="bob")
    code = (await alice.create_room("tictactoe", seat=0, public=False))["room"]
    await bob.join(code)
    await alice.resign(code)
    game_id = (await final_update(bob, code))["game_id"]
    await refused("no_such_game", bob.export(game_id))  # a guest's seat is no account's
    await refused("no_such_game", alice.export(999_999))
    await refused("bad_field", alice.request("export", game_id=game_id, format="pgn"))


def hand_ids(view: dict[str, Any]) -> set[str]:
    """The ids of the cards in the hand of the seat whose view this is."""
    return {str(card["id"]) for card in view["hand"]}


async def test_a_duel_export_shows_no_hidden_card(connect, server: Server) -> None:
    alice, bob = await connect(name="alice"), await connect(name="bob")
    code = (await alice.create_room("duel", seat=0, public=True))["room"]
    await bob.join(code)
    mine = await alice.next_update(code, 5)
    theirs = await bob.next_update(code, 5)
    hidden = hand_ids(mine["view"]) | hand_ids(theirs["view"])
    assert hidden
    game_id = mine["game_id"]
    carol = await connect(name="carol")
    for fmt in ("text", "json"):  # live: the spectators' picture only
        content = (await carol.export(game_id, fmt))["content"]
        assert not any(f'"{card}"' in content or card in content.split() for card in hidden), fmt
    await alice.resign(code)
    await final_update(bob, code)
    for client in (alice, carol):  # over: its seed revealed, yet no hand that was never played
        content = (await client.export(game_id, "json"))["content"]
        assert not any(f'"{card}"' in content for card in hidden)
