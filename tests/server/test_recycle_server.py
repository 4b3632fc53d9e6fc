"""A RECYCLE game played to the end through a real server by two clients."""

from __future__ import annotations

import pytest

from tests.helpers import play_two


async def test_two_clients_play_crazy_eights_through_the_server(connect, server) -> None:
    assert "crazyeights" in server.registry
    alice, bob = await connect(name="alice"), await connect(name="bob")
    final_a, final_b = await play_two(alice, bob, "crazyeights")
    assert final_a["status"] == final_b["status"] == "finished"
    assert final_a["result"] == final_b["result"]
    assert len(final_a["result"]["scores"]) == 2


async def test_a_bot_is_seated_only_in_games_it_knows(tmp_path, db_url: str) -> None:  # type: ignore[no-untyped-def]
    """A server given a description file seated a bot that had not loaded it: the bot could not
    move and the game hung for good (`partida match` and a person against a bot both waited
    forever). A bot declares the games it knows; one that loaded the file plays it."""
    import asyncio
    import shutil
    from pathlib import Path

    import pytest

    import partida.games.recycle
    from partida.bots.runner import BotRunner
    from partida.cli.play import play_bot_game
    from partida.client import Client, ServerError
    from partida.games.registry import default_registry
    from partida.server.app import Server, ServerConfig

    description = tmp_path / "mydice.rcl"
    shutil.copy(Path(partida.games.recycle.__file__).parent / "descriptions" / "dicepoints.rcl", description)
    server = Server(ServerConfig(host="127.0.0.1", port=0, db_url=db_url, game_files=[description]))
    await server.start()
    tasks = []
    try:
        for name, registry in (("plain", None), ("loaded", default_registry([description]))):
            _, token = await server.store.create_bot(name)
            runner = BotRunner(server.url, "random", name=name, token=token, registry=registry)
            tasks.append(asyncio.create_task(runner.run(reconnect=False)))
        while len(server.bot_sessions()) < 2:
            await asyncio.sleep(0.02)
        client = await Client.connect(server.url, name="ann")
        with pytest.raises(ServerError) as refused:
            await client.create_room("mydice", bots={1: "plain"}, seat=0)
        assert refused.value.code == "no_bot_available" or "does not play" in refused.value.message
        played = await asyncio.wait_for(play_bot_game(client, "mydice", {}, ["loaded"] * 4), 30)
        assert played["result"]["winners"]
        await client.close()
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.stop()


@pytest.mark.processes
async def test_a_game_the_server_loads_from_a_file_is_played_and_replayed_in_the_terminal(
    tmp_path, db_url: str
) -> None:  # type: ignore[no-untyped-def]
    """`partida play`, `watch` and `replay` knew only the installation's games: one the server
    loads from a file was 'unknown' to them, and no flag could tell them of it."""
    import asyncio
    import re
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    import partida.games.recycle
    from partida.bots.runner import BotRunner
    from partida.games.registry import default_registry
    from partida.server.app import Server, ServerConfig

    description = tmp_path / "mydice.rcl"
    shutil.copy(Path(partida.games.recycle.__file__).parent / "descriptions" / "dicepoints.rcl", description)
    server = Server(ServerConfig(host="127.0.0.1", port=0, db_url=db_url, game_files=[description]))
    await server.start()
    _, token = await server.store.create_bot("dicer")
    runner = BotRunner(server.url, "random", token=token, registry=default_registry([description]))
    task = asyncio.create_task(runner.run(reconnect=False))

    async def partida_(*args: str) -> tuple[int, str]:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "partida", *args,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip
        out, _ = await asyncio.wait_for(process.communicate(b"resign\nn\n"), 60)
        return process.returncode or 0, out.decode()

    try:
        while not server.bot_sessions():
            await asyncio.sleep(0.02)
        play = ("play", "mydice", *["--vs", "dicer"] * 3, "--public", "--server", server.url)
        code, out = await partida_(*play)
        assert code == 2 and "unknown game 'mydice'" in out and "--game-file FILE" in out, out
        code, out = await partida_(*play, "--game-file", str(description))
        assert code == 0 and "Scores: " in out, out
        shown = re.search(r"replay with: (partida replay \d+ --server \S+ --game-file \S+)\)", out)
        assert shown is not None, out
        code, out = await partida_(*shown.group(1).split()[1:])
        assert code == 0 and "Result: scores" in out, out
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await server.stop()
