"""The benchmarks the docs quote still run: each started small, as a user would start it, against
a real server it starts itself, and its JSON line read back. (Their figures are not checked:
speed is measured, never asserted.) `bench/load.py`, `bench/abuse.py` and `bench/nodes.py` broke
silently once, when the protocol moved a room's code from `room.code` to `room`: nothing ran them."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import pstats
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _bench_module(script: str) -> Any:
    """A script of bench/ as a module (they import their siblings by name, as scripts do)."""
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(script.removesuffix(".py") + "_bench", BENCH / script)
        assert spec is not None and spec.loader is not None
        module: ModuleType = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCH))
    return module


def run_bench(script: str, *args: str) -> list[dict[str, object]]:
    done = subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


@pytest.mark.processes
def test_the_load_benchmark_plays_its_moves() -> None:
    (figures,) = run_bench("load.py", "--rooms", "3", "--moves", "12")
    assert figures["rooms"] == 3 and figures["clients"] == 6 and figures["moves"] == 36
    assert 0 < figures["latency_ms_p50"] <= figures["latency_ms_p99"]


@pytest.mark.processes
def test_the_capacity_benchmark_counts_its_connections_and_rooms() -> None:
    (figures,) = run_bench("capacity.py", "--connections", "30", "--rooms", "12", "--repeats", "2")
    assert figures["connections"] == 30 and figures["rooms"] == 12 and figures["list_rooms_listed"] == 12


@pytest.mark.processes
def test_the_abuse_benchmark_plays_its_bystander_room_through_an_attack() -> None:
    baseline, attacked = run_bench("abuse.py", "--seconds", "1", "--attack", "guess_codes")
    assert (baseline["attack"], attacked["attack"]) == ("baseline", "guess_codes")
    assert baseline["moves"] > 0 and attacked["moves"] > 0 and attacked["server_alive"]


@pytest.mark.processes
def test_the_nodes_benchmark_measures_throughput_and_failover() -> None:
    """Two nodes on the PostgreSQL and Mosquitto it starts as the tests do."""
    (throughput,) = run_bench("nodes.py", "throughput", "--nodes", "2", "--slots", "2", "--seconds", "2")
    assert throughput["nodes"] == 2 and throughput["moves"] > 0
    (failover,) = run_bench("nodes.py", "failover", "--games", "2", "--lease", "2")
    assert failover["games"] == 2 and failover["resumed_after_s_max"] >= failover["resumed_after_s_min"] > 0


@pytest.mark.processes
def test_the_receive_path_benchmark_receives_its_messages() -> None:
    runs = run_bench("receive_path.py", "--clients", "2", "--messages", "200", "--rounds", "1")
    assert [r["server"] for r in runs] == ["websockets.asyncio.server", "partida.server.transport"]
    assert all(r["messages"] == 200 and r["client_exit"] == 0 for r in runs)


@pytest.mark.processes
def test_the_write_timing_wrapper_reports_the_sqlite_writers_batches(tmp_path: Path) -> None:
    """`cpu_per_move.py --write-timing` starts the server under `write_timing.py`, which wraps
    the SQLite writer's methods: this fails if they are renamed under it."""
    load = _bench_module("load.py")
    served = _bench_module("server_process.py").served
    out = tmp_path / "writes.json"
    wrapper = (sys.executable, str(BENCH / "write_timing.py"), str(out))
    db = f"sqlite:///{tmp_path / 'p.db'}"
    with served(
        db, "--no-bots", "--host", "127.0.0.1", partida=wrapper, log_level=None, stderr=subprocess.DEVNULL
    ) as server:
        assert asyncio.run(load.run_level(server.url, 2, 6, 1))["moves"] == 12
    figures = json.loads(out.read_text())
    assert figures["handed_over_to_told_ms"]["n"] >= 12 / figures["writes_per_transaction"]
    assert figures["transaction_ms"]["n"] > 0 and figures["commit_ms"]["p50"] > 0
    assert figures["transactions_without_begin"] is not None


