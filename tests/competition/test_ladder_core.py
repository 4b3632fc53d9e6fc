"""The ladder's pure parts: ratings from ranks and the pairing rule (no server, no database)."""

from __future__ import annotations

import random

import pytest

from partida.competition.ladder_pairing import Candidate, order_seats, pick_group, pick_random, score
from partida.competition.ratings import MU, SIGMA, Rating, outcome_uncertainty, rate


def test_new_rating_displays_zero_and_a_win_moves_it() -> None:
    new = Rating()
    assert (new.mu, new.sigma) == (MU, SIGMA)
    assert new.display == pytest.approx(0.0)
    winner, loser = rate([new, new], [1, 2])
    assert winner.mu > MU > loser.mu
    assert winner.sigma < SIGMA and loser.sigma < SIGMA
    assert winner.display > 0 > loser.display


def test_a_draw_keeps_equal_players_equal() -> None:
    a, b = rate([Rating(), Rating()], [1, 1])
    assert a == b
    assert a.mu == pytest.approx(MU)


def test_four_seats_rated_from_ranks_with_a_tie() -> None:
    after = rate([Rating()] * 4, [1, 2, 2, 4])
    assert after[0].mu > after[1].mu == after[2].mu > after[3].mu
    assert all(r.sigma < SIGMA for r in after)


def test_rating_is_deterministic_bit_for_bit() -> None:
    rng = random.Random(5)
    results = [[rng.randint(1, 3) for _ in range(3)] for _ in range(200)]

    def replay() -> list[Rating]:
        table = [Rating()] * 5
        for i, ranks in enumerate(results):
            seats = [(i + k) % 5 for k in range(3)]
            new = rate([table[s] for s in seats], ranks)
            for s, r in zip(seats, new, strict=True):
                table[s] = r
        return table

    assert replay() == replay()  # dataclass equality: exact floats


def test_rate_refuses_mismatched_input() -> None:
    with pytest.raises(ValueError):
        rate([Rating(), Rating()], [1])
    with pytest.raises(ValueError):
        rate([Rating()], [1])


def test_outcome_uncertainty_is_highest_for_even_matches() -> None:
    assert outcome_uncertainty([Rating(), Rating()]) == pytest.approx(1.0)
    assert outcome_uncertainty([Rating()] * 4) == pytest.approx(1.0)
    sure = Rating(25, 1)
    assert outcome_uncertainty([sure, Rating(26, 1)]) > outcome_uncertainty([sure, Rating(35, 1)]) > 0


def test_score_prefers_close_then_unknown_opponents() -> None:
    anchor = cand(1, 25, 6)
    assert score([anchor, cand(2, 26, 3)]) > score([anchor, cand(3, 40, 3)])
    assert score([anchor, cand(2, 25, 6)]) > score([anchor, cand(3, 25, 2)])


def cand(id: int, mu: float = MU, sigma: float = SIGMA, games: int = 0, **kw: object) -> Candidate:
    return Candidate(id, Rating(mu, sigma), games, **kw)  # type: ignore[arg-type]


def test_too_few_idle_gives_no_game() -> None:
    assert pick_group([cand(1)], 2) is None
    assert pick_random([cand(1)], 2, random.Random(1)) is None


def test_most_uncertain_plays_first_against_the_closest_rating() -> None:
    idle = [cand(1, 30, 2), cand(2, 20, 6), cand(3, 21, 2), cand(4, 40, 2)]
    group = pick_group(idle, 2)
    assert group is not None
    assert {c.id for c in group} == {2, 3}  # 2 is least sure; 3 is the closest rating to it


