"""Where a move's time goes in the server: cProfile of `partida serve` under the peers' load.

`cpu_per_move.py` says how much CPU a move costs; this says where. The server is started by this
script as its own bootstrap (the build's Python runs `profile_move.py --serve OUT serve ...`): it
profiles nothing until the load begins (SIGUSR1) and writes its profile when the load has ended
(SIGUSR2), so start-up and shutdown stay out of the figures. The load is the peers' Node
generator, as for `cpu_per_move.py` (PEERS/partida-load/load.js). Printed as one JSON object:

- `per_move`: Python calls and profiled microseconds a move (all moves of the window, warm-up
  included), and the same split by where the code lives (websockets, asyncio, the server, the
  room core, storage, the protocol, the games, SQLAlchemy, C builtins, the rest); the event
  loop's waits in epoll are counted apart (`waiting_in_epoll_us`): they are time, not CPU;
- `top`: the functions that take most time of their own, a move;
- `frames`: websockets' own cost, timed outside the server: `ServerProtocol.receive_data` with
  `events_received` for one small masked binary frame, and `send_binary` with `data_to_send`
  for one small message, in microseconds.

cProfile's own cost inflates every call, so its microseconds are larger than a move's real
time; the calls a move makes and the split between parts are what compare across builds.

    python bench/profile_move.py --peers PEERS --m 10 --moves 20000 .venv/bin/partida
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import re
import signal
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path
from typing import Any

from cpu_per_move import peers_load, served_build  # bench/cpu_per_move.py, beside this script

PARTS = (  # where a function's file lives -> its part, first match wins
    ("websockets", "websockets"),
    ("asyncio", "asyncio"),
    ("sqlalchemy", "sqlalchemy"),
    ("/partida/server/", "partida.server"),
    ("/partida/room/", "partida.room"),
    ("/partida/storage/", "partida.storage"),
    ("/partida/protocol/", "partida.protocol"),
    ("/partida/games/", "partida.games"),
)


def part_of(filename: str) -> str:
    for marker, part in PARTS:
        if marker in filename:
            return part
    return "builtins" if filename == "~" else "other"


def summarize(stats: pstats.Stats, moves: int, top: int) -> dict[str, Any]:
    """Calls and profiled microseconds a move, split by part, and the `top` functions."""
    calls = 0
    seconds = 0.0
    waiting = 0.0
    parts: dict[str, list[float]] = {}
    rows = []
    for (filename, line, name), (_, ncalls, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        if "select.epoll" in name:  # the event loop waiting for the sockets: time, not CPU
            waiting += tottime
            continue
        calls += ncalls
        seconds += tottime
        part = parts.setdefault(part_of(filename), [0, 0.0])
        part[0] += ncalls
        part[1] += tottime
        short = re.split(r"site-packages/|/lib/python3\.\d+/|/partida/", filename)[-1]
        rows.append((tottime, ncalls, f"{short}:{line}({name})"))
    rows.sort(reverse=True)
    per = max(1, moves)
    return {
        "per_move": {
            "calls": round(calls / per, 1),
            "us": round(1e6 * seconds / per, 1),
            "waiting_in_epoll_us": round(1e6 * waiting / per, 1),
            "by_part": {
                part: {"calls": round(n / per, 1), "us": round(1e6 * t / per, 1)}
                for part, (n, t) in sorted(parts.items(), key=lambda item: -item[1][1])
            },
        },
        "top": [
            {"function": where, "calls": round(n / per, 2), "us": round(1e6 * t / per, 2)} for t, n, where in rows[:top]
        ],
    }


def frame_costs(number: int = 100_000) -> dict[str, float]:
    """websockets' sans-I/O cost for one small frame each way, in microseconds."""
    from websockets.frames import Frame, Opcode
    from websockets.protocol import State
    from websockets.server import ServerProtocol

    protocol = ServerProtocol(state=State.OPEN, max_size=2**20)
    received = Frame(Opcode.BINARY, os.urandom(40)).serialize(mask=True, extensions=[])  # a client's frame
    sent = os.urandom(120)

    def receive() -> None:
        protocol.receive_data(received)
        protocol.events_received()

    def send() -> None:
        protocol.send_binary(sent)
        protocol.data_to_send()

    return {
        "receive_us": round(1e6 * min(timeit.repeat(receive, number=number, repeat=3)) / number, 3),
        "send_us": round(1e6 * min(timeit.repeat(send, number=number, repeat=3)) / number, 3),
    }


def profile_server(partida: str, peers: Path, m: int, moves: int, top: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "server.prof"
        bootstrap = (str(Path(partida).parent / "python"), str(Path(__file__).resolve()), "--serve", str(out))
        with served_build(bootstrap, f"sqlite:///{tmp}/p.db") as server:
            server.process.send_signal(signal.SIGUSR1)
            done = peers_load(server, peers, m, moves)
            server.process.send_signal(signal.SIGUSR2)
            for _ in range(300):  # the profile is written by the server's signal handler
                if out.exists() and out.stat().st_size > 0:
                    break
                time.sleep(0.1)
            time.sleep(0.5)
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        all_moves = figures["moves"] + figures["warmup"]["moves"]
        return {"partida": partida, "M": m, "moves": all_moves, **summarize(pstats.Stats(str(out)), all_moves, top)}


def serve(out: str, argv: list[str]) -> None:
    """The server's side: `partida` with `argv`, profiled between SIGUSR1 and SIGUSR2."""
    profiler = cProfile.Profile()
    signal.signal(signal.SIGUSR1, lambda *_: profiler.enable())

    def written(*_: Any) -> None:
        profiler.disable()
        profiler.dump_stats(out)

    signal.signal(signal.SIGUSR2, written)
    from partida.cli import main as partida_main

    sys.argv = ["partida", *argv]
    sys.exit(partida_main())


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--serve":
        serve(sys.argv[2], sys.argv[3:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("partida", help="the partida executable to profile (its venv's python runs the server)")
    parser.add_argument("--peers", type=Path, required=True, help="the peers directory (with partida-load/)")
    parser.add_argument("--m", type=int, default=10, help="concurrent matches (default: %(default)s)")
    parser.add_argument("--moves", type=int, default=20000, help="moves (default: %(default)s)")
    parser.add_argument("--top", type=int, default=25, help="functions listed (default: %(default)s)")
    args = parser.parse_args()
    if not (args.peers / "partida-load" / "node_modules").is_dir():
        subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=args.peers / "partida-load", check=True)
    figures = profile_server(str(Path(args.partida).absolute()), args.peers, args.m, args.moves, args.top)
    print(json.dumps({**figures, "frames": frame_costs()}, indent=1))


if __name__ == "__main__":
    main()
