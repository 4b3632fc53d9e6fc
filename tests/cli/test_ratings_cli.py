"""`partida ratings` and `partida leaderboard` on a database holding rated games: tables, JSON,
the history and its plot; bad input is one line (exit 2), and nothing creates a database."""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path

import pytest

from partida.cli import main
from partida.storage.database import Database
from partida.storage.store import Store
from tests.helpers import rated_results

BLITZ = {"initial": 180, "increment": 2}


# ann and bea play 14 rated blitz games (ann wins two of three), cy beats dee once
PAIRS = [("ann", "bea") if n % 3 else ("bea", "ann") for n in range(14)] + [("cy", "dee")]


async def fill(db_url: str) -> None:
    db = await Database.open(db_url)
    try:
        await rated_results(Store(db), PAIRS, BLITZ)
    finally:
        await db.close()


def partida(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "partida.db")
    asyncio.run(fill(path))
    return path


@pytest.mark.slow
def test_ratings_of_one_account_and_of_everyone(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = partida(capsys, "ratings", "ann", "--json", "--db", db)
    (line,) = json.loads(out)
    assert code == 0 and (line["name"], line["game"], line["clock_class"], line["games"]) == (
        "ann",
        "tictactoe",
        "blitz",
        14,
    )
    assert line["provisional"] is False
    code, out, _ = partida(capsys, "ratings", "--json", "--db", db)
    assert [(r["name"], r["provisional"]) for r in json.loads(out)] == [
        ("ann", False), ("bea", False), ("cy", True), ("dee", True)
    ]  # fmt: skip
    code, out, _ = partida(capsys, "ratings", "cy", "--db", db)
    assert code == 0 and "cy" in out and "?" in out and "blitz" in out


@pytest.mark.slow
def test_history_and_its_plot(db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = partida(capsys, "ratings", "history", "bea", "--game", "tictactoe", "--class", "blitz", "--json",
                           "--db", db)  # fmt: skip
    points = json.loads(out)
    assert code == 0 and len(points) == 14 and points[0]["before"]["mu"] == 25.0
    assert [p["after"]["games"] for p in points] == list(range(1, 15))
    assert all(a["after"]["mu"] == b["before"]["mu"] for a, b in itertools.pairwise(points))
    image = tmp_path / "bea.png"
    code, out, _ = partida(capsys, "ratings", "history", "bea", "--game", "tictactoe", "--class", "blitz",
                           "--plot", str(image), "--db", db)  # fmt: skip
    assert code == 0 and f"Wrote {image}" in out
    assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_the_leaderboard(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = partida(capsys, "leaderboard", "tictactoe", "--json", "--db", db)
    board = json.loads(out)
    assert code == 0 and [r["name"] for r in board["boards"]["blitz"]] == ["ann", "bea"]
    assert board["boards"]["bullet"] == []
    code, out, _ = partida(capsys, "leaderboard", "tictactoe", "--class", "blitz", "--db", db)
    assert code == 0 and "ann" in out and "cy" not in out
    code, out, _ = partida(capsys, "leaderboard", "tictactoe", "--class", "bullet", "--db", db)
    assert code == 0 and "No established bullet ratings" in out


@pytest.mark.slow
def test_bad_input_is_one_line_and_creates_nothing(db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for args, says in (
        (["ratings", "nobody"], "there is no account 'nobody'"),
        (["ratings", "history", "ann", "--game", "tictactoe"], "history needs --game G and --class C"),
        (["ratings", "history"], "usage: partida ratings history ACCOUNT"),
        (["ratings", "ann", "--plot", str(tmp_path / "x.png")], "--plot and --class go with history"),
        (["leaderboard", "chess960"], "unknown game"),
    ):
        code, _out, err = partida(capsys, *args, "--db", db)
        assert code == 2 and says in err and len(err.strip().splitlines()) == 1, (args, err)
    missing = tmp_path / "none.db"
    code, _, err = partida(capsys, "leaderboard", "tictactoe", "--db", str(missing))
    assert code == 2 and "there is no database" in err and not missing.exists()


def test_the_cli_offers_exactly_the_clock_classes_the_rules_rate() -> None:
    """The CLI keeps its own list (importing the rules would load OpenSkill at every start):
    this fails when the two part."""
    from partida.cli.ratings import CLASSES
    from partida.competition.ratings import ClockClass

    assert CLASSES == [c.value for c in ClockClass]
