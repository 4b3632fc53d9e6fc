"""A RECYCLE description behind the common `Game` interface.

Options: every `(declare VALUE 'NAME)` becomes a game option named `name` (lower case) with that
default, except the one used as the number of players (seats are chosen like any game's seats).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from partida.games.base import BadOptions, Game, IllegalAction, Option, View
from partida.games.prompts import Prompt
from partida.games.recycle.compiler import GAME, Program, RecycleRuntimeError, compile_program, owner_team
from partida.games.recycle.knowledge import deal, slot_masks
from partida.games.recycle.parser import RecycleSyntaxError, parse_sexpr
from partida.games.recycle.state import RecycleState
from partida.games.recycle.words import card_label, describe_rule, render_view

TRIAL_ACTIONS = 50_000
OPTION_NOTE = re.compile(r"option\s+([A-Za-z_][A-Za-z0-9_]*)(?:\s+(-?\d+)\.\.(-?\d+))?\s*:(.*)$")


class RecycleGame(Game):
    """One description, compiled once; its states share the compiled program."""

    def __init__(self, name: str, source: str, title: str | None = None, description: str = "") -> None:
        self.name = name
        self.source = source
        header = [line.lstrip(";").strip() for line in source.splitlines() if line.startswith(";;")]
        notes = {m.group(1): m for m in map(OPTION_NOTE.match, header) if m}
        header = [line for line in header if not OPTION_NOTE.match(line)]
        self.title = title or (header[0] if header else name.capitalize())
        self.description = description or " ".join(header[1:])
        self.program: Program = compile_program(parse_sexpr(source))
        self.min_seats, self.max_seats = self.program.seats
        self.perfect_information = not any(kind == "iloc" for kind, _ in self.program.locations_written)
        self.options = {
            key.lower(): _option(key, value, notes.get(key))
            for key, value in self.program.declares.items()
            if key != self.program.seat_declare
        }
        self._trial()

    def _consts(self, options: Mapping[str, Any], seats: int) -> dict[str, Any]:
        consts = dict(self.program.declares)
        for key in consts:
            if key.lower() in options:
                consts[key] = options[key.lower()]
        if self.program.seat_declare is not None:
            consts[self.program.seat_declare] = seats
        return consts

    def _trial(self) -> None:
        """Play one game with random choices, so a description that cannot run fails when loaded."""
        rng = random.Random(0)
        state = RecycleState(
            self, self.program, self._consts(self.resolve_options({}), self.min_seats), 0, self.min_seats
        )
        state.run()
        for _ in range(TRIAL_ACTIONS):
            if state.is_over():
                return
            decision = state.pending()[0]
            state.apply(decision.seat, decision.prompt.random_answer(rng))
        raise RecycleRuntimeError(f"{self.name}: a random game did not end within {TRIAL_ACTIONS} choices")

    def new_state(self, options: Mapping[str, Any], seed: int, seats: int) -> RecycleState:
        state = RecycleState(self, self.program, self._consts(options, seats), seed, seats)
        try:
            state.run()
        except RecycleRuntimeError as exc:
            raise BadOptions(f"{self.name} cannot start with options {dict(options)}: {exc}") from None
        return state

    def determinize(self, view: View, seat: int | None, rng: random.Random) -> RecycleState:
        options = {k.lower(): v for k, v in view["options"].items()}
        state = self.new_state(
            self.resolve_options({k: v for k, v in options.items() if k in self.options}),
            rng.getrandbits(63),
            view["players"],
        )
        state.track = False  # a sample for search: nobody reads its views
        everyone = (1 << state.n) - 1
        pool: dict[tuple, list[int]] = {}
        for c, attrs in enumerate(state.cards):
            pool.setdefault(_attr_key(attrs), []).append(c)
        for cards in pool.values():
            rng.shuffle(cards)

        def take(attrs: Mapping[str, Any]) -> int:
            try:
                return pool[_attr_key(attrs)].pop()
            except (KeyError, IndexError):
                raise ValueError(f"the view shows a card {dict(attrs)} that the deck cannot hold") from None

        state.locs = {}
        state.voids = {}
        hidden: list[tuple[tuple[int, str, str], int]] = []
        mems: list[tuple[tuple[int, str, str], list[dict]]] = []
        for loc in view["locations"]:
            key = (int(loc["owner"]), loc["kind"], loc["name"])
            if loc["kind"] == "mem":
                mems.append((key, loc.get("cards", [])))
            elif "cards" in loc:
                placed = []
                for card in loc["cards"]:
                    c = take(card["attrs"])
                    placed.append(c)
                    state.where[c] = key
                    state.card_owner[c] = int(card["owner"])
                    state.oid[c] = int(card["id"])
                    state.knowers[c] = everyone
                state.locs[key] = placed
            else:
                hidden.append((key, int(loc["count"])))
                voids = [[_kinds_mask(state, labels), int(n)] for labels, n in loc.get("voids", ())]
                if voids:
                    state.voids[key] = voids
        me = everyone if seat is None else 1 << seat
        known: dict[tuple[int, str, str], list[int]] = {}
        for entry in view.get("known", ()):
            key = next(k for k, _ in hidden if k[0] == int(entry["owner"]) and k[2] == entry["name"])
            known.setdefault(key, []).append(take(entry["attrs"]))
        bins: list[tuple[int, int]] = []
        owners: list[tuple[int, str, str]] = []
        for key, count in hidden:
            masks = slot_masks(state.voids.get(key, ()), count)
            for c in known.get(key, ()):  # a known card takes the least constrained slot that admits it
                i = next((i for i in reversed(range(len(masks))) if not masks[i] >> state.kind[c] & 1), -1)
                masks.pop(i)
            for mask in sorted(set(masks)):
                bins.append((mask, masks.count(mask)))
                owners.append(key)
        rest = [c for cards in pool.values() for c in cards]
        dealt = deal(bins, rest, state.kind, rng)
        for key, _ in hidden:
            state.locs[key] = []
        for key, cards in zip(owners, dealt, strict=True):
            state.locs[key].extend(cards)
        for key, _ in hidden:
            mine = known.get(key, [])
            cards = state.locs[key] + mine
            rng.shuffle(cards)
            state.locs[key] = cards
            seers = state.seers(key)
            for c in cards:
                state.where[c] = key
                state.card_owner[c] = key[0]
                state.oid[c] = state._fresh_id()
                state.knowers[c] = seers | (me if c in mine else 0)
        by_attrs = {_attr_key(a): c for c, a in enumerate(state.cards)}
        for key, cards in mems:
            state.locs[key] = [by_attrs[_attr_key(card["attrs"])] for card in cards]
        state.sto = {(int(owner), "sto", name): value for owner, name, value in view["storage"]}
        state.dice = {name: list(values) for name, values in view["dice"].items()}
        state.points = {
            name: tuple((tuple((a, v) for a, v in tests), n) for tests, n in table)
            for name, table in view["points"].items()
        }
        state.stats = {int(r): list(v) for r, v in view["round_scores"]}
        state.cur, state.nxt = int(view["current"]), int(view["next"])
        state.team = int(view.get("team", 0))
        nodes = self.program.nodes
        state.frames = [[nodes[nid], _env(state, env), i] for nid, env, i in view["control"]]
        state.over = bool(view["over"])
        state.choice = None
        state._prompt = None
        if view.get("choice") is not None:
            node = nodes[view["choice"]["node"]]
            env = _env(state, view["choice"]["env"])
            state.choice = (int(view["choice"]["seat"]), node, env, state.options_for(node, env))  # type: ignore
        return state

    def parse_action(self, view: View, prompt: Prompt, text: str) -> Any:
        """A choice typed by a person: its label (any case), its number in the list (1-based),
        or the start of exactly one label."""
        options = list(getattr(prompt, "options", []))
        typed = text.strip()
        lowered = typed.lower()
        for option in options:
            if str(option).lower() == lowered:
                return option
        if typed.isdigit() and 1 <= int(typed) <= len(options):
            return options[int(typed) - 1]
        matches = [o for o in options if str(o).lower().startswith(lowered)] if typed else []
        if len(matches) == 1:
            return matches[0]
        shown = "; ".join(f"{i + 1}: {o}" for i, o in enumerate(options[:20]))
        raise IllegalAction(f"type a choice or its number ({shown})", code="bad_action")

    def render(self, view: View) -> str:
        return render_view(self.title, view, GAME, owner_team)

    def format_action(self, view: View, action: Any) -> str:
        return describe_rule(str(action))


def _option(key: str, default: Any, note: re.Match[str] | None) -> Option:
    """A declared constant as an option; `;; option NAME MIN..MAX: help` in the header bounds it."""
    if note is None:
        return Option(key.lower(), default, help=f"declared as '{key} in the description")
    low, high = note.group(2), note.group(3)
    return Option(
        key.lower(),
        default,
        help=note.group(4).strip(),
        minimum=int(low) if low is not None else None,
        maximum=int(high) if high is not None else None,
    )


def _attr_key(attrs: Mapping[str, Any]) -> tuple:
    return tuple(sorted(attrs.items()))


def _kinds_mask(state: RecycleState, labels: list[str]) -> int:
    """The kinds named by a view's void labels, as a bit mask."""
    by_label = {card_label(state.cards[cards[0]]): k for k, cards in enumerate(state.kind_cards)}
    mask = 0
    for label in labels:
        if label in by_label:
            mask |= 1 << by_label[label]
    return mask


def _env(state: RecycleState, data: Mapping[str, Any]) -> dict[str, Any]:
    env: dict[str, Any] = {}
    for name, value in data.items():
        if value[0] == "player":
            env[name] = int(value[1])
        else:
            key = (int(value[1]), value[2], value[3])
            cards = state.locs.get(key, [])
            pos = int(value[4])
            env[name] = (cards[pos], key) if 0 <= pos < len(cards) else None
    return env


def load_game_file(path: Path) -> RecycleGame:
    """Read a `.rcl` description; errors name the file and carry line and column."""
    source = Path(path).read_text(encoding="utf-8")
    name = Path(path).stem.lower()
    try:
        return RecycleGame(name, source)
    except RecycleSyntaxError as exc:
        located = RecycleSyntaxError(exc.reason, exc.line, exc.column)
        located.args = (f"{path}: {located}",)  # path: line L, column C: reason
        raise located from None


__all__ = ["RecycleGame", "RecycleRuntimeError", "RecycleSyntaxError", "load_game_file"]