@pytest.mark.processes
def test_the_sqlite_commit_benchmark_times_both_ways_of_writing() -> None:
    runs = run_bench("sqlite_commit.py", "--writes", "5", "--rows", "2")
    assert [(r["write"], r["busy_thread"]) for r in runs] == [
        ("BEGIN, INSERT, COMMIT", False),
        ("INSERT alone (autocommit)", False),
        ("BEGIN, INSERT, COMMIT", True),
        ("INSERT alone (autocommit)", True),
    ]
    assert all(0 < r["ms_p50"] <= r["ms_p99"] for r in runs)


@pytest.mark.processes
def test_the_determinize_benchmark_scores_its_pairs() -> None:
    *games, summary = run_bench("ismcts_determinize.py", "--game", "agram", "--pairs", "2", "--iterations", "4")
    assert len(games) == 4 and {tuple(g["consistent_seats"]) for g in games} == {(0, 2), (1, 3)}
    assert summary["pairs"] == 2 and 0 <= summary["share"] <= 1


@pytest.mark.processes
def test_the_sprt_benchmark_measures_both_error_rates() -> None:
    *rows, summary = run_bench("sprt_error_rates.py", "--runs", "5", "--elo1", "60", "--models", "logistic")
    assert [r["counts"] for r in rows] == ["trinomial", "pentanomial"]
    assert all(0 <= r["measured_alpha"] <= 1 and r["mean_games_h1"] > 0 for r in rows)
    assert len(summary["summary"]) == 2


@pytest.mark.processes
def test_the_competition_pairing_benchmark_pairs_its_rounds() -> None:
    args = ["--swiss", "21", "--rounds", "5", "--arena", "50", "--calls", "2"]
    *rows, summary = run_bench("competition_pairing.py", *args)
    swiss = [r for r in rows if r["format"] == "swiss"]
    assert [r["round"] for r in swiss] == [1, 2, 3, 4, 5] and all(r["games"] == 10 and r["repeats"] == 0 for r in swiss)
    assert next(r["tables"] for r in rows if r["format"] == "arena") == 25
    assert summary["summary"] and summary["swiss_entrants"] == 21


@pytest.mark.processes
def test_the_lobby_benchmark_pages_and_pushes() -> None:
    (figures,) = run_bench(
        "lobby.py", "--rooms", "300", "--watchers", "5", "--seconds", "1", "--repeats", "2", "--deep", "3"
    )
    pages, pushes = figures["pages"], figures["pushes"]
    assert figures["rooms"] == 300 and pages["walk_200"]["pages"] == 2  # 300 rooms and the 4 timed ones
    assert pages["first_page_50"]["bytes"] > 0 and pushes["watchers"] == 5
    assert pushes["runs"]["watched"]["rooms_seen_share"] == 1.0  # every watcher saw every new room


@pytest.mark.processes
def test_the_arena_cpu_benchmark_runs_both_sides() -> None:
    quiet, arena = run_bench(
        "arena_cpu.py", "--bots", "6", "--m", "2", "--moves", "40", "--warmup", "3", "--think", "0.1"
    )
    assert (quiet["arena_bots"], arena["arena_bots"]) == (0, 6)
    assert quiet["load_moves"] == arena["load_moves"] == 80 and quiet["arena_moves"] == 0


@pytest.mark.processes
def test_the_seek_pairing_benchmark_pairs_and_scans() -> None:
    (figures,) = run_bench("seek_pairing.py", "--waiting", "50", "--posts", "5")
    assert figures["waiting"] == 50 and figures["posts"] == 5 and 0 <= figures["paired"] <= 5
    assert figures["book_ms_max"] >= 0 and figures["scan_ms_max"] >= 0 and figures["unmatched_scan_ms_mean"] > 0
    assert figures["one_bucket_book_ms_max"] > 0


@pytest.mark.processes
def test_the_seek_flood_attack_posts_and_lists_seeks() -> None:
    _, attacked = run_bench("abuse.py", "--seconds", "2", "--attack", "seek_flood")
    outcome = attacked["outcome"]
    assert attacked["attack"] == "seek_flood" and attacked["server_alive"]
    assert outcome["seeks_posted"] > 0 and outcome["listings"] > 0, outcome


@pytest.mark.processes
def test_the_ratings_benchmark_rates_its_games() -> None:
    (figures,) = run_bench("person_ratings.py", "--games", "6", "--accounts", "3")
    assert figures["games"] == 6 and figures["accounts"] == 3
    assert 0 < figures["rate_ms"]["median"] <= figures["rate_ms"]["p95"]


