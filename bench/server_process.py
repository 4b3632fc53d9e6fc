"""The `partida serve` process of a benchmark: what starts it, waits for it, stops it and reads
what it costs.

The server runs as a process of its own so that its CPU and memory, read from /proc, are its
own and not the load's. All of a benchmark's load comes from one loopback address at rates no
person reaches, so the abuse limits are lifted (docs/speed.md, How to measure) through
`PARTIDA_LIMITS`, which every build the benchmarks compare reads. Stopping is a SIGTERM
first, for a clean shutdown (the SQLite writer's last commit, `write_timing.py`'s report at
exit), then a SIGKILL, so that no server outlives its benchmark.

The benchmarks run as scripts (`python bench/X.py`) and import this file as their sibling. It
imports nothing of `partida` at module level: `cpu_per_move.py` starts other builds' servers
and must not need this checkout's package.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, NamedTuple
from urllib.parse import urlsplit

LIMITS_ENV = "PARTIDA_LIMITS"

# docs/speed.md's set: builds older than `public_rooms_per_address` know every name in it
LIFTED = (
    "requests_per_second=1e9",
    "request_burst=1e9",
    "address_requests_per_second=1e9",
    "address_request_burst=1e9",
    "connections_per_address=1000000",
    "rooms_created_per_second=1e9",
    "rooms_created_burst=1e9",
    "waiting_rooms_per_address=1000000",
)
# for this checkout only (older builds reject the name); capacity.py and lobby.py fill the lobby
# with public rooms from their one address
LIFTED_PUBLIC_ROOMS = (*LIFTED, "public_rooms_per_address=1000000")

THIS_CHECKOUT = (sys.executable, "-m", "partida")


class Served(NamedTuple):
    url: str
    port: int
    process: subprocess.Popen[bytes]

    @property
    def pid(self) -> int:
        return self.process.pid


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(
    port: int,
    db: str,
    *options: str,
    partida: Sequence[str] = THIS_CHECKOUT,
    limits: Sequence[str] | None = LIFTED,
    log_level: str | None = "warning",
    stderr: IO[bytes] | int | None = None,
) -> subprocess.Popen[bytes]:
    """`partida` is how to run the build under test; `limits` None leaves them to the server
    (and to the caller's own PARTIDA_LIMITS), as `abuse.py` needs; `log_level` None gives no
    `--log-level`, for builds that may predate it."""
    command = [*partida, "serve", *options, "--port", str(port), "--db", db]
    if log_level is not None:
        command += ["--log-level", log_level]
    env = dict(os.environ)
    if limits is not None:
        env[LIMITS_ENV] = " ".join(limits)
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, env=env)


async def wait_for_server(
    url: str, seconds: float = 60, process: subprocess.Popen[bytes] | None = None, greet: bool = True
) -> None:
    """Waits for a hello answered through the SDK, which is what the benchmark's clients need;
    with `greet` False only for the port to accept, for another build, whose protocol this
    checkout's SDK may not speak. A `process` that exits first fails the wait at once."""
    address = urlsplit(url)
    deadline = time.monotonic() + seconds
    while True:
        try:
            if greet:
                from partida.client import Client  # here, not at the top: see the module's docstring

                client = await Client.connect(url, timeout=2)
                await client.close()
            else:
                _, writer = await asyncio.wait_for(asyncio.open_connection(address.hostname, address.port), 2)
                writer.close()
            return
        except Exception:
            if process is not None and process.poll() is not None:
                raise RuntimeError(f"the server for {url} exited ({process.returncode}) before answering") from None
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


def stop_server(process: subprocess.Popen[bytes], seconds: float = 30) -> None:
    process.terminate()
    try:
        process.wait(seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextlib.contextmanager
def served(
    db: str,
    *options: str,
    partida: Sequence[str] = THIS_CHECKOUT,
    limits: Sequence[str] | None = LIFTED,
    log_level: str | None = "warning",
    stderr: IO[bytes] | int | None = None,
    greet: bool = True,
) -> Iterator[Served]:
    """A server on a free loopback port for the block, ready when it is entered (see
    `start_server` and `wait_for_server` for the options) and stopped however the block ends."""
    port = free_port()
    process = start_server(port, db, *options, partida=partida, limits=limits, log_level=log_level, stderr=stderr)
    try:
        url = f"ws://127.0.0.1:{port}"
        asyncio.run(wait_for_server(url, process=process, greet=greet))
        yield Served(url, port, process)
    finally:
        stop_server(process)


def _status_mib(pid: int, field: str) -> float:
    """NaN once the process is gone: a benchmark that samples a server an attack brought down
    reports it, and does not stop there."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def rss_mib(pid: int) -> float:
    return _status_mib(pid, "VmRSS:")


def peak_rss_mib(pid: int) -> float:
    return _status_mib(pid, "VmHWM:")


def cpu_seconds(pid: int, children: bool = False) -> float:
    """User and system CPU seconds so far, all the process's threads together; `children` adds
    those of the children it has waited for."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return sum(int(f) for f in fields[11 : 15 if children else 13]) / os.sysconf("SC_CLK_TCK")
