"""What a test needs beyond its own process and a moment (a pytest plugin, registered in
conftest.py): the markers pyproject.toml registers, set here from the shared fixtures a test uses
so that they follow the test wherever its file lives, and `--quick`, which leaves out every
marked test and fails a quick test that starts a program, so that the quick run stays quick."""

from __future__ import annotations

import sys
from typing import Any

import pytest

# The markers (see pyproject.toml) that the shared fixtures imply, so that a test is marked by
# what it uses wherever its file lives; the rest are written on the test or its module.
FIXTURE_MARKS = {
    "postgres": "postgres",
    "pg_cluster": "postgres",
    "pg_shared": "postgres",
    "mosquitto": "mqtt",
    "browser": "browser",
}
# Fixtures run once per backend (tests/storage_fixtures.py): only their "postgresql" run needs a cluster.
BACKEND_FIXTURES = ("storage_url", "empty_url")
# What `--quick` leaves out: every test that needs real time, a program of its own, a service or
# a browser, or a second or more of work.
QUICK_EXCLUDES = ("realtime", "processes", "postgres", "mqtt", "browser", "slow")
# A quick test takes well under a second: one that hangs is named after this many seconds rather
# than after pyproject.toml's timeout for the whole suite.
QUICK_TIMEOUT = 60


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--quick",
        action="store_true",
        help=f"leave out the tests marked {', '.join(QUICK_EXCLUDES)} (the suite to run before every commit)",
    )


# The audit events by which a process starts another program or a copy of itself.
SPAWN_EVENTS = ("subprocess.Popen", "os.posix_spawn", "os.fork")
# A server's SQLite writer is a process of its own that every server test starts; it is part of
# the server under test, not a program a test runs.
OWN_PARTS = ("partida.storage.sqlite_process",)
_spawned: list[str] | None = None  # under --quick, while a test runs: the programs it started


def _audit_spawns(event: str, args: tuple[Any, ...]) -> None:
    if _spawned is None or event not in SPAWN_EVENTS:
        return
    argv = [str(word) for word in args[1]] if event != "os.fork" and isinstance(args[1], (list, tuple)) else []
    if not any(part in argv for part in OWN_PARTS):
        _spawned.append(" ".join(argv)[:200] or event)


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("quick"):
        sys.addaudithook(_audit_spawns)  # a hook cannot be removed: it is idle outside a test


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Any:
    global _spawned
    if item.config.getoption("quick"):
        _spawned = []
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """Under --quick, fail a test that started a program: it must carry the `processes` marker,
    or the quick run would silently grow slow again."""
    global _spawned
    try:
        return (yield)
    finally:
        spawned, _spawned = _spawned, None
        if spawned:
            pytest.fail(f"started {spawned[0]!r} ({len(spawned)} in all): mark it `processes`", pytrace=False)


@pytest.hookimpl(tryfirst=True)  # before `-m` reads the markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        needs = {FIXTURE_MARKS[name] for name in getattr(item, "fixturenames", ()) if name in FIXTURE_MARKS}
        callspec = getattr(item, "callspec", None)
        if callspec is not None and any(callspec.params.get(name) == "postgresql" for name in BACKEND_FIXTURES):
            needs.add("postgres")
        for marker in sorted(needs):
            item.add_marker(marker)
    if config.getoption("quick"):
        left_out = [item for item in items if any(item.get_closest_marker(name) for name in QUICK_EXCLUDES)]
        if left_out:
            config.hook.pytest_deselected(items=left_out)
            dropped = set(left_out)
            items[:] = [item for item in items if item not in dropped]
        for item in items:
            if item.get_closest_marker("timeout") is None:
                item.add_marker(pytest.mark.timeout(QUICK_TIMEOUT))
