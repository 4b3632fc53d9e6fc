"""The rule that says where a bot may be offered or seated (protocol/accepts.py), with plain values."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

from partida.protocol.accepts import Accepts, allows, clock_seconds


@dataclass
class G:
    name: str
    min_seats: int = 2
    max_seats: int = 2
    perfect_information: bool = True


TICTACTOE = G("tictactoe")
HEARTS = G("hearts", 4, 4, perfect_information=False)
EIGHTS = G("crazyeights", 2, 5, perfect_information=False)


def test_a_bare_list_of_games_means_those_games_at_any_seat_count() -> None:
    old = Accepts.from_hello(["hearts", "crazyeights"])
    assert allows(old, HEARTS, 4) is None
    assert allows(old, EIGHTS, 5) is None
    refused = allows(old, TICTACTOE, 2)
    assert refused is not None and "does not play tictactoe" in refused and "crazyeights, hearts" in refused


def test_no_declaration_allows_everything_but_its_load() -> None:
    assert allows(Accepts(), HEARTS, 4, clock=math.inf, playing=100, opponent_games=100) is None


def test_seat_counts_per_game() -> None:
    three = Accepts.from_hello({"crazyeights": [3], "tictactoe": None})
    assert allows(three, EIGHTS, 3) is None
    refused = allows(three, EIGHTS, 4)
    assert refused is not None and "4 seats" in refused and "crazyeights (3 seats)" in refused
    assert allows(three, EIGHTS) is None  # a listing: some count it plays
    assert allows(Accepts.from_hello({"crazyeights": [6]}), EIGHTS) is not None  # none the game has
    assert allows(three, TICTACTOE, 2) is None


def test_a_perfect_information_agent_declines_hidden_information_games() -> None:
    search = Accepts(None, hidden_information=False)
    refused = allows(search, HEARTS, 4)
    assert refused is not None and "hidden information" in refused and "perfect-information games only" in refused
    assert allows(search, TICTACTOE, 2) is None


def test_clock_range() -> None:
    ranged = Accepts(clock_min=5, clock_max=600)
    assert allows(ranged, TICTACTOE, 2, clock=5) is None
    assert allows(ranged, TICTACTOE, 2, clock=600) is None
    assert "4-second" in (allows(ranged, TICTACTOE, 2, clock=4) or "")
    assert "no clock" in (allows(ranged, TICTACTOE, 2, clock=clock_seconds(None)) or "")
    assert allows(ranged, TICTACTOE, 2, clock=None) is None  # a listing checks no clock
    assert allows(Accepts(clock_min=5), TICTACTOE, 2, clock=math.inf) is None  # untimed is long enough


def test_games_at_once_and_against_one_opponent() -> None:
    busy = Accepts(max_games=4, max_games_per_opponent=3)
    assert allows(busy, TICTACTOE, 2, clock=10, playing=3, opponent_games=2) is None
    assert "4 games" in (allows(busy, TICTACTOE, 2, clock=10, playing=4) or "")
    assert "against you" in (allows(busy, TICTACTOE, 2, clock=10, playing=3, opponent_games=3) or "")


@pytest.mark.parametrize(
    ("clock", "seconds"),
    [((None, 0.0, 10.0), 10.0), ((60.0, 2.0, None), 62.0), ((None, 0.0, None), math.inf)],
)
def test_a_clock_as_one_number(clock: tuple[float | None, float, float | None], seconds: float) -> None:
    assert clock_seconds(*clock) == seconds


def test_narrowing_keeps_what_both_allow() -> None:
    hello = Accepts.from_hello({"crazyeights": [3, 4], "hearts": None}, clock_max=60, max_games=5)
    agent = Accepts({"crazyeights": None, "tictactoe": None}, hidden_information=True, max_games=2)
    both = hello.narrowed(agent)
    assert both.games == {"crazyeights": frozenset({3, 4})}
    assert (both.clock_max, both.max_games) == (60, 2)
    assert Accepts().narrowed(agent) == agent and agent.narrowed(Accepts()) == agent
    assert not Accepts(hidden_information=False).narrowed(Accepts()).hidden_information


def test_the_hello_fields_read_back_the_same() -> None:
    terms = Accepts.from_hello({"crazyeights": [3]}, False, 1.0, 60.0, 4, 3)
    fields = terms.hello_fields()
    assert fields["games"] == {"crazyeights": [3]} and fields["hidden_information"] is False
    assert Accepts.from_hello(**fields) == terms
    assert Accepts().hello_fields() == {}
