"""The terminal client for people: draws each view with rich and asks for each decision.

Games draw themselves (`Game.render`); this module adds the frame, the list of legal answers
and the reading of what the person types (`Game.parse_action`, an option's label, or `#N` for
the N-th listed answer).
"""

from __future__ import annotations

import asyncio
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from partida.client.connection import Client, ServerError
from partida.games.base import Game, IllegalAction
from partida.games.prompts import ChooseOne, Prompt

SHOWN_ANSWERS = 40


class TerminalPlayer:
    def __init__(self, client: Client, game: Game, console: Console | None = None) -> None:
        self.client = client
        self.game = game
        self.console = console or Console()
        self.names: list[str] = []

    def show(self, update: dict[str, Any]) -> None:
        view = update["view"]
        last = update.get("last")
        if last:  # what just happened, then the board it led to
            who = escape(self._name(last["seat"]))
            if last.get("action") is not None:
                self.console.print(f"[dim]{who} played {escape(self.game.format_action(view, last['action']))}[/dim]")
            elif last.get("text"):  # hidden-information games tell what everyone may know
                self.console.print(f"[dim]{who} {escape(last['text'])}[/dim]")
        title = f"{self.game.title} - room {update['room']} - move {update['seq']}"
        # games draw plain text: brackets in it ('[flying; tapped]') are not rich markup
        self.console.print(Panel(Text(self.game.render(view)), title=title, expand=False))

    def on_room(self, room: dict[str, Any]) -> None:
        self.names = [s.get("name") or f"seat {s['seat']}" for s in room["seats"]]

    def _name(self, seat: int) -> str:
        return self.names[seat] if seat < len(self.names) else f"seat {seat}"

    def answers_table(self, prompt: Prompt, view: dict[str, Any]) -> list[Any]:
        answers = prompt.answers(SHOWN_ANSWERS) or []
        if not answers:
            self.console.print(
                f"[yellow]{escape(prompt.text or prompt.name)}[/yellow] (answer as JSON; see the prompt's data)"
            )
            self.console.print(prompt.to_data())
            return []
        table = Table(show_header=False, box=None, padding=(0, 1))
        for i, answer in enumerate(answers, 1):
            # subsets and assignments are written by the game (card names, not opaque ids)
            label = prompt.label(answer) if isinstance(prompt, ChooseOne) else self.game.format_action(view, answer)
            table.add_row(f"#{i}", Text(label))
        self.console.print(f"[bold yellow]{escape(prompt.text or prompt.name)}[/bold yellow]")
        self.console.print(table)
        return answers

    def read_answer(self, text: str, update: dict[str, Any], prompt: Prompt, answers: list[Any]) -> Any:
        text = text.strip()
        if text.startswith("#") and text[1:].isdigit() and 1 <= int(text[1:]) <= len(answers):
            return answers[int(text[1:]) - 1]
        if not isinstance(prompt, ChooseOne) and text.isdigit() and 1 <= int(text) <= len(answers):
            # a listed subset, assignment or order: the number on its line, as for one choice
            return answers[int(text) - 1]
        if isinstance(prompt, ChooseOne) and prompt.labels:
            for option, label in zip(prompt.options, prompt.labels, strict=False):
                if label.lower() == text.lower():
                    return option
        return self.game.parse_action(update["view"], prompt, text)

    async def decide(self, update: dict[str, Any], prompt: Prompt) -> Any:
        forced = prompt.answers(limit=1)
        if forced is not None and len(forced) == 1:  # nothing to choose: do not make a person type it
            label = (
                prompt.label(forced[0])
                if isinstance(prompt, ChooseOne)
                else self.game.format_action(update["view"], forced[0])
            )
            self.console.print(f"[dim]{escape(prompt.text or prompt.name)}: the only choice, {escape(label)}[/dim]")
            return forced[0]
        answers = self.answers_table(prompt, update["view"])
        while True:
            text = await asyncio.to_thread(input, "your move> ")
            try:
                action = self.read_answer(text, update, prompt, answers)
                return prompt.validate(action)
            except IllegalAction as exc:
                self.console.print(f"[red]{escape(exc.message)}[/red]")

    def on_update(self, update: dict[str, Any]) -> None:
        self.show(update)
        if update["status"] == "finished":
            return
        if update.get("decision") is None and update.get("to_act"):
            waiting = ", ".join(self._name(s) for s in update["to_act"])
            self.console.print(f"[dim]waiting for {escape(waiting)}...[/dim]")

    def on_error(self, exc: ServerError) -> None:
        self.console.print(f"[red]{escape(exc.message)}[/red]")

    def show_result(self, final: dict[str, Any], my_seats: list[int]) -> None:
        result = final.get("result") or {}
        winners = result.get("winners", [])
        if len(winners) > 1:
            headline = "Draw."
        elif winners and winners[0] in my_seats:
            headline = "You win!"
        elif winners:
            headline = f"{escape(self._name(winners[0]))} wins."
        else:
            headline = "Game over."
        self.console.print(f"[bold]{headline}[/bold] scores: {escape(str(result.get('scores')))}")
        if "seed" in final:
            self.console.print(f"[dim]seed {final['seed']} (replay with: partida replay {final['game_id']})[/dim]")
