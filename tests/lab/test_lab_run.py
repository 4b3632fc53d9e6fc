"""The lab end to end: repeatable runs, per-round scores for Python games, storage, report, plot."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from partida.cli import main
from partida.lab.simulate import RunSpec, simulate


def spec(game: str, n: int, **options: object) -> RunSpec:
    return RunSpec(game=game, options=dict(options), agents=["random"] * 4, seats=4, seed=42, n=n)


@pytest.mark.processes
def test_a_run_repeats_exactly_whatever_the_number_of_workers() -> None:
    one, _ = simulate(spec("dicepoints", 12, rounds=5))
    two, _ = simulate(spec("dicepoints", 12, rounds=5), workers=2)
    assert [r.rounds for r in one] == [r.rounds for r in two]
    assert [r.metrics for r in one] == [r.metrics for r in two]
    assert [r.index for r in two] == list(range(12))
    other = RunSpec("dicepoints", {"rounds": 5}, ["random"] * 4, 4, 43, 12)
    assert [r.rounds for r in simulate(other)[0]] != [r.rounds for r in one]


def test_a_recycle_match_records_saveturnstats_rounds() -> None:
    (record,), _ = simulate(spec("dicepoints", 1, rounds=7))
    assert len(record.rounds) == 7
    assert record.rounds[-1] == record.result["scores"]
    assert set(record.metrics) == {
        "drama_points",
        "drama_position",
        "drama_path",
        "lead_change",
        "uncertainty_entropy",
        "uncertainty_distance",
    }


def test_othello_disc_counts_are_sampled_once_per_round() -> None:
    run = RunSpec("othello", {}, ["random", "random"], 2, 5, 3)
    records, _ = simulate(run)
    for record in records:
        assert record.rounds[-1] == record.result["scores"]
        assert all(sum(scores) <= 64 for scores in record.rounds)
        assert 20 <= len(record.rounds) <= 40  # about one sample per pair of moves


@pytest.mark.slow
def test_lab_run_stores_the_run_and_report_and_plot_read_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path / 'lab.db'}"
    args = ["lab", "run", "throwdicematchcard", "--option", "rounds=5", "-n", "30", "--seed", "9", "--db", db]
    assert main([*args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["run_id"] == 1 and report["n"] == 30 and report["seed"] == 9
    summary = report["summary"]
    assert summary["matches"] == 30
    assert sum(summary["wins"]) + summary["draws"] == pytest.approx(1.0)
    assert 0 <= summary["metrics"]["drama_points"]["above_zero"] <= 30
    assert main(["lab", "report", "1", "--db", db, "--json"]) == 0
    stored = json.loads(capsys.readouterr().out)
    assert stored["summary"] == summary and stored["options"] == {"rounds": 5}
    assert main([*args[:-6], "-n", "10", "--seed", "9", "--db", db, "--json"]) == 0
    capsys.readouterr()
    out = tmp_path / "metrics.png"
    assert main(["lab", "plot", "1", "2", "-o", str(out), "--db", db]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for kind in ("rounds", "drama3d"):
        figure = tmp_path / f"{kind}.png"
        assert main(["lab", "plot", "1", "2", "-o", str(figure), "--kind", kind, "--db", db]) == 0
        assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    args = ["lab", "run", "tictactoe", "-n", "5", "--seed", "1", "--db", db, "--json"]
    assert main(args) == 0
    capsys.readouterr()
    assert main(["lab", "plot", "3", "-o", str(tmp_path / "no.png"), "--kind", "rounds", "--db", db]) == 2
    assert "none of these runs has a rounds option" in capsys.readouterr().err
    assert not (tmp_path / "no.png").exists()


def test_density_curves_lie_on_their_histograms() -> None:
    from partida.lab.plots import BINS, _density

    values = [0.3 + 0.4 * i / 99 for i in range(100)]  # flat on [0.3, 0.7]: 1/16 of matches per bin
    xs, ys = _density(values)  # type: ignore[misc]
    assert sum(ys) * BINS / (len(xs) - 1) == pytest.approx(1.0, abs=0.02)  # a share per bin integrates to 1
    assert max(ys) == pytest.approx(1 / 16, rel=0.25) and ys[0] < 1e-3 and ys[-1] < 1e-3
    assert _density([0.5] * 10) is None  # one value has no density


def test_lab_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path / 'lab.db'}"
    assert main(["lab", "run", "nosuchgame", "-n", "1", "--db", db]) == 2
    assert "unknown game 'nosuchgame'" in capsys.readouterr().err
    assert main(["lab", "run", "dicepoints", "--option", "colour=red", "-n", "1", "--db", db]) == 2
    assert "unknown option 'colour'" in capsys.readouterr().err
    assert main(["lab", "run", "dicepoints", "-n", "1", "--db", db]) == 0
    capsys.readouterr()
    assert main(["lab", "report", "99", "--db", db]) == 2
    assert "there is no lab run 99" in capsys.readouterr().err


def test_a_run_that_cannot_be_stored_is_refused_before_it_is_played(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database in a folder that is not there failed only after every match was played: a
    long run was lost."""
    import partida.lab.simulate

    played: list[int] = []
    real = partida.lab.simulate.simulate
    monkeypatch.setattr(partida.lab.simulate, "simulate", lambda spec, *a: played.append(spec.n) or real(spec, *a))
    db = f"sqlite:///{tmp_path / 'no such folder' / 'lab.db'}"
    assert main(["lab", "run", "dicepoints", "-n", "50", "--db", db, "--json"]) == 2
    assert "the folder" in capsys.readouterr().err and played == []
    assert main(["lab", "run", "dicepoints", "-n", "5", "--db", db, "--no-store", "--json"]) == 0
    assert played == [5]


