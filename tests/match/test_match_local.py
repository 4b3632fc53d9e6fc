"""Paired in-process matches: seat rotations over one deal, Othello's openings book and its
`opening` option, agent parameters, and `partida match --local --sprt` run as a user runs it."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from partida.bots.registry import parse_agent
from partida.games.base import BadOptions
from partida.games.othello import GAMES as OTHELLO
from partida.games.othello import engine
from partida.match.paired import Deal, Tally, deals, play_set, rotations
from partida.stats.sprt import SPRT_MOST_GAMES

PARTIDA = [sys.executable, "-m", "partida"]


def test_agent_parameters_are_parsed() -> None:
    assert parse_agent("random") == ("random", {})
    assert parse_agent("othello-engine[depth=4]") == ("othello-engine", {"depth": 4})
    assert parse_agent("mcts[iterations=200; c=1.4; mode=x]") == ("mcts", {"iterations": 200, "c": 1.4, "mode": "x"})
    for bad in ("mcts[iterations]", "mcts[depth=1", "mcts[=3]"):
        with pytest.raises(ValueError):
            parse_agent(bad)


def test_the_opening_option_starts_a_game_a_few_moves_in() -> None:
    game = OTHELLO[0]
    state = game.create({"opening": "f5d6c3"})
    assert state.view(None)["moves"] == "f5d6c3" and state.to_move == 1
    for bad in ("f5f5", "zz", "f5d"):
        with pytest.raises(BadOptions):
            game.create({"opening": bad})
    assert game.create().view(None)["moves"] == ""


def test_the_book_is_legal_distinct_and_balanced() -> None:
    """Every opening is playable and the engine finds it within a disc or two of even: the book
    is what scripts/othello_openings.py made, and nobody has hand-edited an unbalanced line in."""
    game = OTHELLO[0]
    book = game.openings()
    assert len(book) >= 500 and len(set(book)) == len(book)
    for line in book[::50]:
        state = game.create({"opening": line})
        value = engine.search(state.board, state.to_move, 6).value
        assert abs(value) <= 4, (line, value)


def test_a_set_plays_one_deal_under_every_rotation() -> None:
    assert rotations(["a", "b", "c"]) == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]]
    result = play_set("othello", ["othello-engine[depth=2]", "random"], {}, Deal(0, 7, "f5d6c3d3c4"))
    first, second = result.games
    assert first["seats"] == ["othello-engine[depth=2]", "random"]
    assert second["seats"] == ["random", "othello-engine[depth=2]"]
    assert first["seed"] == second["seed"] == 7 and first["opening"] == second["opening"] == "f5d6c3d3c4"
    # the first agent's points follow it to the other seat
    assert first["points"] == (1.0 if first["winners"] == [0] else 0.5 if len(first["winners"]) == 2 else 0.0)
    assert second["points"] == (1.0 if second["winners"] == [1] else 0.5 if len(second["winners"]) == 2 else 0.0)
    tally = Tally()
    tally.add(result)
    assert tally.trinomial.games == 2 and tally.pentanomial.pairs == 1
    assert tally.penta[round(2 * (first["points"] + second["points"]))] == 1


def test_deals_draw_openings_without_repeating_until_the_book_is_used_up() -> None:
    planned = list(deals(5, 10, ["a", "b", "c"]))
    assert [d.seed for d in planned] == [10, 11, 12, 13, 14]
    assert sorted(d.opening or "" for d in planned[:3]) == ["a", "b", "c"]
    assert all(d.opening is None for d in deals(2, 1, []))


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PARTIDA, *args], capture_output=True, text=True, timeout=300)


@pytest.mark.processes
def test_match_local_stops_when_the_sprt_decides() -> None:
    done = run(
        "match",
        "othello",
        "--local",
        "--seat",
        "othello-engine[depth=2]",
        "--seat",
        "random",
        "--games",
        "400",
        "--parallel",
        "2",
        "--sprt",
        "elo0=0 elo1=100",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    summary = lines[-1]["summary"]
    assert summary["stopped_by_sprt"] and summary["sprt"]["accepted"] == "H1"
    assert summary["games"] == len(lines) - 1 < 400
    assert summary["sprt"]["llr"] >= summary["sprt"]["upper"]
    assert summary["pentanomial"]["trials"] * 2 == summary["games"]
    assert {g["opening"] for g in lines[:-1]} <= set(OTHELLO[0].openings())


@pytest.mark.processes
def test_an_sprt_without_games_plays_until_it_decides_and_says_so_by_its_exit_status() -> None:
    """--games defaults to 1 for a plain match; with --sprt it is only the cap (SPRT_MOST_GAMES),
    so a clear difference is decided long before it, whichever way."""
    sprt = ("--sprt", "elo0=0 elo1=100", "--parallel", "2", "--json")
    stronger = run("match", "tictactoe", "--local", "--seat", "alphabeta", "--seat", "random", *sprt)
    weaker = run("match", "tictactoe", "--local", "--seat", "random", "--seat", "alphabeta", *sprt)
    for done, verdict, status in ((stronger, "H1", 0), (weaker, "H0", 3)):
        assert done.returncode == status, done.stderr
        lines = [json.loads(line) for line in done.stdout.splitlines()]
        summary = lines[-1]["summary"]
        assert summary["sprt"]["accepted"] == verdict and summary["stopped_by_sprt"]
        assert summary["verdict"] == f"{verdict} accepted"
        assert 2 < summary["games"] == len(lines) - 1 < SPRT_MOST_GAMES / 100


@pytest.mark.processes
def test_games_caps_an_sprt_that_has_not_decided() -> None:
    seats = ("--seat", "random", "--seat", "random")
    done = run("match", "tictactoe", "--local", *seats, "--games", "6", "--sprt", "elo0=0 elo1=5")
    assert done.returncode == 4, done.stderr
    assert "random against random: 6 games" in done.stdout and "stopped by the SPRT" not in done.stdout
    assert done.stdout.splitlines()[-1].endswith(") no verdict within the cap of 6 games")


@pytest.mark.processes
def test_the_progress_line_goes_to_the_terminal_and_the_results_to_stdout() -> None:
    """On a terminal the progress line shows the LLR against its bounds; stdout, redirected to a
    file or a pipe, still gets every game's line rather than the terminal."""
    import os
    import pty

    leader, follower = pty.openpty()
    args = ("match", "tictactoe", "--local", "--seat", "alphabeta", "--seat", "random", "--parallel", "1")
    done = subprocess.run(
        [*PARTIDA, *args, "--sprt", "elo0=0 elo1=100", "--json"],
        stdout=subprocess.PIPE,
        stderr=follower,
        text=True,
        timeout=300,
    )
    os.close(follower)
    shown = b""
    with contextlib.suppress(OSError):  # the terminal's end reads EIO once the writer is gone
        while chunk := os.read(leader, 65536):
            shown += chunk
    os.close(leader)
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0 and lines[-1]["summary"]["games"] == len(lines) - 1 > 2
    terminal = shown.decode(errors="replace")
    assert re.search(r"W \d+ D \d+ L \d+  Elo [+-]\d+\.\d ± \S+  LLR -?\d\.\d\d \[-2\.94, 2\.94\]", terminal), terminal
    assert '"deal"' not in terminal


