"""Hidden information in Duel: what each seat and the spectators see, checked at every step of
many random games, and determinization consistent with a view."""

from __future__ import annotations

import json
import random

import pytest

from partida.games.duel import GAMES
from partida.games.duel.state import DuelState
from partida.games.prompts import freeze
from tests.duel_positions import scramble, strings

DUEL = GAMES[0]
POOL = DUEL.pool
SPELLS = [c for c in POOL.cards.values() if not c.is_land]


def random_steps(seed: int, steps: int = 400):
    rng = random.Random(seed)
    state = DUEL.create({"deck0": rng.choice(["white", "red"]), "deck1": rng.choice(["white", "red"])}, seed=seed)
    for _ in range(steps):
        if state.is_over():
            return
        yield state, rng
        decision = state.pending()[0]
        state.apply(decision.seat, decision.prompt.random_answer(rng))


def played_for(seed: int, steps: int) -> DuelState:
    """A random game stopped after `steps` decisions (or at its end)."""
    state = None
    for state, _ in random_steps(seed, steps):  # noqa: B007 - the last state is the point
        pass
    assert state is not None
    return state


@pytest.mark.slow
def test_no_view_reveals_a_hidden_card() -> None:
    for seed in range(25):
        seen: dict[int | None, set[str]] = {0: set(), 1: set(), None: set()}
        for state, rng in random_steps(seed):
            for seat in (0, 1, None):
                view = state.view(seat)
                assert freeze(scramble(state, seat, rng).view(seat)) == freeze(view)
                opponent_hands = [cid for s, p in enumerate(state.players) if s != seat for cid, _ in p.hand]
                assert not strings(view) & set(opponent_hands)
                if seat is not None:
                    new = {c["id"] for c in view["hand"]} - seen[seat]
                    everything_seen = seen[0] | seen[1] | seen[None]
                    assert not new & everything_seen, "a card entering a hand must get a fresh id"
                seen[seat] |= strings(view)
                json.dumps(view)  # plain data


def test_the_public_sentence_about_an_answer_names_only_public_cards() -> None:
    names = sorted(POOL.cards, key=len, reverse=True)  # longest first: "Fire Elemental" before "Fire"
    events = 0
    for seed in range(20):
        for state, rng in random_steps(200 + seed):
            decision = state.pending()[0]
            if state.phase == "scry":  # top or bottom is the scrying player's secret
                told = set()
                for answer in ("top", "bottom"):
                    trial = state.clone()
                    trial.apply(decision.seat, answer)
                    told.add(trial.last_event())
                assert len(told) == 1
            after = state.clone()
            after.apply(decision.seat, decision.prompt.random_answer(random.Random(rng.random())))
            text = after.last_event()
            assert text
            events += 1
            public = after.view(None)
            shown = {p["name"] for p in public["battlefield"]} | {n for p in public["players"] for n in p["graveyard"]}
            for name in names:
                if name in text:
                    assert name in shown, f"{text!r} names {name}, which nobody else can see"
                    text = text.replace(name, "")
    assert events > 1000


def test_the_board_says_who_won_to_each_reader() -> None:
    state = played_for(5, steps=10_000)
    winner = state.winner()
    assert state.is_over() and winner is not None
    assert DUEL.render(state.view(winner)).endswith("Game over: you win")
    assert DUEL.render(state.view(1 - winner)).endswith("Game over: your opponent wins")
    assert DUEL.render(state.view(None)).endswith(f"Game over: player {winner + 1} wins")


def test_spectators_see_the_common_part() -> None:
    state = DUEL.create(seed=3)
    view = state.view(None)
    assert "hand" not in view and "library_known" not in view
    assert [p["hand_count"] for p in view["players"]] == [7, 7]


def test_determinize_is_consistent_with_the_view() -> None:
    for seed in range(12):
        for i, (state, _) in enumerate(random_steps(100 + seed)):
            if i % 7:
                continue
            seat = state.pending()[0].seat
            view = state.view(seat)
            world = DUEL.determinize(view, seat, random.Random(i))
            assert freeze(world.view(seat)) == freeze(view)
            unseen_pool = dict(view["players"][1 - seat]["decklist"])
            for _, card in world.players[1 - seat].hand:
                unseen_pool[card.name] -= 1
                assert unseen_pool[card.name] >= 0
            pending = world.pending()
            assert pending and pending[0].seat == seat
            assert freeze(pending[0].prompt.to_data()) == freeze(state.pending()[0].prompt.to_data())


def test_a_determinized_game_plays_to_the_end() -> None:
    state = played_for(7, steps=60)
    seat = state.pending()[0].seat
    world = DUEL.determinize(state.view(seat), seat, random.Random(1))
    rng = random.Random(2)
    while not world.is_over():
        decision = world.pending()[0]
        world.apply(decision.seat, decision.prompt.random_answer(rng))
    assert world.result().ranks in ([1, 2], [2, 1], [1, 1])


def test_render_shows_life_hand_and_battlefield() -> None:
    state = played_for(11, steps=80)
    seat = state.active
    text = DUEL.render(state.view(seat))
    assert f"You ({state.deck_names[seat]}): {state.players[seat].life} life" in text
    assert "Your hand:" in text
    assert text.splitlines()[0].endswith(" - your turn")
    assert DUEL.render(state.view(1 - seat)).splitlines()[0].endswith(" - opponent's turn")
    spectator = DUEL.render(state.view(None))
    assert "Your hand" not in spectator and "Player 1" in spectator
