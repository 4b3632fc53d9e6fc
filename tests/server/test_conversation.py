"""One connection as the shell sees it (`server/conversation.py`), on a fake transport with a
stand-in handler: messages handled one at a time and in order, the format taken from the first
frame, the hello owed, and the end run once, after the message being handled."""

from __future__ import annotations

import asyncio

from partida.protocol import Encoding
from partida.server.conversation import Conversation
from partida.server.session import Identity, Session
from tests.fakes import FakeLink, session


class Shell:
    """Handles frames as the shell would, keeping the order it saw them in: "hello" greets,
    "bye" closes the session, "hold" waits until `go` is set."""

    def __init__(self) -> None:
        self.handled: list[str] = []
        self.ended: list[Session] = []
        self.go = asyncio.Event()
        self.done = asyncio.Event()

    async def handle(self, who: Session, frame: bytes | str) -> None:
        text = frame if isinstance(frame, str) else frame.decode()
        self.handled.append(text)
        if text == "hold":
            await self.go.wait()
        elif text == "hello":
            who.identity = Identity("ann")
        elif text == "bye":
            who.close_soon(1000, "bye")

    async def end(self, who: Session) -> None:
        self.ended.append(who)
        self.done.set()


def conversation(hello_timeout: float = 60.0) -> tuple[Conversation, Shell, Session]:
    shell, who = Shell(), session(None)
    link = who.websocket
    assert isinstance(link, FakeLink)
    talk = Conversation(link, who, shell.handle, shell.end, hello_timeout, 600.0)  # type: ignore[arg-type]
    return talk, shell, who


async def until(check, what: str) -> None:  # type: ignore[no-untyped-def]
    """Let the connection's task run until `check()` holds (a bound, not a wait: it holds at
    once on an idle loop)."""
    for _ in range(1000):
        if check():
            return
        await asyncio.sleep(0)
    raise AssertionError(f"never: {what}")


async def test_messages_are_handled_one_at_a_time_in_order_and_the_format_is_the_first_frames() -> None:
    talk, shell, who = conversation()
    talk.received("hold")
    talk.received(b"hello")
    talk.received("ping")
    await until(lambda: shell.handled == ["hold"], "the first message handled")
    for _ in range(10):
        await asyncio.sleep(0)
    assert shell.handled == ["hold"]  # the next waits for the first to be done
    shell.go.set()
    await until(lambda: len(shell.handled) == 3, "every message handled")
    assert shell.handled == ["hold", "hello", "ping"]
    assert who.encoding is Encoding.JSON  # from the first frame: text
    talk.lost()
    await asyncio.wait_for(shell.done.wait(), 5)


async def test_a_client_gone_mid_message_ends_once_after_that_message_and_nothing_after_it_is_handled() -> None:
    talk, shell, who = conversation()
    talk.received(b"hold")
    await until(lambda: shell.handled == ["hold"], "the first message handled")
    talk.received(b"hello")
    ending = talk.lost()
    assert ending is not None
    assert shell.ended == []  # not while a message is being handled
    shell.go.set()
    await asyncio.wait_for(ending, 5)
    again = talk.lost()
    if again is not None:
        await again
    assert shell.handled == ["hold"] and shell.ended == [who]
    assert who.encoding is Encoding.MSGPACK
    talk.received(b"late")
    for _ in range(10):
        await asyncio.sleep(0)
    assert shell.handled == ["hold"]


async def test_a_session_closed_by_its_message_ends_after_it() -> None:
    talk, shell, who = conversation()
    talk.received("hello")
    talk.received("bye")
    talk.received("ping")  # after the close: not handled
    await asyncio.wait_for(shell.done.wait(), 5)
    assert shell.handled == ["hello", "bye"] and shell.ended == [who]


async def test_a_connection_that_never_says_hello_is_closed_and_ended() -> None:
    _talk, shell, who = conversation(hello_timeout=0.01)
    await asyncio.wait_for(shell.done.wait(), 5)
    link = who.websocket
    assert isinstance(link, FakeLink)
    assert who.closed and link.closed_with == (1008, "no hello in time") and shell.ended == [who]


async def test_a_message_that_does_not_greet_leaves_the_hello_owed() -> None:
    talk, shell, who = conversation(hello_timeout=0.05)
    talk.received("ping")
    await asyncio.wait_for(shell.done.wait(), 5)  # the time to say hello ran again after it
    assert shell.handled == ["ping"] and who.closed
