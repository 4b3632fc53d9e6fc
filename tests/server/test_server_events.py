"""Room and lobby events reach an MQTT subscriber through a real Mosquitto broker, and the
in-process bus when no broker is configured."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import aiomqtt

from partida.client import Client
from partida.server.app import Server, ServerConfig


async def play_random_tictactoe(url: str) -> tuple[str, dict[str, Any]]:
    alice = await Client.connect(url, name="alice")
    bob = await Client.connect(url, name="bob")
    code = (await alice.create_room("tictactoe", seat=0, public=True))["room"]
    await bob.join(code)
    rng = random.Random(3)
    finals = await asyncio.gather(
        alice.play(code, lambda u, p: p.random_answer(rng)),
        bob.play(code, lambda u, p: p.random_answer(rng)),
    )
    await alice.close()
    await bob.close()
    return code, finals[0]


def check_event_stream(events: list[tuple[str, dict[str, Any]]], code: str, final: dict[str, Any]) -> None:
    kinds = [payload["type"] for _, payload in events]
    assert kinds == ["room_created", "game_started"] + ["action"] * final["seq"] + ["game_over"]
    assert events[0][0] == "partida/lobby/room_created"
    assert all(topic.startswith(f"partida/rooms/{code}/") for topic, _ in events[1:])
    actions = [payload for _, payload in events if payload["type"] == "action"]
    assert [a["seq"] for a in actions] == list(range(1, final["seq"] + 1))
    assert events[-1][1]["result"] == final["result"] and events[-1][1]["seed"] == final["seed"]


async def test_an_mqtt_subscriber_sees_every_event_of_a_game(mosquitto, db_url: str) -> None:
    server = Server(ServerConfig(port=0, db_url=db_url, mqtt_url=mosquitto.url))
    await server.start()
    events: list[tuple[str, dict[str, Any]]] = []
    try:
        async with aiomqtt.Client("127.0.0.1", mosquitto.port) as subscriber:
            await subscriber.subscribe("partida/#", qos=1)
            code, final = await play_random_tictactoe(server.url)

            async def collect() -> None:
                async for message in subscriber.messages:
                    events.append((str(message.topic), json.loads(message.payload)))
                    if events[-1][1]["type"] == "game_over":
                        return

            await asyncio.wait_for(collect(), 20)
    finally:
        await server.stop()
    check_event_stream(events, code, final)


async def test_without_a_broker_events_go_through_the_in_process_bus(server) -> None:
    events: list[tuple[str, dict[str, Any]]] = []
    subscription = server.bus.subscribe("partida/#")

    async def collect() -> None:
        async for event in subscription:
            events.append((event.topic, event.payload))
            if event.payload["type"] == "game_over":
                return

    collector = asyncio.create_task(collect())
    code, final = await play_random_tictactoe(server.url)
    await asyncio.wait_for(collector, 10)
    check_event_stream(events, code, final)
