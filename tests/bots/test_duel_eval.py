"""The fitted Duel evaluation: its features, the logistic fit, the weights file and the command
that refits it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from partida.bots.duel.evaluation import FEATURES, WEIGHTS_FILE, evaluation, features, fitted_eval, load_weights
from partida.bots.duel.fit import fit_logistic, log_loss, self_play
from partida.bots.duel.search import SearchAgent
from partida.cli import main as cli_main
from tests.duel_positions import blank, give, put


def test_the_shipped_weights_name_every_feature_and_beat_a_coin_flip() -> None:
    data = json.loads(WEIGHTS_FILE.read_text())
    assert set(data["weights"]) == set(FEATURES)
    assert data["held_out_log_loss"] < data["coin_flip_log_loss"]
    assert len(load_weights()) == len(FEATURES)


def test_features_see_the_position_from_each_side() -> None:
    state = blank()
    put(state, "Serra Angel", 0)
    put(state, "Mountain", 1)
    give(state, "Lava Axe", 1)
    state.players[0].life = 5
    mine = dict(zip(FEATURES, features(state, 0), strict=True))
    theirs = dict(zip(FEATURES, features(state, 1), strict=True))
    assert mine["flying_power_me"] == theirs["flying_power_opp"] == 4
    assert mine["lands_opp"] == theirs["lands_me"] == 1
    assert mine["low_life_me"] == theirs["low_life_opp"] == 2
    # the red deck carries burn: its hand is a threat to the white player's life
    assert mine["burn_threat_me"] > 0 and theirs["burn_threat_me"] == 0
    assert mine["lethal_on_board_opp"] == 0


def test_the_active_player_moves_next_until_its_first_main_phase_ends() -> None:
    state = blank()
    put(state, "Grizzly Bears", 0)
    land = give(state, "Plains", 0)
    to_move = FEATURES.index("to_move")
    state.apply(0, {"play": land})
    assert state.phase == "main1"  # a land played does not hand the next move to the opponent
    assert features(state, 0)[to_move] == 1.0 and features(state, 1)[to_move] == 0.0
    state.apply(0, "pass")
    state.apply(0, [])  # no attack: on to the second main phase, after which the opponent moves
    assert state.phase == "main2"
    assert features(state, 0)[to_move] == 0.0 and features(state, 1)[to_move] == 1.0


def test_the_fitted_evaluation_prefers_more_creatures_life_and_a_win() -> None:
    state = blank()
    before = fitted_eval(state, 0)
    put(state, "Siege Mastodon", 0)
    assert fitted_eval(state, 0) > before > fitted_eval(state, 1) - 1e-9
    state.players[1].life = 3
    assert fitted_eval(state, 0) > fitted_eval(state, 1)
    state.players[1].lost, state.phase = True, "over"
    assert fitted_eval(state, 0) == 1000.0 and fitted_eval(state, 1) == -1000.0


def test_logistic_fit_recovers_known_weights() -> None:
    rng = np.random.default_rng(3)
    x = np.column_stack([np.ones(20000), rng.normal(size=(20000, 2))])
    true = np.array([0.5, 2.0, -1.0])
    y = (rng.random(20000) < 1 / (1 + np.exp(-(x @ true)))).astype(float)
    w = fit_logistic(x, y, l2=0.0)
    assert np.allclose(w, true, atol=0.1)
    assert log_loss(x, y, w) < log_loss(x, y, np.zeros(3))


def test_self_play_labels_both_seats_of_every_turn() -> None:
    x, y, stats = self_play(4, seed=2)
    assert x.shape == (stats["positions"], len(FEATURES)) and len(y) == len(x)
    assert stats["white_wins"] + stats["red_wins"] + stats["draws"] == 4
    assert set(np.unique(y)) <= {0.0, 0.5, 1.0}
    # the two seats of one turn start get opposite labels unless the game was drawn
    assert all(y[i] + y[i + 1] == 1.0 for i in range(0, len(y), 2) if y[i] != 0.5)


@pytest.mark.slow
def test_fit_eval_command_writes_weights(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "weights.json"
    assert cli_main(["duel", "fit-eval", "--games", "12", "--seed", "5", "--out", str(out), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert json.loads(out.read_text()) == printed
    assert set(printed["weights"]) == set(FEATURES) and printed["self_play"]["games"] == 12


def test_fit_eval_command_refuses_too_few_games(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["duel", "fit-eval", "--games", "3"]) == 2
    assert "--games must be at least 10" in capsys.readouterr().err


def test_an_unknown_evaluation_is_refused_by_name() -> None:
    assert evaluation("fitted") is fitted_eval
    with pytest.raises(ValueError, match="reference, strong, fitted"):
        SearchAgent(evaluation="greedy")


def test_agents_take_a_weights_file(tmp_path: Path) -> None:
    from partida.bots.registry import make_agent

    data = json.loads(WEIGHTS_FILE.read_text())
    data["weights"] = {name: 0.0 for name in FEATURES} | {"life_me": 1.0}
    mine = tmp_path / "life_only.json"
    mine.write_text(json.dumps(data))
    agent = make_agent("duel-search", evaluation="fitted", weights=str(mine))
    state = blank()
    state.players[0].life = 17
    assert agent.evaluate(state, 0) == 17.0
    assert make_agent("duel-lookahead", weights=str(mine)).evaluate(state, 0) == 17.0
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ValueError, match="cannot read Duel evaluation weights"):
        SearchAgent(evaluation="fitted", weights=str(tmp_path / "bad.json"))
    with pytest.raises(ValueError, match="evaluation=fitted only"):
        SearchAgent(evaluation="strong", weights=str(mine))


@pytest.mark.slow
def test_fit_eval_command_says_when_it_cannot_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "missing-folder" / "w.json"
    assert cli_main(["duel", "fit-eval", "--games", "10", "--out", str(out)]) == 2
    assert "cannot write the weights" in capsys.readouterr().err
