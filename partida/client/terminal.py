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
from partida.games.prompts import Assign, ChooseOne, ChooseSubset, Order, Prompt

SHOWN_ANSWERS = 40
LETTERS = "abcdefghijklmnopqrstuvwxyz"


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
        """List the whole answers when they are few (one choice: always); else list the pieces an
        answer is made of (candidates, items, sources and targets) and return no answers."""
        answers = (list(prompt.options) if isinstance(prompt, ChooseOne) else prompt.answers(SHOWN_ANSWERS)) or []
        self.console.print(f"[bold yellow]{escape(prompt.text or prompt.name)}[/bold yellow]")
        if not answers:
            self.pieces_table(prompt, view)
            return []
        table = Table(show_header=False, box=None, padding=(0, 1))
        for i, answer in enumerate(answers, 1):
            table.add_row(f"#{i}", Text(self.answer_label(prompt, view, answer)))
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
        if text.startswith("#") and text[1:].isdigit() and 1 <= int(text[1:]) <= len(answers):
            return answers[int(text[1:]) - 1]
        if not isinstance(prompt, ChooseOne) and text.isdigit() and 1 <= int(text) <= len(answers):
            # a listed subset, assignment or order: the number on its line, as for one choice
            return answers[int(text) - 1]
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
        forced = prompt.answers(limit=1)
        if forced is not None and len(forced) == 1:  # nothing to choose: do not make a person type it
            label = self.answer_label(prompt, update["view"], forced[0])
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
