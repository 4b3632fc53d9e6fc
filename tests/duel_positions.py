"""Duel positions built by hand (a blank game past the mulligans, permanents and cards put where
a test wants them) and what a view may show (its strings; a game with every card a seat may not
see replaced), for the Duel rules, views, agents and evaluation tests."""

from __future__ import annotations

import random
from typing import Any

from partida.games.duel import GAMES
from partida.games.duel.state import DuelState, Permanent, Player

DUEL = GAMES[0]
POOL = DUEL.pool
SPELLS = [c for c in POOL.cards.values() if not c.is_land]


def blank(active: int = 0, phase: str = "main1") -> DuelState:
    """A game past the mulligans with empty zones, for building positions by hand."""
    state = DUEL.create(seed=1)
    state.players = [Player(), Player()]
    for p in state.players:
        p.kept = True
        p.library = [POOL.card("Plains")] * 20
    state.battlefield = []
    state.active, state.first, state.turn, state.phase = active, active, 3, phase
    return state


def put(state: DuelState, name: str, owner: int, sick: bool = False, tapped: bool = False) -> str:
    pid = state.fresh_id()
    perm = Permanent(pid, POOL.card(name), owner, sick=sick)
    perm.tapped = tapped
    state.battlefield.append(perm)
    return pid


def give(state: DuelState, name: str, seat: int) -> str:
    cid = state.fresh_id()
    state.players[seat].hand.append((cid, POOL.card(name)))
    return cid


def strings(value: Any) -> set[str]:
    """Every string anywhere in a plain-data value (keys included)."""
    found: set[str] = set()
    if isinstance(value, str):
        found.add(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            found |= strings(k) | strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            found |= strings(v)
    return found


def scramble(state: DuelState, seat: int | None, rng: random.Random) -> DuelState:
    """The same game with every card `seat` may not see replaced: other hands get other cards
    under other ids, libraries other cards in another order (what the seat knows of its own
    library after a scry is kept)."""
    other = state.clone()
    for s, player in enumerate(other.players):
        if s != seat:
            player.hand = [(f"x{rng.getrandbits(40):010x}", rng.choice(SPELLS)) for _ in player.hand]
        keep_top = s == seat and (player.known_top is not None or (state.phase == "scry" and state.decider == s))
        keep_bottom = s == seat and player.known_bottom is not None
        lib = list(player.library)
        head = lib[:1] if keep_top else []
        tail = lib[-1:] if keep_bottom and len(lib) > len(head) else []
        middle = [rng.choice(SPELLS) for _ in range(len(lib) - len(head) - len(tail))]
        player.library = head + middle + tail
    return other
