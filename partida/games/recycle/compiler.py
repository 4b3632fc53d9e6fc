"""From s-expressions to a program the runtime steps through.

Expressions compile to closures `fn(state, env)`; statements compile to nodes. A statement with
no player choice inside (no `stage`, no `choice`) becomes one `Prim` closure that runs in a single
call; the rest become control nodes (`Seq`, `Stage`, `Choice`, `Repeat`, `AllPlayers`, `When`,
and `ChanceStep` for a throw or a shuffle, where a search may ask the state to stop) that the
runtime keeps on an explicit frame stack. Frames are small lists, so a state is cloned by copying
lists, and the program (closures, nodes) is shared by every state of a game.

A wrong shape is a `RecycleSyntaxError` at the list that has it, saying what was expected.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from partida.games.recycle.parser import Num, RecycleSyntaxError, SExpr, SList, Sym, Var

Fn = Callable[[Any, dict], Any]
KINDS = ("iloc", "vloc", "mem", "sto")
MAX_OUTCOMES = 720  # a chance event with more distinct outcomes is drawn, never listed
GAME = -1  # owner of the game's own locations
TEAM0 = -2  # team t owns locations as TEAM0 - t (players own theirs as 0, 1, ...)


def team_owner(team: int) -> int:
    return TEAM0 - team


def owner_team(owner: int) -> int | None:
    """The team index behind a location owner, None for a player or the game."""
    return TEAM0 - owner if owner <= TEAM0 else None


class RecycleRuntimeError(ValueError):
    """A description that parses but cannot run (a stage that never ends, a value of the wrong kind)."""


def _where(sx: SExpr) -> tuple[int, int]:
    return sx.line, sx.column


def _err(sx: SExpr, message: str) -> RecycleSyntaxError:
    return RecycleSyntaxError(message, *_where(sx))


def _text(sx: SExpr) -> str:
    if isinstance(sx, Var):
        return "'" + sx.name
    if isinstance(sx, Sym):
        return sx.name
    if isinstance(sx, Num):
        return str(sx.value)
    return "(" + " ".join(_text(i) for i in sx.items) + ")"


def shuffle_outcomes(cards: list[int], attrs: list[dict[str, Any]]) -> list[tuple[Any, float]] | None:
    """Every distinct order of `cards` after a fair shuffle, each equally likely: cards with the
    same attributes are interchangeable, so their orders count once (n! / (m1! m2! ...) orders).
    None when there are more than MAX_OUTCOMES of them."""
    groups: dict[tuple, list[int]] = {}
    for c, a in zip(cards, attrs, strict=True):
        groups.setdefault(tuple(sorted(a.items())), []).append(c)
    count = math.factorial(len(cards))
    for same in groups.values():
        count //= math.factorial(len(same))
    if count > MAX_OUTCOMES:
        return None
    members = list(groups.values())
    p = 1.0 / count
    out: list[tuple[Any, float]] = []

    def place(order: list[int], used: list[int]) -> None:
        if len(order) == len(cards):
            out.append((tuple(order), p))
            return
        for g, same in enumerate(members):
            if used[g] < len(same):
                order.append(same[used[g]])
                used[g] += 1
                place(order, used)
                used[g] -= 1
                order.pop()

    place([], [0] * len(members))
    return out


# Statement nodes ---------------------------------------------------------------------------


class Node:
    control = False
    id = -1


@dataclass(eq=False)
class Prim(Node):
    fn: Fn
    control = False


@dataclass(eq=False)
class ChanceStep(Node):
    """A statement that draws chance. `fn` draws it from the state's generator (play, replays);
    a state stopping at chance asks `outcomes` instead (None: too many to list, so drawn) and
    lets the searcher pick one with `resolve`. A control node, so the runtime can stop here."""

    fn: Fn
    outcomes: Callable[[Any, dict], list[tuple[Any, float]] | None]
    resolve: Callable[[Any, dict, Any], None]
    control = True


@dataclass(eq=False)
class Seq(Node):
    stmts: list[Node]
    control = True


@dataclass(eq=False)
class Stage(Node):
    end: Fn
    body: Seq
    line: int
    column: int
    team: bool = False  # a (stage team ...): turns go to teams, not players
    control = True


@dataclass(eq=False)
class OptionSpec:
    """One entry of a `choice`: conditions, and either one action or one per element of `coll`."""

    conds: list[Fn]
    coll: Fn | None
    var: str | None
    body: Seq
    text: str


@dataclass(eq=False)
class Choice(Node):
    options: list[OptionSpec]
    control = True


@dataclass(eq=False)
class Repeat(Node):
    count: Fn
    body: Seq
    control = True


@dataclass(eq=False)
class AllPlayers(Node):
    var: str
    body: Seq
    control = True


@dataclass(eq=False)
class When(Node):
    cond: Fn
    body: Seq
    control = True


@dataclass
class Program:
    """A compiled description: shared, immutable, by every state of the game."""

    root: Seq
    nodes: list[Node]
    declares: dict[str, Any]
    seats: tuple[int, int]
    seat_declare: str | None
    scoring_max: bool
    scoring: Fn
    locations_written: set[tuple[str, str]] = field(default_factory=set)
    teams: tuple[tuple[int, ...], ...] = ()  # (create teams (0 2) (1 3)): seats per team


# The compiler ------------------------------------------------------------------------------


class Compiler:
    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.declares: dict[str, Any] = {}
        self.seats: tuple[int, int] | None = None
        self.seat_declare: str | None = None
        self.written: set[tuple[str, str]] = set()
        self.read: list[tuple[tuple[str, str], SExpr]] = []
        self.teams: tuple[tuple[int, ...], ...] = ()
        self.team_uses: list[SExpr] = []

    # helpers
    def _node(self, node: Node) -> Node:
        if node.control:
            node.id = len(self.nodes)
            self.nodes.append(node)
        return node

    def _seq(self, stmts: list[Node]) -> Seq:
        return self._node(Seq(stmts))  # type: ignore[return-value]

    def _list(self, sx: SExpr, what: str, length: int | None = None, at_least: int | None = None) -> SList:
        if not isinstance(sx, SList):
            raise _err(sx, f"expected {what}, not {_text(sx)!r}")
        if length is not None and len(sx.items) != length:
            raise _err(sx, f"expected {what} ({length - 1} argument(s) after {sx.head()!r}), got {_text(sx)!r}")
        if at_least is not None and len(sx.items) < at_least:
            raise _err(sx, f"expected {what}, got {_text(sx)!r}")
        return sx

    def _var(self, sx: SExpr, what: str = "a quoted name such as 'P") -> str:
        if not isinstance(sx, Var):
            raise _err(sx, f"expected {what}, not {_text(sx)!r}")
        return sx.name

    def _sym(self, sx: SExpr, what: str) -> str:
        if not isinstance(sx, Sym):
            raise _err(sx, f"expected {what}, not {_text(sx)!r}")
        return sx.name

    # the whole game
    def program(self, top: SList) -> Program:
        if top.head() != "game":
            raise _err(top, "expected a description to start with (game ...)")
        items = top.items[1:]
        stmts: list[Node] = []
        scoring: tuple[bool, Fn] | None = None
        for item in items:
            sl = self._list(item, "(declare ...), (setup ...), an action or a stage, or (scoring ...)")
            head = sl.head()
            if head == "declare":
                self._declare(sl)
            elif head == "setup":
                stmts.extend(self.stmt(s, frozenset()) for s in sl.items[1:])
            elif head == "scoring":
                if scoring is not None:
                    raise _err(sl, "expected only one (scoring ...)")
                scoring = self._scoring(sl)
            else:
                if scoring is not None:
                    raise _err(sl, "expected (scoring ...) to be the last part of the game")
                stmts.append(self.stmt(sl, frozenset()))
        if scoring is None:
            raise _err(top, "expected a (scoring max|min EXPRESSION) at the end of the game")
        if self.seats is None:
            raise _err(top, "expected (create players N) in the (setup ...)")
        for key, where in self.read:
            if key not in self.written:
                raise _err(
                    where,
                    f"unknown location {key[0]} {key[1]}: no card is ever put there (expected a location "
                    "created by (create deck ...), (move ...) or (remember ...))",
                )
        if self.team_uses and not self.teams:
            raise _err(self.team_uses[0], "expected (create teams (SEAT ...) ...) in the (setup ...) to use teams")
        root = self._seq(stmts)
        return Program(
            root,
            self.nodes,
            self.declares,
            self.seats,
            self.seat_declare,
            scoring[0],
            scoring[1],
            self.written,
            self.teams,
        )

    def _declare(self, sl: SList) -> None:
        self._list(sl, "(declare VALUE 'NAME)", length=3)
        value = sl.items[1]
        name = self._var(sl.items[2])
        if isinstance(value, Num):
            self.declares[name] = value.value
        elif isinstance(value, Sym):
            self.declares[name] = value.name
        else:
            raise _err(value, "expected a number or a word as the declared value")

    def _scoring(self, sl: SList) -> tuple[bool, Fn]:
        self._list(sl, "(scoring max|min EXPRESSION)", length=3)
        kind = self._sym(sl.items[1], "max or min")
        if kind not in ("max", "min"):
            raise _err(sl.items[1], f"expected max or min, not {kind!r}")
        return kind == "max", self.value(sl.items[2], frozenset({"P"}))

    # statements
    def stmt(self, sx: SExpr, scope: frozenset[str]) -> Node:
        sl = self._list(sx, "an action such as (move ...), (do ...) or (stage ...)", at_least=1)
        if isinstance(sl.items[0], SList):  # (COND ACTION)
            self._list(sl, "(CONDITION ACTION)", length=2)
            cond = self.cond(sl.items[0], scope)
            body = self.stmt(sl.items[1], scope)
            if body.control:
                return self._node(When(cond, self._as_seq(body)))
            fn = body.fn  # type: ignore[attr-defined]

            def when(st: Any, env: dict) -> None:
                if cond(st, env):
                    fn(st, env)

            return Prim(when)
        head = sl.head()
        method = getattr(self, f"_s_{head}", None) if head else None
        if method is None:
            raise _err(
                sl,
                f"expected an action (move, remember, forget, shuffle, set, inc, dec, repeat, all, do, "
                f"put, cycle, throwalldice, saveturnstats, create, stage, choice), not {_text(sl.items[0])!r}",
            )
        return method(sl, scope)

    def _as_seq(self, node: Node) -> Seq:
        return node if isinstance(node, Seq) else self._seq([node])

    def _block(self, stmts: list[Node]) -> Node:
        if any(s.control for s in stmts):
            return self._seq(stmts)
        fns = [s.fn for s in stmts]  # type: ignore[attr-defined]

        def run(st: Any, env: dict) -> None:
            for f in fns:
                f(st, env)

        return Prim(run)

    def _s_do(self, sl: SList, scope: frozenset[str]) -> Node:
        items = sl.items[1:]
        if len(items) == 1 and isinstance(items[0], SList) and items[0].items and isinstance(items[0].items[0], SList):
            items = items[0].items
        return self._block([self.stmt(s, scope) for s in items])

    def _s_repeat(self, sl: SList, scope: frozenset[str]) -> Node:
        self._list(sl, "(repeat N ACTION)", length=3)
        count = self.value(sl.items[1], scope)
        body = self.stmt(sl.items[2], scope)
        if body.control:
            return self._node(Repeat(count, self._as_seq(body)))
        fn = body.fn  # type: ignore[attr-defined]

        def repeat(st: Any, env: dict) -> None:
            for _ in range(count(st, env)):
                fn(st, env)

        return Prim(repeat)

    def _s_all(self, sl: SList, scope: frozenset[str]) -> Node:
        self._list(sl, "(all player 'P ACTION)", length=4)
        if self._sym(sl.items[1], "player") != "player":
            raise _err(sl.items[1], "expected (all player 'P ACTION)")
        var = self._var(sl.items[2])
        body = self.stmt(sl.items[3], scope | {var})
        if body.control:
            return self._node(AllPlayers(var, self._as_seq(body)))
        fn = body.fn  # type: ignore[attr-defined]

        def all_players(st: Any, env: dict) -> None:
            for p in range(st.n):
                fn(st, {**env, var: p})

        return Prim(all_players)

    def _s_stage(self, sl: SList, scope: frozenset[str]) -> Node:
        self._list(sl, "(stage player|team (end CONDITION) ACTION...)", at_least=3)
        kind = self._sym(sl.items[1], "player or team")
        if kind not in ("player", "team"):
            raise _err(sl.items[1], f"expected (stage player ...) or (stage team ...), not {kind!r}")
        if kind == "team":
            self.team_uses.append(sl)
        end = self._list(sl.items[2], "(end CONDITION)", length=2)
        if end.head() != "end":
            raise _err(end, f"expected (end CONDITION) after (stage {kind}")
        cond = self.cond(end.items[1], scope)
        body = self._seq([self.stmt(s, scope) for s in sl.items[3:]])
        return self._node(Stage(cond, body, sl.line, sl.column, kind == "team"))

    def _s_choice(self, sl: SList, scope: frozenset[str]) -> Node:
        self._list(sl, "(choice (OPTION ...))", at_least=2)
        items = sl.items[1:]
        if len(items) == 1 and isinstance(items[0], SList) and items[0].items and isinstance(items[0].items[0], SList):
            items = items[0].items
        return self._node(Choice([self._option(o, scope, []) for o in items]))

    def _option(self, sx: SExpr, scope: frozenset[str], conds: list[Fn]) -> OptionSpec:
        sl = self._list(sx, "a choice option: an action, (CONDITION OPTION) or (any COLLECTION 'C ACTION)", at_least=1)
        if isinstance(sl.items[0], SList):
            self._list(sl, "(CONDITION OPTION)", length=2)
            return self._option(sl.items[1], scope, [*conds, self.cond(sl.items[0], scope)])
        if sl.head() == "do":
            # (do ((any ...))): the study's texts wrap a card option in a do; one option, unwrapped
            inner = sl.items[1:]
            if len(inner) == 1 and isinstance(inner[0], SList) and inner[0].items:
                if isinstance(inner[0].items[0], SList) and len(inner[0].items) == 1:
                    inner = inner[0].items
            if len(inner) == 1 and isinstance(inner[0], SList) and inner[0].head() == "any":
                return self._option(inner[0], scope, conds)
        if sl.head() == "any":
            self._list(sl, "(any COLLECTION 'C ACTION)", length=4)
            coll = self.coll(sl.items[1], scope)
            var = self._var(sl.items[2])
            body = self._as_seq(self.stmt(sl.items[3], scope | {var}))
            return OptionSpec(conds, coll, var, body, _text(sl.items[3]))
        return OptionSpec(conds, None, None, self._as_seq(self.stmt(sl, scope)), _text(sl))

    def _s_shuffle(self, sl: SList, scope: frozenset[str]) -> Node:
        self._list(sl, "(shuffle LOCATION)", length=2)
        loc = self.loc(sl.items[1], scope, read=True)

        def shuffle(st: Any, env: dict) -> None:
            cards = st.locs.get(loc(st, env))
            if cards:
                st.rng.shuffle(cards)

        def outcomes(st: Any, env: dict) -> list[tuple[Any, float]] | None:
            cards = st.locs.get(loc(st, env))
            if not cards or len(cards) < 2:
                return None  # nothing to draw
            return shuffle_outcomes(cards, [st.cards[c] for c in cards])

        def resolve(st: Any, env: dict, order: Any) -> None:
            st.locs[loc(st, env)][:] = order

        return self._node(ChanceStep(shuffle, outcomes, resolve))

    def _position(self, sx: SExpr, scope: frozenset[str], kinds: tuple[str, ...]) -> tuple[Fn, bool]:
        sl = self._list(sx, "a position (top LOCATION) or (bottom LOCATION)", length=2)
        if sl.head() not in ("top", "bottom"):
            raise _err(sl, f"expected a position (top LOCATION) or (bottom LOCATION), not {_text(sl)!r}")
        return self.loc(sl.items[1], scope, write=True, kinds=kinds), sl.head() == "top"

    def _s_move(self, sl: SList, scope: frozenset[str]) -> Node:
        self._list(sl, "(move CARD POSITION)", length=3)
        card = self.card(sl.items[1], scope)
        dest, top = self._position(sl.items[2], scope, ("iloc", "vloc"))

        def move(st: Any, env: dict) -> None:
            ref = card(st, env)
            if ref is not None:
                st.move(ref[0], dest(st, env), top)

        return Prim(move)

    def _s_remember(self, sl: SList, scope: frozenset[str]) -> Node:
        self._list(sl, "(remember CARD POSITION)", length=3)
        card = self.card(sl.items[1], scope)
        dest, top = self._position(sl.items[2], scope, ("mem",))

        def remember(st: Any, env: dict) -> None:
            ref = card(st, env)
            if ref is not None:
                cards = st.locs.setdefault(dest(st, env), [])
                cards.append(ref[0]) if top else cards.insert(0, ref[0])

        return Prim(remember)

    def _s_forget(self, sl: SList, scope: frozenset[str]) -> Node:
        self._list(sl, "(forget CARD)", length=2)
        card = self.card(sl.items[1], scope)

        def forget(st: Any, env: dict) -> None:
            ref = card(st, env)
            if ref is not None and ref[1][1] == "mem":
                st.locs[ref[1]].remove(ref[0])

        return Prim(forget)

    def _storage_change(self, sl: SList, scope: frozenset[str], op: str) -> Node:
        self._list(sl, f"({op} STORAGE N)", length=3)
        key = self.storage(sl.items[1], scope)
        amount = self.value(sl.items[2], scope)

        def change(st: Any, env: dict) -> None:
            k = key(st, env)
            n = amount(st, env)
            if op == "set":
                st.sto[k] = n
            elif op == "inc":
                st.sto[k] = st.sto.get(k, 0) + n
            else:
                st.sto[k] = st.sto.get(k, 0) - n

        return Prim(change)

    def _s_set(self, sl: SList, scope: frozenset[str]) -> Node:
        return self._storage_change(sl, scope, "set")

    def _s_inc(self, sl: SList, scope: frozenset[str]) -> Node:
        return self._storage_change(sl, scope, "inc")

    def _s_dec(self, sl: SList, scope: frozenset[str]) -> Node:
        return self._storage_change(sl, scope, "dec")

    def _s_put(self, sl: SList, scope: frozenset[str]) -> Node:
        self._list(sl, "(put points 'NAME (((ATTRIBUTE (VALUE)) N) ...))", length=4)
        if self._sym(sl.items[1], "points") != "points":
            raise _err(sl.items[1], "expected (put points 'NAME ...)")
        name = self._var(sl.items[2])
        entries = []
        for entry in self._list(sl.items[3], "a list of point entries").items:
            e = self._list(entry, "a point entry ((ATTRIBUTE (VALUE)) N)", at_least=2)
            tests = []
            for t in e.items[:-1]:
                tl = self._list(t, "an attribute test (ATTRIBUTE (VALUE))", length=2)
                attr = self._sym(tl.items[0], "an attribute name")
                v = tl.items[1]
                if isinstance(v, SList) and len(v.items) == 1 and not isinstance(v.items[0], SList):
                    lit = v.items[0]
                    tests.append((attr, _const(lit.value if isinstance(lit, Num) else _text(lit))))
                else:
                    tests.append((attr, self.value(v, scope)))
            entries.append((tests, self.value(e.items[-1], scope)))

        def put(st: Any, env: dict) -> None:
            st.points[name] = tuple((tuple((a, f(st, env)) for a, f in tests), n(st, env)) for tests, n in entries)

        return Prim(put)

    def _s_cycle(self, sl: SList, scope: frozenset[str]) -> Node:
        self._list(sl, "(cycle next|current PLAYER)", length=3)
        which = self._sym(sl.items[1], "next or current")
        if which not in ("next", "current"):
            raise _err(sl.items[1], f"expected next or current, not {which!r}")
        target = sl.items[2]
        if isinstance(target, Sym) and target.name in ("current", "next", "previous"):
            # (cycle current previous): the study's short form of (previous player)
            target = SList([target, Sym("player", target.line, target.column)], target.line, target.column)
        player = self.player(target, scope)

        def cycle(st: Any, env: dict) -> None:
            p = player(st, env)
            if which == "next":
                st.nxt = p
            else:
                st.cur = p
                st.nxt = (p + 1) % st.n

        return Prim(cycle)

    def _s_throwalldice(self, sl: SList, scope: frozenset[str]) -> Node:
        self._list(sl, "(throwalldice 'NAME)", length=2)
        name = self._var(sl.items[1], "the quoted name of a set of dice")

        def sides_of(st: Any) -> list[int]:
            sides = st.dice_sides.get(name)
            if sides is None:
                raise RecycleRuntimeError(f"line {sl.line}: no dice named '{name} were created")
            return sides

        def throw(st: Any, env: dict) -> None:
            st.dice[name] = [st.rng.randint(1, s) for s in sides_of(st)]

        def outcomes(st: Any, env: dict) -> list[tuple[Any, float]] | None:
            sides = sides_of(st)
            count = 1
            for s in sides:
                count *= s
            if count > MAX_OUTCOMES:
                return None
            p = 1.0 / count
            return [(faces, p) for faces in itertools.product(*(range(1, s + 1) for s in sides))]

        def resolve(st: Any, env: dict, faces: Any) -> None:
            st.dice[name] = list(faces)

        return self._node(ChanceStep(throw, outcomes, resolve))

    def _s_saveturnstats(self, sl: SList, scope: frozenset[str]) -> Node:
        self._list(sl, "(saveturnstats SCORE roundnumber ROUNDS)", length=4)
        score = self._sym(sl.items[1], "the name of the players' score storage")
        if self._sym(sl.items[2], "roundnumber") != "roundnumber":
            raise _err(sl.items[2], "expected the word roundnumber")
        rounds = self._sym(sl.items[3], "the name of the game's round storage")

        def save(st: Any, env: dict) -> None:
            number = st.sto.get((GAME, "sto", rounds), 0)
            st.stats[number] = [st.sto.get((p, "sto", score), 0) for p in range(st.n)]

        return Prim(save)

    def _s_create(self, sl: SList, scope: frozenset[str]) -> Node:
        self._list(sl, "(create players|teams|deck|dicestorage ...)", at_least=2)
        what = self._sym(sl.items[1], "players, teams, deck or dicestorage")
        if what == "players":
            self._list(sl, "(create players N) or (create players MIN MAX)", at_least=3)
            counts = []
            for item in sl.items[2:4]:
                if isinstance(item, Num):
                    counts.append(item.value)
                elif isinstance(item, Var) and isinstance(self.declares.get(item.name), int):
                    counts.append(self.declares[item.name])
                    self.seat_declare = item.name
                else:
                    raise _err(item, f"expected a number of players, not {_text(item)!r}")
            self.seats = (counts[0], counts[-1])
            return Prim(_nothing)
        if what == "teams":
            self._list(sl, "(create teams (SEAT ...) ...)", at_least=3)
            if self.seats is None:
                raise _err(sl, "expected (create players N) before (create teams ...)")
            teams: list[tuple[int, ...]] = []
            seen: set[int] = set()
            for team in sl.items[2:]:
                members = self._list(team, "a team: a list of seats such as (0 2)", at_least=1)
                seats = []
                for item in members.items:
                    if not isinstance(item, Num) or not 0 <= item.value < self.seats[0] or item.value in seen:
                        raise _err(item, f"expected a seat number from 0 to {self.seats[0] - 1} in no other team")
                    seen.add(item.value)
                    seats.append(item.value)
                teams.append(tuple(seats))
            if len(seen) != self.seats[0] or self.seats[0] != self.seats[1]:
                raise _err(sl, f"expected every seat from 0 to {self.seats[0] - 1} in exactly one team")
            self.teams = tuple(teams)
            return Prim(_nothing)
        if what == "deck":
            self._list(sl, "(create deck LOCATION (deck ATTRIBUTES...))", length=4)
            loc = self.loc(sl.items[2], scope, write=True, kinds=("iloc", "vloc"))
            deck = self._list(sl.items[3], "(deck ATTRIBUTES...)", at_least=2)
            if deck.head() != "deck":
                raise _err(deck, "expected (deck ATTRIBUTE-TREE...)")
            cards: list[dict[str, Any]] = [{}]
            for tree in deck.items[1:]:
                cards = [{**a, **b} for a, b in itertools.product(cards, self._tree(tree))]

            def create_deck(st: Any, env: dict) -> None:
                key = loc(st, env)
                for attrs in cards:
                    st.add_card(dict(attrs), key)

            return Prim(create_deck)
        if what == "dicestorage":
            self._list(sl, "(create dicestorage 'NAME (SIDES) ...)", at_least=4)
            name = self._var(sl.items[2], "the quoted name of the dice")
            sides = [self.value(self._list(d, "(SIDES)", length=1).items[0], scope) for d in sl.items[3:]]

            def create_dice(st: Any, env: dict) -> None:
                st.dice_sides.setdefault(name, []).extend(s(st, env) for s in sides)
                st.dice.setdefault(name, [])

            return Prim(create_dice)
        raise _err(sl.items[1], f"expected players, teams, deck or dicestorage, not {what!r}")

    def _tree(self, sx: SExpr) -> list[dict[str, Any]]:
        sl = self._list(sx, "an attribute tree (NAME (VALUE, ...)) or (NAME (VALUE TREE...) ...)", at_least=2)
        name = self._sym(sl.items[0], "an attribute name")
        out: list[dict[str, Any]] = []
        for child in sl.items[1:]:
            cl = self._list(child, "(VALUE, ...) or (VALUE TREE...)", at_least=1)
            if all(not isinstance(i, SList) for i in cl.items):
                out.extend({name: _atom(i)} for i in cl.items)
            else:
                value = _atom(cl.items[0])
                subs: list[dict[str, Any]] = [{}]
                for sub in cl.items[1:]:
                    subs = [{**a, **b} for a, b in itertools.product(subs, self._tree(sub))]
                out.extend({name: value, **s} for s in subs)
        return out

    # expressions
    def loc(
        self,
        sx: SExpr,
        scope: frozenset[str],
        read: bool = False,
        write: bool = False,
        kinds: tuple[str, ...] = ("iloc", "vloc", "mem"),
    ) -> Fn:
        sl = self._list(sx, "a location (OWNER iloc|vloc|mem NAME)", length=3)
        kind = self._sym(sl.items[1], "iloc, vloc, mem or sto")
        if kind not in kinds:
            raise _err(sl.items[1], f"expected {' or '.join(kinds)}, not {kind!r}")
        name = self._sym(sl.items[2], "a location name")
        if write:
            self.written.add((kind, name))
        else:
            self.read.append(((kind, name), sl))
        owner_sx = sl.items[0]
        if isinstance(owner_sx, Sym) and owner_sx.name == "game":
            key = (GAME, kind, name)
            return lambda st, env: key
        owner = self.player(owner_sx, scope)
        return lambda st, env: (owner(st, env), kind, name)

    def storage(self, sx: SExpr, scope: frozenset[str]) -> Fn:
        return self.loc(sx, scope, write=True, kinds=("sto",))

    def player(self, sx: SExpr, scope: frozenset[str]) -> Fn:
        if isinstance(sx, Num):
            return _const(sx.value)
        if isinstance(sx, Var):
            return self._lookup(sx, scope)
        sl = self._list(sx, "a player: (current player), (next player), (previous player), (owner CARD) or 'P")
        head = sl.head()
        if len(sl.items) == 2 and isinstance(sl.items[1], Sym) and sl.items[1].name in ("player", "team"):
            if isinstance(sl.items[0], SList):
                # ((current player) player): a player expression applied to a player expression, which
                # names that same player; ((current player) team) names the player's team
                inner = self.player(sl.items[0], scope)
                if sl.items[1].name == "player":
                    return inner
                self.team_uses.append(sl)
                return lambda st, env: team_owner(st.team_of(inner(st, env)))
            if sl.items[1].name == "team" and head in ("current", "next", "previous"):
                self.team_uses.append(sl)
                step = {"current": 0, "next": 1, "previous": -1}[head]
                return lambda st, env: team_owner((st.team + step) % len(st.program.teams))
        if head in ("current", "next", "previous") and len(sl.items) == 2:
            if head == "current":
                return lambda st, env: st.cur
            if head == "next":
                return lambda st, env: st.nxt
            return lambda st, env: (st.cur - 1) % st.n
        if head == "owner":
            self._list(sl, "(owner CARD)", length=2)
            card = self.card(sl.items[1], scope)

            def owner(st: Any, env: dict) -> int:
                ref = card(st, env)
                return -1 if ref is None else st.card_owner[ref[0]]

            return owner
        return self.value(sl, scope)

    def _lookup(self, sx: Var, scope: frozenset[str]) -> Fn:
        name = sx.name
        if name in scope:
            return lambda st, env: env[name]
        if name in self.declares:
            return lambda st, env: st.consts[name]
        raise _err(sx, f"unknown name '{name}: expected a variable bound by all, any or filter, or a declared name")

    def card(self, sx: SExpr, scope: frozenset[str]) -> Fn:
        if isinstance(sx, Var):
            return self._lookup(sx, scope)
        sl = self._list(sx, "a card: (top LOCATION), (bottom LOCATION), (max COLLECTION using 'POINTS) or 'C")
        head = sl.head()
        if head in ("top", "bottom"):
            self._list(sl, f"({head} LOCATION)", length=2)
            loc = self.loc(sl.items[1], scope)
            index = -1 if head == "top" else 0

            def end(st: Any, env: dict) -> tuple[int, tuple] | None:
                key = loc(st, env)
                cards = st.locs.get(key)
                return (cards[index], key) if cards else None

            return end
        if head in ("max", "min"):
            self._list(sl, f"({head} COLLECTION using 'POINTS)", length=4)
            coll = self.coll(sl.items[1], scope)
            table = self._var(sl.items[3], "the quoted name of a point table")
            sign = 1 if head == "max" else -1

            def best(st: Any, env: dict) -> tuple[int, tuple] | None:
                found, top = None, None
                for ref in coll(st, env):
                    v = sign * st.card_points(ref[0], table)
                    if top is None or v > top:
                        found, top = ref, v
                return found

            return best
        raise _err(sl, f"expected a card (top, bottom, max, min or a 'variable), not {_text(sl)!r}")

    def coll(self, sx: SExpr, scope: frozenset[str]) -> Fn:
        sl = self._list(sx, "a collection: a location, (filter COLLECTION 'C CONDITION) or (union COLLECTION ...)")
        head = sl.head()
        if head == "filter":
            self._list(sl, "(filter COLLECTION 'C CONDITION)", length=4)
            inner = self.coll(sl.items[1], scope)
            var = self._var(sl.items[2])
            cond = self.cond(sl.items[3], scope | {var})

            def filtered(st: Any, env: dict) -> list:
                out = []
                local = dict(env)
                for ref in inner(st, env):
                    local[var] = ref
                    if cond(st, local):
                        out.append(ref)
                return out

            return filtered
        if head == "all" and len(sl.items) == 4 and isinstance(sl.items[1], Sym):
            # (all player 'P COLLECTION): one collection per player, in seat order (inside a union)
            if sl.items[1].name != "player":
                raise _err(sl.items[1], "expected (all player 'P COLLECTION)")
            var = self._var(sl.items[2])
            each = self.coll(sl.items[3], scope | {var})
            return lambda st, env: [ref for p in range(st.n) for ref in each(st, {**env, var: p})]
        if head == "union":
            parts = [self.coll(i, scope) for i in sl.items[1:]]
            return lambda st, env: [ref for p in parts for ref in p(st, env)]
        loc = self.loc(sl, scope)

        def location(st: Any, env: dict) -> list:
            key = loc(st, env)
            return [(c, key) for c in st.locs.get(key, ())]

        return location

    def cond(self, sx: SExpr, scope: frozenset[str]) -> Fn:
        sl = self._list(sx, "a condition such as (== a b), (and ...), (not c), (all player 'P c)")
        head = sl.head()
        if head in _COMPARE:
            self._list(sl, f"({head} A B)", length=3)
            a, b = self.value(sl.items[1], scope), self.value(sl.items[2], scope)
            op = _COMPARE[head]

            def compare(st: Any, env: dict) -> bool:
                x, y = a(st, env), b(st, env)
                if isinstance(x, tuple):
                    x = x[0]
                if isinstance(y, tuple):
                    y = y[0]
                try:
                    return op(x, y)
                except TypeError:
                    return head == "!="

            return compare
        if head in ("and", "or"):
            parts = [self.cond(i, scope) for i in sl.items[1:]]
            if head == "and":
                return lambda st, env: all(p(st, env) for p in parts)
            return lambda st, env: any(p(st, env) for p in parts)
        if head == "not":
            self._list(sl, "(not CONDITION)", length=2)
            inner = self.cond(sl.items[1], scope)
            return lambda st, env: not inner(st, env)
        if head in ("all", "any") and len(sl.items) == 4 and isinstance(sl.items[1], Sym):
            if sl.items[1].name != "player":
                raise _err(sl.items[1], f"expected ({head} player 'P CONDITION)")
            var = self._var(sl.items[2])
            inner = self.cond(sl.items[3], scope | {var})
            quant = all if head == "all" else any
            return lambda st, env: quant(inner(st, {**env, var: p}) for p in range(st.n))
        raise _err(sl, f"expected a condition (==, !=, <, >, <=, >=, and, or, not, all, any), not {_text(sl)!r}")

    def value(self, sx: SExpr, scope: frozenset[str]) -> Fn:
        if isinstance(sx, Num):
            return _const(sx.value)
        if isinstance(sx, Sym):
            return _const(sx.name)
        if isinstance(sx, Var):
            return self._lookup(sx, scope)
        sl = self._list(sx, "a value")
        head = sl.head()
        if len(sl.items) == 3 and isinstance(sl.items[1], Sym) and sl.items[1].name in KINDS:
            if sl.items[1].name == "sto":
                key = self.storage(sl, scope)
                return lambda st, env: st.sto.get(key(st, env), 0)
            return self.coll(sl, scope)
        if head in ("current", "next", "previous", "owner") or (
            len(sl.items) == 2
            and isinstance(sl.items[0], SList)
            and isinstance(sl.items[1], Sym)
            and sl.items[1].name in ("player", "team")
        ):
            return self.player(sl, scope)
        if head in ("top", "bottom", "max", "min"):
            return self.card(sl, scope)
        if head in ("filter", "union"):
            return self.coll(sl, scope)
        if head in _COMPARE or head in ("and", "or", "not", "all", "any"):
            return self.cond(sl, scope)
        if head == "cardatt":
            self._list(sl, "(cardatt ATTRIBUTE CARD)", length=3)
            attr = self._sym(sl.items[1], "an attribute name")
            card = self.card(sl.items[2], scope)

            def cardatt(st: Any, env: dict) -> Any:
                ref = card(st, env)
                return None if ref is None else st.cards[ref[0]].get(attr)

            return cardatt
        if head == "size":
            self._list(sl, "(size COLLECTION)", length=2)
            coll = self.coll(sl.items[1], scope)
            if coll.__name__ == "location":
                loc = self.loc(sl.items[1], scope)
                return lambda st, env: len(st.locs.get(loc(st, env), ()))
            return lambda st, env: len(coll(st, env))
        if head == "sum":
            self._list(sl, "(sum COLLECTION using 'POINTS)", length=4)
            coll = self.coll(sl.items[1], scope)
            table = self._var(sl.items[3], "the quoted name of a point table")
            return lambda st, env: sum(st.card_points(ref[0], table) for ref in coll(st, env))
        if head == "dievalue":
            self._list(sl, "(dievalue 'NAME)", length=2)
            name = self._var(sl.items[1], "the quoted name of a set of dice")
            return lambda st, env: sum(st.dice.get(name, ()))
        if head in _ARITH:
            self._list(sl, f"({head} A B)", length=3)
            a, b = self.value(sl.items[1], scope), self.value(sl.items[2], scope)
            op = _ARITH[head]
            return lambda st, env: op(a(st, env), b(st, env))
        raise _err(
            sl,
            f"expected a value (a number, a word, a storage, cardatt, size, sum, dievalue, a player, "
            f"a card or arithmetic), not {_text(sl)!r}",
        )


def _nothing(st: Any, env: dict) -> None:
    return None


def _const(value: Any) -> Fn:
    return lambda st, env: value


def _atom(sx: SExpr) -> Any:
    if isinstance(sx, Num):
        return sx.value
    if isinstance(sx, Sym):
        return sx.name
    raise _err(sx, f"expected a word or a number, not {_text(sx)!r}")


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    ">": lambda a, b: a > b,
    "<=": lambda a, b: a <= b,
    ">=": lambda a, b: a >= b,
}
_ARITH: dict[str, Callable[[int, int], int]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "//": lambda a, b: a // b if b else 0,
    "mod": lambda a, b: a % b if b else 0,
}


def compile_program(top: SList) -> Program:
    return Compiler().program(top)
