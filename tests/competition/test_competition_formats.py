"""The tournament formats' pairing rules and tie-breaks (partida/competition/), with plain values
and hand-worked examples: no server, no clock, no database."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction as F
from typing import Any

import pytest

from partida.competition.arena import ArenaScore, Waiting, pair_waiting
from partida.competition.results import Bye, GameResult, rank_points
from partida.competition.roundrobin import berger_pairs, schedule
from partida.competition.seating import pair_tables
from partida.competition.swiss import pair_round
from partida.competition.tiebreaks import ROUND_ROBIN_ORDER, standings


def test_points_by_rank_for_two_and_four_seats() -> None:
    assert rank_points([1, 2]) == [1, 0]
    assert rank_points([1, 1]) == [F(1, 2), F(1, 2)]
    assert rank_points([1, 2, 3, 4]) == [1, F(2, 3), F(1, 3), 0]
    assert rank_points([1, 2, 2, 4]) == [1, F(1, 2), F(1, 2), 0]  # second and third shared
    assert rank_points([3, 1, 1, 3]) == [F(1, 6), F(5, 6), F(5, 6), F(1, 6)]


# --- round robin ------------------------------------------------------------------------------


def test_berger_table_for_six_is_fides() -> None:
    fide = [
        {(1, 6), (2, 5), (3, 4)},
        {(6, 4), (5, 3), (1, 2)},
        {(2, 6), (3, 1), (4, 5)},
        {(6, 5), (1, 4), (2, 3)},
        {(3, 6), (4, 2), (5, 1)},
    ]
    assert [set(berger_pairs(6, r)) for r in range(1, 6)] == fide
    assert [set(berger_pairs(4, r)) for r in range(1, 4)] == [{(1, 4), (2, 3)}, {(4, 3), (1, 2)}, {(2, 4), (3, 1)}]


@pytest.mark.parametrize("double", [False, True])
def test_round_robin_of_four_meets_every_pair_the_right_number_of_times(double: bool) -> None:
    rounds = schedule(["a", "b", "c", "d"], double=double)
    assert len(rounds) == (6 if double else 3)
    meetings = Counter(frozenset(g) for r in rounds for g in r.games)
    assert set(meetings) == {frozenset(p) for p in itertools.combinations("abcd", 2)}
    assert set(meetings.values()) == {2 if double else 1}
    for r in rounds:  # everyone plays every round, once
        assert sorted(p for g in r.games for p in g) == ["a", "b", "c", "d"] and r.bye is None
    if double:  # each pair once in each seat order
        assert Counter(g for r in rounds for g in r.games) == Counter({g: 1 for g in itertools.permutations("abcd", 2)})
    first_seats = Counter(g[0] for r in rounds for g in r.games)
    assert max(first_seats.values()) - min(first_seats.values()) <= (0 if double else 1)


def test_round_robin_of_five_gives_each_one_bye() -> None:
    rounds = schedule([1, 2, 3, 4, 5])
    assert len(rounds) == 5
    assert sorted(r.bye for r in rounds) == [1, 2, 3, 4, 5]
    meetings = Counter(frozenset(g) for r in rounds for g in r.games)
    assert len(meetings) == 10 and set(meetings.values()) == {1}


def test_direct_encounter_breaks_a_round_robin_tie() -> None:
    """A round robin of four, worked by hand: a beats b and d, b beats c and d, c beats a, d beats
    c. a and b have 2 points each, c and d 1 each. Direct encounter: a took 1 from b, b 0 from a;
    d 1 from c, c 0. b is seeded first, so only the tie-break puts a above it."""
    games = [
        GameResult(1, ("a", "b"), (1, 2)),
        GameResult(1, ("c", "d"), (2, 1)),
        GameResult(2, ("b", "c"), (1, 2)),
        GameResult(2, ("d", "a"), (2, 1)),
        GameResult(3, ("c", "a"), (1, 2)),
        GameResult(3, ("b", "d"), (1, 2)),
    ]
    rows = standings(["b", "a", "c", "d"], games, ROUND_ROBIN_ORDER)
    assert [(r.rank, r.player, r.points) for r in rows] == [(1, "a", 2), (2, "b", 2), (3, "d", 1), (4, "c", 1)]
    de = {r.player: r.tiebreaks["direct_encounter"] for r in rows}
    assert de == {"a": 1, "b": 0, "d": 1, "c": 0}
    # Sonneborn-Berger by hand: a beat b (2) and d (1) = 3; b beat c (1) and d (1) = 2
    assert {r.player: r.tiebreaks["sonneborn_berger"] for r in rows}["a"] == 3


def test_a_cycle_leaves_players_sharing_a_rank() -> None:
    """a beats b, b beats c, c beats a, and each beats d: 2 points each, 1 each among themselves,
    Sonneborn-Berger 2 + 0 = 2 each. Nothing separates them: they share rank 1."""
    games = [
        GameResult(1, ("a", "b"), (1, 2)),
        GameResult(1, ("c", "d"), (1, 2)),
        GameResult(2, ("b", "c"), (1, 2)),
        GameResult(2, ("d", "a"), (2, 1)),
        GameResult(3, ("c", "a"), (1, 2)),
        GameResult(3, ("b", "d"), (1, 2)),
    ]
    rows = standings(["a", "b", "c", "d"], games, ROUND_ROBIN_ORDER)
    assert [(r.rank, r.player) for r in rows] == [(1, "a"), (1, "b"), (1, "c"), (4, "d")]


def test_standings_of_no_one_are_empty() -> None:
    """A tournament nobody has entered yet still has standings (its page shows them)."""
    assert standings([], []) == []
    assert standings([], [], ROUND_ROBIN_ORDER) == []


def test_unknown_tiebreak_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown tie-break 'koya'"):
        standings(["a", "b"], [], ("koya",))


# --- Swiss --------------------------------------------------------------------------------------


def by_seed(players: list[str], a: str, b: str) -> tuple[int, int]:
    """The Swiss test's results: the better seed wins, neighbouring seeds draw."""
    sa, sb = players.index(a), players.index(b)
    if abs(sa - sb) == 1:
        return (1, 1)
    return (1, 2) if sa < sb else (2, 1)