def test_no_immediate_rematch_when_someone_else_is_idle() -> None:
    a = cand(1, 25, 5, last_opponents=frozenset({2}))
    b = cand(2, 25, 4, last_opponents=frozenset({1}))
    far = cand(3, 45, 1)
    group = pick_group([a, b, far], 2)
    assert group is not None and {c.id for c in group} == {1, 3}
    # nobody else: the pair plays again rather than nobody playing
    group = pick_group([a, b], 2)
    assert group is not None and {c.id for c in group} == {1, 2}
    # others are playing: wait for them rather than replay, unless the caller has waited enough
    assert pick_group([a, b], 2, busy=2) is None
    group = pick_group([a, b], 2, busy=2, may_repeat=True)
    assert group is not None and {c.id for c in group} == {1, 2}


def test_least_met_pairs_go_first() -> None:
    a = cand(1, 25, 5, met={2: 3, 3: 0})
    often = cand(2, 25, 5, met={1: 3})
    never = cand(3, 25, 5)
    group = pick_group([a, often, never], 2)
    assert group is not None and {c.id for c in group} == {1, 3}


@pytest.mark.parametrize("bots", [4, 5, 6])
def test_concurrency_two_mixes_pairs_as_games_end_at_different_times(bots: int) -> None:
    """The issue's lock-in: with two games at once, the two bots of the game that ends first
    used to be the only idle members and were paired again at once, so a ladder of four played
    the same two pairs for ever. Now they wait for the others, every pair meets, and the pair
    counts stay even."""
    rng = random.Random(bots)
    members = {i: cand(i) for i in range(1, bots + 1)}
    playing: list[tuple[float, list[Candidate]]] = []  # (ends at, seat order)
    pair_games: dict[frozenset[int], int] = {}
    last: dict[int, frozenset[int]] = {}
    now, played = 0.0, 0
    while played < 20 * bots:
        busy = {c.id for _, group in playing for c in group}
        while len(playing) < 2:
            idle = [c for c in members.values() if c.id not in busy]
            group = pick_group(idle, 2, busy=len(busy))
            if group is None:
                break
            playing.append((now + rng.uniform(1, 10), group))
            busy |= {c.id for c in group}
        playing.sort(key=lambda game: game[0])
        now, group = playing.pop(0)
        played += 1
        key = frozenset(c.id for c in group)
        pair_games[key] = pair_games.get(key, 0) + 1
        for c in group:  # nobody played the same opponent twice in a row
            assert last.get(c.id) != key, (played, sorted(key))
            last[c.id] = key
        new = rate([members[c.id].rating for c in group], rng.choice([[1, 2], [2, 1]]))
        for seat, (c, r) in enumerate(zip(group, new, strict=True)):
            old = members[c.id]
            counts = dict(old.seat_counts)
            counts[seat] = counts.get(seat, 0) + 1
            met = dict(old.met)
            other = next(iter(key - {c.id}))
            met[other] = met.get(other, 0) + 1
            members[c.id] = Candidate(c.id, r, old.games + 1, key - {c.id}, counts, met)
    assert len(pair_games) == bots * (bots - 1) // 2  # every pair met
    assert max(pair_games.values()) <= 3 * min(pair_games.values())


def test_seats_balance_the_first_move() -> None:
    often_first = cand(1, seat_counts={0: 5, 1: 1})
    often_second = cand(2, seat_counts={0: 1, 1: 5})
    assert [c.id for c in order_seats([often_first, often_second])] == [2, 1]
    assert [c.id for c in order_seats([often_second, often_first])] == [2, 1]
    # with no history, the group keeps its order
    assert [c.id for c in order_seats([cand(7), cand(3)])] == [7, 3]


