"""Speed against the targets of SPEC §11, a peer stack and the physical floor, in one run.

    .venv/bin/python -m bench.perf --chunks 10000 [--queries 200] [--rebuild] [--no-peers]

On a layer of realistic shape (bench/perf_data.py, real chitchat-dataset messages) indexed
by `memex reindex` in a child process (cached, see bench/perf_index.py) it measures: index
throughput and peak RSS, a no-change reindex, the database size, warm query latency per mode
and with filters (query embedding included), cold `memex --search` wall time, and on the same
chunks and vectors: the seed design in raw SQL, the floor (numpy exact scan + FTS5), the peer
stack (Chroma + rank_bm25 + RRF). Memex is timed twice: the one-shot path (vec0, as
`memex --search` runs) and the warm path (the in-memory vector cache of the app). Writes
bench/out/perf-<chunks>.json.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

from bench import peers, perf_index
from bench.common import OUT, add_quiet_load, bench_settings, busy_core, machine, wait_for_quiet
from bench.perf_data import NOW
from bench.perf_report import Samples, print_report, write_json
from engine.embedders import Embedder, create_embedder
from engine.search import Searcher
from engine.search.retrieve.vector_cache import VectorCache
from engine.settings import Settings
from engine.store import db

K = 50  # candidates per retriever: limit 10 × over-fetch 5, as the engine does
LIMIT = 10
PREFIXES = ("", "", "what did we say about ", "that chat about ", "remember ")


# -- queries --------------------------------------------------------------------------------


def make_queries(texts: Sequence[str], n: int, seed: int = 11) -> list[str]:
    """Word subsets and light paraphrases (content words shuffled) of real messages."""
    rng = random.Random(seed)
    lines = [
        line.split(": ", 1)[1]
        for t in texts[:: max(1, len(texts) // 5000)]
        for line in t.split("\n")
        if ": " in line
    ]
    pool = [words for line in lines if len(words := peers.tokens(line)) >= 3]
    queries = []
    for i in range(n):
        words = rng.choice(pool)
        if i % 2 == 0:
            picked = sorted(rng.sample(range(len(words)), rng.randint(2, min(4, len(words)))))
            queries.append(" ".join(words[j] for j in picked))
        else:
            shuffled = rng.sample(words, len(words))[:6]
            queries.append(rng.choice(PREFIXES) + " ".join(shuffled))
    return queries


# -- timing ---------------------------------------------------------------------------------


def timed(fn: Callable[[str], object], queries: Sequence[str], warmup: int = 10) -> list[float]:
    for q in queries[:warmup]:
        fn(q)
    samples = []
    for q in queries:
        started = time.perf_counter()
        fn(q)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def engine_runs(searcher: Searcher, queries: Sequence[str], label: str, person: str) -> Samples:
    since = (NOW - timedelta(days=90)).date().isoformat()
    runs: dict[str, Callable[[str], object]] = {
        "hybrid": lambda q: searcher.search(q, LIMIT),
        "vector": lambda q: searcher.search(q, LIMIT, mode="vector"),
        "bm25": lambda q: searcher.search(q, LIMIT, mode="bm25"),
        "hybrid, --source slack": lambda q: searcher.search(q, LIMIT, ["slack"]),
        "hybrid, --since 90 days": lambda q: searcher.search(q, LIMIT, since=since),
        f"hybrid, --person {person}": lambda q: searcher.search(q, LIMIT, people=[person]),
    }
    return {f"{label} {name}": timed(fn, queries) for name, fn in runs.items()}


def component_runs(
    conn: Any, corpus: peers.Corpus, embedder: Embedder, queries: Sequence[str]
) -> Samples:
    exact, fts5, vec0 = peers.ExactScan(corpus), peers.Fts5(conn), peers.Vec0(conn)
    vectors = {q: embedder.embed_query(q) for q in queries}
    return {
        "query embedding alone": timed(embedder.embed_query, queries),
        "vec0 float KNN alone (k=50)": timed(lambda q: vec0.knn(vectors[q], K), queries),
        "numpy exact scan alone (k=50)": timed(lambda q: exact.knn(vectors[q], K), queries),
        "FTS5 alone (k=50)": timed(lambda q: fts5.top(q, K), queries),
        "seed design, raw SQL: embed + vec0 + FTS5 + RRF": timed(
            lambda q: peers.rrf([vec0.knn(embedder.embed_query(q), K), fts5.top(q, K)], LIMIT),
            queries,
        ),
        "floor: embed + numpy scan + FTS5 + RRF": timed(
            lambda q: peers.rrf([exact.knn(embedder.embed_query(q), K), fts5.top(q, K)], LIMIT),
            queries,
        ),
    }


def peer_runs(
    corpus: peers.Corpus, embedder: Embedder, queries: Sequence[str]
) -> tuple[Samples, dict[str, float], peers.ChromaPeer]:
    chroma, bm25 = peers.ChromaPeer(corpus), peers.Bm25Peer(corpus)
    vectors = {q: embedder.embed_query(q) for q in queries}
    samples = {
        "Chroma HNSW alone (k=50)": timed(lambda q: chroma.knn(vectors[q], K), queries),
        "rank_bm25 alone (k=50)": timed(lambda q: bm25.top(q, K), queries),
        "peer: embed + Chroma + rank_bm25 + RRF": timed(
            lambda q: peers.rrf([chroma.knn(embedder.embed_query(q), K), bm25.top(q, K)], LIMIT),
            queries,
        ),
    }
    builds = {
        "chroma_build_s": round(chroma.build_seconds, 1),
        "rank_bm25_build_s": round(bm25.build_seconds, 1),
    }
    return samples, builds, chroma


def recall_at_10(
    corpus: peers.Corpus,
    embedder: Embedder,
    queries: Sequence[str],
    others: dict[str, Callable[[Any, int], list[int]]],
) -> dict[str, float]:
    exact = peers.ExactScan(corpus)
    out: dict[str, list[float]] = {name: [] for name in others}
    for q in queries:
        vector = embedder.embed_query(q)
        truth = set(exact.knn(vector, 10))
        for name, knn in others.items():
            out[name].append(len(truth & set(knn(vector, 10))) / 10)
    return {name: round(statistics.fmean(v), 4) for name, v in out.items()}


# -- process-level figures ------------------------------------------------------------------


ONE_SHOT_ENV = {**os.environ, "MEMEX_NO_WARM": "1"}


def cold_search(target: Path, query: str, runs: int = 5) -> float:
    args = [*perf_index.memex_command(), *perf_index.cli_args(target), "--search", query]
    walls = []
    for _ in range(runs):
        started = time.perf_counter()
        # The one-shot path, even if an app or `memex watch` serves this index warm.
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL, env=ONE_SHOT_ENV)
        walls.append(time.perf_counter() - started)
    return statistics.median(walls)


def no_change_reindex(target: Path) -> tuple[float, float]:
    seconds, rss, code = perf_index.run_child(
        [*perf_index.memex_command(), "reindex", *perf_index.cli_args(target)]
    )
    if code != 0:
        raise SystemExit(f"no-change reindex failed with exit code {code}")
    return seconds, rss


def db_size_mb(path: Path) -> float:
    files = [path, Path(f"{path}-wal")]
    return sum(f.stat().st_size for f in files if f.exists()) / 1e6


# -- main -----------------------------------------------------------------------------------


def exact_scan_all_cores(
    corpus: peers.Corpus, embedder: Embedder, queries: Sequence[str]
) -> Samples:
    vectors = {q: embedder.embed_query(q) for q in queries}
    return {
        "numpy exact scan alone (k=50), BLAS threads = cores": timed(
            lambda q: peers.ExactScan(corpus).knn(vectors[q], K), queries
        )
    }


def loaded_cache(
    settings: Settings, embedder: Embedder
) -> tuple[Searcher, VectorCache, dict[str, Any]]:
    """A searcher with its own vector cache and keyword index, each loaded once and timed."""
    cached = Searcher(settings, embedder=embedder, vector_cache=True, keyword_index=True)
    cache, index = cached.vector_cache, cached.keyword_index
    assert cache is not None and index is not None
    started = time.perf_counter()
    cache.refresh()
    loaded = time.perf_counter()
    index.refresh()
    figures = {
        "cache_load_s": round(loaded - started, 2),
        "cache_mb": round(cache.matrix.nbytes / 1e6, 1),
        "keyword_index_load_s": round(time.perf_counter() - loaded, 2),
        "keyword_index_mb": round(index.nbytes / 1e6, 1),
        "warm_rss_mb": round(current_rss_mb(), 1),
        "warm_anon_mb": round(current_rss_mb("RssAnon"), 1),
    }
    return cached, cache, figures


def current_rss_mb(field: str = "VmRSS") -> float:
    """This process's resident set now (Linux: /proc; elsewhere its peak so far). `field`
    RssAnon: its anonymous memory only, without the index file's mapped pages (the
    connections map up to 256 MB of it each; the system can drop those at will)."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def single_thread_runs(
    conn: Any,
    corpus: peers.Corpus,
    embedder: Embedder,
    queries: Sequence[str],
    cache: VectorCache,
    with_peers: bool,
) -> tuple[Samples, dict[str, Any]]:
    """The component, floor and peer paths and recall@10; run with BLAS held to one thread."""
    samples = component_runs(conn, corpus, embedder, queries)
    figures: dict[str, Any] = {}
    knn = {
        "vec0 float KNN": peers.Vec0(conn).knn,
        # Asked for k = 50 chunks, as the engine asks (limit 10 × overfetch 5): a quantized
        # scan's re-score depth is in proportion to k (engine/search/retrieve/quantized.py).
        "vector cache": lambda v, k: [seq for seq, _ in cache.knn(v, K)][:k],
    }
    if with_peers:
        peer_samples, figures["peer_builds"], chroma = peer_runs(corpus, embedder, queries)
        samples |= peer_samples
        knn["Chroma HNSW"] = chroma.knn
    figures["recall"] = recall_at_10(corpus, embedder, queries, knn)
    return samples, figures


