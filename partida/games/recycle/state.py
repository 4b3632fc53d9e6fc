"""The running game: locations, storages, dice, and the frame stack of the program.

The runtime is an explicit state machine. `frames` is a stack of small lists `[node, env, i]`;
`run()` steps the top frame until a `choice` opens (the state then waits for `apply`) or the
stack empties (the game is over). Nothing here is a generator, so `clone()` is a copy of lists.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from partida.games.base import Decision, IllegalAction, Result, State, View
from partida.games.prompts import ChooseOne
from partida.games.recycle.compiler import (
    GAME,
    AllPlayers,
    ChanceStep,
    Choice,
    Node,
    OptionSpec,
    Program,
    RecycleRuntimeError,
    Repeat,
    Seq,
    Stage,
    When,
    owner_team,
)
from partida.games.recycle.words import card_label, describe_rule, zone_name

STEP_LIMIT = 100_000  # stage turns without a player decision before the description is declared broken
Ref = tuple[int, tuple[int, str, str]]


class RecycleState(State):
    def __init__(self, game: Any, program: Program, consts: dict[str, Any], seed: int, seats: int) -> None:
        self.game = game
        self.program = program
        self.consts = consts
        self.n = seats
        self.rng = random.Random(seed)
        self.secret = hashlib.blake2b(f"ids:{seed}".encode(), digest_size=8).hexdigest()
        self.cur = 0
        self.nxt = 1 % seats
        self.team = 0  # the team whose turn it is in a (stage team ...)
        self.cards: list[dict[str, Any]] = []  # attributes, fixed once set-up has run (shared by clones)
        self.where: list[tuple[int, str, str]] = []
        self.card_owner: list[int] = []
        self.oid: list[int] = []
        self.id_counter = 0
        self.locs: dict[tuple[int, str, str], list[int]] = {}
        self.sto: dict[tuple[int, str, str], int] = {}
        self.dice: dict[str, list[int]] = {}
        self.dice_sides: dict[str, list[int]] = {}
        self.points: dict[str, tuple] = {}
        self.stats: dict[int, list[int]] = {}
        self.frames: list[list[Any]] = [[program.root, {}, 0]]
        self.choice: tuple[int, Choice, dict, list[tuple[str, Seq, dict]]] | None = None
        self.steps = 0
        self.over = False
        self._prompt: ChooseOne | None = None
        self.chance_stop = False  # stop before enumerable chance (search only, see State.stop_at_chance)
        self.chance: tuple[ChanceStep, dict, list[tuple[Any, float]]] | None = None
        # public knowledge of hidden cards (knowledge.py); kept only where views are read from it
        self.track = True
        self.kind: list[int] = []  # each card's kind (its attributes), shared by clones like `cards`
        self.kinds: dict[tuple, int] = {}
        self.kind_cards: list[list[int]] = []  # the cards of each kind
        self.knowers: list[int] = []  # per card, a bit per seat that knows which location holds it
        self.voids: dict[tuple[int, str, str], list[list[int]]] = {}  # location: [[kinds mask, n], ...]

    # primitives used by the compiled closures
    def _fresh_id(self) -> int:
        self.id_counter += 1
        digest = hashlib.blake2b(f"{self.secret}:{self.id_counter}".encode(), digest_size=6).digest()
        return int.from_bytes(digest, "big")

    def add_card(self, attrs: dict[str, Any], key: tuple[int, str, str]) -> None:
        c = len(self.cards)
        self.cards.append(attrs)
        self.where.append(key)
        self.card_owner.append(key[0])
        self.oid.append(self._fresh_id() if key[1] == "iloc" else c + 1)
        self.locs.setdefault(key, []).append(c)
        k = self.kinds.setdefault(tuple(sorted(attrs.items())), len(self.kinds))
        if k == len(self.kind_cards):
            self.kind_cards.append([])
        self.kind_cards[k].append(c)
        self.kind.append(k)
        self.knowers.append(self.seers(key))

    def seers(self, key: tuple[int, str, str]) -> int:
        """The seats that see a location's cards, a bit each."""
        if key[1] != "iloc":
            return (1 << self.n) - 1
        if key[0] == GAME:
            return 0
        team = owner_team(key[0])
        if team is None:
            return 1 << key[0]
        return sum(1 << seat for seat in self.program.teams[team])

    def _moved(self, c: int, source: tuple[int, str, str], dest: tuple[int, str, str]) -> None:
        """Public knowledge after card `c` went from `source` to `dest` (see knowledge.py)."""
        everyone = (1 << self.n) - 1
        shown = self.seers(dest)
        watched = self.seers(source) | shown
        self.knowers[c] = watched
        blind = everyone & ~watched
        left = self.locs[source]
        if blind:
            for other in left:
                self.knowers[other] &= ~blind
        voids = self.voids.get(source)
        if voids:
            seen_void = shown == everyone
            kept = []
            for mask, n in voids:
                if not (seen_void and mask >> self.kind[c] & 1):
                    n -= 1
                n = min(n, len(left))
                if n > 0:
                    kept.append([mask, n])
            if kept:
                self.voids[source] = kept
            else:
                del self.voids[source]

    def move(self, c: int, dest: tuple[int, str, str], top: bool) -> None:
        source = self.where[c]
        src = self.locs[source]
        if src and src[-1] == c:
            src.pop()
        else:
            src.remove(c)
        cards = self.locs.get(dest)
        if cards is None:
            cards = self.locs[dest] = []
        if top:
            cards.append(c)
        else:
            cards.insert(0, c)
        self.where[c] = dest
        if dest[0] != GAME:
            self.card_owner[c] = dest[0]
        if dest[1] == "iloc":
            self.oid[c] = self._fresh_id()
        if self.track:
            self._moved(c, source, dest)

    def card_points(self, c: int, table: str) -> int:
        attrs = self.cards[c]
        total = 0
        for tests, n in self.points.get(table, ()):
            for attr, value in tests:
                if attrs.get(attr) != value:
                    break
            else:
                total += n
        return total

    # the machine
    def run(self) -> None:
        """Step the program until a player must choose or the game ends."""
        frames = self.frames
        while frames:
            frame = frames[-1]
            node = frame[0]
            kind = type(node)
            if kind is Seq:
                i = frame[2]
                stmts = node.stmts
                if i >= len(stmts):
                    frames.pop()
                    continue
                frame[2] = i + 1
                stmt = stmts[i]
                if stmt.control:
                    if self.enter(stmt, frame[1]):
                        return
                else:
                    stmt.fn(self, frame[1])
            elif kind is Stage:
                if node.team:
                    self._team_turn(frame[2])
                elif frame[2]:  # a turn just ended: the next player's turn
                    self.cur = self.nxt % self.n
                    self.nxt = (self.cur + 1) % self.n
                if node.end(self, frame[1]):
                    frames.pop()
                    continue
                self.steps += 1
                if self.steps > STEP_LIMIT:
                    raise RecycleRuntimeError(
                        f"the stage at line {node.line}, column {node.column} ran {STEP_LIMIT} turns without "
                        "ending or asking a player anything: check its (end ...) condition"
                    )
                frame[2] = 1
                frames.append([node.body, frame[1], 0])
            elif kind is Repeat:
                if frame[2] <= 0:
                    frames.pop()
                    continue
                frame[2] -= 1
                frames.append([node.body, frame[1], 0])
            elif kind is AllPlayers:
                p = frame[2]
                if p >= self.n:
                    frames.pop()
                    continue
                frame[2] = p + 1
                frames.append([node.body, {**frame[1], node.var: p}, 0])
            else:  # pragma: no cover
                raise RecycleRuntimeError(f"unexpected frame {node!r}")
        self.over = True

    def team_of(self, seat: int) -> int:
        for t, members in enumerate(self.program.teams):
            if seat in members:
                return t
        return 0

    def _team_turn(self, ended: int) -> None:
        """A team stage starts with the current player's team; after each turn the next team plays,
        its first seat being the current player."""
        teams = self.program.teams
        self.team = (self.team + 1) % len(teams) if ended else self.team_of(self.cur)
        self.cur = teams[self.team][0]
        self.nxt = (self.cur + 1) % self.n

    def enter(self, node: Node, env: dict) -> bool:
        """Start a control statement; True when it opened a choice."""
        kind = type(node)
        if kind is Choice:
            options = self.options_for(node, env)  # type: ignore[arg-type]
            if not options:  # nothing legal: the player's turn passes (the rest of the turn is skipped)
                frames = self.frames
                while frames and type(frames[-1][0]) is not Stage:
                    frames.pop()
                return False
            self.choice = (self.cur, node, env, options)  # type: ignore[assignment]
            self._prompt = None
            return True
        if kind is ChanceStep:
            outcomes = node.outcomes(self, env) if self.chance_stop else None  # type: ignore[attr-defined]
            if outcomes is None:
                node.fn(self, env)  # type: ignore[attr-defined]
                return False
            self.chance = (node, env, outcomes)  # type: ignore[assignment]
            return True
        if kind is When:
            if node.cond(self, env):  # type: ignore[attr-defined]
                self.frames.append([node.body, env, 0])  # type: ignore[attr-defined]
            return False
        if kind is Repeat:
            self.frames.append([node, env, node.count(self, env)])  # type: ignore[attr-defined]
            return False
        self.frames.append([node, env, 0])
        return False

    def options_for(self, node: Choice, env: dict) -> list[tuple[str, Seq, dict]]:
        options: list[tuple[str, Seq, dict]] = []
        seen: set[str] = set()
        groups = sum(1 for o in node.options if o.coll is not None)
        for spec in node.options:
            if not all(c(self, env) for c in spec.conds):
                continue
            if spec.coll is None:
                label = spec.text
                if label not in seen:
                    seen.add(label)
                    options.append((label, spec.body, env))
                continue
            for ref in spec.coll(self, env):
                label = self.card_name(ref, self.cur)
                if groups > 1:
                    label = f"{label}: {spec.text}"
                if label not in seen:
                    seen.add(label)
                    options.append((label, spec.body, {**env, spec.var: ref}))  # type: ignore[dict-item]
        return options

    def card_name(self, ref: Ref, seat: int | None) -> str:
        c, key = ref
        if self.visible(key, seat):
            return card_label(self.cards[c])
        return f"hidden card {self.locs[key].index(c) + 1} of {key[2]}"

    def visible(self, key: tuple[int, str, str], seat: int | None) -> bool:
        if key[1] != "iloc" or seat is None:
            return key[1] != "iloc"
        team = owner_team(key[0])
        return key[0] == seat if team is None else seat in self.program.teams[team]

    # the State interface
    @property
    def num_seats(self) -> int:
        return self.n

    def is_over(self) -> bool:
        return self.over

    def pending(self) -> list[Decision]:
        if self.over or self.choice is None:
            return []
        if self._prompt is None:
            options = [o[0] for o in self.choice[3]]
            labels = [describe_rule(o) for o in options]  # rules in words; cards stay as they are
            self._prompt = ChooseOne(name="choice", text="choose one", options=options, labels=labels)
        return [Decision(self.choice[0], self._prompt)]

    def apply(self, seat: int, action: Any) -> None:
        if self.over:
            raise IllegalAction("the game is over", code="game_over")
        if self.choice is None or seat != self.choice[0]:
            raise IllegalAction("it is not your turn", code="not_your_turn")
        chosen = next((option for option in self.choice[3] if option[0] == action), None)
        if chosen is None:
            shown = ", ".join(o[0] for o in self.choice[3][:12])
            raise IllegalAction(f"{action!r} is not one of the choices ({shown})")
        _, body, env = chosen
        if self.track:
            self._note_voids(seat, action)
        card_choice = any(isinstance(value, tuple) for value in env.values())
        public_before = self._public_cards() if card_choice else None
        dice_before = {name: list(values) for name, values in self.dice.items()}
        self.choice = None
        self._prompt = None
        self.steps = 0
        self.frames.append([body, env, 0])
        self.run()
        chosen = next((value[0] for value in env.values() if isinstance(value, tuple)), None)
        self._last_event = self._describe(str(action), public_before, dice_before, seat, chosen)

    def _note_voids(self, seat: int, label: str) -> None:
        """Record, for each of the seat's hidden locations, the kinds of card whose presence would
        have made this choice illegal (knowledge.py says why this reads voids off any rules)."""
        assert self.choice is not None
        _, node, choice_env, options = self.choice
        body, env = next(o[1:] for o in options if o[0] == label)
        spec = next(spec for spec in node.options if spec.body is body)
        ref = env.get(spec.var) if spec.var is not None else None
        own = [key for key in self.locs if key[1] == "iloc" and key[0] == seat]
        if not own:
            return
        public = [0] * len(self.kind_cards)
        for key, cards in self.locs.items():
            if key[1] == "vloc":
                for c in cards:
                    public[self.kind[c]] += 1
        played = None if ref is None else self.kind[ref[0]]
        candidates = [
            (k, cards[0]) for k, cards in enumerate(self.kind_cards) if k != played and public[k] < len(cards)
        ]
        saved = {key: self.locs[key] for key in own}
        try:
            for key in own:
                self.locs[key] = []
            for key in own:
                if not saved[key]:
                    continue
                base = [ref[0]] if ref is not None and ref[1] == key else []
                mask = 0
                self.locs[key] = base
                if self._offers(spec, choice_env, label, ref):
                    for k, card in candidates:
                        self.locs[key] = [*base, card]
                        if not self._offers(spec, choice_env, label, ref):
                            mask |= 1 << k
                self.locs[key] = []
                if mask:
                    self._add_void(key, mask, len(saved[key]))
        finally:
            self.locs.update(saved)

    def _offers(self, spec: OptionSpec, env: dict, label: str, ref: Ref | None) -> bool:
        """Whether this option would be offered again: its conditions hold and, for a card option,
        the card is among those it lists."""
        if not all(cond(self, env) for cond in spec.conds):
            return False
        if spec.coll is None or ref is None:
            return True
        return any(r[0] == ref[0] for r in spec.coll(self, env))

    def _add_void(self, key: tuple[int, str, str], mask: int, n: int) -> None:
        voids = self.voids.setdefault(key, [])
        for void in voids:
            if void[1] == n:
                void[0] |= mask
                return
        voids.append([mask, n])
        voids.sort(key=lambda v: -v[1])

    def stop_at_chance(self, stop: bool = True) -> bool:
        self.chance_stop = stop
        return True

    def chance_outcomes(self) -> list[tuple[Any, float]] | None:
        return None if self.chance is None else self.chance[2]

    def apply_chance(self, outcome: Any) -> None:
        if self.chance is None:
            raise IllegalAction("no chance event is waiting", code="no_chance")
        node, env, outcomes = self.chance
        if not any(o == outcome for o, _ in outcomes):
            raise IllegalAction(f"{outcome!r} is not an outcome of this chance event", code="bad_outcome")
        node.resolve(self, env, outcome)
        self.chance = None
        self.run()

    def _public_cards(self) -> dict[str, int]:
        """How many cards of each label lie where everyone sees them."""
        counts: dict[str, int] = {}
        for key, cards in self.locs.items():
            if key[1] != "iloc":
                for c in cards:
                    label = card_label(self.cards[c])
                    counts[label] = counts.get(label, 0) + 1
        return counts

    def _describe(
        self,
        label: str,
        public_before: dict[str, int] | None,
        dice_before: dict[str, list[int]],
        seat: int = -1,
        chosen: int | None = None,
    ) -> str:
        """The move in words everyone may read: a card is named only if it came face up; one put
        face down in the mover's own zone or the table's is told by that zone (its count is
        public anyway): "puts a card face down in their pass", not "plays", which a pass is not."""
        if public_before is not None:
            now = self._public_cards()
            if now.get(label, 0) > public_before.get(label, 0):
                text = f"plays {label}"
            else:
                owner, kind, name = self.where[chosen] if chosen is not None else (seat, "", "")
                if kind == "iloc" and owner in (seat, -1):
                    text = f"puts a card face down in {'their' if owner == seat else 'the'} {zone_name(name)}"
                else:
                    text = "puts a card face down"
        else:
            text = describe_rule(label)
        # a throw is told even when the dice show what they showed before
        thrown = [name for name, values in self.dice.items() if values != dice_before.get(name)]
        if text.startswith("throws"):
            thrown = list(self.dice)
        if thrown:
            shown = "; ".join(", ".join(str(v) for v in self.dice[name]) for name in thrown)
            text += f": {shown}" if text.startswith("throws") else f"; the dice show {shown}"
        return text

    def last_event(self) -> str | None:
        return getattr(self, "_last_event", None)

    def scores(self) -> list[float]:
        fn = self.program.scoring
        saved = self.cur, self.nxt
        out = []
        for p in range(self.n):
            self.cur, self.nxt = p, (p + 1) % self.n
            out.append(float(fn(self, {"P": p})))
        self.cur, self.nxt = saved
        return out

    def round_scores(self) -> list[list[float]]:
        return [[float(v) for v in self.stats[r]] for r in sorted(self.stats)]

    def evaluate(self, seat: int) -> float:
        """Search agents' estimate at their horizon: the seat's lead over the best other seat by
        the description's scoring (negative when behind), as if the game ended now."""
        scores = self.scores()
        sign = 1.0 if self.program.scoring_max else -1.0
        others = [s for p, s in enumerate(scores) if p != seat]
        return sign * (scores[seat] - (max(others) if sign > 0 else min(others))) if others else 0.0

    def result(self) -> Result:
        return Result.from_scores(self.scores(), higher_is_better=self.program.scoring_max)

    def clone(self) -> RecycleState:
        new = object.__new__(RecycleState)
        new.__dict__.update(self.__dict__)
        new.rng = random.Random()
        new.rng.setstate(self.rng.getstate())
        new.where = list(self.where)
        new.card_owner = list(self.card_owner)
        new.oid = list(self.oid)
        new.locs = {k: list(v) for k, v in self.locs.items()}
        new.sto = dict(self.sto)
        new.dice = {k: list(v) for k, v in self.dice.items()}
        new.dice_sides = {k: list(v) for k, v in self.dice_sides.items()}
        new.points = dict(self.points)
        new.stats = dict(self.stats)
        new.frames = [list(f) for f in self.frames]
        new.knowers = list(self.knowers)
        new.voids = {k: [list(v) for v in voids] for k, voids in self.voids.items()}
        return new

    def view(self, seat: int | None) -> View:
        locations = []
        known = []
        bit = (1 << self.n) - 1 if seat is None else 1 << seat
        for key in sorted(self.locs, key=lambda k: (k[0], k[1], k[2])):
            cards = self.locs[key]
            entry: dict[str, Any] = {"owner": key[0], "kind": key[1], "name": key[2], "count": len(cards)}
            if self.visible(key, seat):
                entry["cards"] = [
                    {"id": self.oid[c], "attrs": dict(self.cards[c]), "owner": self.card_owner[c]} for c in cards
                ]
            else:
                seen = sorted(self.kind[c] for c in cards if self.knowers[c] & bit == bit)
                known.extend({"owner": key[0], "name": key[2], "attrs": self._kind_attrs(k)} for k in seen)
                if key in self.voids:
                    entry["voids"] = [
                        [[card_label(self._kind_attrs(k)) for k in range(mask.bit_length()) if mask >> k & 1], n]
                        for mask, n in self.voids[key]
                    ]
            locations.append(entry)
        storage = [[k[0], k[2], v] for k, v in sorted(self.sto.items(), key=lambda kv: (kv[0][0], kv[0][2]))]
        view: dict[str, Any] = {
            "seat": seat,
            "players": self.n,
            "current": self.cur,
            "next": self.nxt,
            "team": self.team,
            "options": dict(self.consts),
            "locations": locations,
            "storage": storage,
            "dice": {name: list(values) for name, values in self.dice.items()},
            "points": {
                name: [[[list(t) for t in tests], n] for tests, n in table] for name, table in self.points.items()
            },
            "round_scores": [[r, list(v)] for r, v in sorted(self.stats.items())],
            "known": known,
            "scores": self.scores() if self.over else None,  # the scoring expression may read hidden cards
            "over": self.over,
            "control": [self._frame_data(f) for f in self.frames],
            "choice": None,
        }
        if self.choice is not None:
            view["choice"] = {"seat": self.choice[0], "node": self.choice[1].id, "env": self._env_data(self.choice[2])}
        return view

    def _kind_attrs(self, k: int) -> dict[str, Any]:
        return dict(self.cards[self.kind_cards[k][0]])

    def _env_data(self, env: dict) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, value in env.items():
            if isinstance(value, tuple):
                c, key = value
                out[name] = ["card", key[0], key[1], key[2], self.locs[key].index(c) if c in self.locs[key] else -1]
            else:
                out[name] = ["player", value]
        return out

    def _frame_data(self, frame: list[Any]) -> list[Any]:
        return [frame[0].id, self._env_data(frame[1]), frame[2]]