@pytest.mark.parametrize("outcomes", ["draws", "random"])
def test_over_many_games_play_rotates_and_colours_alternate(outcomes: str) -> None:
    """A concurrency-1 ladder of five: everyone plays about as often, nobody meets the same
    opponent twice in a row, and each member's first moves and second moves stay even."""
    rng = random.Random(2)
    members = {i: cand(i) for i in range(1, 6)}
    pairs: set[frozenset[int]] = set()
    for _ in range(200):
        group = pick_group(list(members.values()), 2)
        assert group is not None
        key = frozenset(c.id for c in group)
        assert not any(c.last_opponents & key for c in group)
        pairs.add(key)
        ranks = [1, 1] if outcomes == "draws" else rng.choice([[1, 2], [2, 1]])
        new = rate([c.rating for c in group], ranks)
        for seat, (c, r) in enumerate(zip(group, new, strict=True)):
            counts = dict(c.seat_counts)
            counts[seat] = counts.get(seat, 0) + 1
            members[c.id] = Candidate(c.id, r, c.games + 1, key - {c.id}, counts)
    games = [c.games for c in members.values()]
    assert min(games) >= 0.8 * max(games)
    for c in members.values():
        assert abs(c.seat_counts.get(0, 0) - c.seat_counts.get(1, 0)) <= 2
    if outcomes == "random":
        assert len(pairs) == 10


def test_pairing_is_deterministic_and_input_order_free() -> None:
    rng = random.Random(3)
    idle = [cand(i, rng.uniform(10, 40), rng.uniform(1, 8), rng.randint(0, 9)) for i in range(12)]
    first = pick_group(idle, 2)
    again = pick_group(list(reversed(idle)), 2)
    assert first is not None and again is not None
    assert [c.id for c in first] == [c.id for c in again]


def test_four_seats_exhaustive_and_greedy() -> None:
    rng = random.Random(9)
    small = [cand(i, rng.uniform(15, 35), rng.uniform(2, 8)) for i in range(8)]
    group = pick_group(small, 4)
    assert group is not None and len({c.id for c in group}) == 4
    anchor = max(small, key=lambda c: c.rating.sigma)
    assert anchor in group
    large = [cand(i, rng.uniform(15, 35), rng.uniform(2, 8)) for i in range(60)]  # C(59, 3) > MAX_GROUPS
    group = pick_group(large, 4)
    assert group is not None and len({c.id for c in group}) == 4


def test_random_pairing_picks_distinct_idle_members() -> None:
    idle = [cand(i) for i in range(6)]
    rng = random.Random(4)
    seen = set()
    for _ in range(100):
        group = pick_random(idle, 3, rng)
        assert group is not None and len({c.id for c in group}) == 3
        seen.add(tuple(c.id for c in group))
    assert len(seen) > 20


def test_kendall_tau_counts_pairs_in_the_same_order() -> None:
    from partida.competition.ladder_report import kendall_tau

    truth = ["a", "b", "c", "d"]
    assert kendall_tau(truth, truth) == 1.0
    assert kendall_tau(list(reversed(truth)), truth) == -1.0
    assert kendall_tau(["b", "a", "c", "d"], truth) == pytest.approx(4 / 6)  # one pair of six swapped
    with pytest.raises(ValueError):
        kendall_tau(["a", "b"], ["a", "c"])


def test_standings_after_each_game_and_head_to_head() -> None:
    from partida.competition.ladder_report import head_to_head, rating_series, standings_after

    up, down = Rating(30.0, 5.0), Rating(20.0, 5.0)
    changes = [(1, "x", up), (1, "y", down), (2, "y", Rating(40.0, 4.0)), (2, "z", down)]
    assert list(standings_after(changes, ["x", "y", "z"])) == [(1, ["x", "y", "z"]), (2, ["y", "x", "z"])]
    series = rating_series([("x", Rating(), up), ("x", up, down)])
    assert [(p.games, p.mu) for p in series["x"]] == [(0, 25.0), (1, 30.0), (2, 20.0)]
    h2h = head_to_head([(["x", "y"], [1, 2]), (["y", "x"], [1, 1]), (["x", "y", "z"], [3, 1, 2])], order=["y"])
    assert h2h.names == ["y", "x", "z"]
    assert (h2h.record("x", "y").ahead, h2h.record("x", "y").level, h2h.record("x", "y").behind) == (1, 1, 1)
    assert h2h.record("z", "x").ahead == 1 and h2h.record("x", "z").behind == 1
    assert h2h.record("z", "y").text() == "0-0-1"