def play_swiss(players: list[str], rounds: int, result=by_seed) -> tuple[list, list[GameResult | Bye]]:  # type: ignore[no-untyped-def]
    history: list[GameResult | Bye] = []
    paired = []
    for number in range(1, rounds + 1):
        rnd = pair_round(number, players, history)
        paired.append(rnd)
        history += [GameResult(number, g, result(players, *g)) for g in rnd.games]
        if rnd.bye is not None:
            history.append(Bye(number, rnd.bye))
    return paired, history


def test_swiss_of_nine_over_four_rounds() -> None:
    """Worked by hand from the rules in partida/competition/swiss.py (seeds A..I, A the best):

    R1: I (last) has the bye; S1 ABCD meets S2 EFGH, seats alternating down the boards.
        A-E 1-0, F-B 0-1, C-G 1-0, H-D 0-1.
    R2: 1 point: A B C D I, 0: E F G H. Bye to H, the lowest without one. A B | C D I: A-C, B-D;
        I floats down to meet E; F-G. C-A 0-1 (A had the first seat: the higher-ranked gets the
        second it prefers), B-D 1-0, E-I 1-0, G-F draw.
    R3: bye to G (lowest of 1/2, no bye yet). A-B; 1 point C D E H I: C-E, D-H met in R1 so D-I,
        H floats to meet F. A-B draw, E-C 0-1, D-I 1-0, F-H 1-0.
    R4: bye to E (I, H, G had theirs). A and B met: A meets the 2-point group's C (met) so D;
        B floats to C; F-G met, F-H met: F-I; G-H. D-A 0-1, B-C draw, I-F 0-1, H-G draw.
    """
    players = list("ABCDEFGHI")
    rounds, history = play_swiss(players, 4)
    assert [(r.games, r.bye) for r in rounds] == [
        ((("A", "E"), ("F", "B"), ("C", "G"), ("H", "D")), "I"),
        ((("C", "A"), ("B", "D"), ("E", "I"), ("G", "F")), "H"),
        ((("A", "B"), ("E", "C"), ("D", "I"), ("F", "H")), "G"),
        ((("D", "A"), ("B", "C"), ("I", "F"), ("H", "G")), "E"),
    ]
    pairs = [frozenset(g) for r in rounds for g in r.games]
    assert len(pairs) == len(set(pairs)), "no repeat pairing"
    assert len({r.bye for r in rounds}) == 4, "one bye a round, never twice to one player"
    for r in rounds:
        assert sorted([p for g in r.games for p in g] + [r.bye]) == players
    # Final points: A 3 1/2, B 3, C 2 1/2, F 2 1/2, D 2, E 2 (bye), G 2 (bye), H 1 1/2 (bye), I 1 (bye).
    # Buchholz = the opponents' final points (a bye: the player's own); cut-1 drops the lowest;
    # Sonneborn-Berger = the points of those beaten plus half of those drawn with:
    #   A: E 2 + C 5/2 + B 3 + D 2 = 19/2, cut 15/2; SB 2 + 5/2 + 3/2 + 2 = 8
    #   B: F 5/2 + D 2 + A 7/2 + C 5/2 = 21/2, cut 17/2; SB 5/2 + 2 + 7/4 + 5/4 = 15/2
    #   C: G 2 + A 7/2 + E 2 + B 3 = 21/2, cut 17/2; SB 2 + 2 + 3/2 = 11/2
    #   F: B 3 + G 2 + H 3/2 + I 1 = 15/2, cut 13/2; SB 1 + 3/2 + 1 = 7/2
    #   D: H 3/2 + B 3 + I 1 + A 7/2 = 9, cut 8; SB 3/2 + 1 = 5/2
    #   E: A 7/2 + I 1 + C 5/2 + bye 2 = 9, cut 8; SB 1
    #   G: C 5/2 + F 5/2 + bye 2 + H 3/2 = 17/2, cut 7; SB 5/4 + 3/4 = 2
    #   H: D 2 + bye 3/2 + F 5/2 + G 2 = 8, cut 13/2; SB 1
    #   I: bye 1 + E 2 + D 2 + F 5/2 = 15/2, cut 13/2; SB 0
    # C and F tie on points: cut-1 puts C first. D, E, G tie: G's cut-1 is lowest; D and E tie on
    # both Buchholz, and D's Sonneborn-Berger is higher.
    expected = [
        (1, "A", F(7, 2), F(15, 2), F(19, 2), F(8)),
        (2, "B", F(3), F(17, 2), F(21, 2), F(15, 2)),
        (3, "C", F(5, 2), F(17, 2), F(21, 2), F(11, 2)),
        (4, "F", F(5, 2), F(13, 2), F(15, 2), F(7, 2)),
        (5, "D", F(2), F(8), F(9), F(5, 2)),
        (6, "E", F(2), F(8), F(9), F(1)),
        (7, "G", F(2), F(7), F(17, 2), F(2)),
        (8, "H", F(3, 2), F(13, 2), F(8), F(1)),
        (9, "I", F(1), F(13, 2), F(15, 2), F(0)),
    ]
    rows = standings(players, history)
    got = [
        (r.rank, r.player, r.points, *(r.tiebreaks[k] for k in ("buchholz_cut1", "buchholz", "sonneborn_berger")))
        for r in rows
    ]
    assert got == expected


