"""Whether each scan optimisation still earns its lines: every one timed ON and OFF.

    .venv/bin/python -m bench.scan_options [--sizes 10000 100000 1000000] [--queries 200]
        [--quiet-load L]

Data per size: the speed-benchmark index (bench/perf_index.py, built beforehand) of 10k or
100k chunks; 1M is the 100k tiled 10× in memory, no SQL: the keyword postings with rows
offset by the row count per copy (norms and seqs tiled alike), the part matrix with copy
c ≥ 1 = normalise(part + N(0, σ²)), σ = 0.038 as bench/scale.py grows an index.
Queries: `bench.perf.make_queries` over the index's chunks, their terms as the Searcher
builds them (`fts.query_terms`), their vectors from the local model (cached under
bench/out/scan_options-cache/). k = 50 on both sides (limit 10 × overfetch 5).

Each optimisation is switched off by swapping one module attribute of the engine for the
call (the engine's code and defaults stay as they are), and the two arms run interleaved
query by query, the order alternating, so load drifts hit both alike:

- keyword (`bm25.top_rows`): the sampled k-th floor (`_at_least_kth` → every matching row
  sorted); `np.add.at` (→ a fancy-indexed +=). MaxScore pruning was an arm here until it
  measured slower than scoring every row at each size, and was removed from the engine.
- vector (`quantized.nearest_chunks`): the binary scan against the exact one (auto's
  switch); the helper-thread split (a Compute with no helper); the candidate-part
  re-score (`candidate_chunks` → every chunk owning a candidate part); the sampled cut
  (`SAMPLE_STRIDE` → 1); int8 against exact; the narrow-filter gather on an exact scan
  with 2 % of the chunks kept (`NARROW_SHARE` → 0).

Per size and optimisation: p50/p95 ON and OFF, ON ÷ OFF, the share of queries whose lists
are identical and, for the quantized scans, recall@10 against the exact scan; "earns it"
when ON's p50 is ≤ 90 % of OFF's at a size where the engine uses it. Writes
bench/out/scan_options.json (rendered by bench/report/scan.py).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from bench import perf_index
from bench.common import (
    OUT,
    add_quiet_load,
    bench_settings,
    machine,
    percentiles,
    wait_for_quiet,
    write_figures,
)
from bench.perf import make_queries
from engine.search.query import fts
from engine.search.retrieve import bm25
from engine.search.retrieve import quantized as qz
from engine.search.retrieve.bm25 import Postings
from engine.search.retrieve.compute import Compute
from engine.search.retrieve.keyword_index import KeywordIndex
from engine.search.retrieve.vector_cache import VectorCache
from engine.store import db

K = 50  # search.limit × search.overfetch
SIGMA = 0.038  # noise of a grown copy's part vectors (bench/scale.py)
EARNS = 0.9  # ON's p50 at most this share of OFF's: the optimisation earns its lines
NARROW = 0.02  # the narrow filter's share of the chunks (a person's)
WARMUP = 10
NOT_USED = "not used here"
GROW_BLOCK = 65536
SOURCES = {10_000: (10_000, 1), 100_000: (100_000, 1), 1_000_000: (100_000, 10)}
CACHE = OUT / "scan_options-cache"
FloatArray = npt.NDArray[np.float32]
IndexArray = npt.NDArray[np.int64]
Call = Callable[[int], npt.NDArray[Any]]  # query number -> the ranked list


@dataclass(frozen=True)
class Arm:
    """One optimisation: the call with it (`on`) and without (`off`), per query number."""

    name: str
    on: Call
    off: Call
    applies: bool  # the engine uses it at this size
    approximate: bool = False  # lists may differ: recall@10 against the exact scan


# -- switching an optimisation off ---------------------------------------------------------


def without(call: Call, *swaps: tuple[object, str, object]) -> Call:
    """`call` with these attributes swapped for its duration (plain setattr: a swap costs
    about a microsecond, not the ~12 µs of `mock.patch`, which a 0.2 ms call would feel)."""

    def run(i: int) -> npt.NDArray[Any]:
        saved = [(target, name, getattr(target, name)) for target, name, _ in swaps]
        for target, name, value in swaps:
            setattr(target, name, value)
        try:
            return call(i)
        finally:
            for target, name, value in saved:
                setattr(target, name, value)

    return run


class FancyAdd:
    """numpy, except that `np.add.at(a, i, v)` is the fancy-indexed `a[i] += v` (the same
    sums when the rows are unique, as a term's postings are)."""

    class add:  # noqa: N801 - stands in for the ufunc `np.add`
        @staticmethod
        def at(a: npt.NDArray[Any], i: npt.NDArray[Any], v: npt.NDArray[Any]) -> None:
            a[i] += v

    def __init__(self) -> None:  # numpy's names copied: a lookup costs what np's does
        self.__dict__.update((n, v) for n, v in vars(np).items() if n != "add")

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)


