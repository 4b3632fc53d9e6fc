"""The contract every registered game keeps, checked by random playouts with fixed seeds.

Parametrized over the default registry (every built-in game and every shipped RECYCLE
description), as OpenSpiel's random simulation test is over its games: a new game is covered by
adding it. At every step of each playout the state is probed (illegal answers, clones, views,
prompts, hidden ids, determinization); at the end the result is checked and the log replayed.
docs/design.md ("The game contract") says what each check protects.
"""

from __future__ import annotations

import copy
import json
import math
import random
from collections.abc import Iterator
from typing import Any

import pytest

from partida.games.base import Game, IllegalAction, State, View
from partida.games.registry import default_registry
from partida.protocol.codec import Encoding, decode, encode

REGISTRY = default_registry()

# Playouts per game, and options that keep a long game short; any game not named here gets
# DEFAULT_PLAYOUTS with its default options.
DEFAULT_PLAYOUTS = 3
PLAYOUTS = {"duel": 2, "hearts": 1, "simplehearts": 1}
OPTIONS: dict[str, dict[str, Any]] = {"hearts": {"target": 10}}
MAX_STEPS = 2000  # a playout longer than this is a game that does not end

# Answers no prompt should take: the wrong type, out of range, garbage.
GARBAGE: list[Any] = [None, -1, 10**9, 2.5, True, "", "no such answer \u00e9", {"play": None}, [[[]]], [None, None]]


def _seats(game: Game) -> list[int]:
    return sorted({game.min_seats, game.max_seats})


CASES = [
    pytest.param(game.name, seats, id=f"{game.name}-{seats}") for game in REGISTRY.games() for seats in _seats(game)
]


def all_views(state: State) -> dict[int | None, View]:
    """Every seat's view and the spectators', copied: a view that shares a list with the state
    would change along with it and hide any change from the comparisons."""
    return copy.deepcopy({seat: state.view(seat) for seat in [None, *range(state.num_seats)]})


def round_trip(data: Any) -> None:
    """`data` comes back equal through the codec in both encodings (so no tuple, set, integer key
    or other value that one of them would silently change)."""
    for encoding in (Encoding.MSGPACK, Encoding.JSON):
        back = decode(encode({"type": "probe", "data": data}, encoding), limit=1 << 30)["data"]
        assert back == data and _same_types(back, data), f"{encoding} changes {data!r}"


