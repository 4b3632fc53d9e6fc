"""Bad input to Duel: every wrong answer is rejected with a clear sentence and leaves the game as
it was."""

from __future__ import annotations

from typing import Any

import pytest

from partida.games.base import IllegalAction
from partida.games.prompts import freeze
from tests.duel_positions import blank, give, put


def snapshot(state: Any) -> Any:
    return freeze(state.view(0)), freeze(state.view(1)), state.phase, state.active


def rejects(state: Any, seat: int, action: Any, message: str) -> None:
    before = snapshot(state)
    with pytest.raises(IllegalAction, match=message):
        state.apply(seat, action)
    assert snapshot(state) == before


def main_position() -> tuple[Any, dict[str, str]]:
    state = blank()
    ids = {
        "mountain": put(state, "Mountain", 0),
        "bears": put(state, "Grizzly Bears", 1),
        "hammer": give(state, "Volcanic Hammer", 0),
        "axe": give(state, "Lava Axe", 0),
        "land": give(state, "Mountain", 0),
        "slash": give(state, "Flame Slash", 0),
    }
    return state, ids


def test_a_card_not_in_hand_is_rejected() -> None:
    state, ids = main_position()
    rejects(state, 0, {"cast": "c-nope"}, "not in your hand")
    rejects(state, 0, {"play": ids["bears"]}, "not in your hand")


def test_an_unpayable_spell_is_rejected() -> None:
    state, ids = main_position()
    rejects(state, 0, {"cast": ids["axe"], "target": 1}, "cannot pay 4R for Lava Axe")
    rejects(state, 0, {"cast": ids["hammer"], "target": 1}, "cannot pay 1R")


def test_illegal_targets_are_rejected() -> None:
    state, ids = main_position()
    rejects(state, 0, {"cast": ids["slash"], "target": 1}, "not a legal target for Flame Slash")
    rejects(state, 0, {"cast": ids["slash"], "target": "c000"}, "not a legal target")
    rejects(state, 0, {"cast": ids["slash"]}, "needs a target")


def test_wrong_shapes_and_second_land_are_rejected() -> None:
    state, ids = main_position()
    rejects(state, 0, "attack!", "a main-phase action is")
    rejects(state, 0, {"cast": ids["land"]}, "is a land: play it")
    rejects(state, 0, {"play": ids["hammer"]}, "is not a land")
    state.apply(0, {"play": ids["land"]})
    other = give(state, "Mountain", 0)
    rejects(state, 0, {"play": other}, "already played a land")


def test_attackers_that_cannot_attack_are_rejected() -> None:
    state = blank()
    ready = put(state, "Grizzly Bears", 0)
    sick = put(state, "Centaur Courser", 0, sick=True)
    tapped = put(state, "Walking Corpse", 0, tapped=True)
    enemy = put(state, "Walking Corpse", 1)
    state.apply(0, "pass")
    rejects(state, 0, [ready, sick], "summoning sickness")
    rejects(state, 0, [tapped], "tapped and cannot attack")
    rejects(state, 0, [enemy], "not a creature you control")
    rejects(state, 0, [ready, ready], "only once")
    rejects(state, 0, "everyone", "must be a list")


def test_illegal_blocks_are_rejected() -> None:
    state = blank()
    angel = put(state, "Serra Angel", 0)
    bears = put(state, "Grizzly Bears", 0)
    wall = put(state, "Walking Corpse", 1)
    giant = put(state, "Skyraker Giant", 1)
    state.apply(0, "pass")
    state.apply(0, [angel, bears])
    rejects(state, 1, [[wall, angel]], "cannot block Serra Angel: it has flying")
    rejects(state, 1, [[giant, angel], [giant, bears]], "can block only one attacker")
    rejects(state, 1, [[angel, bears]], "not a creature you control")
    rejects(state, 1, [[wall, wall]], "not an attacking creature")
    rejects(state, 0, [], "not your turn")
    state.apply(1, [[giant, angel], [wall, bears]])
    assert state.phase == "main2"


def test_wrong_discard_counts_are_rejected() -> None:
    state = blank()
    ids = [give(state, "Lava Axe", 0) for _ in range(9)]
    state.apply(0, "pass")
    state.apply(0, "pass")
    rejects(state, 0, ids[:1], "discard exactly 2 cards, not 1")
    rejects(state, 0, ids[:3], "discard exactly 2 cards, not 3")
    rejects(state, 0, [ids[0], ids[0]], "only once")
    rejects(state, 0, [ids[0], "c-nope"], "not in your hand")


def test_answers_after_the_game_ended_are_rejected() -> None:
    state = blank()
    state.players[1].life = 2
    bears = put(state, "Grizzly Bears", 0)
    state.apply(0, "pass")
    state.apply(0, [bears])
    assert state.is_over()
    rejects(state, 0, "pass", "game is over")
