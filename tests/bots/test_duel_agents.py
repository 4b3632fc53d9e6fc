"""Duel agents: the mulligan table, legal play in whole games, and the search agents' choices in
positions where the right answer is clear."""

from __future__ import annotations

import json
import random

import pytest

from partida.bots.base import RandomAgent, Turn
from partida.bots.duel.evaluation import evaluation
from partida.bots.duel.lookahead import LookaheadAgent
from partida.bots.duel.mulligan import REWARD_ON_PLAY, MulliganAgent, mulligan_table
from partida.bots.duel.search import SearchAgent, SplitSearchAgent
from partida.bots.duel.turn import TurnSearch
from partida.bots.local import play_local
from partida.cli import main as cli_main
from partida.games.duel import GAMES
from tests.duel_positions import blank, give, put

DUEL = GAMES[0]


def turn_for(state, seat: int) -> Turn:
    decision = state.pending()[0]
    assert decision.seat == seat
    return Turn(DUEL, seat, decision.prompt, state.view(seat))


def test_mulligan_table_is_value_iteration_over_hand_sizes() -> None:
    table = mulligan_table(24, on_the_play=True)
    assert table.value[0][0] == REWARD_ON_PLAY[0]
    assert table.sigma[1] == table.value[0][0]
    for i in range(1, 8):
        for j in range(i + 1):
            assert table.value[i][j] == max(table.reward(i, j), table.sigma[i])
    assert table.keep(7, 3) and not table.keep(7, 0) and not table.keep(7, 7)


def test_mulligan_table_command_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["duel", "mulligan-table", "--deck", "white", "--on-the-draw", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["deck"] == "white" and data["on_the_play"] is False
    assert [len(r["values"]) for r in data["rows"]] == [1, 2, 3, 4, 5, 6, 7, 8]


def test_mulligan_table_command_rejects_an_unknown_deck(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["duel", "mulligan-table", "--deck", "blue", "--on-the-play"]) == 2
    assert "unknown deck 'blue'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "make",
    [
        lambda s: MulliganAgent(seed=s),
        lambda s: SearchAgent(seed=s),
        lambda s: LookaheadAgent(seconds=0.02, seed=s),
        lambda s: LookaheadAgent(seconds=0.02, seed=s, whole_turn=1),
        lambda s: LookaheadAgent(seconds=0.02, seed=s, whole_turn=1, rollout="turn"),
    ],
)
def test_agents_play_whole_games_legally(make) -> None:
    for seed in range(2):
        played = play_local(DUEL, [make(seed), RandomAgent(seed)], seed=seed)
        assert played.state.is_over()


def test_search_agent_burns_the_opponent_out() -> None:
    state = blank()
    state.players[1].life = 3
    put(state, "Mountain", 0)
    put(state, "Mountain", 0)
    hammer = give(state, "Volcanic Hammer", 0)
    give(state, "Pensive Minotaur", 0)
    for agent in (SearchAgent(seed=1), LookaheadAgent(seconds=0.05, seed=1)):
        assert agent.act(turn_for(state, 0)) == {"cast": hammer, "target": 1}


def test_search_agent_blocks_a_lethal_attacker() -> None:
    state = blank()
    state.players[1].life = 2
    bears = put(state, "Grizzly Bears", 0)
    corpse = put(state, "Walking Corpse", 1)
    state.apply(0, "pass")
    state.apply(0, [bears])
    for agent in (SearchAgent(seed=1), LookaheadAgent(seconds=0.05, seed=1)):
        assert agent.act(turn_for(state, 1)) == [[corpse, bears]]


def test_search_agent_attacks_an_empty_board() -> None:
    state = blank()
    bears = put(state, "Grizzly Bears", 0)
    state.apply(0, "pass")
    assert SearchAgent(seed=1).act(turn_for(state, 0)) == [bears]


def showcase():
    """The study's showcase: Nest Robber attacks into a Siege Mastodon that must block (else the
    Robber and a Volcanic Hammer are lethal), and the Hammer finishes the damaged Mastodon in the
    second main phase."""
    state = blank()
    state.players[1].life = 5
    for _ in range(4):
        put(state, "Mountain", 0)
    robber = give(state, "Nest Robber", 0)
    hammer = give(state, "Volcanic Hammer", 0)
    mastodon = put(state, "Siege Mastodon", 1)
    return state, robber, hammer, mastodon


