"""The stdin/stdout bot protocol through a real server: the two example bots of docs/bots.md
(examples/bots/, Python and JavaScript) finish games against built-in bots, also through
`partida match --seat-cmd stdio:...`; each error a program can make (bad JSON, an answer that is
not `{"action": ...}`, an illegal answer, no answer in time, a crash) is named in the log and in
the game's record, and the game goes on as a resignation makes it go on."""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import pytest

from partida.cli.play import play_bot_game
from partida.client import ServerError
from tests.helpers import REPO, seat_bot

pytestmark = pytest.mark.timeout(180)

EXAMPLES = REPO / "examples" / "bots"
PYTHON_BOT = f"{sys.executable} {EXAMPLES / 'tictactoe.py'}"
NODE_BOT = f"node {EXAMPLES / 'corners.js'}"

# One bad program, told which mistake to make by its argument.
BAD = """
import json, sys, time
mode = sys.argv[1]
for line in sys.stdin:
    turn = json.loads(line)
    if mode == "bad_json":
        print("move 4", flush=True)
    elif mode == "bad_answer":
        print(json.dumps(turn["decision"]["options"][:1]), flush=True)
    elif mode == "illegal":
        print(json.dumps({"action": 99}), flush=True)
    elif mode == "silent":
        time.sleep(30)
    elif mode == "crash":
        print("ZeroDivisionError: oops", file=sys.stderr, flush=True)
        sys.exit(1)
"""


@pytest.mark.processes
@pytest.mark.usefixtures("node")
@pytest.mark.parametrize(("command", "games"), [(PYTHON_BOT, ["tictactoe"]), (NODE_BOT, ["tictactoe", "othello"])])
async def test_the_example_bots_finish_games_against_built_in_bots(connect, runners, bots, server, command, games):
    await bots("alphabeta", seconds=0.02)
    await seat_bot(server, runners, "mine", "stdio", command=command)
    watcher = await connect(name="watcher")
    for game in games:
        for seats in (["mine", "alphabeta"], ["alphabeta", "mine"]):
            record = await play_bot_game(watcher, game, {}, seats)
            assert record["result"]["reason"] == "normal" and "notes" not in record["result"]
            assert record["moves"] >= 5


@pytest.mark.processes
@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("bad_json", "bad JSON: 'move 4'"),
        ("bad_answer", "bad answer: '[0]' is not {\"action\": ...}"),
        ("illegal", "illegal answer: 99 is not one of the choices"),
        ("silent", "no answer in time: nothing within 1.0 s"),
        ("crash", "crashed: the engine ended (exit code 1); its stderr ended with: 'ZeroDivisionError: oops'"),
    ],
)
async def test_a_programs_error_is_named_and_the_game_goes_on(
    connect, runners, bots, server, tmp_path, caplog, mode, said
) -> None:
    caplog.set_level(logging.WARNING)
    (tmp_path / "bad.py").write_text(BAD)
    await bots("random")
    await seat_bot(
        server, runners, "bad", "stdio", command=f"{sys.executable} {tmp_path / 'bad.py'} {mode}", move_timeout=1
    )
    watcher = await connect(name="watcher")
    record = await play_bot_game(watcher, "tictactoe", {}, ["bad", "random"])
    result = record["result"]
    assert result["reason"] == "resign" and result["winners"] == [1]  # two seats: the resignation loses
    assert said in result["notes"]["0"]
    assert (await server.store.load_game(record["game_id"])).result["notes"] == result["notes"]
    assert said in caplog.text


@pytest.mark.processes
async def test_in_a_game_of_three_the_failed_seat_drops_out_and_the_others_play_on(
    connect, runners, bots, server, tmp_path
) -> None:
    (tmp_path / "bad.py").write_text(BAD)
    await bots("random")
    await seat_bot(server, runners, "bad", "stdio", command=f"{sys.executable} {tmp_path / 'bad.py'} bad_json")
    watcher = await connect(name="watcher")
    record = await play_bot_game(watcher, "crazyeights", {}, ["bad", "random", "random"])
    result = record["result"]
    assert result["reason"] == "normal" and result["dropped"] == [0]  # the rules ended it, seat 0 ranked last
    assert result["ranks"][0] == 3 and "bad JSON" in result["notes"]["0"]


@pytest.mark.processes
def test_partida_match_takes_a_stdio_program_for_a_seat() -> None:
    argv = [sys.executable, "-m", "partida", "match", "tictactoe", "--seat-cmd", f"stdio:{PYTHON_BOT}"]
    argv += ["--seat", "random", "--games", "2", "--rotate", "--json"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    *games, summary = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(games) == 2 and all(g["result"]["reason"] == "normal" for g in games)
    assert summary["summary"]["seats"] == [f"stdio:{PYTHON_BOT}", "random"]


@pytest.mark.processes
@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("bot", "random", "--cmd", "python3 bot.py"), "give either them or an agent ('random')"),
        (("bot", "--token", "x"), "give an agent (see `partida agents`), or a program: --gtp COMMAND or --cmd"),
        (("bot", "--cmd", "python3 'open", "--token", "x"), "cannot split"),
        (("bot", "--cmd", "python3 bot.py", "--token", "x"), "say which games your program plays: --game GAME"),
        (("bot", "--gtp", "a", "--cmd", "b"), "not allowed with argument"),
        (("serve", "--bots", "random,stdio", "--port", "0"), "--bots stdio: a bridge runs a program of yours"),
        (("serve", "--ladder-bots", "arena=random,gtp", "--port", "0"), "--ladder-bots gtp: a bridge runs"),
        (("serve", "--tournament-bots", "cup=stdio", "--port", "0"), "--tournament-bots stdio: a bridge runs"),
        (("serve", "--seek-bots", "gtp", "--port", "0"), "--seek-bots gtp: a bridge runs"),
    ],
)
def test_bridge_flags_refuse_what_cannot_run(args: tuple[str, ...], said: str) -> None:
    done = subprocess.run([sys.executable, "-m", "partida", *args], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and said in done.stderr, done.stderr


async def test_a_bridge_is_asked_for_by_its_account_name_not_as_an_agent(connect, runners, server):
    await seat_bot(server, runners, "mine", "stdio", command=PYTHON_BOT)
    asker = await connect(name="asker")
    offered = {g["name"]: g["bots"] for g in await asker.list_games()}
    assert "stdio" not in offered["tictactoe"]  # the New room form offers no bridge as an agent
    with pytest.raises(ServerError) as refused:
        await asker.create_room("tictactoe", seat=0, bots={1: "stdio"})
    assert refused.value.code == "unknown_agent" and "by its account name" in refused.value.message
    assert not server.rooms  # nothing opened
    created = await asker.create_room("tictactoe", seat=0, bots={1: "mine"})
    assert created["summary"]["seats"][1]["name"] == "mine"
