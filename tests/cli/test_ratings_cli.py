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


# ann and bea play 20 rated blitz games (ann wins two of three; 17 end a newcomer's provisional
# rating), cy beats dee once
PAIRS = [("ann", "bea") if n % 3 else ("bea", "ann") for n in range(20)] + [("cy", "dee")]


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
        20,
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
    assert code == 0 and len(points) == 20 and points[0]["before"]["shown"] == "1500?"
    assert [p["after"]["games"] for p in points] == list(range(1, 21))
    assert all(a["after"] == {**b["before"], "games": a["after"]["games"]} for a, b in itertools.pairwise(points))
    image = tmp_path / "bea.png"
    code, out, _ = partida(capsys, "ratings", "history", "bea", "--game", "tictactoe", "--class", "blitz",
                           "--plot", str(image), "--db", db)  # fmt: skip
    assert code == 0 and f"Wrote {image}" in out
    assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_the_leaderboard(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = partida(capsys, "leaderboard", "tictactoe", "--json", "--db", db)
    board = json.loads(out)
    blitz = board["boards"]["blitz"]
    assert code == 0 and [(r["name"], r["provisional"]) for r in blitz] == [
        ("ann", False), ("bea", False), ("cy", True), ("dee", True)
    ]  # fmt: skip
    assert blitz[2]["shown"].endswith("?") and blitz[2]["place"] == 3
    assert board["boards"]["bullet"] == []
    code, out, _ = partida(capsys, "leaderboard", "tictactoe", "--class", "blitz", "--db", db)
    assert code == 0 and "ann" in out and f"{blitz[2]['shown']}" in out and "provisional" in out
    code, out, _ = partida(capsys, "leaderboard", "tictactoe", "--class", "bullet", "--db", db)
    assert code == 0 and "No rated bullet games of tictactoe yet." in out


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


@pytest.mark.slow
def test_evaluate_replays_the_rated_games_through_each_model(
    db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ann wins two of every three against bea, cy beats dee: every model finds the favourite;
    the text names the measured choice and the models the server uses; the plot is a PNG."""
    code, out, _ = partida(capsys, "ratings", "evaluate", "--json", "--db", db)
    found = json.loads(out)
    assert code == 0 and found["two_seat_games"] == 21 and found["draws"] == 0 and found["more_seat_games"] == 0
    assert set(found["models"]) == {"glicko2", "openskill", "elo"}
    for figures in found["models"].values():
        assert figures["every"]["games"] == 21 and figures["second_half"]["games"] == 11
        assert 0.5 < figures["every"]["predicted"] < 1 and figures["every"]["log_loss"] > 0
    losses = {name: f["every"]["log_loss"] for name, f in found["models"].items()}
    assert losses[found["chosen"]] == min(losses.values())
    image = tmp_path / "evaluate.png"
    code, out, _ = partida(capsys, "ratings", "evaluate", "--plot", str(image), "--db", db)
    assert code == 0 and "21 rated games of two seats (0 draws)" in out
    assert f"Chosen by log loss over every two-seat game: {found['chosen']}." in out
    assert "glicko2" in out and "openskill" in out and "elo" in out and f"Wrote {image}" in out
    assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, _, err = partida(capsys, "ratings", "evaluate", "extra", "--db", db)
    assert code == 2 and "usage: partida ratings evaluate" in err


@pytest.mark.slow
@pytest.mark.processes
def test_the_simulation_script_writes_a_database_that_evaluate_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """scripts/simulate_rated_games.py, started small: bots of known strengths, every game rated
    by the store; evaluate replays exactly those games."""
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[2] / "scripts" / "simulate_rated_games.py"
    path = tmp_path / "sim.db"
    args = [sys.executable, str(script), str(path), "--games", "40", "--tables", "6", "--bots", "8", "--seed", "3"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    made = json.loads(done.stdout)
    assert made["two_seat_games"] == 40 and made["four_seat_games"] == 6 and len(made["strengths"]) == 8
    code, out, _ = partida(capsys, "ratings", "evaluate", "--json", "--db", str(path))
    found = json.loads(out)
    assert code == 0 and found["two_seat_games"] == 40 and found["more_seat_games"] == 6
    assert found["draws"] == made["draws"] and found["more_seats_openskill"]["games"] <= 6
    done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "exists" in done.stderr  # never writes over a database
