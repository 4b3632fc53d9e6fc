#!/usr/bin/env bash
# The README's test command: installs Partida with its test dependencies into .venv and runs the
# whole suite (with OpenSpiel when a wheel exists) on several pytest-xdist workers. Tests that need
# Mosquitto, PostgreSQL, Chromium, GRhino, bubblewrap or Node.js install Debian's packages themselves
# (tests/fixtures/programs.py, sandbox.py), so a fresh machine needs only Python, root and the
# package registries.
#
#   bash scripts/test.sh                      the whole suite (before landing a change)
#   bash scripts/test.sh --quick              the tests that need no real time, program of their own,
#                                             PostgreSQL, Mosquitto or browser (before every commit)
#   bash scripts/test.sh tests/server/test_lobby.py  one file (any other arguments go to pytest too)
#
# PARTIDA_TEST_WORKERS sets the number of workers (0: none, in this process); `-n` on the command
# line does too.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
# Install again only when the dependencies changed: the install is editable, so code changes need
# none, and a check against the registries costs tens of seconds of a quick run.
stamp=.venv/partida-installed
wanted="$(python3 --version) $(sha256sum pyproject.toml | cut -d' ' -f1)"
if [[ ! -f $stamp || "$(cat "$stamp")" != "$wanted" ]]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  # OpenSpiel, for the lock-step tests, from a wheel only (seconds); without one they are skipped
  if ! .venv/bin/python -m pip install --quiet --only-binary=open_spiel -e '.[test,reference]'; then
    echo "no open_spiel wheel for this platform: tests/games/test_openspiel_lockstep.py will be skipped"
    .venv/bin/python -m pip install --quiet -e '.[test]'
  fi
  echo "$wanted" >"$stamp"
fi
.venv/bin/ruff check partida tests bench scripts tools
# Real time dominates the suite (clocks and grace periods run out, servers and bots start), not
# CPU: twice as many workers as cores finished first on the project's 2-core machine. worksteal
# hands a worker that runs dry the tests another still queues, so one long test does not hold
# back a queue behind it.
workers=${PARTIDA_TEST_WORKERS:-$(($(nproc) * 2))}
parallel=(-n "$workers" --dist worksteal)
for arg in "$@"; do
  if [[ $arg == -n || $arg == -n* || $arg == --numprocesses* || $arg == --dist* ]]; then
    parallel=()  # the caller chose
  fi
done
if [[ $workers == 0 ]]; then
  parallel=()
fi
exec .venv/bin/python -m pytest -q "${parallel[@]}" "$@"
