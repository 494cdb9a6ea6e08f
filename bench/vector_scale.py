"""The vector side at 100k and 1M part vectors: exact, binary and int8 scans.

    .venv/bin/python -m bench.vector_scale --parts 100000 1000000 [--seeds 20000]
        [--queries 200] [--rescore 10 20 40 80 160 320] [--quiet-load L]

The matrix is what `VectorCache` holds (L2-normalised 384-d part vectors, a chunk's parts
consecutive) and is scored by the engine's own `engine.search.retrieve.quantized.nearest_chunks`
(k = 50, the engine's limit 10 × overfetch 5):

- seeds: real MiniLM (the local int8 model) vectors of real chat parts: chitchat-dataset
  conversations as `Name: text` windows of 10 messages, cut into parts by
  `engine.parts.part_texts` (cached in bench/out/vector_scale-seeds-<n>-<queries>.npz);
- the rest synthesized: row i ≥ seeds is normalise(s + e), s a seed drawn uniformly at
  random, e ~ N(0, σ²·I) with σ = 0.038 (|e| ≈ 0.75, so cos(row, its seed) ≈ 0.80);
- chunks: consecutive runs of 1–4 parts (uniform: 2.5 parts a chunk, 2.4 in real indexes);
- queries: word subsets and paraphrases (`bench.perf.make_queries`) of chat messages from
  conversations the seeds do not use, embedded by the same model.

Per size, on a quiet machine and with one core kept busy by a child process spinning:
p50/p95 of the exact float scan (BLAS held to one thread, and with numpy's default
threads), of the binary scan with every `--rescore` factor (parts re-scored = factor × k),
of the int8 scan and of the binary scan with a filter keeping 30 % of the chunks (both at
`search.vector_rescore`'s default); recall@10 and @50 against the exact
scan on the same vectors; the RSS with the float matrix alone, with the binary copy and
with the int8 copy. Writes bench/out/vector_scale.json.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import (
    OUT,
    add_quiet_load,
    busy_core,
    machine,
    percentiles,
    wait_for_quiet,
    write_record,
)
from engine.search.retrieve import quantized as qz
from engine.search.retrieve.compute import Compute

K = 50
SIGMA = 0.038
DIM = 384
Matrix = np.ndarray


# -- data -----------------------------------------------------------------------------------


def chat_windows(skip: int = 0, size: int = 10) -> Iterator[str]:
    """`Name: text` windows of `size` messages of chitchat-dataset's conversations."""
    from bench.perf_data import chitchat_conversations

    for conv in chitchat_conversations()[skip:]:
        lines = [f"{line.sender}: {line.text}" for line in conv]
        for start in range(0, len(lines), size):
            yield "\n".join(lines[start : start + size])


def seed_texts(n: int) -> tuple[list[str], int]:
    """The first n real parts, and how many conversations they used."""
    from bench.perf_data import chitchat_conversations
    from engine.parts import part_texts

    texts: list[str] = []
    for used, conv in enumerate(chitchat_conversations(), start=1):
        lines = [f"{line.sender}: {line.text}" for line in conv]
        for start in range(0, len(lines), 10):
            texts += part_texts("\n".join(lines[start : start + 10]))
        if len(texts) >= n:
            return texts[:n], used
    return texts, used


def seeds_and_queries(n: int, n_queries: int) -> tuple[Matrix, Matrix, list[str]]:
    """Seed part vectors and query vectors from the local model, cached on disk."""
    cache = OUT / f"vector_scale-seeds-{n}-{n_queries}.npz"
    if cache.exists():
        data = np.load(cache)
        return data["seeds"], data["queries"], [str(q) for q in data["texts"]]
    from bench.perf import make_queries
    from engine.embedders.local import LocalEmbedder

    texts, used = seed_texts(n)
    queries = make_queries(list(chat_windows(skip=used + 1))[:20_000], n_queries)
    embedder = LocalEmbedder()
    started = time.perf_counter()
    seeds = embedder.embed(texts)
    print(f"embedded {len(texts)} seed parts in {time.perf_counter() - started:.0f} s")
    vectors = np.stack([embedder.embed_query(q) for q in queries]).astype(np.float32)
    OUT.mkdir(parents=True, exist_ok=True)
    np.savez(cache, seeds=seeds, queries=vectors, texts=np.array(queries))
    return seeds, vectors, queries