@pytest.mark.processes
def test_the_move_profiler_profiles_the_server_between_its_signals(tmp_path: Path) -> None:
    """`profile_move.py` starts the server as its own bootstrap and profiles it between SIGUSR1
    and SIGUSR2 (the load between them here is bench/load.py's, not the peers' Node one)."""
    load = _bench_module("load.py")
    served = _bench_module("server_process.py").served
    profile_move = _bench_module("profile_move.py")
    out = tmp_path / "server.prof"
    bootstrap = (sys.executable, str(BENCH / "profile_move.py"), "--serve", str(out))
    db = f"sqlite:///{tmp_path / 'p.db'}"
    with served(
        db, "--no-bots", "--host", "127.0.0.1", partida=bootstrap, log_level=None, stderr=subprocess.DEVNULL
    ) as server:
        server.process.send_signal(signal.SIGUSR1)
        assert asyncio.run(load.run_level(server.url, 2, 6, 1))["moves"] == 12
        server.process.send_signal(signal.SIGUSR2)
        for _ in range(100):
            if out.exists() and out.stat().st_size > 0:
                break
            time.sleep(0.1)
    figures = profile_move.summarize(pstats.Stats(str(out)), 12, 5)
    assert figures["per_move"]["calls"] > 0 and len(figures["top"]) == 5
    assert figures["per_move"]["by_part"]["partida.server"]["calls"] > 0
    frames = profile_move.frame_costs(number=200)
    assert frames["receive_us"] > 0 and frames["send_us"] > 0


@pytest.mark.processes
def test_the_bridge_cost_benchmark_plays_through_each_way_in() -> None:
    lines = run_bench("bridge_cost.py", "--games", "1", "--depth", "1")
    assert [line["way"] for line in lines] == ["websocket", "stdio", "gtp"]
    assert all(line["bot_moves"] > 0 and line["moves"] > line["bot_moves"] for line in lines)


@pytest.mark.processes
@pytest.mark.usefixtures("bubblewrap")
def test_the_sandbox_cost_benchmark_runs_both_ways() -> None:
    direct, sandboxed, ratios = run_bench("sandbox_cost.py", "--decisions", "200", "--starts", "2")
    assert (direct["way"], sandboxed["way"]) == ("direct", "sandboxed")
    assert sandboxed["decisions"] == 200 and sandboxed["starts"] == 2 and "decisions_per_s_ratio" in ratios


@pytest.mark.processes
@pytest.mark.usefixtures("bubblewrap")
def test_the_hosted_hostile_benchmark_plays_its_bystanders_beside_a_hostile_program() -> None:
    (hostile,) = run_bench("hosted_hostile.py", "--seconds", "1", "--hostile", "alloc_8g")
    assert hostile["hostile"] == "alloc_8g" and hostile["baseline_p95_ms"] is not None
    assert hostile["server_alive"] and hostile["outcome"]["verdicts"].get("memory_exceeded", 0) >= 1


@pytest.mark.processes
def test_the_chat_benchmark_stores_and_pushes_its_lines() -> None:
    (figures,) = run_bench("chat.py", "--rooms", "2", "--lines", "3")
    assert figures["rooms"] == 2 and figures["lines"] == 12
    assert 0 < figures["latency_ms_p50"] <= figures["latency_ms_p99"]


@pytest.mark.processes
@pytest.mark.slow
@pytest.mark.usefixtures("bubblewrap", "node")
def test_the_hosted_ladder_benchmark_finishes_every_game() -> None:
    [report] = run_bench("hosted_ladder.py", "--seconds", "3")
    assert report["games"] >= 1 and report["finished"] == report["games"] and report["not_finished"] == 0
    assert set(report["hosted_games"]) == {"ada-greedy", "bo-weights"} and report["verdicts"] == {}


@pytest.mark.processes
@pytest.mark.slow
def test_the_bot_upload_benchmark_uploads_in_chunks() -> None:
    [report] = run_bench("bot_upload.py", "--mib", "0.1")
    assert report["version"] == 1 and report["chunks"] >= 3 and report["bytes"] > 0