def every_matching_row(scores: bm25.Scores, k: int) -> IndexArray:
    return np.flatnonzero(scores)


def every_candidate_chunk(
    matrix: FloatArray,
    layout: qz.Layout,
    codes: qz.Codes,
    query: FloatArray,
    selection: qz.Selection | None,
    wanted: int,
    k: int,
    helper: Any = None,
) -> IndexArray:
    """`quantized.candidate_chunks` without the cut to `RESCORED_CHUNKS` × k: every chunk
    owning a candidate part, each scored on every part."""
    parts = qz.candidate_parts(codes, query, selection, wanted, helper)
    return np.unique(layout.owners[parts]).astype(np.int64)


class NoHelper(Compute):
    """A Compute whose binary scans run on the calling thread alone."""

    def helper(self) -> None:
        return None


# -- timing ---------------------------------------------------------------------------------


def interleaved(
    on: Call, off: Call, n: int, warmup: int = WARMUP
) -> tuple[list[float], list[float], list[npt.NDArray[Any]], list[npt.NDArray[Any]]]:
    """Both arms per query, ON first on even queries, OFF first on odd ones: (ON ms,
    OFF ms, ON lists, OFF lists)."""
    for i in range(min(warmup, n)):
        on(i), off(i)
    times: tuple[list[float], list[float]] = ([], [])
    lists: tuple[list[npt.NDArray[Any]], list[npt.NDArray[Any]]] = ([], [])
    for i in range(n):
        for arm in (0, 1) if i % 2 == 0 else (1, 0):
            started = time.perf_counter()
            found = (on, off)[arm](i)
            times[arm].append((time.perf_counter() - started) * 1000)
            lists[arm].append(found)
    return times[0], times[1], lists[0], lists[1]


def recall(truth: Sequence[npt.NDArray[Any]], got: Sequence[npt.NDArray[Any]], depth: int) -> float:
    hits = [
        len(set(t[:depth].tolist()) & set(g[:depth].tolist()))
        for t, g in zip(truth, got, strict=True)
    ]
    wanted = [min(depth, len(t)) for t in truth]
    return round(sum(hits) / max(1, sum(wanted)), 4)


def verdict(on_p50: float, off_p50: float, applies: bool) -> str:
    if not applies:
        return NOT_USED
    return "earns it" if on_p50 <= EARNS * off_p50 else "does not"