def synthesized(seeds: Matrix, rows: int, seed: int = 16) -> Matrix:
    """The seeds, then rows of normalise(seed + N(0, σ²)) up to `rows` (in blocks)."""
    rng = np.random.default_rng(seed)
    out = np.empty((rows, seeds.shape[1]), dtype=np.float32)
    out[: min(rows, len(seeds))] = seeds[:rows]
    for start in range(len(seeds), rows, 65536):
        end = min(rows, start + 65536)
        block = seeds[rng.integers(0, len(seeds), end - start)]
        block += rng.normal(0.0, SIGMA, block.shape).astype(np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[start:end] = block
    return out


def chunk_starts(rows: int, seed: int = 17) -> Matrix:
    """Each chunk's first row: consecutive runs of 1–4 parts."""
    sizes = np.random.default_rng(seed).integers(1, 5, rows)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    return starts[starts < rows].astype(np.int64)


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


# -- measuring ------------------------------------------------------------------------------


Search = Callable[[Matrix], tuple[Matrix, Matrix]]


def timed(search: Search, queries: Matrix) -> tuple[dict[str, float], list[Matrix]]:
    for q in queries[:10]:
        search(q)
    samples, results = [], []
    for q in queries:
        started = time.perf_counter()
        chunks, _ = search(q)
        samples.append((time.perf_counter() - started) * 1000)
        results.append(chunks)
    return percentiles(samples), results


def recall(truth: list[Matrix], got: list[Matrix], depth: int) -> float:
    hits = [
        len(set(t[:depth].tolist()) & set(g[:depth].tolist()))
        for t, g in zip(truth, got, strict=True)
    ]
    return round(float(np.mean(hits)) / depth, 4)


def default_threads_exact(matrix: Matrix, starts: Matrix) -> Search:
    """The exact scan with numpy's default BLAS threads, not held to one."""

    def search(q: Matrix) -> tuple[Matrix, Matrix]:
        scores = np.maximum.reduceat(matrix @ q, starts)
        top = np.argpartition(-scores, K - 1)[:K]
        top = top[np.argsort(-scores[top], kind="stable")]
        return top, scores[top]

    return search


def default_rescore() -> int:
    """`search.vector_rescore`'s default: the int8 and filtered rows use it."""
    from engine.settings.table import SETTINGS

    return int(next(s.default for s in SETTINGS if s.name == "search.vector_rescore"))


def searches(
    matrix: Matrix, starts: Matrix, codes: dict[str, Any], rescores: list[int]
) -> dict[str, Search]:
    layout = qz.Layout(starts, matrix.shape[0])
    keep = qz.Selection(layout, np.random.default_rng(5).random(len(layout)) < 0.3)
    run = Compute()  # as an engine's: BLAS on one thread, the scan's helper thread
    out: dict[str, Search] = {
        "exact float, 1 BLAS thread": lambda q: qz.nearest_chunks(
            matrix, layout, q, K, compute=run
        ),
        "exact float, default BLAS threads": default_threads_exact(matrix, starts),
    }
    for factor in rescores:
        out[f"binary, re-score {factor}×k"] = lambda q, f=factor: qz.nearest_chunks(
            matrix, layout, q, K, codes=codes["binary"], rescore=f * K, compute=run
        )
    middle = default_rescore()
    out[f"int8, re-score {middle}×k"] = lambda q: qz.nearest_chunks(
        matrix, layout, q, K, codes=codes["int8"], rescore=middle * K, compute=run
    )
    out[f"binary, re-score {middle}×k, 30 % filter"] = lambda q: qz.nearest_chunks(
        matrix, layout, q, K, keep, codes["binary"], middle * K, run
    )
    out["exact float, 30 % filter"] = lambda q: qz.nearest_chunks(
        matrix, layout, q, K, keep, compute=run
    )
    return out


def built(seeds: Matrix, rows: int) -> tuple[Matrix, Matrix, dict[str, Any], dict[str, float]]:
    """The matrix, its chunk starts, its binary and int8 copies, and what they cost."""
    base_rss = rss_mb()
    matrix = synthesized(seeds, rows)
    starts = chunk_starts(rows)
    memory = {"RSS before the matrix MB": round(base_rss, 1)}
    memory["float matrix MB"] = round(matrix.nbytes / 1e6, 1)
    memory["RSS with the float matrix MB"] = round(rss_mb(), 1)
    codes: dict[str, Any] = {}
    for scan in ("binary", "int8"):
        started = time.perf_counter()
        codes[scan] = qz.build_codes(scan, matrix)
        memory[f"{scan} build s"] = round(time.perf_counter() - started, 2)
        memory[f"{scan} codes MB"] = round(codes[scan].nbytes / 1e6, 1)
        memory[f"RSS with float + {scan} MB"] = round(rss_mb(), 1)
    return matrix, starts, codes, memory


def measured(table: dict[str, Search], queries: Matrix, busy: bool) -> dict[str, Any]:
    """Every search's latency and its recall against the exact scan (filtered: the exact
    filtered scan), quiet or with one core busy."""
    with busy_core() if busy else contextlib.nullcontext():
        timings = {name: timed(search, queries) for name, search in table.items()}
    truth = timings["exact float, 1 BLAS thread"][1]
    filtered_truth = timings["exact float, 30 % filter"][1]
    out: dict[str, Any] = {}
    for name, (figures, got) in timings.items():
        expected = filtered_truth if "filter" in name else truth
        out[name] = {**figures, "recall@10": recall(expected, got, 10)}
        out[name]["recall@50"] = recall(expected, got, 50)
    out["load_avg_1m_after"] = round(os.getloadavg()[0], 2)
    return out


def run_size(seeds: Matrix, queries: Matrix, rows: int, rescores: list[int]) -> dict[str, Any]:
    matrix, starts, codes, memory = built(seeds, rows)
    out: dict[str, Any] = {"parts": rows, "chunks": int(starts.shape[0]), "memory": memory}
    table = searches(matrix, starts, codes, rescores)
    out["quiet"] = measured(table, queries, busy=False)
    out["busy"] = measured(table, queries, busy=True)
    del table, matrix, codes["int8"]  # what a cache without the float matrix would hold
    memory["RSS with the binary copy alone MB"] = round(rss_mb(), 1)
    return out


def print_size(result: dict[str, Any]) -> None:
    print(f"\n## {result['parts']:,} parts ({result['chunks']:,} chunks)")
    for key, value in result["memory"].items():
        print(f"- {key}: {value}")
    print("\n| scan (k = 50) | quiet p50 / p95 ms | busy p50 / p95 ms | recall@10 | recall@50 |")
    print("|---|---|---|---|---|")
    for name, quiet in result["quiet"].items():
        if not isinstance(quiet, dict):
            continue
        busy = result["busy"][name]
        print(
            f"| {name} | {quiet['p50']:.1f} / {quiet['p95']:.1f} | {busy['p50']:.1f} / "
            f"{busy['p95']:.1f} | {quiet['recall@10']:.4f} | {quiet['recall@50']:.4f} |"
        )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.vector_scale", description=__doc__)
    p.add_argument("--parts", type=int, nargs="+", default=[100_000, 1_000_000])
    p.add_argument("--seeds", type=int, default=20_000)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--rescore", type=int, nargs="+", default=[10, 20, 40, 80, 160, 320])
    p.add_argument("--out", default=str(OUT / "vector_scale.json"))
    add_quiet_load(p)
    args = p.parse_args(argv)
    seeds, queries, texts = seeds_and_queries(args.seeds, args.queries)
    if args.quiet_load:
        wait_for_quiet(args.quiet_load)
    before = machine()
    print(f"load average before: {before['load_avg_1m']}")
    results = [run_size(seeds, queries, rows, args.rescore) for rows in args.parts]
    for result in results:
        print_size(result)
    report = {"args": vars(args), "sigma": SIGMA, "k": K, "query_examples": texts[:6]}
    write_record(Path(args.out), before, {**report, "sizes": results})
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    raise SystemExit(main())