def process_figures(
    target: Path,
    build: perf_index.Build,
    settings: Settings,
    no_change: tuple[float, float],
    queries: Sequence[str],
) -> dict[str, Any]:
    no_change_s, no_change_rss = no_change
    return {
        "build": asdict(build),
        "no_change_s": no_change_s,
        "no_change_rss_mb": no_change_rss,
        "db_mb": db_size_mb(settings.db_path),
        "cold_search_s": cold_search(target, queries[0]),
        "queries": len(queries),
        "query_examples": queries[:6],
    }


def measure(
    target: Path, build: perf_index.Build, n_queries: int, with_peers: bool
) -> dict[str, Any]:
    """Every figure of one run. The engine's paths run with numpy's default BLAS threads, as
    in the app; the component, floor and peer paths hold BLAS to one thread, as the first
    runs did (two OpenBLAS threads fought onnxruntime's then-spinning threads)."""
    from threadpoolctl import threadpool_limits

    settings = bench_settings([target / "layer"], target / "memex.db", now=NOW.isoformat())
    no_change = no_change_reindex(target)
    conn = db.connect(settings.db_path, create=False)
    corpus = peers.load_corpus(conn)
    queries = make_queries(corpus.texts, n_queries)
    embedder = create_embedder(settings)
    samples = exact_scan_all_cores(corpus, embedder, queries)
    # The engine's own paths run as the app runs them (numpy's default BLAS threads).
    samples |= engine_runs(
        Searcher(settings, embedder=embedder, vector_cache=False, keyword_index=False),
        queries,
        "Memex one-shot path (vec0)",
        "Maya",
    )
    cached, cache, figures = loaded_cache(settings, embedder)
    samples |= engine_runs(cached, queries, "Memex warm path (vector cache)", "Maya")
    with threadpool_limits(limits=1, user_api="blas"):
        single, single_figures = single_thread_runs(
            conn, corpus, embedder, queries, cache, with_peers
        )
    samples |= single
    figures |= single_figures
    figures |= process_figures(target, build, settings, no_change, queries)
    conn.close()
    return {"figures": figures, "samples": samples}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.perf", description=__doc__.split("\n")[0])
    p.add_argument("--chunks", type=int, default=10_000)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--rebuild", action="store_true", help="rebuild the cached layer and index")
    p.add_argument("--no-peers", action="store_true", help="skip Chroma and rank_bm25")
    p.add_argument(
        "--busy",
        action="store_true",
        help="keep one core busy (a spinning child process) while measuring; "
        "writes bench/out/perf-<chunks>-busy.json",
    )
    add_quiet_load(p)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    build = perf_index.build(args.chunks, args.rebuild)
    target = Path(build.db).parent
    if args.quiet_load:
        wait_for_quiet(args.quiet_load)
    before = machine()
    with busy_core() if args.busy else contextlib.nullcontext():
        result = measure(target, build, args.queries, not args.no_peers)
    peer = None if args.no_peers else "peer: embed + Chroma + rank_bm25 + RRF"
    print_report(result, build.chunks, peer)
    out = OUT / f"perf-{args.chunks}{'-busy' if args.busy else ''}.json"
    write_json(out, before, result, build.chunks, peer)
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
