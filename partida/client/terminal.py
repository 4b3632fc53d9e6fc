"""The terminal client for people: draws each view with rich and asks for each decision.

Games draw themselves (`Game.render`); this module adds the frame, the numbered list of legal
answers and the reading of what the person types (`Game.parse_action`, an option's label, or the
number of a listed answer: a number always means the menu entry shown beside it, never a game's
own numbering). Under a clock it shows every seat's time, counting down while others think and in
the prompt on one's own turn; at any prompt `resign`, `draw` (offer or accept) and `abort` end
the game early, and `say TEXT` says TEXT in the room's chat. Players joining, leaving, dropping
and coming back are announced, and the room's chat is printed as it comes (as plain text: rich
markup in a line is shown, never applied; the server has taken out the control characters).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from partida.client.bot_loop import Client
from partida.client.keyboard import LineReader
from partida.client.refusals import ConnectionLost, ServerError
from partida.games.base import Game, IllegalAction
from partida.games.prompts import Assign, ChooseOne, ChooseSubset, Order, Prompt

SHOWN_ANSWERS = 40
LETTERS = "abcdefghijklmnopqrstuvwxyz"
COMMANDS = ("resign", "draw", "abort")
REASONS = {
    "time": "on time",
    "resign": "by resignation",
    "draw_agreed": "by agreement",
    "abandoned": "a player left",
}


SEAT_MARKS = {"guest": " (guest)", "bot": " (bot)"}  # after a player's name, wherever players are listed


def format_seconds(seconds: float) -> str:
    """Clock time as people read it: 4:05, or 7.3 under ten seconds."""
    if seconds < 10:
        return f"{max(0.0, seconds):.1f}"
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def assign_targets(prompt: Assign) -> list[Any]:
    """Every target of an assignment once, in the order they first appear (they get letters)."""
    seen: list[Any] = []
    for allowed in prompt.targets:
        for target in allowed:
            if target not in seen:
                seen.append(target)
    return seen


def read_pieces(prompt: Prompt, text: str) -> Any | None:
    """An answer typed as its numbered pieces (`1 3`, `2 1 3`, `1a 2b`), or None when the text is
    not in that form. The prompt checks the answer afterwards; numbers out of range are errors."""
    words = text.replace(",", " ").lower().split()
    if words == ["none"]:
        return []

    def pick(items: list[Any], number: str) -> Any:
        if not 1 <= int(number) <= len(items):
            raise IllegalAction(f"choose numbers from 1 to {len(items)}", code="bad_action")
        return items[int(number) - 1]

    if isinstance(prompt, ChooseSubset | Order) and words and all(w.isdigit() for w in words):
        items = prompt.candidates if isinstance(prompt, ChooseSubset) else prompt.items
        return [pick(items, w) for w in words]
    if isinstance(prompt, Assign) and words and all(w[:-1].isdigit() and w[-1].isalpha() for w in words):
        targets = assign_targets(prompt)
        pairs = []
        for w in words:
            index = LETTERS.find(w[-1])
            if not 0 <= index < len(targets):
                raise IllegalAction(f"choose letters from a to {LETTERS[len(targets) - 1]}", code="bad_action")
            pairs.append([pick(prompt.sources, w[:-1]), targets[index]])
        return pairs
    return None


class TerminalPlayer:
    def __init__(
        self,
        client: Client,
        game: Game,
        console: Console | None = None,
        ask: Callable[[str], Awaitable[str]] | None = None,
    ) -> None:
        self.client = client
        self.game = game
        self.console = console or Console()
        self.ask = ask or LineReader().ask  # the next typed line after a prompt
        self.names: list[str] = []
        self.kinds: list[str | None] = []
        self.ratings: list[str | None] = []
        self.taken: list[str | None] = []  # each seat's holder, None when free
        self.connected: list[bool | None] = []
        self.clock: dict[str, Any] | None = None
        self.clock_at = 0.0  # monotonic time the clock was received
        self.live: Live | None = None
        self.told_commands = False
        self.told_move: tuple[str, int] | None = None  # (room, seq) of the last move told

    def show(self, update: dict[str, Any]) -> None:
        view = update["view"]
        last = update.get("last")
        told, self.told_move = self.told_move, (update["room"], update["seq"])
        if last and told != self.told_move:  # what just happened (once: a draw offer or a
            # resignation is an update without a move), then the board it led to
            who = escape(self._name(last["seat"]))
            if last.get("text"):  # the game's own sentence (what everyone may know) reads best
                self.console.print(f"[dim]{who} {escape(last['text'])}[/dim]")
            elif last.get("action") is not None:
                self.console.print(f"[dim]{who} played {escape(self.game.format_action(view, last['action']))}[/dim]")
            note = self.game.pass_note(view, last.get("seat"))
            if note:
                self.console.print(f"[bold]{escape(note)}[/bold]")
        title = f"{self.game.title} - room {update['room']} - move {update['seq']}"
        # games draw plain text: brackets in it ('[flying; tapped]') are not rich markup
        self.console.print(Panel(Text(self.game.render(view)), title=title, expand=False))

    def on_room(self, room: dict[str, Any]) -> None:
        """Names as they are now; who joined, left, dropped or came back since the last summary."""
        names = [s.get("name") for s in room["seats"]]
        before = self.taken if self.names else None
        self.taken = names
        self.names = [n or f"seat {s['seat']}" for n, s in zip(names, room["seats"], strict=True)]
        for seat, name in enumerate(names):  # two guests called after one $USER: root, root-2
            earlier = names[:seat].count(name) if name else 0
            if earlier:
                self.names[seat] = f"{name}-{earlier + 1}"
        self.kinds = [s.get("kind") for s in room["seats"]]
        self.ratings = [s.get("rating") for s in room["seats"]]
        connected = [s.get("connected") if s.get("name") else None for s in room["seats"]]
        if before is not None:
            for seat, (old, new) in enumerate(zip(before, names, strict=False)):
                if new and old != new and not old:
                    self.say(f"[green]{escape(self.who(seat))} joined ({escape(self.seat_text(seat))})[/green]")
                elif old and not new:
                    self.say(f"[yellow]{escape(old)} left seat {seat}[/yellow]")
        if room.get("status") == "playing":
            for seat, (was, now) in enumerate(zip(self.connected, connected, strict=False)):
                if was and now is False:
                    self.say(f"[yellow]{escape(self._name(seat))} disconnected; their seat is held for them[/yellow]")
                elif was is False and now:
                    self.say(f"[green]{escape(self._name(seat))} is back[/green]")
        self.connected = connected

    def who(self, seat: int) -> str:
        """A seat's name with what it is: guests are marked, bots say so; an account's rating in
        the room's game and class follows, as lichess shows it (`ada (1500?)`)."""
        kind = self.kinds[seat] if seat < len(self.kinds) else None
        rating = self.ratings[seat] if seat < len(self.ratings) else None
        return self._name(seat) + SEAT_MARKS.get(kind or "", "") + (f" ({rating})" if rating else "")

    def players_line(self, mine: list[int]) -> str:
        """Everyone at the table, for the start of a game."""
        parts = []
        for seat in range(len(self.names)):
            you = ", you" if seat in mine else ""
            taken = self.kinds[seat] is not None if seat < len(self.kinds) else True
            parts.append(f"{self.seat_text(seat)}: {self.who(seat) if taken else 'free'}{you}")
        return "Players: " + "; ".join(parts)

    def seat_text(self, seat: int) -> str:
        """`seat 0, black (X)`: the seat's number and what the game calls it."""
        label = self.game.seat_label(seat)
        return f"seat {seat}, {label}" if label else f"seat {seat}"

    def on_message(self, message: dict[str, Any]) -> None:
        """Pushed messages other than updates: room changes, a seat taken over elsewhere."""
        if message["type"] == "room":
            self.on_room(message["summary"])
        elif message["type"] == "seat_lost":
            self.say(f"[red]seat {message['seat']} was {escape(message.get('reason', 'lost'))}[/red]")
        elif message["type"] == "chat":
            self.show_chat(message["message"])
        elif message["type"] == "chat_history":
            for line in message.get("messages", []):
                self.show_chat(line)
        elif message["type"] == "chat_removed":
            self.say("[dim](a chat line was removed by the operator)[/dim]")

    def show_chat(self, line: dict[str, Any]) -> None:
        """One line of chat: the name, whose channel when it is the spectators', the text."""
        where = " (spectators)" if line.get("channel") == "spectators" else ""
        self.say(f"[cyan]{escape(str(line.get('name')))}{where}:[/cyan] {escape(str(line.get('text')))}")

    def say(self, text: str) -> None:
        self.console.print(text)

    # Clocks.

    def time_left(self, seat: int) -> float | None:
        """What the seat has left now: the update's figure, less the time since for a seat to act."""
        if not self.clock:
            return None
        left = float(self.clock["remaining"][seat])
        if self.clock["deadline"][seat] is not None:
            left -= time.monotonic() - self.clock_at
        return max(0.0, left)

    def clock_text(self) -> Text:
        if not self.clock:
            return Text("")
        parts = []
        for seat in range(len(self.clock["remaining"])):
            left = self.time_left(seat)
            running = self.clock["deadline"][seat] is not None
            parts.append(f"{self._name(seat)} {format_seconds(left or 0.0)}{' *' if running else ''}")
        return Text("clock: " + "  |  ".join(parts), style="bold" if self.live else "")

    def stop_countdown(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None

    def _name(self, seat: int) -> str:
        return self.names[seat] if seat < len(self.names) else f"seat {seat}"

    def answers_table(self, prompt: Prompt, view: dict[str, Any]) -> list[Any]:
        """List the whole answers when they are few (one choice: always); else list the pieces an
        answer is made of (candidates, items, sources and targets) and return no answers."""
        answers = (list(prompt.options) if isinstance(prompt, ChooseOne) else prompt.answers(SHOWN_ANSWERS)) or []
        self.console.print(f"[bold yellow]{escape(prompt.text or prompt.name)}[/bold yellow]")
        if not answers:
            self.pieces_table(prompt, view)
            return []
        table = Table(show_header=False, box=None, padding=(0, 1))
        for i, answer in enumerate(answers, 1):
            table.add_row(f"{i}", Text(self.answer_label(prompt, view, answer)))
        self.console.print(table)
        return answers

    def answer_label(self, prompt: Prompt, view: dict[str, Any], answer: Any) -> str:
        """An answer in words: an option's label, or a subset or assignment written by the game
        (card names, not opaque ids)."""
        return prompt.label(answer) if isinstance(prompt, ChooseOne) else self.game.format_action(view, answer)

    def _piece(self, view: dict[str, Any], item: Any) -> str:
        return self.game.format_action(view, [item])  # a game writes a list of its ids by name

    def pieces_table(self, prompt: Prompt, view: dict[str, Any]) -> None:
        """Too many answers to list (a big attack, blocks on a full board): number the pieces."""
        table = Table(show_header=False, box=None, padding=(0, 1))
        if isinstance(prompt, ChooseSubset):
            labels = prompt.labels or [self._piece(view, c) for c in prompt.candidates]
            for i, label in enumerate(labels, 1):
                table.add_row(f"{i}", Text(label))
            hint = f"type the numbers of your choices, e.g. 1 3 ({prompt.min} to {prompt.upper} of them; none for none)"
        elif isinstance(prompt, Order):
            for i, item in enumerate(prompt.items, 1):
                table.add_row(f"{i}", Text(self._piece(view, item)))
            hint = "type the numbers in the order you want, e.g. " + " ".join(map(str, range(len(prompt.items), 0, -1)))
        elif isinstance(prompt, Assign):
            targets = assign_targets(prompt)
            for i, (source, allowed) in enumerate(zip(prompt.sources, prompt.targets, strict=True), 1):
                letters = ", ".join(LETTERS[targets.index(t)] for t in allowed)
                table.add_row(f"{i}", Text(f"{self._piece(view, source)}  (to {letters or 'nothing'})"))
            for letter, target in zip(LETTERS, targets, strict=False):
                table.add_row(letter, Text(self._piece(view, target)))
            hint = "type number-letter pairs, e.g. 1a 2b (1 goes to a, 2 to b); none to assign nothing"
        else:
            self.console.print(prompt.to_data())
            hint = "answer as JSON"
        self.console.print(table)
        self.console.print(f"[dim]{hint}[/dim]")

    def read_answer(self, text: str, update: dict[str, Any], prompt: Prompt, answers: list[Any]) -> Any:
        text = text.strip()
        number = text[1:] if text.startswith("#") else text
        if answers and number.isdigit():
            # a number is the menu entry shown beside it, whatever the game (never a square index)
            if not 1 <= int(number) <= len(answers):
                raise IllegalAction(f"choose a number from 1 to {len(answers)}", code="bad_action")
            return answers[int(number) - 1]
        if isinstance(prompt, ChooseOne) and prompt.labels:
            for option, label in zip(prompt.options, prompt.labels, strict=False):
                if label.lower() == text.lower():
                    return option
        if not answers and not isinstance(prompt, ChooseOne):
            pieced = read_pieces(prompt, text)
            if pieced is not None:
                return pieced
        return self.game.parse_action(update["view"], prompt, text)

    async def decide(self, update: dict[str, Any], prompt: Prompt) -> Any:
        self.stop_countdown()
        forced = prompt.answers(limit=1)
        if forced is not None and len(forced) == 1:  # nothing to choose: do not make a person type it
            label = self.answer_label(prompt, update["view"], forced[0])
            self.console.print(f"[dim]{escape(prompt.text or prompt.name)}: the only choice, {escape(label)}[/dim]")
            return forced[0]
        answers = self.answers_table(prompt, update["view"])
        if not self.told_commands:
            self.console.print(
                "[dim](at any prompt: resign, draw to offer or accept a draw, abort; say TEXT to chat)[/dim]"
            )
            self.told_commands = True
        while True:
            left = self.time_left(update["seat"])
            ask = "your move> " if left is None else f"your move ({format_seconds(left)} left)> "
            text = await self.ask_while_connected(ask)
            if text.strip().lower().startswith("say "):
                await self.chat(update["room"], text.strip()[4:])
                continue
            if text.strip().lower() in COMMANDS:
                ended = await self.command(text.strip().lower(), update)
                if ended:
                    return None  # the game is over (or the seat is out of it): the answer is moot
                continue
            try:
                action = self.read_answer(text, update, prompt, answers)
                return prompt.validate(action)
            except IllegalAction as exc:
                self.console.print(f"[red]{escape(exc.message)}[/red]")

    async def ask_while_connected(self, prompt: str) -> str:
        """The typed answer; `ConnectionLost` as soon as the server goes away, not once the
        person has typed a move into a connection that is gone."""
        asking = asyncio.ensure_future(self.ask(prompt))
        lost = asyncio.ensure_future(self.client.closed.wait())
        try:
            await asyncio.wait((asking, lost), return_when=asyncio.FIRST_COMPLETED)
        finally:
            lost.cancel()
            if not asking.done():
                asking.cancel()
        if asking.done() and not asking.cancelled():
            return asking.result()
        self.console.print()  # off the prompt's line
        raise ConnectionLost()

    async def chat(self, room: str, text: str) -> None:
        try:
            await self.client.chat(text, room=room)  # the server pushes it back: shown as everyone's
        except ServerError as exc:
            self.console.print(f"[red]{escape(exc.message)}[/red]")

    async def command(self, word: str, update: dict[str, Any]) -> bool:
        """Run a typed command; True when it took this seat out of the game."""
        room, seat = update["room"], update["seat"]
        try:
            if word == "resign":
                await self.client.resign(room, seat)
                self.console.print("[bold]You resigned.[/bold]")
                return True
            if word == "abort":
                await self.client.abort(room, seat)
                self.console.print("[bold]Game aborted.[/bold]")
                return True
            await self.client.offer_draw(room, seat)
            if update.get("draw_offer") is not None and update["draw_offer"] != seat:
                return True  # two offers meet: the draw is agreed
            self.console.print("[dim]Draw offered; it lapses when your opponent moves.[/dim]")
        except ServerError as exc:
            self.console.print(f"[red]{escape(exc.message)}[/red]")
        return False

    def on_update(self, update: dict[str, Any]) -> None:
        self.stop_countdown()
        self.clock, self.clock_at = update.get("clock"), time.monotonic()
        self.show(update)
        if update["status"] == "finished":
            if self.clock:
                self.console.print(self.clock_text())
            return
        offer = update.get("draw_offer")
        if offer is not None and offer != update.get("seat"):
            if update.get("seat") is None:  # a spectator cannot accept
                accept = ""
            elif update.get("decision") is not None:
                accept = ": type draw to accept"
            else:  # what is typed before one's own turn is not read
                accept = ": to accept, type draw when your move is asked"
            self.console.print(f"[yellow]{escape(self._name(offer))} offers a draw{accept}[/yellow]")
        if update.get("decision") is None and update.get("to_act"):
            waiting = ", ".join(self._name(s) for s in update["to_act"])
            if self.clock:
                self.live = Live(
                    get_renderable=lambda: Text.assemble(f"waiting for {waiting}...  ", self.clock_text()),
                    console=self.console,
                    refresh_per_second=4,
                    transient=True,
                )
                self.live.start()
            else:
                self.console.print(f"[dim]waiting for {escape(waiting)}...[/dim]")
        elif self.clock:
            self.console.print(self.clock_text())

    def on_error(self, exc: ServerError) -> None:
        self.console.print(f"[red]{escape(exc.message)}[/red]")

    def show_result(self, final: dict[str, Any], my_seats: list[int], replay: str | None = None) -> None:
        """The result; `replay`: the command that replays the game from where this client is."""
        self.stop_countdown()
        result = final.get("result") or {}
        winners = result.get("winners", [])
        reason = result.get("reason", "normal")
        if reason == "aborted":
            self.console.print("[bold]Game aborted.[/bold] No result.")
            return
        if len(winners) > 1:
            headline = "Draw."
        elif winners and winners[0] in my_seats:
            headline = "You win!"
        elif winners:
            headline = f"{escape(self._name(winners[0]))} wins."
        else:
            headline = "Game over."
        why = f" ({REASONS[reason]})" if reason in REASONS else ""
        scores = result.get("scores") or []
        told = ", ".join(f"{self._name(seat)} {score:g}" for seat, score in enumerate(scores))
        self.console.print(f"[bold]{headline}[/bold]{why}" + (f" Scores: {escape(told)}." if told else ""))
        if "seed" in final:
            replay = replay or f"partida replay {final['game_id']}"
            self.console.print(f"[dim]seed {final['seed']} (replay with: {escape(replay)})[/dim]", soft_wrap=True)
