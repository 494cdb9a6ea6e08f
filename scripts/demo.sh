#!/usr/bin/env bash
# Set up a virtual environment, index the bundled demo data layer and search it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e .
DEMO=${MEMEX_DEMO_DIR:-$(mktemp -d)/memex-demo}
.venv/bin/memex demo "$DEMO"
DB="$DEMO/.memex/memex.db"
for q in "moving the standup" "E_SCHED_TIMEOUT" "trouble sleeping before investor meetings" "Priya"; do
  echo
  echo "\$ memex --search \"$q\" --limit 3"
  .venv/bin/memex --root "$DEMO" --db "$DB" --search "$q" --limit 3
done