def test_whole_turn_search_plans_the_attack_that_main_two_finishes() -> None:
    state, robber, hammer, mastodon = showcase()
    plan = TurnSearch(evaluation("reference"), random.Random(1)).turn(state)
    assert plan.main1 == [{"cast": robber}]
    assert plan.attack == [robber]
    assert plan.blocks == [[mastodon, robber]]
    assert plan.main2 == [{"cast": hammer, "target": mastodon}]

    agent = SearchAgent(seed=1)
    assert agent.act(turn_for(state, 0)) == {"cast": robber}
    state.apply(0, {"cast": robber})
    assert agent.act(turn_for(state, 0)) == "pass"
    state.apply(0, "pass")
    assert agent.act(turn_for(state, 0)) == [robber]
    state.apply(0, [robber])
    state.apply(1, [[mastodon, robber]])
    assert state.permanent(mastodon).damage == 2
    assert agent.act(turn_for(state, 0)) == {"cast": hammer, "target": mastodon}
    state.apply(0, {"cast": hammer, "target": mastodon})
    assert state.permanent(mastodon) is None


def test_split_planner_cannot_see_the_follow_up_in_main_two() -> None:
    state, robber, _, _ = showcase()
    state.apply(0, {"cast": robber})
    state.apply(0, "pass")
    assert SplitSearchAgent(seed=1).act(turn_for(state, 0)) == []


def test_lookahead_can_take_the_whole_turn_plan_as_a_candidate() -> None:
    state, robber, _, _ = showcase()
    showcase_line = {"actions": [{"cast": robber}], "attack": [robber]}
    # the split ranking's single best line and attack is not the one main 2 finishes
    split = LookaheadAgent(seed=1, evaluation="reference", lines=1, attacks=1).candidates(state.clone())
    assert [{"actions": c.actions, "attack": c.attack} for c in split] != [showcase_line]
    agent = LookaheadAgent(seed=1, evaluation="reference", lines=1, attacks=1, whole_turn=1)
    cands = agent.candidates(state.clone())
    assert showcase_line in [{"actions": c.actions, "attack": c.attack} for c in cands]
    assert len(cands) == len(split) + 1


def test_scry_keeps_a_land_on_top_of_a_land_light_hand() -> None:
    state = DUEL.create(seed=4)
    first = state.first
    player = state.players[first]
    state.apply(first, "mulligan")
    state.apply(1 - first, "keep")
    state.apply(first, "keep")
    lands_in_hand = sum(1 for _, c in player.hand if c.is_land)
    top_is_land = player.library[0].is_land
    answer = MulliganAgent(seed=1).act(turn_for(state, first))
    assert answer == ("top" if top_is_land == (lands_in_hand < 3) else "bottom")


def test_lookahead_takes_its_search_sizes_as_parameters() -> None:
    from partida.bots.registry import make_agent

    agent = make_agent("duel-lookahead", samples="5", lines="2", attacks="1", horizon="2", seconds="0.05")
    assert (agent.samples, agent.lines, agent.attacks, agent.horizon) == (5, 2, 1, 2)
    played = play_local(DUEL, [agent, RandomAgent(3)], seed=3)
    assert played.state.is_over()
    with pytest.raises(ValueError, match="at least 1"):
        LookaheadAgent(samples=0)


def test_terminal_lists_attacks_and_blocks_by_card_name() -> None:
    import io

    from rich.console import Console

    from partida.client.terminal import TerminalPlayer

    state = blank()
    bears = put(state, "Grizzly Bears", 0)
    courser = put(state, "Centaur Courser", 0)
    corpse = put(state, "Walking Corpse", 1)
    state.apply(0, "pass")
    out = io.StringIO()
    player = TerminalPlayer(None, DUEL, Console(file=out, width=120))  # type: ignore[arg-type]
    answers = player.answers_table(state.pending()[0].prompt, state.view(0))
    text = out.getvalue()
    assert len(answers) == 4 and "Grizzly Bears, Centaur Courser" in text
    assert bears not in text and courser not in text
    # a bare number is the listed answer of that number, as it is for a single choice
    assert player.read_answer("2", {"view": state.view(0)}, state.pending()[0].prompt, answers) == answers[1]
    state.apply(0, [bears, courser])
    out.truncate(0)
    player.answers_table(state.pending()[0].prompt, state.view(1))
    assert "Walking Corpse blocks Centaur Courser" in out.getvalue() and corpse not in out.getvalue()


