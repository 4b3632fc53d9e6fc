"""Real services for tests: a throwaway Mosquitto broker and a throwaway PostgreSQL cluster.

Tests talk to the real thing rather than a mock, so these helpers install the Debian package when
it is missing (the test machine is a fresh Debian where we are root and only package registries are
reachable), start a private instance on a free loopback port inside a temporary directory, and tear
it down afterwards. Nothing here depends on a system-wide service: a package's post-install script
may start one on its default port, and we never use that port.

Other test files use the session fixtures ``mosquitto`` and ``postgres`` (load this module with
``pytest_plugins = ["tests.services"]`` in tests/conftest.py) or call ``start_mosquitto()`` /
``start_postgres()`` directly.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import glob
import itertools
import os
import random
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

# Where Debian puts daemons and versioned server binaries that are not on a normal user's PATH.
EXTRA_BIN_DIRS = ("/usr/sbin", "/usr/local/sbin", "/sbin", "/usr/games")
EXTRA_BIN_GLOBS = ("/usr/lib/postgresql/*/bin",)
APT_LOCK = Path(tempfile.gettempdir()) / "partida-tests-apt.lock"
START_TIMEOUT = 30.0

_apt_updated = False


# Packages.


def find_binary(binary: str) -> str | None:
    """The path of ``binary`` on PATH or in the usual sbin/lib locations, newest version first."""
    found = shutil.which(binary)
    if found:
        return found
    for directory in EXTRA_BIN_DIRS:
        candidate = Path(directory) / binary
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    for pattern in EXTRA_BIN_GLOBS:
        for directory in sorted(glob.glob(pattern), key=_version_key, reverse=True):
            candidate = Path(directory) / binary
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    return None


def _version_key(path: str) -> tuple[int, ...]:
    """Sort /usr/lib/postgresql/9.6/bin before /usr/lib/postgresql/15/bin."""
    parts = Path(path).parent.name.split(".")
    return tuple(int(p) if p.isdigit() else 0 for p in parts)


def ensure_debian_package(package: str, binary: str) -> str:
    """Return the path of ``binary``, installing Debian ``package`` first if the binary is missing.

    Installs run under a file lock so that parallel test processes do not fight over dpkg's lock,
    and ``apt-get update`` runs at most once per process (a fresh machine has empty package lists).
    """
    found = find_binary(binary)
    if found:
        return found
    if shutil.which("apt-get") is None:
        raise RuntimeError(f"{binary} is not installed and apt-get is not available to install {package}.")
    if os.geteuid() != 0:
        raise RuntimeError(f"{binary} is not installed; install the Debian package {package} (needs root).")
    with _file_lock(APT_LOCK):
        found = find_binary(binary)  # another process may have installed it while we waited
        if found:
            return found
        global _apt_updated
        if not _apt_updated:
            _apt(["update"])
            _apt_updated = True
        _apt(["install", "-y", "--no-install-recommends", package])
    found = find_binary(binary)
    if not found:
        raise RuntimeError(f"installed the Debian package {package} but found no {binary} binary afterwards.")
    return found


def _apt(args: list[str]) -> None:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    command = ["apt-get", "-q", "-o", "DPkg::Lock::Timeout=300", *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stdout + done.stderr)[-2000:]
        raise RuntimeError(f"`{' '.join(command)}` failed with exit code {done.returncode}:\n{tail}")


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# Processes.


# Ports that `free_port` hands out: below the kernel's ephemeral range (which it reads), so that
# no port chosen here is taken by the OS for a client's connection or a server on port 0 between
# being chosen and being bound; each pytest-xdist worker takes its own slice of it.
PORTS = range(15_000, 32_768)
_next_port: Iterator[int] | None = None


def free_port() -> int:
    """A loopback TCP port that was free a moment ago, from this test process's own slice of
    `PORTS` (the OS picks one if that range overlaps the ephemeral one)."""
    global _next_port
    if _next_port is None:
        _next_port = _port_cycle()
    for port in _next_port:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return int(sock.getsockname()[1])
    raise AssertionError("unreachable: the cycle never ends")


def _port_cycle() -> Iterator[int]:
    """This process's ports in turn (0: let the OS choose), starting at a random one of its slice so
    that separate test runs on one machine rarely try the same port at the same time."""
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 0
    if low < PORTS.stop:
        return itertools.repeat(0)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    workers = max(int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")), 1)
    size = len(PORTS) // workers
    index = int(worker) % workers if worker.isdigit() else 0  # a replaced worker is numbered on
    mine = PORTS[index * size : (index + 1) * size]
    start = random.randrange(len(mine))
    return itertools.cycle([*mine[start:], *mine[:start]])


def _port_open(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
        return True
    return False


def _stop_process(process: subprocess.Popen[bytes] | None, timeout: float = 10.0) -> None:
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout)


def _read_tail(path: Path, limit: int = 2000) -> str:
    try:
        return path.read_text(errors="replace")[-limit:]
    except OSError:
        return ""


# Mosquitto.


class Mosquitto:
    """A private Mosquitto broker on 127.0.0.1:``port``; ``stop()`` then ``start()`` restarts it on
    the same port, which is how tests check that clients survive a broker outage."""

    def __init__(self, binary: str, port: int, directory: Path) -> None:
        self.binary = binary
        self.port = port
        self.directory = directory
        self.config = directory / "mosquitto.conf"
        self.log = directory / "mosquitto.log"
        self.process: subprocess.Popen[bytes] | None = None
        # max_queued_messages 0: never drop QoS 1 messages for a subscriber that is behind, so a
        # test that reads slowly still sees every event (production brokers keep their limit).
        self.config.write_text(
            f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\nmax_queued_messages 0\n"
            "log_dest stderr\nlog_type error\nlog_type warning\nlog_type notice\nlog_type information\n"
        )
        os.chmod(directory, 0o755)  # mosquitto drops root for its own user and must read its config
        os.chmod(self.config, 0o644)

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Start the broker and return once its port accepts connections."""
        if self.process is not None and self.process.poll() is None:
            return
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen([self.binary, "-c", str(self.config)], stdout=log, stderr=log)
        deadline = time.monotonic() + START_TIMEOUT
        while not _port_open(self.port):
            if self.process.poll() is not None:
                raise RuntimeError(f"mosquitto exited with code {self.process.returncode}:\n{_read_tail(self.log)}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"mosquitto did not listen on port {self.port}:\n{_read_tail(self.log)}")
            time.sleep(0.05)

    def stop(self) -> None:
        """Stop the broker (its temporary directory stays until ``close()``)."""
        _stop_process(self.process)
        self.process = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> Mosquitto:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start_mosquitto() -> Mosquitto:
    """Install mosquitto if needed and start a private broker on a free loopback port."""
    binary = ensure_debian_package("mosquitto", "mosquitto")
    last_error: RuntimeError | None = None
    for _ in range(3):  # the free port may be taken between choosing it and binding it
        broker = Mosquitto(binary, free_port(), Path(tempfile.mkdtemp(prefix="partida-mosquitto-")))
        try:
            broker.start()
            atexit.register(broker.close)  # a crashed test session must not leave a broker behind
            return broker
        except RuntimeError as error:
            broker.close()
            last_error = error
    assert last_error is not None
    raise last_error


# PostgreSQL.


class Postgres:
    """A throwaway PostgreSQL cluster in a temporary directory, listening on 127.0.0.1:``port``
    with its socket in that directory, holding database ``partida`` owned by ``user``."""

    def __init__(self, bin_dir: Path, port: int, directory: Path, user: str, password: str) -> None:
        self.bin_dir = bin_dir
        self.port = port
        self.directory = directory
        self.data = directory / "data"
        self.log = directory / "postgres.log"
        self.user = user
        self.password = password
        self.database = "partida"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """A libpq-style URL; SQLAlchemy with asyncpg wants ``postgresql+asyncpg://`` instead."""
        return f"postgresql://{self.user}:{self.password}@127.0.0.1:{self.port}/{self.database}"

    @property
    def asyncpg_url(self) -> str:
        return self.url.replace("postgresql://", "postgresql+asyncpg://", 1)

    def stop(self) -> None:
        _stop_process(self.process, timeout=20.0)  # SIGTERM is PostgreSQL's "smart" shutdown
        self.process = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> Postgres:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _as_postgres_user() -> dict[str, object]:
    """Popen arguments that run a server binary as ``postgres``: it refuses to run as root."""
    if os.geteuid() != 0:
        return {}
    return {"user": "postgres", "group": "postgres", "extra_groups": [], "env": {**os.environ, "HOME": "/tmp"}}


def start_postgres() -> Postgres:
    """Install PostgreSQL if needed, create a cluster in a temporary directory, start it on a free
    loopback port, and create database ``partida`` with its own password-protected user."""
    initdb = Path(ensure_debian_package("postgresql", "initdb"))
    bin_dir = Path(os.path.realpath(initdb)).parent
    last_error: RuntimeError | None = None
    for _ in range(3):  # the free port may be taken between choosing it and binding it
        directory = Path(tempfile.mkdtemp(prefix="partida-postgres-"))
        server = Postgres(bin_dir, free_port(), directory, "partida", secrets.token_hex(12))
        try:
            if os.geteuid() == 0:
                shutil.chown(directory, "postgres", "postgres")
            directory.chmod(0o700)
            _initdb(server)
            _start_cluster(server)
            _create_database(server)
        except RuntimeError as error:
            server.close()
            last_error = error
            continue
        except BaseException:
            server.close()
            raise
        atexit.register(server.close)  # a crashed test session must not leave a server behind
        return server
    assert last_error is not None
    raise last_error


def _initdb(server: Postgres) -> None:
    superuser_password = server.directory / "superuser-password"
    superuser_password.write_text(secrets.token_hex(12) + "\n")
    if os.geteuid() == 0:
        shutil.chown(superuser_password, "postgres", "postgres")
    command = [
        str(server.bin_dir / "initdb"),
        "-D",
        str(server.data),
        "-U",
        "postgres",
        "--pwfile",
        str(superuser_password),
        "--auth-local=trust",  # the socket lives in our private directory
        "--auth-host=scram-sha-256",  # TCP clients must give the password, as in production
        "--encoding=UTF8",
        "--locale=C",
        "--no-sync",
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False, **_as_postgres_user())  # type: ignore[call-overload]
    if done.returncode != 0:
        raise RuntimeError(f"initdb failed with exit code {done.returncode}:\n{(done.stdout + done.stderr)[-2000:]}")


def _start_cluster(server: Postgres) -> None:
    command = [
        str(server.bin_dir / "postgres"),
        "-D",
        str(server.data),
        "-p",
        str(server.port),
        "-k",
        str(server.directory),
        "-c",
        "listen_addresses=127.0.0.1",
        # A throwaway test cluster: durability buys nothing and costs seconds.
        "-c",
        "fsync=off",
        "-c",
        "synchronous_commit=off",
        "-c",
        "full_page_writes=off",
    ]
    with open(server.log, "ab") as log:
        server.process = subprocess.Popen(command, stdout=log, stderr=log, **_as_postgres_user())  # type: ignore[call-overload]
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if server.process.poll() is not None:
            raise RuntimeError(f"postgres exited with code {server.process.returncode}:\n{_read_tail(server.log)}")
        ready = subprocess.run(
            [str(server.bin_dir / "pg_isready"), "-q", "-h", str(server.directory), "-p", str(server.port)],
            check=False,
        )
        if ready.returncode == 0 and _port_open(server.port):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"postgres did not become ready on port {server.port}:\n{_read_tail(server.log)}")
        time.sleep(0.1)


