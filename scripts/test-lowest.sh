#!/usr/bin/env bash
# The whole suite with every direct dependency at the lowest version pyproject.toml allows, so that
# its lower bounds stay true: uv (installed from PyPI when missing) resolves them with
# --resolution lowest-direct into .venv-lowest, then ruff and pytest run as in scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v uv >/dev/null || python3 -m pip install --quiet uv
uv venv --quiet --clear --python python3 .venv-lowest  # anew: an install into it keeps whatever already satisfies the bounds
VIRTUAL_ENV="$PWD/.venv-lowest" uv pip install --quiet --resolution lowest-direct -e '.[test]'
.venv-lowest/bin/ruff check partida tests bench
exec .venv-lowest/bin/python -m pytest -q -p no:cacheprovider "$@"