def measured(
    arm: Arm,
    n: int,
    truth: Sequence[npt.NDArray[Any]] | None = None,
    subset: Sequence[bool] | None = None,
) -> dict[str, Any]:
    """One arm's figures over `n` queries (and the p50s over the `subset` of them)."""
    on_ms, off_ms, on_lists, off_lists = interleaved(arm.on, arm.off, n)
    on, off = percentiles(on_ms), percentiles(off_ms)
    same = sum(np.array_equal(a, b) for a, b in zip(on_lists, off_lists, strict=True))
    out: dict[str, Any] = {
        "on": on,
        "off": off,
        "on_over_off_p50": round(on["p50"] / off["p50"], 3) if off["p50"] else None,
        "on_over_off_p95": round(on["p95"] / off["p95"], 3) if off["p95"] else None,
        "same_lists": round(same / max(1, n), 4),
        "applies": arm.applies,
        "verdict": verdict(on["p50"], off["p50"], arm.applies),
    }
    if subset is not None and any(subset[:n]):
        picked = [i for i in range(n) if subset[i]]
        out["subset"] = {
            "n": len(picked),
            "on_p50": float(np.median([on_ms[i] for i in picked])),
            "off_p50": float(np.median([off_ms[i] for i in picked])),
        }
    if arm.approximate and truth is not None:
        out["recall10_on"] = recall(truth, on_lists, 10)
        out["recall10_off"] = recall(truth, off_lists, 10)
    print(
        f"  {arm.name}: ON p50 {on['p50']:.3f} ms, OFF {off['p50']:.3f} ms, "
        f"same {out['same_lists']}, {out['verdict']}",
        flush=True,
    )
    return out


# -- keyword side ---------------------------------------------------------------------------


@dataclass
class KeywordData:
    """Per query its terms' postings; per row its length norm and seq."""

    found: list[list[Postings]]
    rows: int
    norm: bm25.Scores
    seqs: IndexArray


def keyword_data(db_path: Path, queries: Sequence[str], stop_words: bool) -> KeywordData:
    """The postings of each query's terms, read as the KeywordIndex reads them."""
    index = KeywordIndex(db_path)
    try:
        index.refresh()
        rows = index._rows
        assert rows is not None and not rows.dead
        terms = [fts.query_terms(q, stop_words) for q in queries]
        held = {t: index._postings(t, False) for t in {t for ts in terms for t in ts}}
        found = [[held[t] for t in ts] for ts in terms]  # a term's arrays shared by its queries
        return KeywordData(found, len(rows), rows.norm.copy(), rows.seqs.copy())
    finally:
        index.close()


def tiled_keywords(data: KeywordData, copies: int) -> KeywordData:
    """The postings `copies` times over: copy c's rows offset by c × the rows."""
    if copies == 1:
        return data
    n, step = data.norm.shape[0], int(data.seqs.max()) + 1
    tiled: dict[int, Postings] = {}  # by the arrays' identity: each term's tiled once
    for where, freqs in (p for terms in data.found for p in terms):
        if id(where) not in tiled:
            rows = np.concatenate([where + c * n for c in range(copies)]).astype(np.int32)
            tiled[id(where)] = rows, np.tile(freqs, copies)
    found = [[tiled[id(where)] for where, _ in terms] for terms in data.found]
    seqs = np.concatenate([data.seqs + c * step for c in range(copies)])
    return KeywordData(found, data.rows * copies, np.tile(data.norm, copies), seqs)


def keyword_arms(data: KeywordData) -> list[Arm]:
    def top(i: int) -> IndexArray:
        return bm25.top_rows(data.found[i], data.rows, data.norm, data.seqs, K)

    return [
        Arm(
            "sampled k-th floor",
            top,
            without(top, (bm25, "_at_least_kth", every_matching_row)),
            True,
        ),
        Arm("np.add.at", top, without(top, (bm25, "np", FancyAdd())), True),
    ]


def keyword_side(data: KeywordData, n: int) -> dict[str, Any]:
    """Each keyword arm's figures."""
    print(f" keyword side: {data.rows} rows", flush=True)
    arms = {arm.name: measured(arm, n) for arm in keyword_arms(data)}
    return {"rows": data.rows, "arms": arms}


# -- vector side ----------------------------------------------------------------------------


def vector_data(db_path: Path) -> tuple[FloatArray, IndexArray]:
    """The part matrix and each chunk's first row, as the VectorCache holds them."""
    cache = VectorCache(db_path, scan="exact")
    try:
        cache.refresh()
        return cache.matrix, cache.layout.starts
    finally:
        cache.close()


