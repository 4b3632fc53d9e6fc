"""Bots and chat: a bot reads its room's chat over the protocol and answers within the same
limits as anyone (the SDK's `on_chat` hook in `Client.play`), and `partida bot --greet` says its
greeting as it sits down."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from partida.client import Client
from partida.server.app import Server
from tests.helpers import random_decider


async def lines(client: Client, room: str, count: int) -> list[dict[str, Any]]:
    """The next `count` chat lines pushed to `client` in `room`."""
    found: list[dict[str, Any]] = []
    async with asyncio.timeout(15):
        while len(found) < count:
            message = await client.next_message(room)
            if message["type"] == "chat":
                found.append(message["message"])
    return found


async def test_a_bot_reads_the_rooms_chat_and_answers(
    server: Server, connect: Callable[..., Awaitable[Client]]
) -> None:
    _, token = await server.store.create_bot("chatty")
    bot = await connect(token=token, agent="random")
    ada = await connect(name="ada")
    code = (await ada.create_room("tictactoe", seat=0, public=False, auto_start=False))["room"]
    await bot.join(code)
    heard: list[dict[str, Any]] = []

    def on_chat(line: dict[str, Any]) -> str | None:
        heard.append(line)
        return f"hello {line['name']}, you said {len(line['text'])} characters"

    playing = asyncio.ensure_future(bot.play(code, random_decider(3), on_chat=on_chat))
    await ada.chat("good luck, bot", room=code)
    answered = await lines(ada, code, 2)  # her own line comes back to her first
    assert [line["name"] for line in answered] == ["ada", "chatty"]
    assert answered[1]["text"] == "hello ada, you said 14 characters" and answered[1]["channel"] == "players"
    assert [line["text"] for line in heard] == ["good luck, bot"]  # not its own answer
    await ada.start(code)
    final = await ada.play(code, random_decider(4))
    assert final["status"] == "finished"
    await asyncio.wait_for(playing, 15)


async def test_partida_bot_greet_says_its_greeting_as_it_sits_down(
    server: Server, connect: Callable[..., Awaitable[Client]], runners: Any
) -> None:
    import argparse

    from partida.cli import bot as bot_cli

    parser = argparse.ArgumentParser()
    bot_cli.register(parser.add_subparsers())
    args = parser.parse_args(["bot", "random", "--greet", "Hi! I play at random. Good luck."])
    await runners("greeter", "random", greet=args.greet)
    ada = await connect(name="ada")
    async with asyncio.timeout(10):
        while "greeter" not in {s.identity.name for s in server.bot_sessions() if s.identity}:
            await asyncio.sleep(0.05)
    code = (await ada.create_room("tictactoe", seat=0, bots={1: "greeter"}))["room"]
    (greeting,) = await lines(ada, code, 1)
    assert greeting == {**greeting, "name": "greeter", "kind": "bot", "text": "Hi! I play at random. Good luck."}
