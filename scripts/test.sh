#!/usr/bin/env bash
# The README's test command: installs Partida with its test dependencies into .venv and runs the
# whole suite. Tests that need Mosquitto or PostgreSQL install Debian's packages themselves
# (tests/services.py), so a fresh machine needs only Python, root and the package registries.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'
.venv/bin/ruff check partida tests bench
exec .venv/bin/python -m pytest -q "$@"