def grown(
    matrix: FloatArray, starts: IndexArray, copies: int, seed: int = 16
) -> tuple[FloatArray, IndexArray]:
    """The matrix `copies` times over, copy c ≥ 1 = normalise(part + N(0, σ²)), and the
    chunks' first rows (each copy's offset by the parts)."""
    if copies == 1:
        return matrix, starts
    rows = matrix.shape[0]
    out = np.empty((rows * copies, matrix.shape[1]), dtype=np.float32)
    out[:rows] = matrix
    rng = np.random.default_rng(seed)
    for start in range(rows, rows * copies, GROW_BLOCK):
        end = min(rows * copies, start + GROW_BLOCK)
        block = out[start:end]
        block[:] = rng.standard_normal(block.shape, dtype=np.float32)
        block *= SIGMA
        block += matrix[np.arange(start, end) % rows]
        block /= np.linalg.norm(block, axis=1, keepdims=True)
    return out, np.concatenate([starts + c * rows for c in range(copies)])


def int8_scale(matrix: FloatArray) -> float:
    """`Int8Codes.of`'s scale, found in blocks (its own |matrix| is a second full copy)."""
    peak = max(
        (
            float(np.abs(matrix[s : s + GROW_BLOCK]).max())
            for s in range(0, len(matrix), GROW_BLOCK)
        ),
        default=1.0,
    )
    return 127.0 / max(peak, 1e-6)


def vector_arms(
    matrix: FloatArray, layout: qz.Layout, queries: FloatArray, depth: int, compute: Compute
) -> tuple[list[Arm], dict[str, int]]:
    """The vector side's arms, and the bytes of the quantized copies."""
    alone = NoHelper()
    binary, int8 = qz.BinaryCodes.of(matrix), qz.Int8Codes.of(matrix, int8_scale(matrix))
    rng = np.random.default_rng(5)
    narrow = qz.Selection(layout, rng.random(len(layout)) < NARROW)
    rows = matrix.shape[0]
    quantized = rows >= qz.AUTO_BINARY_PARTS

    def scan(codes: qz.Codes | None, run: Compute = compute, keep: Any = None) -> Call:
        def call(i: int) -> IndexArray:
            return qz.nearest_chunks(matrix, layout, queries[i], K, keep, codes, depth, run)[0]

        return call

    exact, fast = scan(None), scan(binary)
    arms = [
        Arm("binary scan (auto)", fast, exact, quantized, True),
        Arm("helper-thread split", fast, scan(binary, alone), rows >= qz.SPLIT_PARTS, True),
        Arm(
            "candidate-part re-score",
            fast,
            without(fast, (qz, "candidate_chunks", every_candidate_chunk)),
            quantized,
            True,
        ),
        Arm("sampled binary cut", fast, without(fast, (qz, "SAMPLE_STRIDE", 1)), quantized, True),
        Arm("int8 scan", scan(int8), exact, quantized, True),
        Arm(
            "narrow-filter gather",
            scan(None, keep=narrow),
            without(scan(None, keep=narrow), (qz, "NARROW_SHARE", 0.0)),
            True,
        ),
    ]
    return arms, {"binary_bytes": binary.nbytes, "int8_bytes": int8.nbytes}


def vector_side(
    matrix: FloatArray, starts: IndexArray, queries: FloatArray, rescore: int, n: int
) -> dict[str, Any]:
    layout = qz.Layout(starts, matrix.shape[0])
    depth = qz.rescore_depth(rescore, K, matrix.shape[0])
    print(f" vector side: {len(layout)} chunks, {matrix.shape[0]} parts", flush=True)
    compute = Compute()
    try:
        arms, sizes = vector_arms(matrix, layout, queries, depth, compute)
        truth = [qz.nearest_chunks(matrix, layout, q, K, compute=compute)[0] for q in queries[:n]]
        figures = {arm.name: measured(arm, n, truth) for arm in arms}
    finally:
        compute.close()
    return {
        "chunks": len(layout),
        "parts": int(matrix.shape[0]),
        "rescore_depth": depth,
        "float_bytes": int(matrix.nbytes),
        **sizes,
        "arms": figures,
    }


