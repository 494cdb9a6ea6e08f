"""Benchmarks: relevance on real data, a graded personal benchmark, speed against peers."""

import os

# A benchmark's `memex --search` children time what the benchmark asks for and leave nothing
# running: no warm process starts on first use (engine/warm/autostart.py) unless a benchmark
# turns it on for its own children (bench.warm_cli's searches in a row).
os.environ.setdefault("MEMEX_NO_AUTOSTART", "1")
