#!/usr/bin/env bash
# Set up a virtual environment and run every check: ruff, mypy, import contract, pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[dev,desktop,openai,mcp,documents]"
# The sentence-transformers embedder's tests need torch: the CPU wheel 2.13.0 first (a bare
# `torch` would pull a multi-GB CUDA build), then the extra. Without it those tests skip.
if [ "${MEMEX_SKIP_TORCH:-0}" != "1" ]; then
  if .venv/bin/python -m pip install -q "torch==2.13.0"; then
    .venv/bin/python -m pip install -q -e ".[torch]" || echo "warning: torch extra not installed"
  else
    echo "warning: torch 2.13.0 not available; sentence-transformers tests will skip"
  fi
fi
# The default installs stay light: pip's own resolver report shows no torch/CUDA/transformers.
.venv/bin/python scripts/check_light_install.py
export QT_QPA_PLATFORM=offscreen
.venv/bin/ruff check engine desktop tests bench
.venv/bin/ruff format --check engine desktop tests bench scripts packaging build.spec
.venv/bin/mypy
.venv/bin/lint-imports
.venv/bin/python -m pytest -q "$@"
