"""Benchmarks: relevance on real data, a graded personal benchmark, speed against peers."""

import os
from pathlib import Path

# A benchmark's `memex --search` children time what the benchmark asks for and leave nothing
# running: no warm process starts on first use (engine/warm/autostart.py) unless a benchmark
# turns it on for its own children (bench.warm_cli's searches in a row).
os.environ.setdefault("MEMEX_NO_AUTOSTART", "1")

# Memex's own folders (config, data, the run log, cache) of every benchmark process and its
# children are under bench/out/xdg, never the user's: a reindex run in-process appends to
# the run log of the folder platformdirs names. A benchmark that needs folders of its own
# for its children (bench.cold_start, bench.warm_cli) sets them on the children.
_PRIVATE = Path(__file__).resolve().parent / "out" / "xdg"
for _name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
    os.environ[_name] = str(_PRIVATE / _name.lower())
