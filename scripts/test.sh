#!/usr/bin/env bash
# Set up a virtual environment and run every check: ruff, mypy, import contract, pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
# torch from the machine's CPU wheel first where the torch extra is wanted (see docs/embedders.md)
.venv/bin/python -m pip install -q -e ".[dev,desktop,openai]"
export QT_QPA_PLATFORM=offscreen
.venv/bin/ruff check engine desktop tests bench
.venv/bin/mypy
.venv/bin/lint-imports
.venv/bin/python -m pytest -q "$@"
