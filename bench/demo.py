"""The demo layer's figures: index time, chunks/s, warm and cold query time, size.

    .venv/bin/python -m bench.demo [--queries 200]

Copies resources/demo to bench/out/demo-run/, indexes it with `memex reindex` in a child
process, then times warm queries (one process, query embedding included) and cold
`memex --search` runs. Writes bench/out/demo.json.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from functools import partial
from pathlib import Path
from typing import Any

from bench import perf, perf_index
from bench.common import (
    OUT,
    add_quiet_load,
    bench_settings,
    machine,
    markdown_table,
    percentiles,
    wait_for_quiet,
    write_figures,
)
from bench.personal import DEMO_TODAY
from engine.resources import demo_dir
from engine.search import Searcher
from engine.store import db

QUERIES = ("standup time", "Jonas birthday", "insulin pen", "board game night", "budget")


def build(target: Path) -> tuple[int, float, float]:
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(demo_dir(), target / "layer")
    bench_settings([target / "layer"], target / "memex.db")
    seconds, rss, code = perf_index.run_child(
        [*perf_index.memex_command(), "reindex", *perf_index.cli_args(target)],
        target / "reindex.log",
    )
    if code != 0:
        raise SystemExit(f"memex reindex failed ({code}); see {target / 'reindex.log'}")
    conn = db.connect(target / "memex.db", create=False)
    chunks = int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return chunks, seconds, rss


def warm(target: Path, n: int) -> dict[str, dict[str, float]]:
    settings = bench_settings([target / "layer"], target / "memex.db", now=DEMO_TODAY)
    searcher = Searcher(settings)
    texts = [r[0] for r in searcher.conn.execute("SELECT content FROM chunks")]
    queries = list(QUERIES) + perf.make_queries(texts, n)
    out = {}
    for mode in ("hybrid", "vector", "bm25"):
        out[mode] = percentiles(perf.timed(partial(searcher.search, limit=10, mode=mode), queries))
    searcher.close()
    return out


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.demo", description=__doc__.split("\n")[0])
    p.add_argument("--queries", type=int, default=200)
    add_quiet_load(p)
    return p


def figures_table(figures: dict[str, Any]) -> str:
    latency = figures["latency_ms"]
    chunks, seconds = figures["chunks"], figures["index_seconds"]
    rows: list[list[Any]] = [
        ["chunks", chunks],
        ["index time (memex reindex, child)", f"{seconds:.1f} s"],
        ["chunks/s", f"{chunks / seconds:.1f}"],
        ["peak RSS of the reindex", f"{figures['peak_rss_mb']:.0f} MB"],
        *[
            [
                f"warm {m} p50 / p95 / p99 ({int(v['n'])} queries)",
                f"{v['p50']:.1f} / {v['p95']:.1f} / {v['p99']:.1f} ms",
            ]
            for m, v in latency.items()
        ],
        ["cold `memex --search` (median of 5)", f"{figures['cold_search_s']:.2f} s"],
        ["database size", f"{figures['db_mb']:.2f} MB"],
    ]
    return markdown_table(["figure", "value"], rows)


def measure(target: Path, n_queries: int) -> dict[str, Any]:
    """Index the demo layer into `target`, then time its queries: the figures of demo.json."""
    chunks, seconds, rss = build(target)
    latency = warm(target, n_queries)
    return {
        "chunks": chunks,
        "index_seconds": seconds,
        "peak_rss_mb": rss,
        "latency_ms": latency,
        "cold_search_s": perf.cold_search(target, "standup time"),
        "db_mb": perf.db_size_mb(target / "memex.db"),
    }


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    target = OUT / "demo-run"
    if args.quiet_load:
        wait_for_quiet(args.quiet_load)
    before = machine()
    figures = measure(target, args.queries)
    print(figures_table(figures))
    write_figures("demo", before, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
