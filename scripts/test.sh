#!/usr/bin/env bash
# The README's test command: installs Partida with its test dependencies into .venv and runs the
# whole suite (with OpenSpiel when a wheel exists). Tests that need Mosquitto or PostgreSQL install
# Debian's packages themselves (tests/fixtures/programs.py), so a fresh machine needs only Python, root and
# the package registries.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'
# OpenSpiel, for the lock-step tests, from a wheel only (seconds); without one they are skipped
.venv/bin/python -m pip install --quiet --only-binary=open_spiel -e '.[test,reference]' \
  || echo "no open_spiel wheel for this platform: tests/games/test_openspiel_lockstep.py will be skipped"
.venv/bin/ruff check partida tests bench
exec .venv/bin/python -m pytest -q "$@"