def test_terminal_answers_a_forced_pass_without_asking() -> None:
    import asyncio
    import io

    from rich.console import Console

    from partida.client.terminal import TerminalPlayer

    state = blank()  # no lands and an empty hand: passing is the only main-phase answer
    out = io.StringIO()
    player = TerminalPlayer(None, DUEL, Console(file=out, width=120))  # type: ignore[arg-type]
    # were it to ask, input() would fail on pytest's closed standard input
    assert asyncio.run(player.decide({"view": state.view(0)}, state.pending()[0].prompt)) == "pass"
    assert "the only choice, pass" in out.getvalue()


def test_terminal_shows_keywords_and_the_hand_with_card_text() -> None:
    import io

    from rich.console import Console

    from partida.client.terminal import TerminalPlayer

    state = blank()
    put(state, "Serra Angel", 0, sick=True)
    give(state, "Lava Axe", 0)
    out = io.StringIO()
    player = TerminalPlayer(None, DUEL, Console(file=out, width=160))  # type: ignore[arg-type]
    player.show({"view": state.view(0), "room": "R", "seq": 1})
    text = out.getvalue()
    assert "Serra Angel 4/4 [flying, vigilance; summoning sick]" in text  # brackets are not markup
    assert "Lava Axe 4R - sorcery - 5 damage to target player" in text
    assert "Game over" not in text and "your turn" in text


def test_terminal_takes_big_attacks_and_blocks_piece_by_piece() -> None:
    import io

    from rich.console import Console

    from partida.client.terminal import TerminalPlayer
    from partida.games.base import IllegalAction

    state = blank()
    bears = [put(state, "Grizzly Bears", 0) for _ in range(6)]  # 64 attacks: too many to list
    walls = [put(state, "Siege Mastodon", 1) for _ in range(4)]  # 7^4 block assignments
    out = io.StringIO()
    player = TerminalPlayer(None, DUEL, Console(file=out, width=120))  # type: ignore[arg-type]
    state.apply(0, "pass")
    prompt = state.pending()[0].prompt
    assert player.answers_table(prompt, state.view(0)) == []
    assert "6  Grizzly Bears" in out.getvalue() and "e.g. 1 3" in out.getvalue()
    attack = prompt.validate(player.read_answer("1 3 4", {"view": state.view(0)}, prompt, []))
    assert attack == [bears[0], bears[2], bears[3]]
    with pytest.raises(IllegalAction, match="from 1 to 6"):
        player.read_answer("7", {"view": state.view(0)}, prompt, [])
    state.apply(0, attack)
    prompt = state.pending()[0].prompt
    out.truncate(0)
    assert player.answers_table(prompt, state.view(1)) == []
    assert "Siege Mastodon #1  (to a, b, c)" in out.getvalue() and "e.g. 1a 2b" in out.getvalue()
    blocks = player.read_answer("1a 2a 4c", {"view": state.view(1)}, prompt, [])
    assert prompt.validate(blocks) == [[walls[0], bears[0]], [walls[1], bears[0]], [walls[3], bears[3]]]
    assert player.read_answer("none", {"view": state.view(1)}, prompt, []) == []
    with pytest.raises(IllegalAction, match="letters from a to c"):
        player.read_answer("1d", {"view": state.view(1)}, prompt, [])


def big_board():
    """Many lines and attacks for the side to move: a dozen candidates for the lookahead."""
    state = blank()
    for _ in range(5):
        put(state, "Plains", 0)
    for name in ("Grizzly Bears", "Centaur Courser", "Serra Angel"):
        put(state, name, 0)
    for name in ("Walking Corpse", "Pensive Minotaur"):
        put(state, name, 1)
    for name in ("Fencing Ace", "Guardian of Pilgrims", "Griffin Sentinel", "Plains"):
        give(state, name, 0)
    return state


