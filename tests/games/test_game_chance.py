"""A game that says it has no chance (`Game.chance` False: no deal, no dice) plays the same from
every seed: the browser then does not tell its players that the seed fixed a deal in advance."""

from __future__ import annotations

import pytest

from partida.games.registry import default_registry

REGISTRY = default_registry()


@pytest.mark.parametrize("name", [g.name for g in REGISTRY.games() if not g.chance])
def test_a_game_without_chance_is_the_same_from_any_seed(name: str) -> None:
    game = REGISTRY.get(name)
    views = set()
    for seed in (1, 2, 3, 10**12):
        state = game.create(game.resolve_options({}), seed=seed, seats=game.min_seats)
        views.add(repr(state.view(None)))
    assert len(views) == 1


def test_the_card_and_dice_games_say_they_have_chance() -> None:
    assert {g.name for g in REGISTRY.games() if not g.chance} == {"othello", "tictactoe"}
    assert REGISTRY.get("hearts").chance and REGISTRY.get("duel").chance
