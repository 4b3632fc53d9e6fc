"""The terminal client under a clock, against a real server: it shows the clocks and the time
left in the prompt, announces a seat whose connection dropped, and ends a game on `resign`."""

from __future__ import annotations

import asyncio
import io

from rich.console import Console

from partida.client.terminal import TerminalPlayer, format_seconds


def test_clock_times_read_like_a_clock() -> None:
    assert [format_seconds(s) for s in (3725, 300, 61.5, 9.94, 0.04, -1)] == [
        "1:02:05",
        "5:00",
        "1:01",
        "9.9",
        "0.0",
        "0.0",
    ]


async def test_terminal_shows_clocks_disconnects_and_resigns(connect, server) -> None:
    alice, bob = await connect(name="alice"), await connect(name="bob")
    created = await alice.create_room("tictactoe", seat=0, public=False, clock={"initial": 60, "increment": 0})
    code = created["room"]
    await bob.join(code)
    await bob.close()
    for _ in range(200):
        if server.rooms[code].core.seats[1].session is None:
            break
        await asyncio.sleep(0.01)
    prompts: list[str] = []
    typed = iter(["draw", "resign"])

    async def ask(prompt: str) -> str:
        prompts.append(prompt)
        return next(typed)

    out = io.StringIO()
    player = TerminalPlayer(alice, server.registry.get("tictactoe"), Console(file=out, width=120), ask=ask)
    player.on_room(created["summary"])
    final = await asyncio.wait_for(
        alice.play(
            code, player.decide, on_update=player.on_update, on_error=player.on_error, on_message=player.on_message
        ),
        20,
    )
    player.show_result(final, [0])
    text = out.getvalue()
    assert "clock: alice 1:00 *  |  bob 1:00" in text or "clock: alice 0:59 *  |  bob 1:00" in text
    assert prompts[0].startswith("your move (") and prompts[0].endswith("left)> ")
    assert "Draw offered" in text and "You resigned." in text
    assert "bob disconnected" in text
    assert "bob wins. (by resignation)" in text
    assert final["result"]["reason"] == "resign"
