"""The warm path at 1M chunks: a synthetic index grown from the 100k one.

    .venv/bin/python -m bench.scale [--copies 10] [--queries 200] [--busy]
        [--quiet-load L] [--rebuild]

(`--copies 1` measures the 100k index itself the same way: the warm process's RSS there.)

Embedding 1M chunks with the local model would take hours, so the index is grown:

- the 100k speed-benchmark index (bench/perf_index.py: real chat text, real MiniLM
  vectors) is copied, and each of its chunks is inserted `copies` − 1 more times through
  SQL, so the FTS triggers index them as the indexer's inserts are: the same text, type,
  date and title, an id and file of its own (`<file>#copy<n>`);
- each copy's part vectors are synthesized as normalise(v + e), v the original part's
  vector, e ~ N(0, σ²·I₃₈₄) with σ = 0.038 (|e| ≈ 0.75, cos(copy, original) ≈ 0.8), as
  bench/vector_scale.py does; the vec0 table keeps the original chunks only (the warm path
  reads the vectors from `chunks.embedding`).

The keyword side sees every posting list ten times as long, with ten times the rows; the
vector side sees ten times the parts, in clusters around real vectors. Cached under
bench/out/scale-<chunks>-<key>/ (several GB).

Measured on the warm path (a Searcher with its own vector cache and keyword index, as the
app and `memex watch` hold them): the first loads and the process's RSS; hybrid, vector and
bm25 searches and the three filters (`bench.perf.engine_runs`, 200 queries made by
`bench.perf.make_queries`); recall@10 of the warm vector scan against the exact float scan
of the same matrix. `--busy` keeps one core busy meanwhile. Writes
bench/out/scale-<copies>x[-busy].json (scale-10x.json by default).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench import perf, perf_index
from bench.common import (
    OUT,
    add_quiet_load,
    bench_settings,
    busy_core,
    digest,
    machine,
    percentiles,
    wait_for_quiet,
    write_record,
)
from bench.perf_data import NOW
from engine.embedders import create_embedder
from engine.search import Searcher
from engine.search.retrieve.quantized import nearest_chunks
from engine.store import db

SIGMA = 0.038
GROWN = "grown v1"  # part of the cache key: change it when `grow` changes
BASE_CHUNKS = 100_000
BATCH = 5_000
COLUMNS = (
    "id, source_file, source_type, content, metadata, embedding, indexed_at, content_hash, "
    "content_date, title, location, people, ordinal, search_text, search_title"
)


def build(copies: int, rebuild: bool) -> Path:
    """The grown index (cached); its path (`copies` 1: the 100k index itself)."""
    base = perf_index.build(BASE_CHUNKS, False)
    if copies == 1:
        return Path(base.db)
    key = digest([], f"{GROWN}:{base.db}:{copies}:{SIGMA}")
    target = OUT / f"scale-{base.chunks * copies}-{key}"
    done = target / "built.json"
    if done.exists() and not rebuild:
        return target / "memex.db"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    path = target / "memex.db"
    source = db.connect(base.db, create=False)
    source.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    source.close()
    shutil.copy(base.db, path)
    started = time.perf_counter()
    grow(path, copies)
    seconds = time.perf_counter() - started
    conn = db.connect(path, create=False)
    chunks = int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
    conn.close()
    done.write_text(json.dumps({"chunks": chunks, "grow_s": round(seconds, 1), **machine()}))
    return path


def grow(path: Path, copies: int) -> None:
    """Insert every chunk `copies` − 1 more times, with synthesized part vectors."""
    conn = db.connect(path, create=False)
    rng = np.random.default_rng(16)
    dim = int(db.get_meta(conn, "dimension") or 384)
    total = int(conn.execute("SELECT max(seq) FROM chunks").fetchone()[0])
    insert = f"INSERT INTO chunks({COLUMNS}) VALUES ({','.join('?' * 15)})"
    for copy in range(1, copies):
        for start in range(0, total + 1, BATCH):
            rows = conn.execute(
                f"SELECT {COLUMNS} FROM chunks WHERE seq > ? AND seq <= ? ORDER BY seq",
                (start, start + BATCH),
            ).fetchall()
            grown = [copied(r, copy, dim, rng) for r in rows]
            with db.transaction(conn):
                conn.executemany(insert, grown)
        print(f"copy {copy} of {copies - 1} inserted", flush=True)
    conn.close()


def copied(row: tuple[Any, ...], copy: int, dim: int, rng: np.random.Generator) -> tuple[Any, ...]:
    values = list(row)
    values[0] = f"{row[0]}#copy{copy}"
    values[1] = f"{row[1]}#copy{copy}"
    if row[5] is not None:
        parts = np.frombuffer(row[5], dtype=np.float32).reshape(-1, dim)
        noisy = parts + rng.normal(0.0, SIGMA, parts.shape).astype(np.float32)
        noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
        values[5] = noisy.astype(np.float32).tobytes()
    return tuple(values)


def measure(path: Path, n_queries: int) -> dict[str, Any]:
    settings = bench_settings([path.parent / "layer"], path, now=NOW.isoformat())
    conn = db.connect(path, create=False)
    texts = [r[0] for r in conn.execute("SELECT content FROM chunks WHERE seq % 100 = 0")]
    conn.close()
    queries = perf.make_queries(texts, n_queries)
    embedder = create_embedder(settings)
    before, anon = perf.current_rss_mb(), perf.current_rss_mb("RssAnon")
    searcher, cache, figures = perf.loaded_cache(settings, embedder)
    figures["rss_before_loads_mb"] = round(before, 1)
    figures["anon_before_loads_mb"] = round(anon, 1)
    figures["parts"] = int(cache.matrix.shape[0])
    figures["chunks"] = len(cache)
    samples = perf.engine_runs(searcher, queries, "Memex warm path", "Maya")
    figures["vector_recall_at_10"] = vector_recall(searcher, embedder, queries)
    figures["rss_after_searches_mb"] = round(perf.current_rss_mb(), 1)
    figures["anon_after_searches_mb"] = round(perf.current_rss_mb("RssAnon"), 1)
    searcher.close()
    return {"figures": figures, "samples": samples}


def vector_recall(searcher: Searcher, embedder: Any, queries: list[str]) -> float:
    """recall@10 of the warm scan (`search.vector_scan`, asked for k = 50 as the engine
    asks) against the exact float scan."""
    cache = searcher.vector_cache
    assert cache is not None
    found = []
    for query in queries:
        vector = embedder.embed_query(query)
        exact, _ = nearest_chunks(cache.matrix, cache.layout, vector, 10)
        truth = set(cache.seqs[cache.starts[exact]].tolist())
        got = {seq for seq, _ in cache.knn(vector, perf.K)[:10]}  # k as the engine asks
        found.append(len(truth & got) / 10)
    return round(statistics.fmean(found), 4)


def report(result: dict[str, Any]) -> None:
    figures = result["figures"]
    print("\n| figure | value |\n|---|---|")
    for name, value in figures.items():
        print(f"| {name} | {value} |")
    print("\n| warm path (k = 50) | p50 ms | p95 ms |\n|---|---|---|")
    for name, values in result["samples"].items():
        p = percentiles(values)
        print(f"| {name} | {p['p50']:.1f} | {p['p95']:.1f} |")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.scale", description=__doc__.split("\n")[0])
    p.add_argument("--copies", type=int, default=10)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--rebuild", action="store_true")
    p.add_argument("--busy", action="store_true", help="keep one core busy while measuring")
    add_quiet_load(p)
    args = p.parse_args(argv)
    path = build(args.copies, args.rebuild)
    if args.quiet_load:
        wait_for_quiet(args.quiet_load)
    before = machine()
    with busy_core() if args.busy else contextlib.nullcontext():
        result = measure(path, args.queries)
    report(result)
    out = OUT / f"scale-{args.copies}x{'-busy' if args.busy else ''}.json"
    latency = {name: percentiles(values) for name, values in result["samples"].items()}
    write_record(out, before, {"figures": result["figures"], "latency_ms": latency})
    return 0


if __name__ == "__main__":
    sys.exit(main())