def repeat_free_pairing_exists(players: list[str], met: set[frozenset[str]]) -> bool:
    """By brute force: can `players` (all but one when odd) be paired with no pair in `met`?"""
    if len(players) <= 1:
        return True
    if len(players) % 2:
        return any(repeat_free_pairing_exists(players[:i] + players[i + 1 :], met) for i in range(len(players)))
    first, rest = players[0], players[1:]
    return any(
        frozenset((first, other)) not in met and repeat_free_pairing_exists(rest[:i] + rest[i + 1 :], met)
        for i, other in enumerate(rest)
    )


@pytest.mark.parametrize("count", [6, 7, 10, 11])
def test_swiss_to_the_end_repeats_only_when_it_must(count: int) -> None:
    """Random results over a round robin's worth of rounds, where avoiding repeats gets hardest
    (an earlier round can leave no pairing without one): a round repeats a pairing only when no
    pairing of its players (byes aside) without one existed; nobody has two byes."""
    players = [f"p{i}" for i in range(count)]
    rng = random.Random(count)
    rounds, _ = play_swiss(
        players, count - 1 if count % 2 == 0 else count - 2, lambda _p, a, b: rng.choice([(1, 2), (2, 1), (1, 1)])
    )
    met: set[frozenset[str]] = set()
    forced = 0
    for r in rounds:
        pairs = {frozenset(g) for g in r.games}
        if pairs & met:
            forced += 1
            assert not repeat_free_pairing_exists(players, met), f"round {r.number} repeated needlessly"
        met |= pairs
    assert forced <= 2
    byes = [r.bye for r in rounds if r.bye is not None]
    assert len(byes) == len(set(byes)) == (len(rounds) if count % 2 else 0)


