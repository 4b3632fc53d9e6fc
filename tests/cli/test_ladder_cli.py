"""`partida ladder` as an operator runs it: create a ladder on the database, a real server and real
bot connections play it, then standings, games, head-to-head, the rating plot and rerate read the
stored results; every bad input is one line and creates nothing."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from partida.bots.runner import BotRunner
from partida.cli import main
from partida.server.app import Server, ServerConfig
from tests.fixtures.programs import free_port

PARTIDA = [sys.executable, "-m", "partida"]


def partida(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


async def play_ladder(db: str, ladder: str, bots: dict[str, str], games: int) -> None:
    """A server on `db` with one bot connection per account until `games` games are rated."""
    server = Server(ServerConfig(host="127.0.0.1", port=0, db_url=db))
    await server.start()
    tasks = []
    try:
        for name, agent in bots.items():
            _, token = await server.store.create_bot(name)
            runner = BotRunner(server.url, agent, token=token, ladders=[ladder])
            tasks.append(asyncio.create_task(runner.run(reconnect=False)))
        deadline = asyncio.get_running_loop().time() + 120
        while (await server.store.ladders.require(ladder)).rated_games < games:
            assert asyncio.get_running_loop().time() < deadline, "the ladder did not rate its games in time"
            await asyncio.sleep(0.05)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.stop()


@pytest.mark.slow
def test_an_operator_creates_a_ladder_and_reads_it_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "partida.db")
    code, out, _ = partida(capsys, "ladder", "create", "ttt", "--game", "tictactoe", "--clock", "move:5",
                           "--concurrency", "2", "--db", db)  # fmt: skip
    assert code == 0 and "Ladder 'ttt' is created" in out and "--ladder ttt" in out
    code, out, _ = partida(capsys, "ladder", "list", "--json", "--db", db)
    [listed] = json.loads(out)
    assert listed["name"] == "ttt" and listed["clock"]["per_move"] == 5.0 and listed["concurrency"] == 2

    asyncio.run(
        play_ladder(f"sqlite+aiosqlite:///{db}", "ttt", {"ann": "alphabeta", "bob": "random", "cid": "random"}, 9)
    )

    code, out, _ = partida(capsys, "ladder", "standings", "ttt", "--json", "--db", db)
    table = json.loads(out)["standings"]
    assert code == 0 and {line["name"] for line in table} == {"ann", "bob", "cid"}
    assert sum(line["games"] for line in table) >= 18  # two seats per rated game
    assert [line["rating"] for line in table] == sorted((line["rating"] for line in table), reverse=True)
    for line in table:
        assert line["rating"] == pytest.approx(line["mu"] - 3 * line["sigma"])
        assert line["wins"] + line["draws"] + line["losses"] == line["games"]
    code, out, _ = partida(capsys, "ladder", "standings", "ttt", "--db", db)
    assert code == 0 and "ann" in out and "mu - 3 sigma" in out

    code, out, _ = partida(capsys, "ladder", "games", "ttt", "--json", "--db", db)
    games = json.loads(out)
    rated = [g for g in games if g["rated"] is not None]
    assert len(rated) >= 9 and all(g["status"] == "finished" and len(g["ranks"]) == 2 for g in rated)

    code, out, _ = partida(capsys, "ladder", "h2h", "ttt", "--json", "--db", db)
    h2h = json.loads(out)
    assert set(h2h["bots"]) == {"ann", "bob", "cid"}
    # each rated game counts once for each side, mirrored: ann's wins over bob are bob's losses to ann
    pairs = 0
    for a, row in h2h["records"].items():
        for b, (ahead, level, behind) in row.items():
            assert h2h["records"][b][a] == [behind, level, ahead]
            pairs += ahead + level + behind
    assert pairs == 2 * len(rated)
    code, out, _ = partida(capsys, "ladder", "h2h", "ttt", "--db", db)
    assert code == 0 and "ahead-level-behind" in out

    image = tmp_path / "ratings.png"
    code, out, _ = partida(capsys, "ladder", "plot", "ttt", "-o", str(image), "--db", db)
    assert code == 0 and image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and "3 bots" in out

    code, out, _ = partida(capsys, "ladder", "rerate", "ttt", "--json", "--db", db)
    rerate = json.loads(out)
    assert code == 0 and rerate["differences"] == [] and rerate["games"] == len(rated)
    assert [line["name"] for line in rerate["standings"]] == [line["name"] for line in table]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--game", "chess", "--clock", "10s"], "unknown game 'chess'"),
        (["--game", "othello", "--clock", "ten"], "is not a clock"),
        (["--game", "othello", "--clock", "0+1"], "more than 0 seconds"),
        (["--game", "othello", "--clock", "10s", "--option", "size=3"], "unknown option 'size'"),
        (["--game", "othello", "--clock", "10s", "--seats", "3"], "othello is played by 2 players, not 3"),
        (["--game", "othello", "--clock", "10s", "--concurrency", "0"], "--concurrency is at least 1"),
        (["--game", "othello", "--clock", "10s", "--option", "novalue"], "KEY=VALUE"),
        (["--game", "dicepoints", "--clock", "10s", "--option", "rounds=many"], "rounds"),
    ],
)
def test_a_bad_ladder_is_one_line_and_nothing_is_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], says: str
) -> None:
    db = str(tmp_path / "partida.db")
    assert partida(capsys, "ladder", "create", "ok", "--game", "tictactoe", "--clock", "5s", "--db", db)[0] == 0
    code, out, err = partida(capsys, "ladder", "create", "bad", *args, "--db", db)
    assert code == 2 and out == "" and err.count("\n") == 1 and says in err, err
    code, out, _ = partida(capsys, "ladder", "list", "--json", "--db", db)
    assert [ladder["name"] for ladder in json.loads(out)] == ["ok"]


def test_reading_a_ladder_that_is_not_there(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "partida.db")
    code, _, err = partida(capsys, "ladder", "standings", "ttt", "--db", db)
    assert code == 2 and "there is no database" in err and not (tmp_path / "partida.db").exists()
    assert partida(capsys, "ladder", "create", "ttt", "--game", "tictactoe", "--clock", "5s", "--db", db)[0] == 0
    for command in ("standings", "games", "h2h", "plot", "rerate"):
        code, _, err = partida(capsys, "ladder", command, "nope", "--db", db)
        assert code == 2 and "no ladder named 'nope'" in err, (command, err)
    code, _, err = partida(capsys, "ladder", "plot", "ttt", "--db", db)
    assert code == 2 and "no rated games yet" in err
    for image, says in ((tmp_path / "gone" / "r.png", "does not exist"), (tmp_path / "r.txt", "as a .txt file")):
        with pytest.raises(SystemExit) as usage:  # a .txt plot ended in matplotlib's traceback
            main(["ladder", "plot", "ttt", "-o", str(image), "--db", db])
        err = capsys.readouterr().err
        assert usage.value.code == 2 and says in err and "Traceback" not in err, err
    code, _, err = partida(capsys, "ladder", "create", "ttt", "--game", "othello", "--clock", "5s", "--db", db)
    assert code == 2 and "already a ladder named 'ttt'" in err


@pytest.mark.processes
def test_serve_puts_pool_bots_into_a_ladder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A fresh install shows a running ladder with no extra process: `serve --ladder-bots`."""
    db = str(tmp_path / "partida.db")
    assert partida(capsys, "ladder", "create", "ttt", "--game", "tictactoe", "--clock", "move:5", "--db", db)[0] == 0
    log = open(tmp_path / "serve.log", "w")
    serve = subprocess.Popen(
        [
            *PARTIDA,
            "serve",
            "--port",
            str(free_port()),
            "--db",
            db,
            "--no-bots",
            "--ladder-bots",
            "ttt=alphabeta,random",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            code, out, _ = partida(capsys, "ladder", "standings", "ttt", "--json", "--db", db)
            table = json.loads(out)["standings"] if code == 0 else []
            if sum(line["games"] for line in table) >= 6:
                break
            assert serve.poll() is None, (tmp_path / "serve.log").read_text()
            assert time.monotonic() < deadline, (tmp_path / "serve.log").read_text()
            time.sleep(0.3)
    finally:
        serve.terminate()
        serve.wait(timeout=30)
    assert {line["name"] for line in table} == {"pool-alphabeta", "pool-random"}
    assert "Ladder bot pool-alphabeta plays in: ttt." in (tmp_path / "serve.log").read_text()


@pytest.mark.processes
@pytest.mark.parametrize(
    ("flag", "says"),
    [
        ("nope=random", "there is no ladder named 'nope'"),
        ("ttt=duel-search", "'duel-search' does not play tictactoe"),
        ("ttt=nobody", "unknown agent 'nobody'"),
        ("ttt", "LADDER=AGENT,AGENT"),
        ("ttt=random,random", "random is named twice"),
    ],
)
def test_serve_refuses_bad_ladder_bots_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, says: str
) -> None:
    db = str(tmp_path / "partida.db")
    assert partida(capsys, "ladder", "create", "ttt", "--game", "tictactoe", "--clock", "5s", "--db", db)[0] == 0
    done = subprocess.run(
        [
            *PARTIDA,
            "serve",
            "--port",
            str(free_port()),
            "--db",
            db,
            "--no-bots",
            "--ladder-bots",
            flag,
            "--log-level",
            "error",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr, done.stderr
