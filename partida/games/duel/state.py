"""The Duel rules engine: a pure state machine (no I/O) over the zones, turn structure, mana,
casting, combat and state-based actions of the spec.

Every answer is checked completely before anything changes, so a rejected action leaves the state
as it was. Cards in hidden zones carry opaque ids: a card gets a fresh id, a keyed hash of a
counter, when it enters a hand, so no id tells when or from where a card came. Library cards carry
no id at all.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from dataclasses import dataclass, field
from typing import Any

from partida.games.base import Decision, IllegalAction, Result, State, View
from partida.games.duel.cards import Card, CardPool, Effect
from partida.games.duel.views import nicknames
from partida.games.prompts import Assign, ChooseOne, ChooseSubset, Order

START_LIFE = 20
HAND_SIZE = 7
MAX_HAND = 7
PHASES = ("mulligan", "scry", "main1", "attackers", "blockers", "order", "main2", "discard", "over")


def illegal(message: str) -> IllegalAction:
    return IllegalAction(message, code="illegal_action")


class Permanent:
    """A card on the battlefield with its public state."""

    __slots__ = ("card", "counters", "damage", "id", "owner", "sick", "tapped")

    def __init__(self, pid: str, card: Card, owner: int, sick: bool = True) -> None:
        self.id = pid
        self.card = card
        self.owner = owner
        self.tapped = False
        self.damage = 0
        self.counters = 0
        self.sick = sick

    @property
    def power(self) -> int:
        return self.card.power + self.counters

    @property
    def toughness(self) -> int:
        return self.card.toughness + self.counters

    def has(self, keyword: str) -> bool:
        return keyword in self.card.keywords

    def copy(self) -> Permanent:
        p = Permanent.__new__(Permanent)
        p.id, p.card, p.owner, p.tapped = self.id, self.card, self.owner, self.tapped
        p.damage, p.counters, p.sick = self.damage, self.counters, self.sick
        return p

    def label(self, name: str | None = None) -> str:
        """`name` (its nickname on the board, `DuelState.label`) or its card name, with its stats."""
        return f"{name or self.card.name} ({self.power}/{self.toughness})"


@dataclass
class Player:
    life: int = START_LIFE
    library: list[Card] = field(default_factory=list)  # index 0 is the top
    hand: list[tuple[str, Card]] = field(default_factory=list)
    graveyard: list[Card] = field(default_factory=list)
    mulligans: int = 0
    kept: bool = False
    land_played: bool = False
    lost: bool = False
    known_top: Card | None = None  # what the owner knows of its library order (after a scry)
    known_bottom: Card | None = None

    def copy(self) -> Player:
        return Player(
            self.life,
            list(self.library),
            list(self.hand),
            list(self.graveyard),
            self.mulligans,
            self.kept,
            self.land_played,
            self.lost,
            self.known_top,
            self.known_bottom,
        )


def target_label(state: DuelState, seat: int, target: Any) -> str:
    if isinstance(target, int):
        return "you" if target == seat else "opponent"
    perm = state.permanent(target)
    if perm is None:
        return str(target)
    whose = "your" if perm.owner == seat else "opponent's"
    return f"{whose} {state.label(perm)}"


class DuelState(State):
    """The whole game. `active` plays the turn; `decider` answers mulligan and scry questions."""

    def __init__(self, pool: CardPool, decks: list[dict[str, int]], deck_names: list[str], seed: int) -> None:
        self.pool = pool
        self.decks = decks
        self.deck_names = deck_names
        self.rng = random.Random(seed)
        self.salt = self.rng.getrandbits(64).to_bytes(8, "big")
        self.counter = 0
        self.players = [Player(), Player()]
        self.battlefield: list[Permanent] = []
        self.first = self.rng.randrange(2)
        self.active = self.first
        self.decider = self.first
        self.turn = 0
        self.phase = "mulligan"
        self.attackers: list[str] = []
        self.blocks: list[list[str]] = []  # [blocker, attacker]
        self.orders: dict[str, list[str]] = {}
        self.order_queue: list[str] = []
        self.history: list[list[float]] = []
        self.event: str | None = None  # the public sentence about the last answer (`last_event`)
        for seat in (0, 1):
            player = self.players[seat]
            player.library = [pool.card(name) for name, n in decks[seat].items() for _ in range(n)]
            self.rng.shuffle(player.library)
            self._draw(seat, HAND_SIZE)

    # ----- basics -----

    @property
    def num_seats(self) -> int:
        return 2

    def fresh_id(self) -> str:
        self.counter += 1
        digest = hashlib.blake2b(self.counter.to_bytes(8, "big"), key=self.salt, digest_size=5).hexdigest()
        return "c" + digest

    def clone(self) -> DuelState:
        other = DuelState.__new__(DuelState)
        other.__dict__.update(self.__dict__)
        if self.phase == "mulligan":  # the generator only shuffles during the mulligans
            other.rng = random.Random()
            other.rng.setstate(self.rng.getstate())
        other.players = [p.copy() for p in self.players]
        other.battlefield = [p.copy() for p in self.battlefield]
        other.attackers = list(self.attackers)
        other.blocks = [list(b) for b in self.blocks]
        other.orders = {k: list(v) for k, v in self.orders.items()}
        other.order_queue = list(self.order_queue)
        other.history = [list(h) for h in self.history]
        return other

    def permanent(self, pid: Any) -> Permanent | None:
        for perm in self.battlefield:
            if perm.id == pid:
                return perm
        return None

    def creatures(self, seat: int | None = None) -> list[Permanent]:
        return [p for p in self.battlefield if p.card.is_creature and (seat is None or p.owner == seat)]

    def is_over(self) -> bool:
        return self.phase == "over"

    def result(self) -> Result:
        lost = [p.lost for p in self.players]
        lives = [float(p.life) for p in self.players]
        if lost[0] == lost[1]:
            return Result(lives, [1, 1])
        return Result(lives, [2 if lost[s] else 1 for s in (0, 1)])

    def winner(self) -> int | None:
        """The winning seat once the game is over; None for a draw or a game in progress."""
        if not self.is_over() or self.players[0].lost == self.players[1].lost:
            return None
        return 0 if self.players[1].lost else 1

    def scores(self) -> list[float]:
        return [float(p.life) for p in self.players]

    def round_scores(self) -> list[list[float]]:
        return [list(h) for h in self.history]

    def deciding_seat(self) -> int | None:
        if self.phase == "over":
            return None
        if self.phase in ("mulligan", "scry"):
            return self.decider
        if self.phase == "blockers":
            return 1 - self.active
        return self.active

    # ----- zones -----

    def _draw(self, seat: int, n: int = 1) -> None:
        player = self.players[seat]
        for _ in range(n):
            if not player.library:
                player.lost = True
                return
            card = player.library.pop(0)
            player.known_top = None
            if not player.library:
                player.known_bottom = None
            player.hand.append((self.fresh_id(), card))

    def _to_graveyard(self, perm: Permanent) -> None:
        self.battlefield.remove(perm)
        self.players[perm.owner].graveyard.append(perm.card)

    # ----- mana -----

    def untapped_lands(self, seat: int) -> list[Permanent]:
        return [p for p in self.battlefield if p.owner == seat and p.card.is_land and not p.tapped]

    def can_pay(self, seat: int, card: Card) -> bool:
        return self._payment(seat, card) is not None

    def _payment(self, seat: int, card: Card) -> list[Permanent] | None:
        """The lands to tap for `card`: colored pips first, then generic from the colors the pips
        need least, so a payable cost is always paid."""
        lands = self.untapped_lands(seat)
        if len(lands) < card.mana_value:
            return None
        chosen: list[Permanent] = []
        free = list(lands)
        for pip in card.pips:
            for land in free:
                if land.card.color == pip:
                    chosen.append(land)
                    free.remove(land)
                    break
            else:
                return None
        if len(free) < card.generic:
            return None
        return chosen + free[: card.generic]

    # ----- targets -----

    def legal_targets(self, seat: int, effect: Effect | None, exclude: str | None = None) -> list[Any]:
        """Target choices for an effect cast by `seat`: permanent ids and player seats."""
        if effect is None or not effect.targeted:
            return []
        kind = effect.target
        out: list[Any] = []
        for perm in self.battlefield:
            if not perm.card.is_creature or perm.id == exclude:
                continue
            if kind in ("any", "creature"):
                out.append(perm.id)
            elif kind == "creature an opponent controls" and perm.owner != seat:
                out.append(perm.id)
            elif kind == "creature you control" and perm.owner == seat:
                out.append(perm.id)
        if kind in ("any", "player"):
            out += [1 - seat, seat]
        return out

    # ----- decisions -----

    def main_actions(self) -> list[Any]:
        """Every legal main-phase action of the active player, one per distinct card name."""
        seat = self.active
        player = self.players[seat]
        actions: list[Any] = []
        seen: set[str] = set()
        for cid, card in player.hand:
            if card.name in seen:
                continue
            seen.add(card.name)
            if card.is_land:
                if not player.land_played:
                    actions.append({"play": cid})
                continue
            if not self.can_pay(seat, card):
                continue
            if card.effect is not None and card.effect.targeted:
                targets = self.legal_targets(seat, card.effect)
                if targets:
                    actions += [{"cast": cid, "target": t} for t in targets]
                elif card.is_creature:
                    actions.append({"cast": cid})
            else:
                actions.append({"cast": cid})
        actions.append("pass")
        return actions

    def can_attack(self, perm: Permanent) -> bool:
        return (
            perm.owner == self.active
            and perm.card.is_creature
            and not perm.tapped
            and (not perm.sick or perm.has("haste"))
        )

    def attack_candidates(self) -> list[str]:
        return [p.id for p in self.battlefield if self.can_attack(p)]

    def can_block(self, blocker: Permanent, attacker: Permanent) -> bool:
        if not attacker.has("flying"):
            return True
        return blocker.has("flying") or blocker.has("reach")

    def block_options(self) -> tuple[list[str], list[list[str]]]:
        attackers = [self.permanent(a) for a in self.attackers]
        sources, targets = [], []
        for perm in self.creatures(1 - self.active):
            if perm.tapped:
                continue
            allowed = [a.id for a in attackers if a is not None and self.can_block(perm, a)]
            if allowed:
                sources.append(perm.id)
                targets.append(allowed)
        return sources, targets

    def blockers_of(self, attacker: str) -> list[str]:
        return [b for b, a in self.blocks if a == attacker]

    def discard_count(self) -> int:
        return max(0, len(self.players[self.active].hand) - MAX_HAND)

    def pending(self) -> list[Decision]:
        seat = self.deciding_seat()
        if seat is None:
            return []
        return [Decision(seat, self.prompt())]

    def prompt(self) -> Any:
        """The prompt of the open decision, with labels a person can read."""
        seat = self.deciding_seat()
        assert seat is not None
        player = self.players[seat]
        if self.phase == "mulligan":
            size = len(player.hand)
            return ChooseOne(
                name="mulligan",
                text=f"keep this hand of {size} or mulligan to {size - 1}",
                options=["keep", "mulligan"],
                labels=[f"keep {size} cards", f"mulligan to {size - 1}"],
            )
        if self.phase == "scry":
            top = player.library[0].name
            return ChooseOne(
                name="scry",
                text=f"scry 1: the top card of your library is {top}",
                options=["top", "bottom"],
                labels=[f"leave {top} on top", f"put {top} on the bottom"],
            )
        if self.phase in ("main1", "main2"):
            actions = self.main_actions()
            return ChooseOne(
                name="main",
                text=f"{'first' if self.phase == 'main1' else 'second'} main phase: play a land, cast a spell or pass",
                options=actions,
                labels=[self.action_label(seat, a) for a in actions],
            )
        if self.phase == "attackers":
            ids = self.attack_candidates()
            labels = [self.label(self.permanent(i)) for i in ids]  # type: ignore[arg-type]
            return ChooseSubset(name="attackers", text="choose your attackers", candidates=ids, labels=labels)
        if self.phase == "blockers":
            sources, targets = self.block_options()
            attacking = ", ".join(self.label(p) for p in map(self.permanent, self.attackers) if p)
            return Assign(
                name="blockers",
                text=f"choose which of your creatures block which attacker; attacking you: {attacking}",
                sources=sources,
                targets=targets,
            )
        if self.phase == "order":
            attacker = self.permanent(self.order_queue[0])
            assert attacker is not None
            prompt = Order(
                name="damage_order",
                text=f"order the blockers of {self.label(attacker)}: it deals damage to them in this order",
                items=self.blockers_of(attacker.id),
            )
            names = ", ".join(self.label(p) for p in map(self.permanent, prompt.items) if p)
            return Order(
                name=prompt.name,
                text=f"{prompt.text} ({names})",
                items=prompt.items,
            )
        if self.phase == "discard":
            n = self.discard_count()
            return ChooseSubset(
                name="discard",
                text=f"discard {n} card{'s' if n > 1 else ''} down to {MAX_HAND}",
                candidates=[cid for cid, _ in player.hand],
                min=n,
                max=n,
                labels=[card.name for _, card in player.hand],
            )
        raise AssertionError(self.phase)

    def action_label(self, seat: int, action: Any) -> str:
        if action == "pass":
            return "pass"
        cid = action.get("play") or action.get("cast")
        card = self.hand_card(seat, cid)
        name = card.name if card else str(cid)
        if "play" in action:
            return f"play {name}"
        if "target" in action:
            return f"cast {name} -> {target_label(self, seat, action['target'])}"
        return f"cast {name}"

    def nicknames(self) -> dict[str, str]:
        """Permanent id -> the name people read (`views.nicknames`)."""
        return nicknames([{"id": p.id, "name": p.card.name, "owner": p.owner} for p in self.battlefield])

    def label(self, perm: Permanent) -> str:
        return perm.label(self.nicknames().get(perm.id))

    def hand_card(self, seat: int, cid: Any) -> Card | None:
        for hid, card in self.players[seat].hand:
            if hid == cid:
                return card
        return None

    # ----- applying answers -----

    def apply(self, seat: int, action: Any) -> None:
        decision = self.require_decision(seat)
        phase = self.phase
        if phase in ("mulligan", "scry"):
            checked = decision.prompt.validate(action)
        elif phase in ("main1", "main2"):
            checked = self._check_main(action)
        elif phase == "attackers":
            checked = self._check_attackers(action)
        elif phase == "blockers":
            checked = self._check_blockers(action)
        elif phase == "order":
            checked = decision.prompt.validate(action)
        else:
            checked = self._check_discard(action)
        event = self._public_event(seat, checked)  # before the cards move: it names them
        fighting = phase in ("attackers", "blockers", "order") and bool(self.attackers or checked)
        names, defender = self.nicknames(), 1 - self.active
        life = self.players[defender].life
        self.apply_fast(checked)
        if fighting and self.phase not in ("blockers", "order"):  # combat damage was dealt
            event += "; " + self._combat_story(names, defender, life)
        self.event = event

    def _combat_story(self, names: dict[str, str], defender: int, life: int) -> str:
        """What combat did, told after the answer that made it happen: who died, what got through."""
        alive = {p.id for p in self.battlefield}
        died = [name for pid, name in names.items() if pid not in alive]
        parts = []
        if died:
            parts.append(f"{' and '.join(died)} {'dies' if len(died) == 1 else 'die'}")
        lost = life - self.players[defender].life
        if lost > 0:
            parts.append(f"{lost} damage goes through ({self.players[defender].life} life left)")
        return "combat: " + (", ".join(parts) if parts else "no creature dies and no damage goes through")

    def last_event(self) -> str | None:
        return self.event

    def _public_event(self, seat: int, action: Any) -> str:
        """What everyone at the table learns from a checked answer: what was cast and at what,
        attacks and blocks, discards (they go to the graveyard face up), mulligans; of a scry
        only that it happened."""
        names = self.nicknames()
        phase = self.phase
        if phase == "mulligan":
            n = len(self.players[seat].hand)
            return f"keeps {n} cards" if action == "keep" or n == 0 else f"mulligans to {n - 1}"
        if phase == "scry":
            return "looks at the top card of their library"
        if phase in ("main1", "main2"):
            if action == "pass":
                return "passes"
            card = self.hand_card(seat, action.get("play", action.get("cast")))
            name = card.name if card is not None else "a card"
            if "play" in action:
                return f"plays {name}"
            target = action.get("target")
            if target is None:
                return f"casts {name}"
            if isinstance(target, int):
                return f"casts {name} at {'themselves' if target == seat else 'their opponent'}"
            return f"casts {name} at {names.get(target, 'a creature')}"
        if phase == "attackers":
            return "attacks with " + ", ".join(names[a] for a in action) if action else "does not attack"
        if phase == "blockers":
            return (
                "blocks: " + "; ".join(f"{names[b]} blocks {names[a]}" for b, a in action)
                if action
                else "does not block"
            )
        if phase == "order":
            return "orders damage: " + ", ".join(names.get(b, "a creature") for b in action)
        chosen = set(action)
        discarded = [c.name for cid, c in self.players[seat].hand if cid in chosen]
        return "discards " + ", ".join(discarded)

    def apply_fast(self, action: Any) -> None:
        """Apply an answer known to be legal (search agents generate them from the rules)."""
        phase = self.phase
        if phase in ("mulligan", "scry"):
            self._answer_choice(action)
        elif phase in ("main1", "main2"):
            self._main(action)
        elif phase == "attackers":
            self._declare_attackers(list(action))
        elif phase == "blockers":
            self._declare_blockers([list(p) for p in action])
        elif phase == "order":
            self._set_order(list(action))
        elif phase == "discard":
            self._discard(list(action))

    def _answer_choice(self, choice: str) -> None:
        seat = self.decider
        player = self.players[seat]
        if self.phase == "mulligan":
            if choice == "keep" or not player.hand:
                player.kept = True
            else:
                n = len(player.hand) - 1
                player.library += [card for _, card in player.hand]
                player.hand = []
                player.mulligans += 1
                self.rng.shuffle(player.library)
                self._draw(seat, n)
                if n == 0:
                    player.kept = True
            self._next_mulligan(seat)
        else:
            if choice == "bottom":
                card = player.library.pop(0)
                player.library.append(card)
                player.known_bottom = card
                player.known_top = None
            else:
                player.known_top = player.library[0]
            self._next_scry(seat)

    def _next_mulligan(self, seat: int) -> None:
        for s in (1 - seat, seat):
            if not self.players[s].kept:
                self.decider = s
                return
        self.decider = self.first
        self.phase = "scry"
        self._advance_scry([self.first, 1 - self.first])

    def _next_scry(self, seat: int) -> None:
        order = [self.first, 1 - self.first]
        self._advance_scry(order[order.index(seat) + 1 :])

    def _advance_scry(self, seats: list[int]) -> None:
        for s in seats:
            if self.players[s].mulligans > 0 and self.players[s].library:
                self.decider = s
                return
        self._start_turn(self.first)

    def _start_turn(self, seat: int) -> None:
        self.active = seat
        self.turn += 1
        player = self.players[seat]
        player.land_played = False
        for perm in self.battlefield:
            if perm.owner == seat:
                perm.tapped = False
                perm.sick = False
        if self.turn > 1:
            self._draw(seat)
        self.phase = "main1"
        self._check_state()

    def _check_main(self, action: Any) -> Any:
        """Validate a main-phase answer with a specific reason for each way it can be wrong."""
        seat = self.active
        player = self.players[seat]
        if action == "pass":
            return "pass"
        if not isinstance(action, dict) or len(set(action) & {"play", "cast"}) != 1:
            raise illegal(
                f'a main-phase action is "pass", {{"play": card}} or {{"cast": card, "target": ...}}, not {action!r}'
            )
        cid = action.get("play", action.get("cast"))
        card = self.hand_card(seat, cid)
        if card is None:
            raise illegal(f"card {cid!r} is not in your hand")
        if "play" in action:
            if not card.is_land:
                raise illegal(f"{card.name} is not a land: cast it instead")
            if player.land_played:
                raise illegal("you have already played a land this turn")
            if set(action) != {"play"}:
                raise illegal("playing a land takes no target")
            return {"play": cid}
        if card.is_land:
            raise illegal(f"{card.name} is a land: play it instead of casting it")
        if not self.can_pay(seat, card):
            raise illegal(f"you cannot pay {card.cost} for {card.name} with your untapped lands")
        extra = set(action) - {"cast", "target"}
        if extra:
            raise illegal(f"unknown field {sorted(extra)[0]!r} in a cast action")
        effect = card.effect
        targets = self.legal_targets(seat, effect)
        if effect is not None and effect.targeted:
            if "target" not in action or action["target"] is None:
                if targets or not card.is_creature:
                    if not targets:
                        raise illegal(f"{card.name} needs a target and there is no legal one")
                    raise illegal(f"{card.name} needs a target: target {effect.target}")
                return {"cast": cid}
            target = action["target"]
            if isinstance(target, bool) or target not in targets:
                raise illegal(f"{target!r} is not a legal target for {card.name} (target {effect.target})")
            return {"cast": cid, "target": target}
        if action.get("target") is not None:
            raise illegal(f"{card.name} takes no target")
        return {"cast": cid}

    def _main(self, action: Any) -> None:
        seat = self.active
        player = self.players[seat]
        if action == "pass":
            if self.phase == "main1":
                self._begin_combat()
            else:
                self._end_phase()
            return
        cid = action.get("play", action.get("cast"))
        index = next(i for i, (hid, _) in enumerate(player.hand) if hid == cid)
        _, card = player.hand.pop(index)
        if "play" in action:
            player.land_played = True
            self.battlefield.append(Permanent(cid, card, seat, sick=True))
            return
        for land in self._payment(seat, card) or []:
            land.tapped = True
        target = action.get("target")
        if card.is_creature:
            perm = Permanent(cid, card, seat, sick=True)
            self.battlefield.append(perm)
            if card.effect is not None:
                self._resolve(seat, card.effect, target, source=perm)
        else:
            player.graveyard.append(card)
            self._resolve(seat, card.effect, target, source=None)  # type: ignore[arg-type]
        self._check_state()

    def _resolve(self, seat: int, effect: Effect, target: Any, source: Permanent | None) -> None:
        if effect.targeted and target is None:
            return
        perm = self.permanent(target) if isinstance(target, str) else None
        if isinstance(target, str) and perm is None:
            return  # the target left the battlefield
        if effect.do == "damage":
            if perm is not None:
                perm.damage += effect.amount
            else:
                self.players[target].life -= effect.amount
        elif effect.do == "counters":
            if effect.target == "each creature you control":
                for p in self.creatures(seat):
                    p.counters += effect.amount
            elif perm is not None:
                perm.counters += effect.amount
        elif effect.do == "gain_life":
            n = len(self.creatures(seat)) if effect.per == "creature you control" else 1
            self.players[seat].life += effect.amount * n
        elif effect.do == "tap" and perm is not None:
            perm.tapped = True
        elif effect.do == "destroy" and perm is not None:
            self._to_graveyard(perm)

    def _begin_combat(self) -> None:
        self.attackers, self.blocks, self.orders, self.order_queue = [], [], {}, []
        self.phase = "attackers" if self.attack_candidates() else "main2"

    def _check_attackers(self, action: Any) -> list[str]:
        if not isinstance(action, list | tuple):
            raise illegal(f"the attackers must be a list of creature ids, not {action!r}")
        for pid in action:
            perm = self.permanent(pid) if isinstance(pid, str) else None
            if perm is None or perm.owner != self.active or not perm.card.is_creature:
                raise illegal(f"{pid!r} is not a creature you control")
            if perm.tapped:
                raise illegal(f"{perm.card.name} is tapped and cannot attack")
            if perm.sick and not perm.has("haste"):
                raise illegal(f"{perm.card.name} has summoning sickness and cannot attack this turn")
        if len(set(action)) != len(action):
            raise illegal("a creature can attack only once")
        order = {pid: i for i, pid in enumerate(self.attack_candidates())}
        return sorted(action, key=order.__getitem__)

    def _declare_attackers(self, attackers: list[str]) -> None:
        if not attackers:
            self.phase = "main2"
            return
        self.attackers = attackers
        for pid in attackers:
            perm = self.permanent(pid)
            if perm is not None and not perm.has("vigilance"):
                perm.tapped = True
        sources, _ = self.block_options()
        if sources:
            self.phase = "blockers"
        else:
            self._after_blocks([])

    def _check_blockers(self, action: Any) -> list[list[str]]:
        if not isinstance(action, list | tuple):
            raise illegal(f"the blocks must be a list of [blocker, attacker] pairs, not {action!r}")
        used: set[str] = set()
        for pair in action:
            if not isinstance(pair, list | tuple) or len(pair) != 2:
                raise illegal(f"{pair!r} is not a [blocker, attacker] pair")
            bid, aid = pair
            blocker = self.permanent(bid) if isinstance(bid, str) else None
            attacker = self.permanent(aid) if isinstance(aid, str) else None
            if blocker is None or blocker.owner == self.active or not blocker.card.is_creature:
                raise illegal(f"{bid!r} is not a creature you control")
            if attacker is None or aid not in self.attackers:
                raise illegal(f"{aid!r} is not an attacking creature")
            if blocker.tapped:
                raise illegal(f"{blocker.card.name} is tapped and cannot block")
            if bid in used:
                raise illegal(f"{blocker.card.name} can block only one attacker")
            if not self.can_block(blocker, attacker):
                raise illegal(
                    f"{blocker.card.name} cannot block {attacker.card.name}: it has flying, "
                    "and only a creature with flying or reach can block it"
                )
            used.add(bid)
        return [[b, a] for b, a in action]

    def _declare_blockers(self, blocks: list[list[str]]) -> None:
        self._after_blocks(blocks)

    def _after_blocks(self, blocks: list[list[str]]) -> None:
        self.blocks = blocks
        self.orders = {}
        self.order_queue = [a for a in self.attackers if len(self.blockers_of(a)) >= 2]
        for a in self.attackers:
            if len(self.blockers_of(a)) == 1:
                self.orders[a] = self.blockers_of(a)
        if self.order_queue:
            self.phase = "order"
        else:
            self._combat_damage()

    def _set_order(self, order: list[str]) -> None:
        self.orders[self.order_queue.pop(0)] = order
        if not self.order_queue:
            self._combat_damage()

    def _combat_damage(self) -> None:
        fighters = [self.permanent(a) for a in self.attackers] + [self.permanent(b) for b, _ in self.blocks]
        if any(p is not None and (p.has("first strike") or p.has("double strike")) for p in fighters):
            self._damage_step(lambda p: p.has("first strike") or p.has("double strike"))
            if self.phase != "over":
                self._damage_step(lambda p: not p.has("first strike") or p.has("double strike"))
        else:
            self._damage_step(lambda p: True)
        if self.phase != "over":
            self.phase = "main2"

    def _damage_step(self, deals: Any) -> None:
        """One damage step: everything is computed first, then dealt at once."""
        defender = 1 - self.active
        to_player = 0
        marks: list[tuple[Permanent, int]] = []
        blocked = {a for _, a in self.blocks}
        for aid in self.attackers:
            attacker = self.permanent(aid)
            if attacker is None:
                continue
            if deals(attacker):
                if aid not in blocked:
                    to_player += attacker.power
                else:
                    remaining = attacker.power
                    alive = [p for p in (self.permanent(b) for b in self.orders.get(aid, [])) if p is not None]
                    for i, blocker in enumerate(alive):
                        if remaining <= 0:
                            break
                        if i == len(alive) - 1:
                            amount = remaining
                        else:
                            amount = min(remaining, max(0, blocker.toughness - blocker.damage))
                        marks.append((blocker, amount))
                        remaining -= amount
            for bid in self.blockers_of(aid):
                blocker = self.permanent(bid)
                if blocker is not None and deals(blocker):
                    marks.append((attacker, blocker.power))
        self.players[defender].life -= to_player
        for perm, amount in marks:
            perm.damage += amount
        self._check_state()

    def _end_phase(self) -> None:
        if self.discard_count() > 0:
            self.phase = "discard"
        else:
            self._end_turn()

    def _check_discard(self, action: Any) -> list[str]:
        n = self.discard_count()
        if not isinstance(action, list | tuple):
            raise illegal(f"the discard must be a list of {n} card ids, not {action!r}")
        if len(action) != n:
            raise illegal(f"discard exactly {n} card{'s' if n > 1 else ''}, not {len(action)}")
        if len(set(map(str, action))) != len(action):
            raise illegal("a card can be discarded only once")
        for cid in action:
            if self.hand_card(self.active, cid) is None:
                raise illegal(f"card {cid!r} is not in your hand")
        return list(action)

    def _discard(self, ids: list[str]) -> None:
        player = self.players[self.active]
        chosen = set(ids)
        player.graveyard += [card for cid, card in player.hand if cid in chosen]
        player.hand = [(cid, card) for cid, card in player.hand if cid not in chosen]
        self._end_turn()

    def _end_turn(self) -> None:
        for perm in self.battlefield:
            perm.damage = 0
        self.history.append(self.scores())
        self._start_turn(1 - self.active)

    def _check_state(self) -> None:
        """State-based actions: lethal damage kills, 0 life or an empty draw loses."""
        dead = [p for p in self.battlefield if p.card.is_creature and p.damage >= p.toughness]
        for perm in dead:
            self._to_graveyard(perm)
        for player in self.players:
            if player.life <= 0:
                player.lost = True
        if any(p.lost for p in self.players):
            self.phase = "over"

    # ----- views -----

    def view(self, seat: int | None) -> View:
        from partida.games.duel.views import build_view

        return build_view(self, seat)


def all_block_assignments(sources: list[str], targets: list[list[str]]) -> list[list[list[str]]]:
    """Every blocking assignment (used by search agents on small boards)."""
    choices = [[None, *t] for t in targets]
    return [
        [[s, t] for s, t in zip(sources, combo, strict=True) if t is not None] for combo in itertools.product(*choices)
    ]
