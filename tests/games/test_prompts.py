"""Typed prompts validate answers, enumerate them when few, and survive a trip over the wire."""

from __future__ import annotations

import json
import random

import pytest

from partida.games.base import IllegalAction
from partida.games.prompts import Assign, ChooseOne, ChooseSubset, Order, prompt_from_data

PROMPTS = [
    ChooseOne(name="move", options=["f5", "d6", {"cast": 3, "target": [1, "p"]}]),
    ChooseSubset(name="attackers", candidates=[11, 12, 13], min=0, max=None),
    ChooseSubset(name="discard", candidates=["a", "b", "c", "d"], min=2, max=2),
    Assign(name="blockers", sources=["x", "y"], targets=[[1, 2], [2]]),
    Order(name="damage order", items=[5, 6, 7]),
]


@pytest.mark.parametrize("prompt", PROMPTS, ids=lambda p: p.name)
def test_every_enumerated_answer_is_valid_and_random_answers_are_among_them(prompt) -> None:
    answers = prompt.answers()
    assert answers
    keys = {json.dumps(prompt.validate(a), sort_keys=True) for a in answers}
    assert len(keys) == len(answers)
    rng = random.Random(0)
    for _ in range(50):
        assert json.dumps(prompt.validate(prompt.random_answer(rng)), sort_keys=True) in keys


@pytest.mark.parametrize("prompt", PROMPTS, ids=lambda p: p.name)
def test_prompts_survive_json(prompt) -> None:
    again = prompt_from_data(json.loads(json.dumps(prompt.to_data())))
    assert again.answers() is not None
    assert len(again.answers()) == len(prompt.answers())


def test_counts_match_the_combinatorics() -> None:
    assert len(ChooseSubset(name="a", candidates=list(range(3))).answers()) == 2**3
    assert len(Assign(name="b", sources=[1, 2], targets=[[10, 20], [10, 20]]).answers()) == (2 + 1) ** 2
    assert ChooseSubset(name="c", candidates=list(range(30))).answers() is None


@pytest.mark.parametrize(
    ("prompt", "answer"),
    [
        (PROMPTS[0], "e4"),
        (PROMPTS[0], {"cast": 3}),
        (PROMPTS[1], [11, 11]),
        (PROMPTS[1], [14]),
        (PROMPTS[1], 11),
        (PROMPTS[2], ["a"]),
        (PROMPTS[3], [["x", 2], ["x", 1]]),
        (PROMPTS[3], [["y", 1]]),
        (PROMPTS[3], [["x"]]),
        (PROMPTS[4], [5, 6]),
        (PROMPTS[4], [5, 5, 6]),
    ],
)
def test_bad_answers_are_refused_with_a_sentence(prompt, answer) -> None:
    with pytest.raises(IllegalAction) as exc:
        prompt.validate(answer)
    assert exc.value.message


def test_choose_one_tells_apart_values_python_takes_for_equal() -> None:
    """True == 1 and 1.0 == 1 in Python, but they are other values on the wire: an answer
    matches only an option of its own type, whichever option comes first."""
    prompt = ChooseOne(name="pick", options=[True, 1.0, 1, "1"])
    assert type(prompt.validate(1)) is int
    assert prompt.validate(True) is True
    assert type(prompt.validate(1.0)) is float
    assert prompt.validate("1") == "1"
    for wrong in (ChooseOne(name="a", options=[True, 2.0]), ChooseOne(name="b", options=[False, 0.0])):
        with pytest.raises(IllegalAction):
            wrong.validate(1 if wrong.name == "a" else 0)
    with pytest.raises(IllegalAction):
        ChooseOne(name="c", options=[1, 2]).validate(True)