def test_reading_lab_runs_does_not_create_a_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`lab report 1 --db typo.db` created an empty database and said there was no run 1."""
    db = tmp_path / "typo.db"
    for args in (["report", "1"], ["plot", "1", "-o", str(tmp_path / "x.png")], ["export", "1", "--scores", "x.csv"]):
        assert main(["lab", *args, "--db", str(db)]) == 2
        assert f"there is no database at {db} (reading one must not create it)" in capsys.readouterr().err
    assert not db.exists()


def test_lab_export_writes_the_studys_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path / 'lab.db'}"
    args = ["lab", "run", "dicepoints", "--option", "rounds=3", "-n", "4", "--seed", "5", "--db", db, "--json"]
    assert main(args) == 0
    capsys.readouterr()
    one, scores, metrics = tmp_path / "one.csv", tmp_path / "scores.csv", tmp_path / "metrics.csv"
    assert main(["lab", "export", "1", "--match", "2", "--scores", str(one), "--db", db]) == 0
    lines = one.read_text().splitlines()
    assert lines[0] == "round;player;score" and len(lines) == 1 + 3 * 4
    rows = [line.split(";") for line in lines[1:]]
    assert [(r, p) for r, p, _ in rows[:5]] == [("1", "1"), ("1", "2"), ("1", "3"), ("1", "4"), ("2", "1")]
    by_player = {p: [int(s) for r, q, s in rows if q == p] for p in "1234"}
    assert all(b > a for seq in by_player.values() for a, b in itertools.pairwise(seq))  # dice add up
    assert main(["lab", "export", "1", "--scores", str(scores), "--metrics", str(metrics), "--db", db]) == 0
    assert scores.read_text().splitlines()[0] == "match;round;player;score"
    assert len(scores.read_text().splitlines()) == 1 + 4 * 3 * 4
    table = metrics.read_text().splitlines()
    assert table[0].split(";")[:3] == ["match", "seed", "ranks"] and len(table) == 5
    assert main(["lab", "export", "1", "--match", "9", "--scores", str(one), "--db", db]) == 2
    assert "has no match 9" in capsys.readouterr().err


def test_lab_match_shows_one_match_round_by_round(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["lab", "match", "dicepoints", "--option", "rounds=4", "--seed", "3", "--json"]
    assert main(args) == 0
    match = json.loads(capsys.readouterr().out)
    assert [r["round"] for r in match["rounds"]] == [1, 2, 3, 4]
    for row in match["rounds"]:
        assert sorted(row["ranks"]) == [1, 2, 3, 4]
        assert row["ranks"] == [1 + sorted(range(4), key=lambda p: (-row["scores"][p], p)).index(p) for p in range(4)]
    assert set(match["metrics"]) == {
        "drama_points",
        "drama_position",
        "drama_path",
        "lead_change",
        "uncertainty_entropy",
        "uncertainty_distance",
    }
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out) == match  # the seed decides the match
    assert main(["lab", "match", "dicepoints", "--seed", "3"]) == 0
    assert "drama_points:" in capsys.readouterr().out
    assert main(["lab", "match", "nosuchgame", "--seed", "3"]) == 2
    capsys.readouterr()


def test_lab_match_plots_score_and_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # rich wraps at 80 columns, and a worker's tmp_path may be longer
    figure = tmp_path / "match.png"
    assert main(["lab", "match", "dicepoints", "--seed", "3", "--plot", str(figure)]) == 0
    assert f"wrote {figure}" in capsys.readouterr().out
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_files_to_write_are_checked_before_any_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A plot or CSV into a folder that is not there, or a plot named .txt, ended in a traceback
    once the work was done; a plot named without a suffix was said to be where it was not."""
    db = f"sqlite:///{tmp_path / 'lab.db'}"
    assert main(["lab", "run", "dicepoints", "--option", "rounds=3", "-n", "4", "--seed", "5", "--db", db]) == 0
    capsys.readouterr()
    gone = tmp_path / "gone"
    for args, said in (
        (["plot", "1", "-o", str(gone / "x.png")], f"the folder {gone} does not exist"),
        (["plot", "1", "-o", str(tmp_path / "x.txt")], "as a .txt file: name a .png, .svg or .pdf file"),
        (["match", "dicepoints", "--seed", "1", "--plot", str(gone / "m.png")], "does not exist"),
        (["export", "1", "--scores", str(gone / "s.csv")], "does not exist"),
        (["export", "1", "--metrics", str(gone / "m.csv")], "does not exist"),
    ):
        with pytest.raises(SystemExit) as usage:
            main(["lab", *args, "--db", db] if args[0] != "match" else ["lab", *args])
        err = capsys.readouterr().err
        assert usage.value.code == 2 and said in err and "Traceback" not in err, (args, err)
    assert main(["lab", "plot", "1", "-o", str(tmp_path / "plain"), "--db", db]) == 0
    assert f"wrote {tmp_path / 'plain.png'}" in capsys.readouterr().out and (tmp_path / "plain.png").exists()


@pytest.mark.processes
def test_ctrl_c_stops_a_run_on_several_workers_without_their_tracebacks(tmp_path: Path) -> None:
    """The terminal sends Ctrl-C to every process of the command: each worker printed its own
    KeyboardInterrupt traceback (two a worker) over the progress bar."""
    import os
    import signal
    import subprocess
    import sys
    import time

    run = subprocess.Popen(
        [sys.executable, "-m", "partida", "lab", "run", "dicepoints", "--option", "rounds=50", "-n", "1000000",
         "--workers", "2", "--no-store", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        # as a terminal starts it: a suite run in the background has SIGINT ignored, and children inherit that
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    try:
        children = Path(f"/proc/{run.pid}/task/{run.pid}/children")
        deadline = time.monotonic() + 60
        while len(children.read_text().split()) < 2:  # both workers are playing
            assert time.monotonic() < deadline and run.poll() is None
            time.sleep(0.1)
        time.sleep(1)  # well into their matches
        os.killpg(run.pid, signal.SIGINT)  # what Ctrl-C sends to the terminal's foreground group
        _, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    assert run.returncode == 130 and err.decode().strip() == "", err  # was "Process ForkPoolWorker-1:", a traceback