def test_lookahead_drops_the_weaker_half_of_its_candidates_when_the_budget_is_short() -> None:
    import itertools

    agent = LookaheadAgent(seed=1, seconds=1.0)
    ticks = itertools.count()
    agent.clock = lambda: next(ticks) * 0.01  # every look at the clock costs 10 ms of the budget
    turn = turn_for(big_board(), 0)
    cands = agent.candidates(turn.state(agent.rng))
    assert len(cands) >= 8
    agent.search(turn, cands, mode="main")
    samples = sorted(c.samples for c in cands)
    assert samples[0] == 2  # the weaker half went after two worlds
    assert samples[-1] > 4 and samples.count(samples[-1]) <= 3  # the few best got the rest


def test_lookahead_keeps_every_candidate_when_the_budget_allows() -> None:
    agent = LookaheadAgent(seed=1, seconds=1.0, samples=3)
    agent.clock = lambda: 0.0  # time stands still: the budget is never short
    turn = turn_for(big_board(), 0)
    cands = agent.candidates(turn.state(agent.rng))
    agent.search(turn, cands, mode="main")
    assert len(cands) >= 8 and {c.samples for c in cands} == {3}


def test_search_takes_its_caps_as_parameters() -> None:
    state, _, _, _ = showcase()
    # one main-phase position: only passing now is searched, so the Robber is never cast
    assert SearchAgent(seed=1, main_nodes=1).act(turn_for(state, 0)) == "pass"
    with pytest.raises(ValueError, match="at least 1"):
        SearchAgent(block_sets=0)


def test_duel_speaks_in_card_names_and_tells_what_combat_did() -> None:
    """Prompts and the board carry no ids or protocol words; two creatures of one name get two
    names; a creature that cannot attack says why; combat is narrated; a creature is not called
    summoning sick while its owner blocks with it."""
    import io

    from rich.console import Console

    from partida.client.terminal import TerminalPlayer
    from partida.games.base import IllegalAction

    state = blank()
    for _ in range(2):
        put(state, "Mountain", 0)
    give(state, "Volcanic Hammer", 0)
    raptor = put(state, "Frenzied Raptor", 0)
    bears = put(state, "Grizzly Bears", 0)
    put(state, "Dwarven Priest", 0, sick=True)
    put(state, "Pensive Minotaur", 1)
    put(state, "Pensive Minotaur", 1)
    priest = put(state, "Walking Corpse", 1, sick=True)
    decision = state.pending()[0].prompt
    labels_now = [decision.label(o) for o in decision.options]
    assert "cast Volcanic Hammer -> opponent's Pensive Minotaur #1 (2/3)" in labels_now
    assert "cast Volcanic Hammer -> opponent's Pensive Minotaur #2 (2/3)" in labels_now
    out = io.StringIO()
    player = TerminalPlayer(None, DUEL, Console(file=out, width=160))  # type: ignore[arg-type]
    player.show({"view": state.view(0), "room": "R", "seq": 1})
    assert "<" not in out.getvalue() and "Pensive Minotaur #2 2/3" in out.getvalue()
    state.apply(0, "pass")
    prompt = state.pending()[0].prompt
    with pytest.raises(IllegalAction, match="Dwarven Priest has summoning sickness and cannot attack"):
        player.read_answer("Dwarven Priest", {"view": state.view(0)}, prompt, [])
    assert player.read_answer("grizzly bears, Frenzied Raptor", {"view": state.view(0)}, prompt, []) == [
        bears,
        raptor,
    ]
    state.apply(0, [raptor, bears])
    prompt = state.pending()[0].prompt
    assert prompt.text == (
        "choose which of your creatures block which attacker; attacking you: Frenzied Raptor (4/2), Grizzly Bears (2/2)"
    )
    out.truncate(0)
    player.show({"view": state.view(1), "room": "R", "seq": 2})
    assert "Walking Corpse 2/2" in out.getvalue() and "Walking Corpse 2/2 [summoning sick]" not in out.getvalue()
    state.apply(1, [[priest, raptor]])
    assert state.last_event() == (
        "blocks: Walking Corpse blocks Frenzied Raptor; combat: Frenzied Raptor and Walking Corpse die, "
        "2 damage goes through (18 life left)"
    )