def _create_database(server: Postgres) -> None:
    password = server.password.replace("'", "''")
    statements = [
        f"CREATE ROLE {server.user} LOGIN PASSWORD '{password}'",
        f"CREATE DATABASE {server.database} OWNER {server.user}",
    ]
    command = [str(server.bin_dir / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1"]
    command += ["-h", str(server.directory), "-p", str(server.port), "-U", "postgres", "-d", "postgres"]
    for statement in statements:
        command += ["-c", statement]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"could not create the test database:\n{(done.stdout + done.stderr)[-2000:]}")


# Fixtures.


@pytest.fixture(scope="session")
def mosquitto() -> Iterator[Mosquitto]:
    """A private Mosquitto broker shared by the whole test session."""
    broker = start_mosquitto()
    try:
        yield broker
    finally:
        broker.close()


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """A private PostgreSQL cluster shared by the whole test session (database ``partida``)."""
    server = start_postgres()
    try:
        yield server
    finally:
        server.close()


# Chromium (for the browser client's tests).

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def ensure_chromium() -> str:
    """Debian's Chromium, installed when missing. Playwright drives it through
    ``executable_path``: Playwright's own browser download needs a host the test machine cannot
    reach, and Debian's build is the one users of this machine have."""
    return ensure_debian_package("chromium", "chromium")