@pytest.mark.processes
def test_match_local_prints_elo_and_takes_no_bad_flags() -> None:
    done = run("match", "tictactoe", "--local", "--seat", "random", "--seat", "random", "--games", "6")
    assert done.returncode == 0, done.stderr
    assert "6 games" in done.stdout and "Elo" in done.stdout and "pairs 3" in done.stdout
    done = run("match", "othello", "--seat", "random", "--seat", "random", "--sprt", "elo0=0 elo1=5")
    assert done.returncode == 2 and "--sprt needs --local" in done.stderr
    done = run("match", "othello", "--local", "--seat", "random", "--seat", "random", "--sprt", "elo0=5 elo1=0")
    assert done.returncode == 2 and "elo0 (5) must be less than elo1 (0)" in done.stderr
    done = run("match", "othello", "--local", "--seat", "nosuchbot", "--seat", "random")
    assert done.returncode == 2 and "unknown agent" in done.stderr
    done = run("match", "othello", "--local", "--seat", "random", "--seat", "random", "--option", "opening=a1")
    assert done.returncode == 2 and "opening" in done.stderr


@pytest.mark.processes
def test_match_local_plays_a_game_described_in_a_file(tmp_path: Path) -> None:
    """The worker processes loaded only the installed games: a game from --game-file was an
    UnknownGame traceback from the pool."""
    import shutil

    import partida.games.recycle

    description = tmp_path / "mydice.rcl"
    shutil.copy(Path(partida.games.recycle.__file__).parent / "descriptions" / "dicepoints.rcl", description)
    seats = ["--seat", "random"] * 4
    done = run("match", "mydice", "--local", "--game-file", str(description), *seats, "--games", "8", "--json")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[-1]["summary"]["games"] == 8 == len(lines) - 1
    assert {tuple(g["seats"]) for g in lines[:-1]} == {("random",) * 4}


@pytest.mark.processes
def test_match_local_names_the_seat_whose_agent_raised() -> None:
    done = run("match", "othello", "--local", "--seat", "random", "--seat", "othello-engine[depth=abc]", "--games", "4")
    assert done.returncode == 2, done.stdout
    assert done.stderr.startswith("partida: error: the match stopped after 0 games: seat 2 (othello-engine[depth=abc])")
    assert "the agent raised TypeError" in done.stderr and "Traceback" not in done.stderr
    assert "random against othello-engine[depth=abc]: 0 games" in done.stdout