def _same_types(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return all(type(k) is type(j) for k, j in zip(a, b, strict=True)) and all(_same_types(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return all(_same_types(x, y) for x, y in zip(a, b, strict=True))
    return True


def leaves(data: Any, key: str | None = None) -> Iterator[tuple[str | None, Any]]:
    """Every scalar in `data` with the map key it sits under (the nearest one)."""
    if isinstance(data, dict):
        for k, v in data.items():
            yield from leaves(v, k)
    elif isinstance(data, list | tuple):
        for v in data:
            yield from leaves(v, key)
    else:
        yield key, data


def ids_in(data: Any) -> set[Any]:
    """The values a view gives under an `id` key: what names a card (or any object) in it."""
    return {value for key, value in leaves(data) if key == "id" and value is not None}


def named(data: Any) -> set[Any]:
    """The values that name an object in `data`: those under an `id` key, and any text (an opaque
    string id can name a card in an option or a combat list; a small integer cannot be told
    from a count there)."""
    return {value for key, value in leaves(data) if key == "id" or isinstance(value, str)}


def check_hidden_ids(state: State, views: dict[int | None, View], seen: dict[int | None, set[Any]]) -> None:
    """An id that a seat's view holds and the spectators' does not is that seat's alone (no
    shipped game shows a hidden zone to several seats): no other seat's view or prompt, and no
    spectator, may name it, now or earlier in the game: a card gets a fresh id when it enters
    a hidden zone, so that no id tells where a card came from (an id seen on the table, or in
    the hand that passed it, would). `seen` gathers, per seat and for spectators, every id
    shown to them so far."""
    public = named(views[None])
    prompts = {d.seat: d.prompt.to_data() for d in state.pending()}
    for seat in range(state.num_seats):
        private = ids_in(views[seat]) - public
        if not private:
            continue
        assert not named(views[None]) & private, f"spectators see seat {seat}'s hidden ids"
        assert not private & seen[None], f"spectators saw seat {seat}'s hidden ids earlier"
        for other in range(state.num_seats):
            if other != seat:
                shown = named([views[other], prompts.get(other)]) & private
                assert not shown, f"seat {other} sees seat {seat}'s hidden ids {sorted(shown, key=repr)}"
                earlier = private & seen[other]
                assert not earlier, f"seat {other} saw seat {seat}'s hidden ids earlier: {sorted(earlier, key=repr)}"
    for who, view in views.items():
        seen[who] |= ids_in(view)


def check_illegal_answers(state: State, views: dict[int | None, View]) -> None:
    """Answers the prompt rejects, answers from the wrong seat and from no seat: each raises
    IllegalAction and leaves every view as it was."""
    pending = state.pending()
    waiting = {d.seat for d in pending}
    attempts: list[tuple[int, Any]] = []
    for decision in pending:
        for answer in GARBAGE:
            try:
                decision.prompt.validate(answer)
            except IllegalAction:
                attempts.append((decision.seat, answer))
        legal = decision.prompt.random_answer(random.Random(0))
        attempts += [(other, legal) for other in range(state.num_seats) if other not in waiting]
        attempts += [(state.num_seats, legal), (-1, legal)]
    for seat, answer in attempts:
        with pytest.raises(IllegalAction):
            state.apply(seat, answer)
        assert all_views(state) == views, f"a refused answer {answer!r} of seat {seat} changed a view"


def check_determinize(game: Game, state: State, views: dict[int | None, View], rng: random.Random) -> None:
    """A sample is a state the seat cannot tell from the real one: same view, same question."""
    for seat in [None, *range(state.num_seats)]:
        sample = game.determinize(views[seat], seat, rng)
        assert sample.view(seat) == views[seat], f"determinize changes the view of seat {seat}"
        if seat is not None:
            asked, real = sample.decision_for(seat), state.decision_for(seat)
            assert (asked and asked.to_data()) == (real and real.to_data()), f"a sample asks seat {seat} otherwise"


def check_views_are_copies(state: State, views: dict[int | None, View]) -> None:
    """A view is a snapshot: a client (or a bot in the same process) that changes it changes
    nothing in the state."""
    for seat in views:
        scribble(state.view(seat))
    assert all_views(state) == views, "changing a view changed the state"


def scribble(data: Any) -> None:
    if isinstance(data, dict):
        for value in data.values():
            scribble(value)
        data["scribbled"] = True
    elif isinstance(data, list):
        for value in data:
            scribble(value)
        data.append("scribbled")


def check_running_facts(state: State) -> None:
    """What the lab and replays read at any step: a finite running score per seat, and the last
    event told as a sentence or not at all."""
    scores = state.scores()
    assert len(scores) == state.num_seats and all(math.isfinite(s) for s in scores)
    assert state.last_event() is None or isinstance(state.last_event(), str)


def check_pending(state: State) -> None:
    seats = [d.seat for d in state.pending()]
    assert len(seats) == len(set(seats)), "a seat has two open decisions"
    assert all(0 <= seat < state.num_seats for seat in seats)
    assert bool(seats) != state.is_over(), "a game is over exactly when no decision is open"


def check_result(state: State) -> None:
    assert state.pending() == []
    result = state.result()
    n = state.num_seats
    assert len(result.scores) == n and len(result.ranks) == n
    assert all(isinstance(s, int | float) and math.isfinite(s) for s in result.scores)
    assert all(1 <= r <= n for r in result.ranks)
    assert min(result.ranks) == 1 and result.winners and set(result.winners) <= set(range(n))
    for seat in range(n):  # ranks agree with themselves: a rank counts the seats placed before it
        assert result.ranks[seat] == 1 + sum(r < result.ranks[seat] for r in result.ranks)
    round_trip(result.to_data())
    with pytest.raises(IllegalAction):
        state.apply(0, GARBAGE[0])


def playout(game: Game, seats: int, seed: int) -> tuple[State, list[tuple[int, Any]]]:
    rng = random.Random(seed)
    options = OPTIONS.get(game.name, {})
    state = game.create(options, seed=seed, seats=seats)
    actions: list[tuple[int, Any]] = []
    seen: dict[int | None, set[Any]] = {seat: set() for seat in [None, *range(seats)]}
    for _ in range(MAX_STEPS):
        views = all_views(state)
        for view in views.values():
            round_trip(view)
        for decision in state.pending():
            round_trip(decision.to_data())
        check_hidden_ids(state, views, seen)
        check_views_are_copies(state, views)
        check_pending(state)
        check_running_facts(state)
        check_determinize(game, state, views, rng)
        if state.is_over():
            check_result(state)
            return state, actions
        check_illegal_answers(state, views)
        decision = rng.choice(state.pending())
        answer = decision.prompt.random_answer(rng)
        branch = state.clone()
        branch.apply(decision.seat, answer)
        assert all_views(state) == views, "applying an answer to a clone changed the original"
        state.apply(decision.seat, answer)
        assert all_views(branch) == all_views(state), "a clone plays on differently from its original"
        actions.append((decision.seat, answer))
    raise AssertionError(f"{game.name} did not end within {MAX_STEPS} answers")


@pytest.mark.slow
@pytest.mark.parametrize(("name", "seats"), CASES)
def test_random_playouts_keep_the_contract(name: str, seats: int) -> None:
    game = REGISTRY.get(name)
    for seed in range(PLAYOUTS.get(name, DEFAULT_PLAYOUTS)):
        state, actions = playout(game, seats, seed)
        stored = json.loads(json.dumps(actions))  # as storage gives the log back
        replayed = game.replay(OPTIONS.get(name), seed, seats, [(seat, action) for seat, action in stored])
        assert all_views(replayed) == all_views(state), "replaying the log gives other views"


@pytest.mark.parametrize("name", REGISTRY.names())
def test_the_lobby_entry_crosses_the_wire(name: str) -> None:
    game = REGISTRY.get(name)
    round_trip(game.describe())
    round_trip(game.resolve_options(None))


def test_every_registered_game_is_covered() -> None:
    assert {param.values[0] for param in CASES} == set(REGISTRY.names())
