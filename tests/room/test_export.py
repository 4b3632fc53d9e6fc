"""The export's text with plain values: the tags a reader expects, Othello's GGF of the moves that
stand after a takeback, and the PGN-style record of other games."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from partida.games.othello.notation import read_ggf
from partida.games.registry import default_registry
from partida.room import export, record
from partida.room.seed import seed_hash

OTHELLO = default_registry().get("othello")


def finished(actions: list[tuple[int, Any]], result: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A finished game's record as `game` sends it (the fields the export reads)."""
    stored = SimpleNamespace(
        id=42, game="othello", options={}, seats=2, seed=5, seed_hash=seed_hash(5), status="finished",
        result=result, actions=actions,
    )  # fmt: skip
    moves, _ = record.told(OTHELLO, stored, over=True)
    return {
        "game_id": 42,
        "game": "othello",
        "status": "finished",
        "seats": [{"seat": 0, "name": "ada"}, {"seat": 1, "name": "bo]b"}],
        "seats_count": 2,
        "options": {},
        "result": result,
        "clock": {"initial": 180.0, "increment": 2.0, "timeouts": 3},
        "created_at": "2026-11-29T05:50:00+00:00",
        "seed": "5",
        "seed_hash": seed_hash(5),
        "log": moves,
        **fields,
    }


def test_othello_exports_the_ggf_of_the_moves_that_stand() -> None:
    taken = [(0, "f5"), (1, "d6"), (-1, {"takeback": 2, "by": 0}), (0, "c4"), (1, "c3")]
    resigned = {"scores": [1.0, 0.0], "ranks": [1, 2], "winners": [0], "reason": "resign"}
    text = export.text(finished(taken, resigned), OTHELLO, site="ws://example.org:8765")
    assert text == (
        "(;GM[Othello]TY[8]PC[ws://example.org:8765]DT[2026.11.29]PB[ada]PW[bo)b]TI[03:00/00:02]RE[+64.000:r]"
        "BO[8 -------- -------- -------- ---O*--- ---*O--- -------- -------- -------- *]B[c4]W[c3];)\n"
    )
    read = read_ggf(text)
    assert read.tags["PW"] == "bo)b" and len(read.moves) == 2  # a "]" in a name cannot end its tag
    assert read.replay().view(None)["moves"] == "c4c3"
    assert export.filename(finished(taken, resigned), "text") == "partida-othello-42.ggf"


def test_tags_for_a_reader() -> None:
    assert export.time_control(None) == "-"
    assert export.time_control({"per_move": 30.0}) == "1/30"
    assert export.time_control({"initial": 300.0, "increment": 3.0}) == "300+3"
    draw = {"status": "finished", "result": {"ranks": [1, 1]}}
    assert export.result_tag(draw) == "1/2-1/2"
    assert export.result_tag({"status": "finished", "result": {"ranks": [2, 1]}}) == "0-1"
    assert export.result_tag({"status": "finished", "result": {"ranks": [1, 3, 2]}}) == "ranks 1,3,2"
    assert export.result_tag({"status": "playing", "result": None}) == "*"


def test_other_games_get_tag_pairs_and_a_line_per_entry() -> None:
    game = default_registry().get("tictactoe")
    actions = [(0, 4), (1, 0), (-1, {"takeback": 1, "by": 1}), (1, 2)]
    stored = SimpleNamespace(
        id=7, game="tictactoe", options={}, seats=2, seed=1, seed_hash=seed_hash(1), status="playing",
        result=None, actions=actions,
    )  # fmt: skip
    moves, _ = record.told(game, stored, over=False)
    data = {
        "game_id": 7,
        "game": "tictactoe",
        "status": "playing",
        "seats": [{"seat": 0, "name": 'a"da'}, {"seat": 1, "name": "bob"}],
        "seats_count": 2,
        "log": moves,
        "created_at": None,
    }
    text = export.text(data, game, event="cup", round=3)
    lines = text.splitlines()
    assert lines[:5] == [
        '[Event "cup"]',
        '[Site "Partida"]',
        '[Date "????.??.??"]',
        '[Round "3"]',
        '[Player1 "a\\"da (X)"]',
    ]
    assert lines[-6:] == ['1. a"da: b2', "2. bob: a1 {taken back}", "3. bob takes back a move", "4. bob: c1", "", "*"]
