"""Cards and decks as data: `cards.json` holds the card pool and the stock decks; this module reads
it into typed records and checks deck lists. The rules engine only interprets these records, so a
new card built from the supported effects, or a new deck, needs no code."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from partida.games.base import BadOptions

COLORS = "WUBRG"
KEYWORDS = frozenset({"flying", "reach", "first strike", "double strike", "vigilance", "haste"})
TYPES = frozenset({"land", "creature", "sorcery"})
# What an effect does, and which targets each kind of effect accepts.
EFFECTS: dict[str, frozenset[str | None]] = {
    "damage": frozenset({"any", "creature", "creature an opponent controls", "player"}),
    "counters": frozenset({"creature you control", "each creature you control"}),
    "gain_life": frozenset({None}),
    "tap": frozenset({"creature", "creature an opponent controls"}),
    "destroy": frozenset({"creature", "creature an opponent controls"}),
}
# Targets that name no object: the effect applies without a choice.
UNTARGETED: frozenset[str | None] = frozenset({None, "each creature you control"})
DECK_SIZE = 60
MAX_COPIES = 4
DATA_FILE = Path(__file__).with_name("cards.json")


@dataclass(frozen=True)
class Effect:
    """A spell's effect, or a creature's enters-the-battlefield effect."""

    do: str
    amount: int = 0
    target: str | None = None
    per: str | None = None  # "creature you control": amount is multiplied by that count

    @property
    def targeted(self) -> bool:
        return self.target not in UNTARGETED


@dataclass(frozen=True)
class Card:
    """One card of the pool. `generic` and `pips` split the mana cost (`2RR`: 2 and "RR")."""

    name: str
    type: str
    cost: str = ""
    power: int = 0
    toughness: int = 0
    keywords: frozenset[str] = frozenset()
    effect: Effect | None = None
    color: str = ""  # what a basic land taps for

    @property
    def is_land(self) -> bool:
        return self.type == "land"

    @property
    def is_creature(self) -> bool:
        return self.type == "creature"

    @property
    def generic(self) -> int:
        digits = "".join(ch for ch in self.cost if ch.isdigit())
        return int(digits) if digits else 0

    @property
    def pips(self) -> str:
        return "".join(ch for ch in self.cost if ch in COLORS)

    @property
    def mana_value(self) -> int:
        return self.generic + len(self.pips)

    def text(self) -> str:
        """A one-line description for people."""
        if self.is_land:
            return f"{self.name} (land, taps for {self.color})"
        parts = [f"{self.name} {self.cost}"]
        if self.is_creature:
            parts.append(f"{self.power}/{self.toughness}")
        else:
            parts.append("sorcery")
        if self.keywords:
            parts.append(", ".join(sorted(self.keywords)))
        if self.effect is not None:
            parts.append(describe_effect(self.effect, self.is_creature))
        return " - ".join(parts)


def describe_effect(effect: Effect, on_enter: bool) -> str:
    """The effect in the words of the card pool's rules text (`when it enters, tap target ...`)."""
    lead = "when it enters, " if on_enter else ""
    target = {None: "", "any": "any target", "each creature you control": "each creature you control"}.get(
        effect.target, f"target {effect.target}"
    )
    if effect.do == "damage":
        return f"{lead}{effect.amount} damage to {target}"
    if effect.do == "counters":
        counters = "a +1/+1 counter" if effect.amount == 1 else f"{effect.amount} +1/+1 counters"
        return f"{lead}put {counters} on {target}"
    if effect.do == "gain_life":
        per = f" for each {effect.per}" if effect.per else ""
        return f"{lead}you gain {effect.amount} life{per}"
    return f"{lead}{effect.do} {target}"


def _card_from_data(name: str, data: Mapping[str, Any]) -> Card:
    def bad(why: str) -> ValueError:
        return ValueError(f"card {name!r}: {why}")

    kind = data.get("type")
    if kind not in TYPES:
        raise bad(f"type must be one of {', '.join(sorted(TYPES))}")
    keywords = frozenset(data.get("keywords", ()))
    if not keywords <= KEYWORDS:
        raise bad(f"unknown keyword {sorted(keywords - KEYWORDS)[0]!r}")
    effect = None
    if "effect" in data:
        e = data["effect"]
        if e.get("do") not in EFFECTS:
            raise bad(f"unknown effect {e.get('do')!r}")
        if e.get("target") not in EFFECTS[e["do"]]:
            raise bad(f"effect {e['do']!r} cannot have target {e.get('target')!r}")
        effect = Effect(e["do"], int(e.get("amount", 0)), e.get("target"), e.get("per"))
    cost = str(data.get("cost", ""))
    if any(ch not in COLORS and not ch.isdigit() for ch in cost):
        raise bad(f"bad mana cost {cost!r}")
    if kind == "land" and data.get("color") not in tuple(COLORS):
        raise bad("a land needs a color among W, U, B, R, G")
    if kind == "sorcery" and effect is None:
        raise bad("a sorcery needs an effect")
    return Card(
        name=name,
        type=kind,
        cost=cost,
        power=int(data.get("power", 0)),
        toughness=int(data.get("toughness", 0)),
        keywords=keywords,
        effect=effect,
        color=data.get("color", ""),
    )


@dataclass(frozen=True)
class CardPool:
    cards: dict[str, Card]
    decks: dict[str, dict[str, int]]

    def card(self, name: str) -> Card:
        return self.cards[name]

    def check_deck(self, deck: Mapping[str, Any], who: str = "deck") -> dict[str, int]:
        """A deck list (card name -> copies) checked against the rules, or BadOptions saying why."""
        if not isinstance(deck, Mapping) or not deck:
            raise BadOptions(f"{who} must be a map from card name to number of copies")
        checked: dict[str, int] = {}
        for name, count in deck.items():
            if name not in self.cards:
                raise BadOptions(f"{who}: there is no card named {name!r}")
            if isinstance(count, bool) or not isinstance(count, int) or count < 1:
                raise BadOptions(f"{who}: the number of {name} must be a positive integer, not {count!r}")
            if not self.cards[name].is_land and count > MAX_COPIES:
                raise BadOptions(f"{who}: at most {MAX_COPIES} copies of {name} are allowed, not {count}")
            checked[name] = count
        total = sum(checked.values())
        if total != DECK_SIZE:
            raise BadOptions(f"{who}: a deck has exactly {DECK_SIZE} cards, this one has {total}")
        return checked


def load_pool(path: Path) -> CardPool:
    """Read a card data file; raises ValueError naming the faulty card or deck."""
    data = json.loads(path.read_text())
    cards = {name: _card_from_data(name, spec) for name, spec in data["cards"].items()}
    pool = CardPool(cards, {})
    decks = {name: pool.check_deck(deck, f"deck {name!r}") for name, deck in data.get("decks", {}).items()}
    return CardPool(cards, decks)


@cache
def default_pool() -> CardPool:
    return load_pool(DATA_FILE)
