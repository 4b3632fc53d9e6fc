"""Seeks from the terminal, against a real server: two `partida play --seek` are paired and play
to the end; Ctrl-C cancels a waiting seek on the server; `partida seeks` lists them; `--take`
takes one; bad input is one line."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pty
import signal
import subprocess
import sys

import pytest

from partida.server.app import Server
from tests.helpers import plain, random_decider, read_until

PARTIDA = [sys.executable, "-m", "partida"]


async def _partida(*args: str, lines: str = "") -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        *PARTIDA, *args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    out, _ = await asyncio.wait_for(process.communicate(lines.encode()), 90)
    return process.returncode or 0, plain(out)


async def _until(check, seconds: float = 30) -> None:  # type: ignore[no-untyped-def]
    for _ in range(int(seconds * 10)):
        if check():
            return
        await asyncio.sleep(0.1)
    raise AssertionError("timed out")


@pytest.mark.processes
async def test_two_terminals_seeking_the_same_game_are_paired_and_play(server: Server) -> None:
    moves = "1\n" * 12
    ann = asyncio.create_task(_partida("play", "tictactoe", "--seek", "move:30", "--name", "ann",
                                       "--server", server.url, lines=moves))  # fmt: skip
    await _until(lambda: len(server.seeks.open) == 1)
    ben_code, ben = await _partida("play", "tictactoe", "--seek", "move:30", "--name", "ben", "--server", server.url,
                                   lines=moves)  # fmt: skip
    ann_code, ann_out = await ann
    assert ann_code == 0 and ben_code == 0, ann_out + ben
    assert "Seeking a casual 30 s a move tictactoe (rapid)" in ann_out and "Ctrl-C cancels the seek" in ann_out
    assert "Paired with ben." in ann_out and "Paired with ann." in ben
    assert "Seeking" not in ben  # paired at once with ann's waiting seek
    assert "Invite a friend" not in ann_out
    for out in (ann_out, ben):
        assert "you are seat" in out and ("wins" in out or "Draw" in out or "You win" in out), out
    assert not server.seeks.open


@pytest.mark.processes
async def test_ctrl_c_cancels_the_waiting_seek(server: Server, connect) -> None:
    watcher = await connect(name="watcher")
    master, slave = pty.openpty()
    game = subprocess.Popen(
        [*PARTIDA, "play", "othello", "--seek", "5+3", "--name", "cy", "--server", server.url],
        stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    os.close(slave)
    try:
        shown = await asyncio.to_thread(read_until, master, r"Ctrl-C cancels the seek")
        assert "Seeking a casual 5+3 othello (blitz)" in shown
        await asyncio.to_thread(read_until, master, r"waiting for an opponent: 0:0\d")  # the wait, counted
        listed = await watcher.list_seeks(watch=True)
        assert [s["by"]["name"] for s in listed] == ["cy"] and listed[0]["clock"]["initial"] == 300
        os.killpg(game.pid, signal.SIGINT)
        await asyncio.to_thread(read_until, master, r"Seek cancelled")
        assert await asyncio.to_thread(game.wait, 10) == 130
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(game.pid, signal.SIGKILL)
        os.close(master)
    news = await asyncio.wait_for(watcher.lobby_events.get(), 5)
    assert news["type"] == "lobby_seeks" and news["removed"] == [listed[0]["id"]]


@pytest.mark.processes
async def test_seeks_are_listed_and_taken_from_the_terminal(server: Server, connect) -> None:
    code, out = await _partida("seeks", "--server", server.url)
    assert code == 0 and "No open seeks" in out, out
    dee = await connect(name="dee")
    seek = (await dee.seek("tictactoe", clock={"initial": 180, "increment": 2}, allow_bots=True))["seek"]
    code, out = await _partida("seeks", "--json", "--server", server.url)
    assert code == 0, out
    assert [s["id"] for s in json.loads(out)] == [seek["id"]]
    code, out = await _partida("seeks", "--game", "tictactoe", "--server", server.url)
    row = next(line for line in out.splitlines() if "dee" in line)
    assert code == 0 and all(word in row for word in ("tictactoe", "casual 3+2 blitz", "yes", "guest")), out
    code, out = await _partida("seeks", "--game", "othello", "--json", "--server", server.url)
    assert json.loads(out) == []

    async def dee_plays() -> dict:  # type: ignore[type-arg]
        paired = await asyncio.wait_for(dee.seek_events.get(), 30)
        return await dee.play(paired["room"], random_decider(7))

    playing = asyncio.create_task(dee_plays())
    code, out = await _partida("play", "--take", str(seek["id"]), "--name", "eve", "--server", server.url,
                               lines="1\n" * 12)  # fmt: skip
    assert code == 0 and f"Took seek {seek['id']}. Paired with dee." in out and "you are seat" in out, out
    assert (await asyncio.wait_for(playing, 30))["status"] == "finished"


@pytest.mark.processes
async def test_bad_seeks_are_one_line(server: Server) -> None:
    url = ["--server", server.url, "--name", "fay"]
    for args, told in (
        (("play", "othello", "--rated"), "give --seek CLOCK too"),
        (("play", "othello", "--seek", "5+3", "--vs", "random"), "do not go with --seek"),
        (("play", "othello", "--seek", "5+3", "--rated"), "guests cannot play rated games"),
        (("play", "--take", "999"), "no open seek 999"),
        (("play", "othello", "--seek", "5"), "write MINUTES+SECONDS"),
        (("play", "othello", "--seek", "5+3", "--range", "1600-1400"), "is empty"),
    ):
        code, out = await _partida(*args, *url)
        assert code == 2 and told in out and "Traceback" not in out, (args, out)
        assert len([line for line in out.splitlines() if "error" in line]) == 1, out


@pytest.mark.processes
async def test_serve_names_a_seek_bot_it_does_not_know_in_one_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, out = await _partida("serve", "--seek-bots", "nobody", "--port", "0", "--db", str(tmp_path / "p.db"))
    assert code == 2 and "unknown agent 'nobody' in --seek-bots" in out and "Traceback" not in out, out


@pytest.mark.processes
async def test_partida_seeks_lists_every_page(limited) -> None:  # type: ignore[no-untyped-def]
    """More seeks than a page holds: the listing walks the pages, each seek once, oldest first."""
    from partida.client import Client

    server = await limited(seeks_per_address=100)
    guests = [await Client.connect(server.url, name=f"g{i}") for i in range(18)]
    try:
        ids = []
        for n in range(3):
            for i, guest in enumerate(guests):  # all different clocks: nothing pairs
                ids.append((await guest.seek("tictactoe", clock={"per_move": 10 + 10 * i + n}))["seek"]["id"])
        code, out = await _partida("seeks", "--json", "--server", server.url)
        assert code == 0, out
        assert [seek["id"] for seek in json.loads(out)] == ids and len(ids) == 54
    finally:
        for guest in guests:
            await guest.close()
