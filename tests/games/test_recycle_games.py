"""The shipped RECYCLE games: played to the end, replayed, hidden cards kept hidden, determinized."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from partida.bots.base import RandomAgent
from partida.bots.local import play_local
from partida.games.base import IllegalAction
from partida.games.recycle import GAMES
from partida.games.recycle.state import RecycleState

BY_NAME = {game.name: game for game in GAMES}
SHORT = {"hearts": {"target": 1}}  # one hand: checks that look at every view need not play to 100


def random_game(name: str, seed: int, options: dict[str, Any] | None = None, seats: int | None = None):
    game = BY_NAME[name]
    seats = seats or game.min_seats
    return play_local(game, [RandomAgent(seed * 10 + s) for s in range(seats)], options, seed=seed)


def ids_in(view: dict[str, Any]) -> set[int]:
    return {card["id"] for loc in view["locations"] for card in loc.get("cards", [])}


def strip_ids(view: dict[str, Any]) -> dict[str, Any]:
    view = json.loads(json.dumps(view))
    for loc in view["locations"]:
        for card in loc.get("cards", []):
            card.pop("id")
    return view


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_every_shipped_game_ends_under_random_play(name: str) -> None:
    game = BY_NAME[name]
    seeds = 6 if name == "hearts" else 25  # a game of Hearts is a dozen hands
    for seats in sorted({game.min_seats, game.max_seats}):
        for seed in range(seeds):
            played = random_game(name, seed, seats=seats)
            assert played.state.is_over()
            assert played.state.pending() == []
            result = played.state.result()
            assert len(result.scores) == seats and min(result.ranks) == 1


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_a_game_replays_from_its_json_action_log(name: str) -> None:
    game = BY_NAME[name]
    played = random_game(name, 7)
    log = json.loads(json.dumps(played.actions))
    again = game.replay({}, 7, game.min_seats, [(seat, action) for seat, action in log])
    assert again.view(None) == played.state.view(None)
    assert again.result() == played.state.result()


def test_the_dicepoints_variants_are_options() -> None:
    game = BY_NAME["dicepoints"]
    assert set(game.options) == {"rounds", "ndice", "sides"}
    played = random_game("dicepoints", 3, {"rounds": 50, "ndice": 2, "sides": 5})
    rounds = played.state.round_scores()
    assert len(rounds) == 50
    previous = [0.0] * 4
    for scores in rounds:
        assert all(2 <= now - before <= 10 for now, before in zip(scores, previous, strict=True))
        previous = scores
    assert rounds[-1] == played.state.scores()


def test_throwdicematchcard_deals_one_card_per_round_and_starts_at_one() -> None:
    game = BY_NAME["throwdicematchcard"]
    state = game.create({"rounds": 20}, seed=5)
    hands = [loc for loc in state.view(None)["locations"] if loc["name"] == "HAND"]
    assert [loc["count"] for loc in hands] == [20, 20, 20, 20]
    assert state.scores() == [1.0, 1.0, 1.0, 1.0]
    played = random_game("throwdicematchcard", 5, {"rounds": 20})
    assert len(played.state.round_scores()) == 20
    assert all(1 <= s <= 21 for s in played.state.scores())


def test_agram_players_must_follow_the_suit_led() -> None:
    game = BY_NAME["agram"]
    rng = random.Random(1)
    checked = 0
    for seed in range(10):
        state = game.create(seed=seed)
        while not state.is_over():
            decision = state.pending()[0]
            view = state.view(decision.seat)
            trick = next((loc for loc in view["locations"] if loc["name"] == "TRICK"), None)
            hand = next(loc for loc in view["locations"] if loc["name"] == "HAND" and loc["owner"] == decision.seat)
            if trick and trick["cards"]:
                led = trick["cards"][0]["attrs"]["SUIT"]
                following = [f"{c['attrs']['RANK']} {led}" for c in hand["cards"] if c["attrs"]["SUIT"] == led]
                if following:
                    assert sorted(decision.prompt.options) == sorted(following)
                    checked += 1
            state.apply(decision.seat, decision.prompt.random_answer(rng))
        assert sum(state.scores()) == 1  # exactly one player wins the last trick
    assert checked > 20


def test_simple_hearts_hands_out_all_26_penalty_points() -> None:
    for seed in range(5):
        assert sum(random_game("simplehearts", seed).state.scores()) == 26


def test_a_wrong_answer_or_seat_is_refused_and_changes_nothing() -> None:
    state = BY_NAME["agram"].create(seed=2)
    before = state.view(None)
    decision = state.pending()[0]
    with pytest.raises(IllegalAction):
        state.apply(decision.seat, "the joker")
    with pytest.raises(IllegalAction) as info:
        state.apply((decision.seat + 1) % 4, decision.prompt.options[0])
    assert info.value.code == "not_your_turn"
    assert state.view(None) == before


@pytest.mark.parametrize("name", ["agram", "hearts", "crazyeights", "throwdicematchcard"])
def test_hidden_cards_never_appear_in_another_seats_view(name: str) -> None:
    game = BY_NAME[name]
    for seed in range(8):
        state = game.create(SHORT.get(name), seed=seed)
        assert isinstance(state, RecycleState)
        rng = random.Random(seed)
        seats = [None, *range(state.num_seats)]
        seen: dict[int | None, set[int]] = {s: set() for s in seats}
        while True:
            for seat in seats:
                view = state.view(seat)
                seen[seat] |= ids_in(view)
                text = json.dumps(view)
                for key, cards in state.locs.items():
                    if state.visible(key, seat):
                        continue
                    for c in cards:
                        assert state.oid[c] not in seen[seat], "a hidden card's id was shown to another seat"
                        assert str(state.oid[c]) not in text
                for loc in view["locations"]:
                    if loc["kind"] == "iloc" and (seat is None or loc["owner"] != seat):
                        assert "cards" not in loc
            if state.is_over():
                break
            decision = state.pending()[0]
            state.apply(decision.seat, decision.prompt.random_answer(rng))


def test_a_card_gets_a_new_id_when_it_enters_a_hidden_zone() -> None:
    state = BY_NAME["crazyeights"].create(seed=4, seats=2)
    top = state.locs[(-1, "vloc", "DISCARD")][-1]
    public_id = state.oid[top]
    state.move(top, (0, "iloc", "HAND"), True)
    assert state.oid[top] != public_id


@pytest.mark.slow
@pytest.mark.parametrize("name", ["agram", "hearts", "crazyeights"])
def test_determinize_keeps_what_the_seat_knows_and_samples_the_rest(name: str) -> None:
    game = BY_NAME[name]
    rng = random.Random(0)
    state = game.create(seed=11)
    differs = 0
    for _ in range(12):
        if state.is_over():
            break
        decision = state.pending()[0]
        seat = decision.seat
        view = state.view(seat)
        sample = game.determinize(json.loads(json.dumps(view)), seat, rng)
        assert strip_ids(sample.view(seat)) == strip_ids(view)
        assert sample.pending()[0].prompt.options == decision.prompt.options
        other = (seat + 1) % state.num_seats
        differs += strip_ids(sample.view(other)) != strip_ids(state.view(other))
        sample_rng = random.Random(1)
        while not sample.is_over():
            d = sample.pending()[0]
            sample.apply(d.seat, d.prompt.random_answer(sample_rng))
        state.apply(seat, decision.prompt.random_answer(rng))
    assert differs > 0  # hidden cards were sampled, not copied


def test_a_clone_is_independent_of_its_original() -> None:
    state = BY_NAME["agram"].create(seed=9)
    before = state.view(None)
    copy = state.clone()
    rng = random.Random(2)
    while not copy.is_over():
        decision = copy.pending()[0]
        copy.apply(decision.seat, decision.prompt.random_answer(rng))
    assert state.view(None) == before
    assert not state.is_over()


def test_people_type_a_choice_by_label_number_or_unique_prefix() -> None:
    game = BY_NAME["dicepoints"]
    state = game.create(seed=1)
    decision = state.pending()[0]
    view = state.view(decision.seat)
    assert game.parse_action(view, decision.prompt, "1") == "(throwalldice 'DICE)"
    assert game.parse_action(view, decision.prompt, "(THROW") == "(throwalldice 'DICE)"
    with pytest.raises(IllegalAction, match="1: \\(throwalldice 'DICE\\)"):
        game.parse_action(view, decision.prompt, "pass")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["hearts", "crazyeights", "throwdicematchcard", "agram", "dicepoints"])
def test_every_play_is_told_in_words_and_never_names_a_hidden_card(name: str) -> None:
    """`last_event` is shown to every seat and spectator: a card it names must be face up."""
    from partida.games.recycle.words import card_label
    from partida.games.registry import default_registry

    game = default_registry().get(name)
    for seed in range(4):
        state = game.create(seed=seed, seats=4 if name == "hearts" else game.min_seats)
        rng = random.Random(seed)
        while not state.is_over():
            decision = state.pending()[0]
            state.apply(decision.seat, decision.prompt.random_answer(rng))
            text = state.last_event()
            assert text and "(" not in text, text  # words, not the rule's expression
            public = state.view(None)
            face_up = {card_label(c["attrs"]) for loc in public["locations"] for c in loc.get("cards", [])}
            if text.startswith("plays "):  # a card put face down is told as "puts ... face down"
                assert text.removeprefix("plays ").split(";")[0] in face_up, text
        assert "player 1" in game.render(state.view(None))


def test_crazy_eights_offers_the_draw_or_the_pass_only_to_a_player_who_cannot_play() -> None:
    """The header's rule: a matching card or an eight must be played when held."""
    game = BY_NAME["crazyeights"]
    plays = draws = passes = 0
    for seats in (2, 3, 4):
        for seed in range(30):
            state = game.create(seed=seed, seats=seats)
            rng = random.Random(seed)
            while not state.is_over():
                decision = state.pending()[0]
                options = decision.prompt.options
                cards = [o for o in options if not o.startswith("(")]
                rules = [o for o in options if o.startswith("(")]
                assert not (cards and rules), options
                assert len(rules) <= 1, options
                plays += bool(cards)
                draws += any("move" in o for o in rules)
                passes += any("PASSES" in o for o in rules)
                state.apply(decision.seat, decision.prompt.random_answer(rng))
    assert plays and draws and passes
