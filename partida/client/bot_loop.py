"""The bot loop: answering the decisions put to a seat until its game ends.

Its own part because it is what a bot is: `Client.play(room, decide)` reads the room's pushed
messages, skips an update a newer one has overtaken, asks `decide` for the answer to each
decision, sends it, and knows which refusals mean "ask again" (a rejected answer), which mean
"wait for the next update" (the decision passed, the game ended meanwhile, the connection to the
room's node dropped), and which end the game for this client (its own connection lost). It holds
no state of its own: the queues it reads are the connection's, and each answer is one `act`.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from partida.client.refusals import ConnectionLost, ServerError
from partida.client.requests import Requests
from partida.games.prompts import Prompt, prompt_from_data

Decide = Callable[[dict[str, Any], Prompt], Any | Awaitable[Any]]
# A bot's answer to a line of chat in its room: the text to say back, or None to say nothing.
OnChat = Callable[[dict[str, Any]], str | Awaitable[str | None] | None]


class Client(Requests):
    """A client of a Partida server: the connection (`partida/client/connection.py`: nodes,
    replies, pushes, reconnection), a method per request (`requests.py`), and the loop that plays
    a room (here). Make one with `await Client.connect(url, ...)`."""

    async def next_message(self, room: str, timeout: float | None = None) -> dict[str, Any]:
        """The next pushed message about `room` (update, room, game_over, seat_lost, rematch, chat,
        chat_history, chat_removed)."""
        if timeout is None:  # a bot's every message: no timer to set up
            message = await self._rooms[room].get()
        else:
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for drops a cancellation that
            # arrives with the message, and a cancelled player would go on waiting for the next one
            async with asyncio.timeout(timeout):
                message = await self._rooms[room].get()
        if message["type"] == "connection_lost":
            raise ConnectionLost()
        if message["type"] == "update":
            self._queued_updates[room, message.get("seat")] -= 1
        return message

    async def _answer_chat(
        self, room: str, line: dict[str, Any], on_chat: OnChat, on_error: Callable[[ServerError], Any] | None
    ) -> None:
        """`on_chat`'s answer to someone else's line, said in the room."""
        if line.get("name") == (self.welcome.get("you") or {}).get("name"):
            return  # its own line, pushed back to it: answering would talk to itself
        answer = on_chat(line)
        if inspect.isawaitable(answer):
            answer = await answer
        if not answer:
            return
        try:
            await self.chat(str(answer), room=room)
        except ServerError as exc:
            if on_error is not None:
                on_error(exc)

    async def next_update(self, room: str, timeout: float | None = None) -> dict[str, Any]:
        while True:
            message = await self.next_message(room, timeout)
            if message["type"] == "update":
                return message

    async def play(
        self,
        room: str,
        decide: Decide,
        on_update: Callable[[dict[str, Any]], Any] | None = None,
        on_error: Callable[[ServerError], Any] | None = None,
        on_message: Callable[[dict[str, Any]], Any] | None = None,
        on_chat: OnChat | None = None,
    ) -> dict[str, Any]:
        """Answer every decision put to this connection in `room` until the game ends; returns
        the final update (with `result`, its `reason`, and the revealed `seed`). `decide(update,
        prompt)` may be a plain function or a coroutine. A rejected answer is reported to
        `on_error` (or raised when there is none) and the same decision is asked again; an answer
        overtaken by events (the decision passed, or the game ended meanwhile: a timeout, a
        resignation) waits for the next update instead. Other pushed messages about the room
        (`room`, `game_over`, `seat_lost`, `chat`) go to `on_message`. `on_chat(message)` is
        called with each line of chat someone else says in the room (its `message`: `name`,
        `text`, `channel` ...); the text it returns (plain or from a coroutine) is said back in
        the bot's channel, under the same caps and rate limits as anyone's (a refusal goes to
        `on_error`, or is dropped). A lost connection is not a refused answer: it raises
        `ConnectionLost`."""
        while True:
            try:
                update = await self.next_message(room)
            except ConnectionLost:
                # The room's node went away (and this client's own connection did not): carry on
                # wherever the room was taken over.
                if self.closed.is_set() or not await self.rejoin(room):
                    raise
                continue
            if update["type"] != "update":
                if on_message is not None:
                    on_message(update)
                if on_chat is not None and update["type"] == "chat":
                    await self._answer_chat(room, update["message"], on_chat, on_error)
                continue
            if update["status"] != "finished" and self._queued_updates[room, update["seat"]] > 0:
                continue  # a newer update for this seat is already here: this decision may be gone
            if on_update is not None:
                on_update(update)
            if update["status"] == "finished":
                return update
            if update.get("decision") is None:
                continue
            prompt = prompt_from_data(update["decision"])
            while True:
                action = decide(update, prompt)
                if inspect.isawaitable(action):
                    action = await action
                try:
                    await self.act(room, action, seq=update["seq"], seat=update["seat"])
                    break
                except ConnectionLost:
                    if self.closed.is_set():
                        raise
                    break  # the next update says whether it was stored, wherever the room is now
                except ServerError as exc:
                    if exc.code in ("stale_decision", "game_over"):
                        break
                    if on_error is None:
                        raise
                    on_error(exc)