def test_swiss_repeats_only_when_it_must() -> None:
    """Three rounds of four players exhaust the pairs; a fourth round must repeat, and does."""
    players = ["a", "b", "c", "d"]
    rounds, _ = play_swiss(players, 4)
    first_three = [frozenset(g) for r in rounds[:3] for g in r.games]
    assert len(set(first_three)) == 6
    assert len(rounds[3].games) == 2


# --- arena --------------------------------------------------------------------------------------


def test_arena_streak_points_by_hand() -> None:
    """W W W D W L: 2, 2 (now on fire), 4, 2 (the draw doubled, the streak over), 2, 0 = 12."""
    score = ArenaScore()
    seen = []
    for ranks in [(1, 2), (1, 2), (1, 2), (1, 1), (1, 2), (2, 1)]:
        score = score.after(ranks, 0)
        seen.append(score.points)
    assert seen == [2, 4, 8, 10, 12, 12]
    assert ArenaScore().after((1, 2, 2, 2), 1).points == 0  # second of four: no points
    assert ArenaScore(0, 2).after((2, 1, 3, 4), 1) == ArenaScore(4, 3)


def test_arena_pairs_near_in_score_and_never_back_to_back() -> None:
    waiting = [
        Waiting("a", 10, since=1),
        Waiting("b", 9, last_opponents=frozenset({"a"})),
        Waiting("c", 8),
        Waiting("d", 1),
    ]
    # b played a last: a meets c, the next below it; b then meets d
    assert pair_waiting(waiting) == [("a", "c"), ("b", "d")]
    # two who just played each other and nobody else: they wait
    assert pair_waiting([Waiting("a", 2, last_opponents=frozenset({"b"})), Waiting("b", 0)]) == []


def test_arena_tables_of_four_keep_last_tables_apart() -> None:
    """Four-seat arena tables: the top waiting player's table is filled with the next players down
    the ranking who sat with none of its members at their previous table."""
    last = {"a": {"b", "x", "y"}, "b": {"a", "x", "y"}}
    waiting = [Waiting(p, 10 - i, last_opponents=frozenset(last.get(p, ()))) for i, p in enumerate("abcdefgh")]
    assert pair_waiting(waiting, seats=4) == [("a", "c", "d", "e"), ("b", "f", "g", "h")]
    assert pair_waiting(waiting[:5], seats=4) == [("a", "c", "d", "e")]  # b waits for the next table


