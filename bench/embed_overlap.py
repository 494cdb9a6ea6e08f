"""The query embedded beside the keyword side or before it: an interleaved A/B.

    .venv/bin/python -m bench.embed_overlap [--chunks 10000 100000] [--queries 200] [--busy]

On the warm path (a Searcher with its own vector cache and keyword index, as the app holds
them) over the built speed-benchmark indexes (bench/perf_index.py), every query is searched
both ways, in alternating order: the engine's way (`QueryEmbedder.start` on a thread of its
own, the keyword side meanwhile) and embedded first on the calling thread. Prints p50/p95 of
each and writes bench/out/embed_overlap.json.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import sys
import time
from pathlib import Path
from typing import Any

from bench import perf, perf_index
from bench.common import OUT, bench_settings, busy_core, machine, percentiles, write_record
from bench.perf_data import NOW
from engine.embedders import create_embedder
from engine.search import Searcher
from engine.store import db


def measure(chunks: int, n_queries: int) -> dict[str, Any]:
    target = Path(perf_index.build(chunks).db).parent
    settings = bench_settings([target / "layer"], target / "memex.db", now=NOW.isoformat())
    conn = db.connect(settings.db_path, create=False)
    texts = [r[0] for r in conn.execute("SELECT content FROM chunks WHERE seq % 20 = 0")]
    conn.close()
    queries = perf.make_queries(texts, n_queries)
    searcher = Searcher(settings, create_embedder(settings), vector_cache=True, keyword_index=True)
    overlapped = searcher._query_embedder.start
    first = functools.partial(overlapped, background=False)
    for query in queries[:10]:
        searcher.search(query, perf.LIMIT)
    samples: dict[str, list[float]] = {"beside the keyword side": [], "before it": []}
    for i, query in enumerate(queries):
        ways = [("beside the keyword side", overlapped), ("before it", first)]
        for name, start in ways if i % 2 else reversed(ways):
            searcher._query_embedder.start = start  # type: ignore[method-assign]
            began = time.perf_counter()
            searcher.search(query, perf.LIMIT)
            samples[name].append((time.perf_counter() - began) * 1000)
    searcher.close()
    return {name: percentiles(values) for name, values in samples.items()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.embed_overlap")
    p.add_argument("--chunks", type=int, nargs="+", default=[10_000, 100_000])
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--busy", action="store_true", help="keep one core busy while measuring")
    args = p.parse_args(argv)
    before = machine()
    with busy_core() if args.busy else contextlib.nullcontext():
        result = {str(n): measure(n, args.queries) for n in args.chunks}
    for chunks, figures in result.items():
        for name, p50 in figures.items():
            print(
                f"{chunks} chunks, embedded {name}: p50 {p50['p50']:.1f} / p95 {p50['p95']:.1f} ms"
            )
    out = OUT / f"embed_overlap{'-busy' if args.busy else ''}.json"
    write_record(out, before, {"chunks": result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
