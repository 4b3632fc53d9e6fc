"""The Duel game object: options (decks), state creation, and determinization for search agents."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Mapping
from typing import Any, ClassVar

from partida.games.base import BadOptions, Game, IllegalAction, Option, View, json_option
from partida.games.duel.cards import CardPool, default_pool
from partida.games.duel.state import DuelState, Permanent, Player
from partida.games.duel.views import nicknames, render_view
from partida.games.prompts import ChooseOne, ChooseSubset, Prompt

STOCK_DECKS = ("white", "red")


class Duel(Game):
    name = "duel"
    title = "Duel"
    perfect_information = False
    description = (
        "A two-player trading-card duel (a faithful subset of Magic: the Gathering): lands, creatures, "
        "sorceries, combat, a mulligan and hidden hands."
    )
    options: ClassVar[Mapping[str, Option]] = {
        "deck0": Option("deck0", "white", "the deck of the first seat (a stock deck name)", choices=STOCK_DECKS),
        "deck1": Option("deck1", "red", "the deck of the second seat (a stock deck name)", choices=STOCK_DECKS),
        "custom_decks": Option("custom_decks", False, "allow custom deck lists (options decklist0 / decklist1)"),
        "decklist0": Option("decklist0", "", "a custom deck of seat 1: JSON map card name -> copies"),
        "decklist1": Option("decklist1", "", "a custom deck of seat 2: JSON map card name -> copies"),
    }

    def __init__(self, pool: CardPool | None = None) -> None:
        self.pool = pool or default_pool()

    def describe(self) -> dict[str, Any]:
        """The lobby entry, with the card pool: clients show card text and stats from it (it is
        the same for everyone, so it travels once here rather than in every view)."""
        data = super().describe()
        data["cards"] = {
            name: {
                "type": card.type,
                "cost": card.cost,
                "power": card.power,
                "toughness": card.toughness,
                "keywords": sorted(card.keywords),
                "text": card.text(),
            }
            for name, card in self.pool.cards.items()
        }
        return data

    def decks_for(self, options: Mapping[str, Any]) -> tuple[list[dict[str, int]], list[str]]:
        """The two deck lists the options ask for, checked; BadOptions with a sentence otherwise."""
        decks, names = [], []
        for seat in (0, 1):
            custom = options.get(f"decklist{seat}") or ""
            if custom:
                if not options.get("custom_decks"):
                    raise BadOptions("this room does not allow custom decks (set custom_decks to true)")
                if isinstance(custom, str):
                    custom = json_option(f"decklist{seat}", custom)
                decks.append(self.pool.check_deck(custom, f"the deck of seat {seat + 1}"))
                names.append("custom")
            else:
                name = options.get(f"deck{seat}", STOCK_DECKS[seat])
                if name not in self.pool.decks:
                    raise BadOptions(f"there is no stock deck named {name!r}")
                decks.append(dict(self.pool.decks[name]))
                names.append(name)
        return decks, names

    def resolve_options(self, given: Mapping[str, Any] | None) -> dict[str, Any]:
        given = dict(given or {})
        for key in ("decklist0", "decklist1"):
            if isinstance(given.get(key), dict):
                given[key] = json.dumps(given[key])
        resolved = super().resolve_options(given)
        self.decks_for(resolved)  # reject a bad deck when the room is made, not at the first move
        return resolved

    def new_state(self, options: Mapping[str, Any], seed: int, seats: int) -> DuelState:
        decks, names = self.decks_for(options)
        return DuelState(self.pool, decks, names, seed)

    def determinize(self, view: View, seat: int | None, rng: random.Random) -> DuelState:
        """Rebuild a full state from `view`: public facts are copied; the opponent's hand and both
        libraries are sampled from the cards `seat` has not seen (deck list minus everything
        visible), keeping what the seat knows of its own library (a scried card)."""
        pool = self.pool
        state = DuelState.__new__(DuelState)
        state.pool = pool
        state.decks = [dict(p["decklist"]) for p in view["players"]]
        state.deck_names = [p["deck"] for p in view["players"]]
        state.rng = random.Random(rng.getrandbits(64))
        state.salt = rng.getrandbits(64).to_bytes(8, "big")
        state.counter = 0
        state.first, state.active, state.decider = view["first"], view["active"], view["decider"]
        state.turn, state.phase = view["turn"], view["phase"]
        combat = view["combat"]
        state.attackers = list(combat["attackers"])
        state.blocks = [list(b) for b in combat["blocks"]]
        state.orders = {k: list(v) for k, v in combat["orders"].items()}
        state.order_queue = list(combat["order_queue"])
        state.history = []
        state.event = None
        state.battlefield = []
        for x in view["battlefield"]:
            perm = Permanent(x["id"], pool.card(x["name"]), x["owner"], x["sick"])
            perm.tapped, perm.damage, perm.counters = x["tapped"], x["damage"], x["counters"]
            state.battlefield.append(perm)
        state.players = []
        for s, pv in enumerate(view["players"]):
            unseen = Counter(pv["decklist"])
            unseen.subtract(Counter(x["name"] for x in view["battlefield"] if x["owner"] == s))
            unseen.subtract(Counter(pv["graveyard"]))
            player = Player(pv["life"], mulligans=pv["mulligans"], kept=pv["kept"], land_played=pv["land_played"])
            player.lost = pv["lost"]
            player.graveyard = [pool.card(n) for n in pv["graveyard"]]
            known: dict[str, str] = {}
            if s == seat:
                player.hand = [(c["id"], pool.card(c["name"])) for c in view["hand"]]
                unseen.subtract(Counter(c["name"] for c in view["hand"]))
                known = dict(view.get("library_known") or {})
                unseen.subtract(Counter(known.values()))
            rest = [pool.card(n) for n, k in sorted(unseen.items()) for _ in range(max(0, k))]
            rng.shuffle(rest)
            if s != seat:
                n = pv["hand_count"]
                player.hand = [(state.fresh_id(), card) for card in rest[:n]]
                rest = rest[n:]
            if "top" in known:
                player.known_top = pool.card(known["top"])
                rest.insert(0, player.known_top)
            if "bottom" in known:
                player.known_bottom = pool.card(known["bottom"])
                rest.append(player.known_bottom)
            player.library = rest[: pv["library_count"]] if len(rest) >= pv["library_count"] else rest
            state.players.append(player)
        return state

    def render(self, view: View) -> str:
        return render_view(view, self.pool.cards)

    def format_action(self, view: View, action: Any) -> str:
        names = {c["id"]: c["name"] for c in view.get("hand", [])}
        names.update(nicknames(view["battlefield"]))
        if isinstance(action, dict):
            cid = action.get("play", action.get("cast"))
            verb = "play" if "play" in action else "cast"
            text = f"{verb} {names.get(cid, 'a card')}"
            if "target" in action:
                t = action["target"]
                text += f" -> {'player ' + str(t + 1) if isinstance(t, int) else names.get(t, t)}"
            return text
        if isinstance(action, list):
            return (
                ", ".join(
                    " blocks ".join(names.get(x, str(x)) for x in a) if isinstance(a, list) else names.get(a, str(a))
                    for a in action
                )
                or "none"
            )
        return str(action)

    def parse_action(self, view: View, prompt: Prompt, text: str) -> Any:
        """People may type an option's number (1-based) or, for subsets, numbers separated by
        commas or spaces; anything else is read as JSON or a bare word."""
        words = text.replace(",", " ").split()
        if words and all(w.isdigit() for w in words):
            numbers = [int(w) - 1 for w in words]
            if isinstance(prompt, ChooseOne) and len(numbers) == 1:
                if not 0 <= numbers[0] < len(prompt.options):
                    raise IllegalAction(f"choose a number from 1 to {len(prompt.options)}", code="bad_action")
                return prompt.options[numbers[0]]
            if isinstance(prompt, ChooseSubset):
                if any(not 0 <= n < len(prompt.candidates) for n in numbers):
                    raise IllegalAction(f"choose numbers from 1 to {len(prompt.candidates)}", code="bad_action")
                return [prompt.candidates[n] for n in numbers]
        if text.strip().lower() in ("none", "-", ""):
            if isinstance(prompt, ChooseSubset) or prompt.kind == "assign":
                return []
        if isinstance(prompt, ChooseSubset) and not text.strip().startswith("["):
            return self._subset_by_name(view, prompt, text)
        return prompt.parse(text)

    def _subset_by_name(self, view: View, prompt: ChooseSubset, text: str) -> list[Any]:
        """Cards typed by name, separated by commas: `Grizzly Bears, Serra Angel`. A name that is
        on the board but not a choice says why (tapped, summoning sick, not yours)."""
        names = nicknames(view["battlefield"])
        names.update({c["id"]: c["name"] for c in view.get("hand", [])})
        chosen = []
        for part in (p.strip() for p in text.split(",")):
            wanted = part.lower()
            match = [c for c in prompt.candidates if names.get(c, "").lower() == wanted and c not in chosen]
            if match:
                chosen.append(match[0])
                continue
            perm = next((p for p in view["battlefield"] if names[p["id"]].lower() == wanted), None)
            if perm is None or prompt.name != "attackers":
                hint = "type their numbers, e.g. 1 3, or their names"
                raise IllegalAction(f"{part!r} is not one of the choices: {hint}", code="bad_action")
            name = names[perm["id"]]
            if perm["owner"] != view["seat"]:
                reason = "is not your creature"
            elif not self.pool.card(perm["name"]).is_creature:
                reason = "is not a creature"
            elif perm["tapped"]:
                reason = "is tapped and cannot attack"
            elif perm["sick"]:
                reason = "has summoning sickness and cannot attack this turn"
            else:
                reason = "cannot attack now"
            raise IllegalAction(f"{name} {reason}", code="bad_action")
        return chosen
