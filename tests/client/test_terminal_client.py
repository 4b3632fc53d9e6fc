"""The terminal client as a person meets it: numbers are menu entries, keys typed while waiting are
not moves, Ctrl-C leaves at once with the command to come back (the seat token alone), and the
table's players are named as they come and go."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import pty
import re
import select
import shlex
import signal
import subprocess
import sys
import time
from typing import Any

import pytest
from rich.console import Console

from partida.cli.play import replay_command
from partida.client import Client, ServerError
from partida.client.keyboard import LineReader
from partida.client.terminal import TerminalPlayer
from partida.games.base import IllegalAction
from partida.games.registry import default_registry
from partida.server.app import Server, ServerConfig
from tests.fixtures.programs import free_port
from tests.helpers import plain, read_until

PARTIDA = [sys.executable, "-m", "partida"]


def test_a_number_is_the_menu_entry_beside_it_in_every_game() -> None:
    registry = default_registry()
    out = io.StringIO()
    ttt = registry.get("tictactoe")
    state = ttt.create(seed=1)
    state.apply(0, state.pending()[0].prompt.options[0])  # a1 is taken: the menu starts at b1
    prompt, view = state.pending()[0].prompt, state.view(1)
    player = TerminalPlayer(None, ttt, Console(file=out, width=100))  # type: ignore[arg-type]
    answers = player.answers_table(prompt, view)
    assert len(answers) == 8 and "1 " in out.getvalue() and "#1" not in out.getvalue()
    update = {"view": view}
    assert player.read_answer("1", update, prompt, answers) == answers[0]
    assert player.read_answer("#8", update, prompt, answers) == answers[7]
    assert player.read_answer("c3", update, prompt, answers) == 8  # a square by name still works
    with pytest.raises(IllegalAction, match="from 1 to 8"):
        player.read_answer("9", update, prompt, answers)

    othello = registry.get("othello")
    state = othello.create(seed=1)
    prompt, view = state.pending()[0].prompt, state.view(0)
    player = TerminalPlayer(None, othello, Console(file=io.StringIO()))  # type: ignore[arg-type]
    answers = player.answers_table(prompt, view)
    assert player.read_answer("2", {"view": view}, prompt, answers) == answers[1]  # Othello took no numbers


async def test_keys_typed_while_waiting_are_not_the_next_answer() -> None:
    master, slave = pty.openpty()
    stream = os.fdopen(slave, "r", closefd=False)
    reader = LineReader(stream, io.StringIO())
    try:
        os.write(master, b"a1\n")  # typed while the other side was thinking
        assert select.select([slave], [], [], 5)[0]  # the line is there to be read when the prompt comes
        answer = asyncio.create_task(reader.ask("your move> "))
        await asyncio.sleep(0.1)
        assert not answer.done()  # the early line was thrown away
        os.write(master, b"b2\n")
        assert await asyncio.wait_for(answer, 5) == "b2"
    finally:
        reader.close()
        stream.close()
        os.close(slave)
        os.close(master)


async def test_piped_lines_are_a_script_and_kept() -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, b"a1\nb2\n")
    os.close(write_end)
    stream = os.fdopen(read_end, "r")
    reader = LineReader(stream, io.StringIO())
    try:
        assert [await reader.ask("> "), await reader.ask("> ")] == ["a1", "b2"]
        with pytest.raises(EOFError):
            await reader.ask("> ")
    finally:
        reader.close()
        stream.close()


def test_players_are_named_as_they_join_and_leave() -> None:
    out = io.StringIO()
    player = TerminalPlayer(None, default_registry().get("tictactoe"), Console(file=out, width=120))  # type: ignore[arg-type]

    def room(*seats: Any, status: str = "waiting") -> dict[str, Any]:
        return {"status": status, "seats": [dict(seat=i, **s) for i, s in enumerate(seats)]}

    player.on_room(room({"name": "ada", "kind": "user", "connected": True}, {"name": None}))
    assert player.players_line([0]) == "Players: seat 0, X: ada, you; seat 1, O: free"
    player.on_room(
        room({"name": "ada", "kind": "user", "connected": True}, {"name": "bo", "kind": "guest", "connected": True})
    )
    player.on_room(room({"name": "ada", "kind": "user", "connected": True}, {"name": None}))
    text = out.getvalue()
    assert "bo (guest) joined (seat 1, O)" in text and "bo left seat 1" in text
    # an account's rating in the room's game and class follows its name
    player.on_room(
        room(
            {"name": "ada", "kind": "user", "connected": True, "rating": "1622"},
            {"name": "cy", "kind": "user", "connected": True, "rating": "1500?"},
        )
    )
    assert player.players_line([0]) == "Players: seat 0, X: ada (1622), you; seat 1, O: cy (1500?)"
    assert "cy (1500?) joined (seat 1, O)" in out.getvalue()


def test_chat_is_printed_as_plain_text() -> None:
    out = io.StringIO()
    player = TerminalPlayer(None, default_registry().get("tictactoe"), Console(file=out, width=120))  # type: ignore[arg-type]
    line = {"id": 1, "channel": "players", "name": "[bold]bo[/bold]", "kind": "guest", "text": "[red]gg[/red] <b>"}
    player.on_message({"type": "chat", "room": "R", "message": line})
    earlier = {**line, "channel": "spectators", "text": "hi"}
    player.on_message({"type": "chat_history", "room": "R", "messages": [earlier]})
    assert out.getvalue().splitlines() == ["[bold]bo[/bold]: [red]gg[/red] <b>", "[bold]bo[/bold] (spectators): hi"]


async def test_a_seat_token_alone_takes_the_seat_back(server: Server, connect) -> None:
    alice, bob = await connect(name="alice"), await connect(name="bob")
    created = await alice.create_room("tictactoe", seat=0, public=False)
    code = created["room"]
    bob_token = (await bob.join(code))["token"]
    await bob.close()
    back = await connect(name="bob")
    assert (await back.join(code, token=bob_token))["seat"] == 1
    mallory = await connect(name="mallory")
    for seat, token in ((0, bob_token), (None, "x" * 24)):
        with pytest.raises(ServerError) as refused:
            await mallory.join(code, seat=seat, token=token)
        assert refused.value.code == "auth_failed"
    assert server.rooms[code].core.seats[1].session is not None and server.rooms[code].core.seats[0].name == "alice"


@pytest.fixture
def serve(tmp_path) -> Any:
    port = free_port()
    url = f"ws://127.0.0.1:{port}"
    log = open(tmp_path / "serve.log", "w")
    process = subprocess.Popen(
        [*PARTIDA, "serve", "--port", str(port), "--db", str(tmp_path / "p.db"), "--bots", "random"],
        stdout=log,
        stderr=subprocess.STDOUT,
    )

    async def up() -> None:
        """Until the server answers and its random pool bot has connected (tests play it)."""
        for _ in range(600):
            try:
                client = await Client.connect(url, name="probe")
                try:
                    games = {g["name"]: g for g in await client.list_games()}
                finally:
                    await client.close()
                if "random" in games["tictactoe"]["bots"]:
                    return
            except Exception:
                pass
            await asyncio.sleep(0.1)

    asyncio.run(up())
    yield url
    process.terminate()
    process.wait(30)


@pytest.mark.processes
def test_ctrl_c_leaves_at_once_and_says_how_to_come_back(serve: str) -> None:
    master, slave = pty.openpty()
    game = subprocess.Popen(
        [*PARTIDA, "play", "tictactoe", "--clock", "600+5", "--server", serve, "--name", "ada"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
        # As a terminal starts it: a suite run in the background (`pytest &` in a script) has
        # SIGINT ignored, which children inherit, and then Ctrl-C would do nothing at all.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    os.close(slave)
    friend = None
    try:
        shown = read_until(master, r"Waiting for players")
        code = re.search(r"Room (\w+)", shown).group(1)  # type: ignore[union-attr]
        friend = subprocess.Popen(
            [*PARTIDA, "play", "--room", code, "--server", serve, "--name", "bo"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        read_until(master, r"your move \(")
        started = time.monotonic()
        os.killpg(game.pid, signal.SIGINT)  # what Ctrl-C sends to the terminal's foreground group
        said = read_until(master, r"Come back with: .*--token=\S+")
        assert game.wait(10) == 130
        assert time.monotonic() - started < 10  # no Enter needed
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(game.pid, signal.SIGKILL)
        if friend is not None:
            friend.kill()
            friend.wait()
        os.close(master)
    command = re.search(r"Come back with: (partida play [^\r\n]+)", said).group(1)  # type: ignore[union-attr]
    assert "--seat" not in command and f"--room {code}" in command
    back = subprocess.run([*PARTIDA, *command.split()[1:]], input="", capture_output=True, text=True, timeout=60)
    assert "you are seat 0, X" in back.stdout, back.stdout + back.stderr


async def _partida(*args: str, lines: str) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        *PARTIDA, *args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    out, _ = await asyncio.wait_for(process.communicate(lines.encode()), 60)
    return process.returncode or 0, plain(out)


@pytest.mark.processes
async def test_one_person_challenges_another_from_the_terminal(server: Server) -> None:
    """`play --accept` shows the challenge pushed to the account and asks; `play --challenge`
    waits for the answer; both then play the game to its end in the terminal."""
    for name in ("ann", "ben"):
        await server.store.create_user(name, "correct horse battery")
    login = ["--server", server.url, "--password", "correct horse battery"]
    ben = asyncio.create_task(_partida("play", "--accept", "--name", "ben", *login, lines="y\n" + "1\n" * 12))
    for _ in range(100):  # ben listens before ann challenges
        if any(s.identity and s.identity.name == "ben" for s in server.sessions):
            break
        await asyncio.sleep(0.1)
    ann = await _partida("play", "tictactoe", "--challenge", "BEN", "--name", "ann", *login, lines="1\n" * 12)
    ben_code, ben_out = await ben
    assert ann[0] == 0 and ben_code == 0, ann[1] + ben_out
    assert "Challenged ben to tictactoe" in ann[1] and "you are seat 0, X" in ann[1]
    assert "Invite a friend" not in ann[1]  # the challenged seat is not open to anyone
    assert "ann challenges you to Tic-tac-toe" in ben_out and "you are seat 1, O" in ben_out
    assert "Result" in ann[1] or "wins" in ann[1] or "draw" in ann[1].lower()


@pytest.mark.processes
@pytest.mark.parametrize(
    ("answer", "told"),
    [("decline", "di declined the challenge"), ("leave", "di left without answering the challenge")],
)
async def test_a_challenge_not_taken_up_is_one_line_at_once(server: Server, connect, answer: str, told: str) -> None:
    """Declined, or its person gone (the challenger used to wait out the five minutes)."""
    await server.store.create_user("cy", "correct horse battery")
    await server.store.create_user("di", "correct horse battery")
    di = await connect(name="di", password="correct horse battery")

    async def not_taken_up() -> None:
        pushed = await asyncio.wait_for(di.challenges.get(), 30)
        if answer == "decline":
            await di.decline(pushed["challenge"]["id"])
        else:
            await di.close()

    answering = asyncio.create_task(not_taken_up())
    code, out = await _partida(
        "play", "othello", "--challenge", "di", "--name", "cy", "--password", "correct horse battery",
        "--server", server.url, lines="",
    )  # fmt: skip
    await answering
    assert code == 2 and f"error: {told}\n" in out and "Traceback" not in out, out


@pytest.mark.processes
async def test_a_guest_awaiting_challenges_is_told_to_log_in_and_not_left_waiting(server: Server) -> None:
    """Nobody can challenge a guest: `play --accept` without an account used to wait forever."""
    process = await asyncio.create_subprocess_exec(
        *PARTIDA, "play", "--accept", "--name", "gus", "--server", server.url,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        out, _ = await asyncio.wait_for(process.communicate(b""), 20)
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
    assert process.returncode == 2, out
    assert "error: only accounts are challenged: log in with --name and --password" in plain(out)


@pytest.mark.processes
async def test_a_spectator_sees_the_room_waiting_and_names_the_players_who_join_later(server: Server, connect) -> None:
    """`partida watch` of a room still waiting used to print nothing at all, then call a player
    who took a seat after it began watching "seat 1", and tell it to type draw to accept."""
    ann, bob = await connect(name="ann"), await connect(name="bob")
    code = (await ann.create_room("tictactoe", seat=0, public=False))["room"]
    watcher = await asyncio.create_subprocess_exec(
        *PARTIDA, "watch", code, "--server", server.url, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        assert watcher.stdout is not None
        seen = b""
        while b"waiting for players" not in seen:
            seen += await asyncio.wait_for(watcher.stdout.read(1024), 20)
        await bob.join(code)
        await ann.act(code, 4, seat=0)
        while b"waiting for bob" not in seen:
            seen += await asyncio.wait_for(watcher.stdout.read(1024), 20)
        await bob.offer_draw(code)
        await ann.resign(code)
        rest, _ = await asyncio.wait_for(watcher.communicate(), 20)
    finally:
        with contextlib.suppress(ProcessLookupError):
            watcher.kill()
    out = plain(seen + rest)
    assert watcher.returncode == 0, out
    assert f"Watching room {code}: Tic-tac-toe" in out and "seat 0, X: ann (guest); seat 1, O: free" in out
    assert "bob offers a draw\n" in out and "type draw" not in out
    assert "bob (guest) joined (seat 1, O)" in out and "bob wins." in out and "waiting for seat" not in out


async def test_a_move_is_told_once_though_updates_without_a_move_follow(server: Server, connect) -> None:
    """A draw offer and a resignation push updates whose `last` is still the move before them;
    "ann played b2" was printed again for each, as if ann had moved after resigning."""
    ann, bob = await connect(name="ann"), await connect(name="bob")
    code = (await ann.create_room("tictactoe", seat=0, public=False))["room"]
    joined = await bob.join(code)
    out = io.StringIO()
    player = TerminalPlayer(bob, default_registry().get("tictactoe"), Console(file=out, width=120))
    player.on_room(joined["summary"])
    await ann.act(code, 4, seat=0)
    await ann.offer_draw(code)
    await ann.resign(code)
    while True:
        update = await asyncio.wait_for(bob.next_update(code), 20)
        player.on_update(update)
        if update["status"] == "finished":
            break
    text = out.getvalue()
    assert text.count("ann played b2") == 1 and "ann offers a draw: type draw to accept" in text, text


@pytest.mark.processes
async def test_the_replay_command_shown_at_the_end_works_from_the_players_terminal(server: Server, bots) -> None:
    """It said `partida replay N`, which reads a database on this machine: for a game on another
    machine's server, a public one is replayed through the server; a private one cannot be."""
    await bots("random")
    play = ("play", "tictactoe", "--vs", "random", "--server", server.url)
    code, out = await _partida(*play, "--public", lines="resign\nn\n")
    assert code == 0, out
    shown = re.search(r"replay with: (partida replay \d+ --server \S+)\)", out)
    assert shown is not None, out
    replay = await asyncio.create_subprocess_exec(
        *PARTIDA, *shown.group(1).split()[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    replayed, _ = await asyncio.wait_for(replay.communicate(), 60)
    assert replay.returncode == 0 and "Ended (resign)" in replayed.decode(), replayed
    code, out = await _partida(*play, lines="resign\nn\n")
    assert re.search(r"replay with: partida replay \d+\)", out), out  # private: this machine's database
    elsewhere = "ws://192.0.2.7:8765"  # a server on another machine (a documentation address)
    assert replay_command(7, elsewhere, True) == f"partida replay 7 --server {elsewhere}"
    assert replay_command(7, elsewhere, False) == "partida replay 7 on the server's machine"


@pytest.mark.processes
async def test_joining_a_game_under_way_names_the_command_to_watch_it(server: Server, connect) -> None:
    ann, bob = await connect(name="ann"), await connect(name="bob")
    code = (await ann.create_room("tictactoe", seat=0, public=False))["room"]
    await bob.join(code)
    status, out = await _partida("play", "--room", code, "--server", server.url, lines="")
    assert status == 2 and f"use your seat token (partida watch {code} --server {server.url})" in out, out


@pytest.mark.processes
async def test_no_rematch_is_offered_to_a_player_who_left(db_url: str) -> None:
    """After a game ended by a player's absence, "play again? y" offered a rematch to nobody and
    waited for their answer for good."""
    server = Server(ServerConfig(host="127.0.0.1", port=0, db_url=db_url, abandon_after=0.5))
    await server.start()
    ann = await asyncio.create_subprocess_exec(
        *PARTIDA, "play", "tictactoe", "--name", "ann", "--server", server.url,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        assert ann.stdin is not None and ann.stdout is not None
        ann.stdin.write(b"5\ny\n")  # a move, then yes to a rematch
        seen = b""
        while b"Waiting for players" not in seen:
            seen += await asyncio.wait_for(ann.stdout.read(1024), 20)
        code = re.search(r"Room (\w+)", plain(seen)).group(1)  # type: ignore[union-attr]
        bob = await Client.connect(server.url, name="bob")
        await bob.join(code)
        while b"waiting for bob" not in seen:
            seen += await asyncio.wait_for(ann.stdout.read(1024), 20)
        await bob.close()  # and does not come back
        rest, _ = await asyncio.wait_for(ann.communicate(), 30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            ann.kill()
        await server.stop()
    out = plain(seen + rest)
    assert ann.returncode == 0 and "bob (guest) left: no rematch." in out and "play again" not in out, out


@pytest.mark.processes
async def test_a_friend_joins_and_watches_by_the_invite_link_itself(server: Server, connect) -> None:
    """The browser's invite link is what a friend is sent; `play --room LINK` said there was no
    room 'http://...'. The link also says which server."""
    ann = await connect(name="ann")
    code = (await ann.create_room("tictactoe", seat=0, public=False))["room"]
    link = f"{server.http_url.rstrip('/')}/r/{code}"
    status, out = await _partida("watch", link.replace(code, "NOPE12"), lines="")
    assert status == 2 and "there is no room 'NOPE12'" in out, out  # asked of the link's server
    bob = asyncio.create_task(_partida("play", "--room", link, "--name", "bob", lines=""))
    while server.rooms[code].core.seats[1] is None:
        await asyncio.sleep(0.05)
    await ann.resign(code)
    status, out = await bob
    assert status == 0 and f"Room {code}: Tic-tac-toe, you are seat 1, O" in out and "You win!" in out, out


@pytest.mark.processes
async def test_a_player_at_the_prompt_is_told_at_once_when_the_server_goes_away(db_url: str) -> None:
    """The prompt went on waiting; the lost connection was told only once a move was typed."""
    server = Server(ServerConfig(host="127.0.0.1", port=0, db_url=db_url))
    await server.start()
    ann = await asyncio.create_subprocess_exec(
        *PARTIDA, "play", "tictactoe", "--name", "ann", "--server", server.url,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        assert ann.stdout is not None
        seen = b""
        while b"Waiting for players" not in seen:
            seen += await asyncio.wait_for(ann.stdout.read(1024), 20)
        code = re.search(r"Room (\w+)", plain(seen)).group(1)  # type: ignore[union-attr]
        link = f"http://{server.url.removeprefix('ws://')}/r/{code}"
        invite = f"Invite a friend: partida play --room {code} --server {server.url} or in a browser: {link}\n"
        assert invite in plain(seen)
        bob = await Client.connect(server.url, name="bob")
        await bob.join(code)
        while b"your move>" not in seen:
            seen += await asyncio.wait_for(ann.stdout.read(1024), 20)
    finally:
        await server.stop()  # nothing typed: ann is at the prompt
    try:
        rest, _ = await asyncio.wait_for(ann.communicate(), 20)
    finally:
        with contextlib.suppress(ProcessLookupError):
            ann.kill()
    out = plain(seen + rest)
    assert ann.returncode == 2 and "the connection to the server was lost; come back with: partida play" in out, out


def test_the_command_to_come_back_reads_a_token_that_begins_with_a_dash() -> None:
    from partida.cli import build_parser
    from partida.cli.play import comeback_command

    command = comeback_command("ABCDEF", "-kf_x-9", " --server ws://127.0.0.1:1")
    args = build_parser().parse_args(shlex.split(command)[1:])
    assert (args.room, args.token, args.server) == ("ABCDEF", "-kf_x-9", "ws://127.0.0.1:1")


def test_terminal_names_seats_tells_passes_and_results_in_words() -> None:
    """Seats say what the game calls them; two guests of one default name are told apart; an
    Othello pass is announced; a draw offer says how to accept when typing is not read yet;
    the result is in words, not a list of numbers."""
    import io

    from rich.console import Console

    from partida.client.terminal import TerminalPlayer
    from partida.games.othello.rules import Othello

    out = io.StringIO()
    player = TerminalPlayer(None, Othello(), Console(file=out, width=120))  # type: ignore[arg-type]
    seats = [{"seat": 0, "name": "root", "kind": "guest"}, {"seat": 1, "name": "root", "kind": "guest"}]
    player.on_room({"seats": seats, "status": "playing"})
    assert player.players_line([0]) == (
        "Players: seat 0, black (X): root (guest), you; seat 1, white (O): root-2 (guest)"
    )
    # white moved and is to move again: black had no move
    view = {"board": "-" * 64, "legal": [], "counts": [30, 33], "to_move": 1, "over": False}
    update = {"view": view, "room": "R", "seq": 9, "last": {"seat": 1, "action": "a1"}, "status": "playing"}
    player.on_update({**update, "seat": 0, "decision": None, "draw_offer": 1, "to_act": [1]})
    text = out.getvalue()
    assert "black has no legal move and passes" in text
    assert "offers a draw: to accept, type draw when your move is asked" in text
    player.show_result({"result": {"winners": [1], "scores": [0.0, 1.0], "reason": "normal"}}, [0])
    assert "root-2 wins. Scores: root 0, root-2 1." in out.getvalue()


@pytest.mark.processes
async def test_serve_console_is_kept_for_the_operator(serve: str, tmp_path) -> None:
    """A game against a pool bot leaves no line of the bot's in `partida serve`'s output."""
    code, out = await _partida("play", "tictactoe", "--vs", "random", "--server", serve, lines="1\n" * 9 + "n\n")
    assert code == 0 and ("You win!" in out or "wins." in out or "Draw." in out), out
    log = (tmp_path / "serve.log").read_text()
    assert "Partida is serving on" in log and "Bot pool: random." in log
    assert "partida.bots" not in log and "game in room" not in log, log
