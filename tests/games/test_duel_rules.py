"""The Duel rules: the spec's worked examples, the turn structure, combat keywords and the
state-based actions, on positions built by hand."""

from __future__ import annotations

import pytest

from partida.games.base import BadOptions, IllegalAction
from partida.games.duel import GAMES
from partida.games.duel.state import DuelState
from partida.games.prompts import freeze
from tests.duel_positions import blank, give, put

DUEL = GAMES[0]
POOL = DUEL.pool


def labels(state: DuelState) -> list[str]:
    prompt = state.pending()[0].prompt
    return [prompt.label(o) for o in prompt.options]


def snapshot(state: DuelState) -> object:
    return freeze(state.view(0)), freeze(state.view(1))


def test_main_phase_worked_example() -> None:
    state = blank()
    for p in state.players:
        p.life = 10
    for _ in range(3):
        put(state, "Mountain", 0)
    mountain = give(state, "Mountain", 0)
    give(state, "Volcanic Hammer", 0)
    give(state, "Flame Slash", 0)
    minotaur = give(state, "Pensive Minotaur", 0)
    assert sorted(labels(state)) == sorted(
        [
            "play Mountain",
            "cast Volcanic Hammer -> opponent",
            "cast Volcanic Hammer -> you",
            "cast Pensive Minotaur",
            "pass",
        ]
    )
    state.apply(0, {"play": mountain})
    state.apply(0, {"cast": minotaur})
    assert sum(1 for p in state.battlefield if p.card.is_land and p.tapped) == 3
    minotaur_perm = next(p for p in state.battlefield if p.card.name == "Pensive Minotaur")
    assert labels(state) == [f"cast Flame Slash -> your {minotaur_perm.label()}", "pass"]


def combat_position() -> tuple[DuelState, list[str], list[str]]:
    state = blank()
    attackers = [put(state, "Grizzly Bears", 0), put(state, "Grizzly Bears", 0), put(state, "Centaur Courser", 0)]
    corpses = [put(state, "Walking Corpse", 1), put(state, "Walking Corpse", 1)]
    state.apply(0, "pass")
    return state, attackers, corpses


def test_combat_worked_example_counts_attacks_and_blocks() -> None:
    state, (bears, _, courser), _ = combat_position()
    prompt = state.pending()[0].prompt
    assert len(prompt.answers()) == 8
    state.apply(0, [bears, courser])
    blocks = state.pending()[0].prompt
    assert state.pending()[0].seat == 1
    assert len(blocks.answers()) == 9


def test_combat_worked_example_double_block_damage() -> None:
    state, (bears, _, courser), (c1, c2) = combat_position()
    state.apply(0, [bears, courser])
    state.apply(1, [[c1, courser], [c2, courser]])
    assert state.pending()[0].prompt.name == "damage_order"
    state.apply(0, [c1, c2])
    names = [p.card.name for p in state.battlefield]
    assert "Centaur Courser" not in names
    assert state.permanent(c1) is None
    survivor = state.permanent(c2)
    assert survivor is not None and survivor.damage == 1
    assert state.players[1].life == 18
    assert state.phase == "main2"


def test_first_strike_kills_before_regular_damage() -> None:
    state = blank()
    hounds = put(state, "Lightning Hounds", 0)
    raptor = put(state, "Frenzied Raptor", 1)
    state.apply(0, "pass")
    state.apply(0, [hounds])
    state.apply(1, [[raptor, hounds]])
    assert state.permanent(raptor) is None
    assert state.permanent(hounds) is not None


def test_double_strike_deals_damage_in_both_steps() -> None:
    state = blank()
    ace = put(state, "Fencing Ace", 0)
    state.apply(0, "pass")
    state.apply(0, [ace])
    assert state.players[1].life == 18


def test_flying_attacker_can_be_blocked_by_reach_only() -> None:
    state = blank(active=1)
    angel = put(state, "Serra Angel", 1)
    put(state, "Grizzly Bears", 0)
    giant = put(state, "Skyraker Giant", 0)
    state.apply(1, "pass")
    state.apply(1, [angel])
    prompt = state.pending()[0].prompt
    assert prompt.sources == [giant]
    assert state.permanent(angel).tapped is False  # vigilance


def test_summoning_sickness_and_haste() -> None:
    state = blank()
    put(state, "Mountain", 0)
    put(state, "Mountain", 0)
    put(state, "Mountain", 0)
    put(state, "Mountain", 0)
    robber = give(state, "Nest Robber", 0)
    bears = put(state, "Grizzly Bears", 0, sick=True)
    state.apply(0, {"cast": robber})
    state.apply(0, "pass")
    assert state.pending()[0].prompt.candidates == [robber]
    with pytest.raises(IllegalAction, match="summoning sickness"):
        state.apply(0, [bears])


def test_enters_effects_counters_tap_and_life() -> None:
    state = blank()
    for _ in range(5):
        put(state, "Plains", 0)
    bears = put(state, "Grizzly Bears", 0)
    enemy = put(state, "Walking Corpse", 1)
    guardian = give(state, "Guardian of Pilgrims", 0)
    infantry = give(state, "Heavy Infantry", 0)
    state.apply(0, {"cast": guardian, "target": bears})
    assert state.permanent(bears).power == 3
    for land in state.battlefield:
        land.tapped = False
    state.apply(0, {"cast": infantry, "target": enemy})
    assert state.permanent(enemy).tapped