def test_arena_simulation() -> None:
    """Twenty players for a simulated hour: games of random length, results by strength. Checks
    that nobody plays the same opponent twice in a row, that everyone waiting with a possible
    opponent is paired, and that the scores are the sum of the streak rule over each's games."""
    rng = random.Random(7)
    strength = {f"p{i}": i for i in range(20)}
    scores = {p: ArenaScore() for p in strength}
    last: dict[str, frozenset[str]] = {p: frozenset() for p in strength}
    results: dict[str, list[int]] = {p: [] for p in strength}
    waiting_since = {p: 0.0 for p in strength}
    playing: list[tuple[float, tuple[str, str]]] = []
    now, games = 0.0, 0
    while now < 3600:
        tables = pair_waiting([Waiting(p, scores[p].points, strength[p], t, last[p]) for p, t in waiting_since.items()])
        for table in tables:
            assert table[1] not in last[table[0]] and table[0] not in last[table[1]]
            for p in table:
                del waiting_since[p]
            playing.append((now + rng.uniform(60, 600), table))
        left = list(waiting_since)
        if len(left) >= 2:  # anyone still waiting has only their last opponent to wait with
            assert len(left) == 2 and left[0] in last[left[1]]
        playing.sort()
        now, (a, b) = playing.pop(0)
        p_a = 0.5 + (strength[a] - strength[b]) / 50
        ranks = (1, 2) if rng.random() < p_a else (2, 1) if rng.random() > 0.1 else (1, 1)
        for seat, p in enumerate((a, b)):
            scores[p] = scores[p].after(ranks, seat)
            results[p].append(ranks[seat] if ranks != (1, 1) else 0)
            waiting_since[p] = now
        last[a], last[b] = frozenset({b}), frozenset({a})
        games += 1
    assert games > 100
    for p, rs in results.items():  # replay the streak rule by hand
        total, streak = 0, 0
        for r in rs:
            double = 2 if streak >= 2 else 1
            total += {1: 2, 0: 1, 2: 0}[r] * double
            streak = streak + 1 if r == 1 else 0
        assert scores[p].points == total
    best = max(scores, key=lambda p: scores[p].points)
    assert strength[best] >= 15  # the strong end wins the arena


# --- tables of four -----------------------------------------------------------------------------


def test_four_seat_tables_rotate_seats_and_group_by_score() -> None:
    ranked = [f"p{i}" for i in range(10)]
    first = pair_tables(ranked, 4)
    assert first.tables == (("p0", "p1", "p2", "p3"), ("p4", "p5", "p6", "p7"))
    assert first.byes == ("p9", "p8")  # the lowest sit out
    second = pair_tables(ranked, 4, had_bye=frozenset(first.byes))
    assert second.byes == ("p7", "p6")
    # four rounds of the same eight at the same tables: each sits once in each seat
    counts: dict[str, list[int]] = {p: [0, 0, 0, 0] for p in ranked[:8]}
    for _ in range(4):
        rnd = pair_tables(ranked[:8], 4, counts)
        assert [set(t) for t in rnd.tables] == [set(ranked[:4]), set(ranked[4:8])] and rnd.byes == ()
        for table in rnd.tables:
            for seat, p in enumerate(table):
                counts[p][seat] += 1
    assert all(c == [1, 1, 1, 1] for c in counts.values())


def test_arena_scores_replay_the_streak_rule_over_stored_tables() -> None:
    """The service's arena points: two wins put a player on fire, the third win counts 4, a draw
    ends the streak; a void table and a no-show stored with ranks counted from 0 read right."""
    from partida.competition.tables import arena_scores

    @dataclass
    class T:
        round: int
        accounts: list[int]
        result: dict[str, Any] | None

    tables = [
        T(3, [1, 2], {"ranks": [1, 2]}),  # 1 wins a third time, on fire: 4
        T(1, [1, 2], {"ranks": [1, 2]}),
        T(2, [2, 1], {"ranks": [1, 0]}),  # seat 1 first (a no-show's ranks from 0): 1 wins
        T(4, [1, 3], {"ranks": [1, 1]}),  # a draw on fire: 2, the streak over
        T(5, [3, 1], {"ranks": [1, 1], "void": True}),
        T(6, [1, 3], None),  # still being played
    ]
    scores = arena_scores(tables)
    assert scores[1] == ArenaScore(2 + 2 + 4 + 2, 0)
    assert scores[2] == ArenaScore(0, 0)
    assert scores[3] == ArenaScore(1, 0)  # a draw off fire: 1