# -- data -----------------------------------------------------------------------------------


def source_db(chunks: int) -> Path:
    """A finished speed-benchmark index of this many chunks, every chunk embedded."""
    target = perf_index.target_dir(chunks)
    path = target / "memex.db"
    if not (target / "build.json").exists():
        raise SystemExit(f"{path} is not built yet: .venv/bin/python -m bench.perf_index {chunks}")
    conn = db.connect(path, create=False)
    missing = conn.execute("SELECT count(*) FROM chunks WHERE embedding IS NULL").fetchone()[0]
    conn.close()
    if missing:
        raise SystemExit(f"{path}: {missing} chunks have no embedding yet")
    return path


def chunk_texts(path: Path) -> list[str]:
    conn = db.connect(path, create=False)
    sql = "SELECT content FROM chunks WHERE embedding IS NOT NULL ORDER BY seq"
    texts = [r[0] for r in conn.execute(sql)]
    conn.close()
    return texts


def query_vectors(settings: Any, queries: Sequence[str]) -> FloatArray:
    """The queries embedded by the local model, cached by their text."""
    key = hashlib.sha256("\n".join(queries).encode()).hexdigest()[:16]
    cache = CACHE / f"queries-{key}.npy"
    if cache.exists():
        cached: FloatArray = np.load(cache)
        return cached
    from engine.embedders import create_embedder

    embedder = create_embedder(settings)
    vectors = np.stack([np.asarray(embedder.embed_query(q)).reshape(-1) for q in queries])
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(cache, vectors.astype(np.float32))
    return vectors.astype(np.float32)


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def run_size(size: int, n_queries: int) -> dict[str, Any]:
    source, copies = SOURCES[size]
    path = source_db(source)
    settings = bench_settings([path.parent / "layer"], path)
    queries = make_queries(chunk_texts(path), n_queries)
    load_before = os.getloadavg()[0]
    print(f"{size} chunks ({source} × {copies})", flush=True)
    words = keyword_data(path, queries, settings.search.stop_words)
    keyword = keyword_side(tiled_keywords(words, copies), n_queries)
    del words
    vectors = query_vectors(settings, queries)
    matrix, starts = grown(*vector_data(path), copies)
    vector = vector_side(matrix, starts, vectors, settings.search.vector_rescore, n_queries)
    del matrix
    return {
        "source_chunks": source,
        "copies": copies,
        "keyword": keyword,
        "vector": vector,
        "load_before": round(load_before, 2),
        "load_after": round(os.getloadavg()[0], 2),
        "peak_rss_mb": peak_rss_mb(),
    }


def verdicts(sizes: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Each optimisation's verdict at the largest measured size where the engine uses it
    (at the largest measured, when it uses it at none)."""
    out: dict[str, dict[str, str]] = {}
    for size, figures in sorted(sizes.items(), key=lambda item: int(item[0])):
        for side in ("keyword", "vector"):
            for name, arm in figures[side]["arms"].items():
                judged = out.get(name)
                if arm["applies"] or judged is None or judged["verdict"] == NOT_USED:
                    out[name] = {"side": side, "size": size, "verdict": arm["verdict"]}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=200)
    add_quiet_load(parser)
    args = parser.parse_args(argv)
    unknown = [s for s in args.sizes if s not in SOURCES]
    if unknown:
        raise SystemExit(f"--sizes takes {sorted(SOURCES)}, not {unknown}")
    if args.quiet_load:
        wait_for_quiet(args.quiet_load)
    before = machine()
    sizes = {str(size): run_size(size, args.queries) for size in args.sizes}
    figures = {"k": K, "queries": args.queries, "sizes": sizes, "verdicts": verdicts(sizes)}
    write_figures("scan_options", before, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