def test_creature_without_legal_target_is_still_cast() -> None:
    state = blank()
    for _ in range(4):
        put(state, "Swamp", 0)
    chupacabra = give(state, "Ravenous Chupacabra", 0)
    assert "cast Ravenous Chupacabra" in labels(state)
    state.apply(0, {"cast": chupacabra})
    assert any(p.card.name == "Ravenous Chupacabra" for p in state.battlefield)


def test_dwarven_priest_gains_life_per_creature() -> None:
    state = blank()
    for _ in range(4):
        put(state, "Plains", 0)
    put(state, "Grizzly Bears", 0)
    priest = give(state, "Dwarven Priest", 0)
    state.apply(0, {"cast": priest})
    assert state.players[0].life == 22


def test_discard_to_seven_then_damage_wears_off() -> None:
    state = blank()
    ids = [give(state, "Lava Axe", 0) for _ in range(9)]
    bears = put(state, "Grizzly Bears", 0, sick=True)
    state.permanent(bears).damage = 1
    state.apply(0, "pass")
    state.apply(0, "pass")
    prompt = state.pending()[0].prompt
    assert (prompt.name, prompt.min, prompt.max) == ("discard", 2, 2)
    state.apply(0, ids[:2])
    assert len(state.players[0].graveyard) == 2
    assert state.active == 1 and state.permanent(bears).damage == 0


def test_drawing_from_an_empty_library_loses() -> None:
    state = blank()
    state.players[1].library = []
    state.apply(0, "pass")
    state.apply(0, "pass")
    assert state.is_over() and state.winner() == 0


def test_both_players_losing_at_once_is_a_draw() -> None:
    state = blank()
    state.players[0].life = 0
    state.players[1].life = -1
    state._check_state()
    assert state.is_over() and state.winner() is None
    assert state.result().ranks == [1, 1]


def test_mulligan_draws_one_fewer_then_scry() -> None:
    state = DUEL.create(seed=5)
    first = state.first
    state.apply(first, "mulligan")
    assert len(state.players[first].hand) == 6
    state.apply(1 - first, "keep")
    state.apply(first, "keep")
    assert state.phase == "scry" and state.pending()[0].seat == first
    top = state.players[first].library[0]
    state.apply(first, "bottom")
    assert state.players[first].library[-1] is top
    assert state.phase == "main1" and state.active == first
    assert len(state.players[first].hand) == 6  # the first player does not draw on turn 1


def test_decks_are_data_and_options_choose_them() -> None:
    state = DUEL.create({"deck0": "red", "deck1": "red"}, seed=2)
    assert state.deck_names == ["red", "red"]
    custom = {"Forest": 24, "Grizzly Bears": 4, "Centaur Courser": 4} | {"Plains": 28}
    state = DUEL.create({"custom_decks": True, "decklist0": custom}, seed=2)
    assert state.deck_names == ["custom", "red"]


@pytest.mark.parametrize(
    ("decklist", "message"),
    [
        ({"Plains": 24, "Serra Angel": 36}, "at most 4 copies of Serra Angel"),
        ({"Plains": 50}, "exactly 60 cards"),
        ({"Plains": 56, "Black Lotus": 4}, "no card named 'Black Lotus'"),
    ],
)
def test_bad_decks_are_rejected(decklist: dict[str, int], message: str) -> None:
    with pytest.raises(BadOptions, match=message):
        DUEL.create({"custom_decks": True, "decklist0": decklist}, seed=1)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 3000 + "]" * 3000, "nests deeper than 32 levels"),
        ("[" * 3000, "nests deeper than 32 levels"),
        ('{"Plains": ' + "6" * 5000 + "}", "at most 18 digits"),
        ('{"Plains": NaN}', "NaN is not a number"),
        ('{"Plains": "[[[[", "x": ' + "[" * 40, "nests deeper"),
        ('{"Pla\\"ins[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[": 60}', "no card named"),  # brackets in a name
    ],
)
def test_a_deck_list_given_as_text_is_bounded_before_it_is_parsed(text: str, message: str) -> None:
    with pytest.raises(BadOptions, match=message):
        DUEL.create({"custom_decks": True, "decklist0": text}, seed=1)


def test_custom_decks_need_the_room_to_allow_them() -> None:
    with pytest.raises(BadOptions, match="does not allow custom decks"):
        DUEL.create({"decklist0": {"Plains": 60}}, seed=1)


def test_the_public_sentence_names_the_spell_and_its_target() -> None:
    state = blank()
    bears = put(state, "Grizzly Bears", 1)
    for _ in range(2):
        put(state, "Mountain", 0)
    hammer = give(state, "Volcanic Hammer", 0)
    assert state.last_event() is None
    state.apply(0, {"cast": hammer, "target": bears})
    assert state.last_event() == "casts Volcanic Hammer at Grizzly Bears"
    state.apply(0, "pass")
    assert state.last_event() == "passes"
