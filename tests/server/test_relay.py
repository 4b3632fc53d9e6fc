"""Spectators of another node's room (server/relay.py), fed by the in-process bus standing in for
the broker and a store that holds the game as the room's node last wrote it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest

from partida.games.registry import default_registry
from partida.protocol import ErrorCode, ProtocolError
from partida.server.events import EventBus
from partida.server.relay import Relay
from partida.storage.store import StoredGame
from tests.fakes import Connection

GAME = default_registry().get("tictactoe")
TOPIC = "partida/rooms/ABCDEF"


class Store:
    """The stored game, as far as its node has written it."""

    def __init__(self, actions: list[tuple[int, Any]]) -> None:
        self.actions = actions
        self.status = "playing"
        self.result: dict[str, Any] | None = None

    async def load_game(self, game_id: int) -> StoredGame | None:
        if game_id != 9:
            return None
        now = datetime.now(UTC)
        return StoredGame(
            9, "tictactoe", {}, 2, 1, "", "ABCDEF", True, self.status, self.result, now, now, None,
            actions=list(self.actions),
        )  # fmt: skip


def view_after(actions: list[tuple[int, Any]]) -> Any:
    return GAME.replay({}, 1, 2, actions).view(None)


@pytest.fixture
async def bus() -> AsyncIterator[EventBus]:
    async with EventBus() as bus:
        yield bus


async def open_relay(bus: EventBus, store: Store, relays: dict[str, Relay]) -> Relay:
    relay = Relay(bus, store, default_registry(), relays, "ABCDEF", 9, public=True)  # type: ignore[arg-type]
    await relay.open()
    relays["ABCDEF"] = relay
    return relay


async def test_a_spectator_starts_from_the_stored_game_and_follows_the_rooms_events(bus: EventBus) -> None:
    played = [(0, 4), (1, 0)]
    relays: dict[str, Relay] = {}
    relay = await open_relay(bus, Store(played), relays)
    ada = Connection()
    await relay.watch(ada)
    first = await ada.next()
    assert (first["type"], first["seq"], first["status"]) == ("update", 2, "playing")
    assert first["view"] == view_after(played) and first["to_act"] == [0]
    assert first["last"] == {"seat": 1, "action": 0, "text": None}
    assert first["clock"] is None  # the clock is not relayed
    view = view_after([*played, (0, 8)])
    event = {"type": "action", "seq": 3, "seat": 0, "action": 8, "view": view}
    await bus.publish(f"{TOPIC}/action", event)
    await bus.publish(f"{TOPIC}/action", event)  # the broker may repeat an event
    await bus.publish(f"{TOPIC}/action", {**event, "seq": 4, "seat": 1, "action": 1, "view": "fourth"})
    second = await ada.next()
    assert (second["seq"], second["view"], second["to_act"]) == (3, view, [1])
    assert second["last"]["action"] == 8
    assert (await ada.next())["seq"] == 4  # the repeat was dropped
    assert ada in relay.spectators and relay in ada.rooms


async def test_a_lost_event_sends_the_relay_back_to_the_stored_game(bus: EventBus) -> None:
    store = Store([(0, 4)])
    relay = await open_relay(bus, store, {})
    ada = Connection()
    await relay.watch(ada)
    assert (await ada.next())["seq"] == 1
    store.actions = [(0, 4), (1, 0), (0, 8)]
    await bus.publish(f"{TOPIC}/action", {"type": "action", "seq": 3, "seat": 0, "action": 8, "view": "x"})
    update = await ada.next()
    assert (update["seq"], update["view"]) == (3, view_after(store.actions))  # the stored view, not the event's


async def test_the_end_is_relayed_and_a_late_spectator_learns_it(bus: EventBus) -> None:
    relay = await open_relay(bus, Store([(0, 4)]), {})
    ada = Connection()
    await relay.watch(ada)
    await ada.next()
    await bus.publish(f"{TOPIC}/game_over", {"type": "game_over", "result": {"winner": 0}, "seed": "1"})
    final = await ada.next()
    assert (final["type"], final["status"], final["result"]) == ("update", "finished", {"winner": 0})
    assert await ada.next() == {
        "type": "game_over",
        "room": "ABCDEF",
        "game_id": 9,
        "result": {"winner": 0},
        "seed": "1",
    }
    bob = Connection()
    await relay.watch(bob)
    assert (await bob.next())["status"] == "finished"
    assert (await bob.next())["type"] == "game_over"


async def test_the_last_spectator_leaving_closes_the_relay(bus: EventBus) -> None:
    relays: dict[str, Relay] = {}
    relay = await open_relay(bus, Store([]), relays)
    ada, bob = Connection(), Connection()
    await relay.watch(ada)
    await relay.watch(bob)
    await relay.leave(ada)
    assert relays == {"ABCDEF": relay} and relay not in ada.rooms
    # a closing connection leaves it as it leaves a room: the rooms service runs each room's
    # `disconnect` through `call_here`, in the connection's own task
    await relay.call_here(lambda: relay.disconnect(bob))
    assert relays == {} and relay not in bob.rooms
    assert not bus.wants(f"{TOPIC}/action")  # no longer subscribed


async def test_a_game_the_store_does_not_have_is_no_room(bus: EventBus) -> None:
    relay = Relay(bus, Store([]), default_registry(), {}, "ZZZZZZ", 8, public=False)  # type: ignore[arg-type]
    with pytest.raises(ProtocolError) as missing:
        await relay.open()
    assert missing.value.code == ErrorCode.NO_SUCH_ROOM
    assert not bus.wants("partida/rooms/game-8/action")  # the subscription made first is closed


async def test_a_takeback_sends_the_relay_to_the_stored_game_and_its_standing_moves(bus: EventBus) -> None:
    store = Store([(0, 4), (1, 0)])
    relay = await open_relay(bus, store, {})
    ada = Connection()
    await relay.watch(ada)
    assert (await ada.next())["seq"] == 2
    takeback = (-1, {"takeback": 2, "by": 0})
    store.actions = [(0, 4), (1, 0), takeback]
    await bus.publish(f"{TOPIC}/action", {"type": "action", "seq": 3, "seat": -1, "action": takeback[1], "view": "x"})
    update = await ada.next()
    assert (update["seq"], update["view"], update["to_act"]) == (3, view_after([]), [0])
    assert update["last"]["takeback"] == 2 and update["last"]["undone"] == [1, 2]
    await bus.publish(f"{TOPIC}/action", {"type": "action", "seq": 4, "seat": 0, "action": 8, "view": "y"})
    assert (await ada.next())["to_act"] == [1]  # the relay's state is the standing moves' game
