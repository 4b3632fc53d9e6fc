"""Spectators of another node's room, served on this node from the room's public events.

With several nodes and an MQTT broker, a `watch` for a room that lives on another node need not
send the spectator there: every room publishes each accepted action with the spectators' view
(`partida/rooms/{room}/action`, see docs/events.md), and every node's bus receives the other
nodes' events. A `Relay` holds this node's spectators of one remote room: it starts them from
the stored game (replayed up to its last stored move, public view only), then turns each
`action` event into an `update` and `game_over` into the end. Events are numbered (`seq`), so a
repeated event (MQTT's at-least-once) is dropped and a gap (an event lost on the way) sends the
relay back to the stored game. The room moving to another node changes nothing here: its events
keep their topic.

A relayed `update` has the fields of any spectator's update; `to_act` is known only for
perfect-information games (the relay replays their actions), and the clock is not relayed
(`clock` null). Only public information is ever on the bus, so nothing hidden can leak.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

from partida.games.base import Game, State
from partida.protocol import ErrorCode, ProtocolError, server_message
from partida.room import takebacks
from partida.room.record import public_last

if TYPE_CHECKING:
    from partida.games.registry import Registry
    from partida.server.events import EventBus, Subscription
    from partida.server.session import Session
    from partida.storage.store import Store

log = logging.getLogger(__name__)


class Relay:
    """This node's spectators of one room that lives on another node. It stands in for a room in
    `Session.rooms` (`spectators`, `call`, `disconnect`), so a closing connection leaves it as it
    leaves a room."""

    def __init__(
        self,
        bus: EventBus,
        store: Store,
        registry: Registry,
        relays: dict[str, Relay],
        code: str,
        game_id: int,
        public: bool,
    ) -> None:
        self.bus = bus  # where it hears the room's events (the broker's, with several nodes)
        self.store = store  # the stored game a spectator starts from, and after a lost event
        self.registry = registry
        self.relays = relays  # this node's relays by code: it leaves them when it closes
        self.code = code
        self.game_id = game_id
        self.event_name = code if public else f"game-{game_id}"
        self.spectators: set[Session] = set()
        self.game: Game | None = None
        self.state: State | None = None  # perfect-information games only: to know who acts
        self.seq = 0
        self.last: dict[str, Any] | None = None
        self.view: Any = None
        self.finished: dict[str, Any] | None = None  # the stored game's end: result and seed
        self._subscription: Subscription | None = None
        self._task: asyncio.Task[None] | None = None

    async def open(self) -> None:
        """Subscribe first, then read the stored game, so no event falls between the two."""
        pattern = f"partida/rooms/{self.event_name}/#"
        self._subscription = self.bus.subscribe(pattern)
        try:
            # The broker sends the room's events from its acknowledgement on (a broker away
            # for longer: the first event after the stored game tells of the gap, see _on_event).
            await self.bus.subscribed(pattern, timeout=5)
            await self._load()
        except BaseException:
            self._subscription.close()
            raise
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"relay-{self.code}")

    async def _load(self) -> None:
        stored = await self.store.load_game(self.game_id)
        if stored is None:
            raise ProtocolError(ErrorCode.NO_SUCH_ROOM, f"there is no room {self.code!r}")
        self.game = self.registry.get(stored.game)
        state = self.game.replay(stored.options, stored.seed, stored.seats, takebacks.line(stored.actions))
        self.seq = len(stored.actions)
        self.view = state.view(None)
        self.state = state if self.game.perfect_information else None
        if stored.actions and takebacks.is_takeback(stored.actions[-1][0]):
            self.last = takebacks.public_last(stored.actions)
        elif stored.actions:
            self.last = public_last(self.game, state, *stored.actions[-1])
        if stored.status in ("finished", "aborted"):
            self.finished = {"result": stored.result, "seed": str(stored.seed)}

    async def close(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        for session in self.spectators:
            session.rooms.discard(self)  # type: ignore[arg-type]
        self.spectators.clear()
        if self.relays.get(self.code) is self:
            del self.relays[self.code]

    # As a room, for Session.rooms.

    async def call(self, command: Any) -> Any:
        return await command()

    async def call_here(self, command: Any) -> Any:
        """How the rooms service runs a gone connection's leaving in each of its rooms
        (`session.InRoom`): a relay has no lock to take, its commands run as they come."""
        return await command()

    async def disconnect(self, session: Session) -> None:
        await self.leave(session)

    async def watch(self, session: Session) -> None:
        self.spectators.add(session)
        session.rooms.add(self)  # type: ignore[arg-type]
        session.send(self.update())
        if self.finished is not None:
            session.send(self._game_over())

    async def leave(self, session: Session) -> None:
        self.spectators.discard(session)
        session.rooms.discard(self)  # type: ignore[arg-type]
        if not self.spectators:
            await self.close()

    # Messages.

    def update(self) -> dict[str, Any]:
        assert self.game is not None
        over = self.finished is not None
        to_act: list[int] = []
        if self.state is not None and not over and not self.state.is_over():
            to_act = [d.seat for d in self.state.pending()]
        message = server_message(
            "update",
            room=self.code,
            game_id=self.game_id,
            game=self.game.name,
            seq=self.seq,
            seat=None,
            status="finished" if over else "playing",
            view=self.view,
            decision=None,
            to_act=to_act,
            last=self.last,
            clock=None,
            draw_offer=None,
            resigned=[],
        )
        if over:
            assert self.finished is not None
            message.update(self.finished)
        return message

    def _game_over(self) -> dict[str, Any]:
        assert self.finished is not None
        return server_message("game_over", room=self.code, game_id=self.game_id, **self.finished)

    async def _run(self) -> None:
        assert self._subscription is not None
        async for event in self._subscription:
            try:
                await self._on_event(event.payload)
            except Exception:
                log.exception("relay %s: an event could not be relayed", self.code)

    async def _on_event(self, payload: dict[str, Any]) -> None:
        kind = payload.get("type")
        if kind == "action":
            seq = payload.get("seq")
            if not isinstance(seq, int) or seq <= self.seq or self.finished is not None:
                return  # seen already (QoS 1 may repeat an event)
            if seq != self.seq + 1 or payload.get("seat") == takebacks.TAKEBACK_SEAT:
                # one was lost on the way, or a takeback (rare: the stored game says what stands):
                # start again from the stored game
                await self._load()
                if self.finished is not None:  # and it has ended: its game_over may be past too
                    for session in self.spectators:
                        session.send(self.update())
                        session.send(self._game_over())
                    return
            else:
                self.seq = seq
                self.view = payload.get("view")
                action = payload.get("action")
                seat = payload.get("seat")
                text = None
                if self.state is not None and isinstance(seat, int):
                    self.state.apply(seat, action)
                    text = self.state.last_event()
                self.last = {"seat": seat, "action": action, "text": text}
            message = self.update()
        elif kind == "game_over":
            if self.finished is not None:
                return
            self.finished = {"result": payload.get("result"), "seed": payload.get("seed")}
            for session in self.spectators:
                session.send(self.update())
            message = self._game_over()
        else:
            return
        for session in self.spectators:
            session.send(message)
