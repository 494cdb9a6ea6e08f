"""Quantized scans with a float re-score: the exact top-k back, and BLAS held to one thread."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from engine.search.query.filters import Filters
from engine.search.retrieve import quantized as qz
from engine.search.retrieve.blas import OneBlasThread
from engine.search.retrieve.compute import Compute
from engine.search.retrieve.vector_cache import VectorCache
from engine.settings import Settings
from tests import test_vector_cache

small = test_vector_cache.small  # the fixture: a small index on the hashing embedder

DEFAULT_RESCORE = 240  # search.vector_rescore's default (a test below checks they agree)
K = 50  # what the engine asks for: limit 10 × overfetch 5


def clustered(rows: int, sample_seed: int, dim: int = 384, centres: int = 300) -> np.ndarray:
    """Unit vectors around 300 shared centres with a common mean component, as sentence
    embeddings are: the mean cosine is ~0.06 and a query's ten nearest have cosines of
    ~0.42–0.46, as real queries' do (isotropic random vectors would make recall easy)."""
    rng = np.random.default_rng(0)
    mean = rng.normal(0, 1, dim).astype(np.float32)
    heads = rng.normal(0, 1, (centres, dim)).astype(np.float32) + 0.4 * mean
    rng = np.random.default_rng(sample_seed)
    out = heads[rng.integers(0, centres, rows)] + rng.normal(0, 1.3, (rows, dim))
    out = out.astype(np.float32)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


@pytest.fixture(scope="module")
def fixed_set() -> tuple[np.ndarray, qz.Layout, np.ndarray]:
    """30,000 part vectors in chunks of 1–4 parts, and 60 queries near the data."""
    matrix = clustered(30_000, sample_seed=100)
    sizes = np.random.default_rng(1).integers(1, 5, matrix.shape[0])
    starts = np.concatenate([[0], np.cumsum(sizes)])
    starts = starts[starts < matrix.shape[0]].astype(np.int64)
    queries = clustered(60, sample_seed=7)
    return matrix, qz.Layout(starts, matrix.shape[0]), queries


def overlap(a: np.ndarray, b: np.ndarray, depth: int) -> float:
    return len(set(a[:depth].tolist()) & set(b[:depth].tolist())) / depth


@pytest.mark.parametrize("scan", ["binary", "int8"])
def test_quantized_scan_finds_the_exact_top_k(
    fixed_set: tuple[np.ndarray, qz.Layout, np.ndarray], scan: str
) -> None:
    matrix, layout, queries = fixed_set
    codes = qz.build_codes(scan, matrix)
    recalls = []
    for query in queries:
        exact, exact_scores = qz.nearest_chunks(matrix, layout, query, K)
        got, scores = qz.nearest_chunks(matrix, layout, query, K, None, codes, DEFAULT_RESCORE * K)
        recalls.append(overlap(exact, got, 10))
        # Candidates are re-scored exactly, every part: a shared chunk has the same cosine.
        shared = {int(c): float(s) for c, s in zip(exact, exact_scores, strict=True)}
        for chunk, score in zip(got, scores, strict=True):
            if int(chunk) in shared:
                assert score == pytest.approx(shared[int(chunk)], abs=1e-6)
        assert np.all(np.diff(scores) <= 0)
    # The documented bound (docs/benchmarks.md, "Vector side at scale"): at the default
    # re-score the top 10 is the exact one here.
    assert np.mean(recalls) == 1.0


def test_too_few_candidates_lose_neighbours_so_the_rescore_depth_matters(
    fixed_set: tuple[np.ndarray, qz.Layout, np.ndarray],
) -> None:
    matrix, layout, queries = fixed_set
    codes = qz.build_codes("binary", matrix)
    recalls = [
        overlap(
            qz.nearest_chunks(matrix, layout, q, K)[0],
            qz.nearest_chunks(matrix, layout, q, K, None, codes, K)[0],
            10,
        )
        for q in queries
    ]
    assert np.mean(recalls) < 0.95  # 1 × k parts is not enough: the setting is not idle


def test_filtered_quantized_scan_returns_only_kept_chunks_and_the_exact_ones(
    fixed_set: tuple[np.ndarray, qz.Layout, np.ndarray],
) -> None:
    matrix, layout, queries = fixed_set
    codes = qz.build_codes("binary", matrix)
    for share in (0.3, 0.001):
        keep = np.random.default_rng(3).random(len(layout)) < share
        selection = qz.Selection(layout, keep)
        for query in queries[:10]:
            exact, _ = qz.nearest_chunks(matrix, layout, query, K, selection)
            got, _ = qz.nearest_chunks(
                matrix, layout, query, K, selection, codes, DEFAULT_RESCORE * K
            )
            assert keep[got].all()
            assert len(got) == min(K, int(keep.sum()))
            assert overlap(exact, got, min(10, len(exact))) == 1.0


def test_an_exact_scan_of_a_narrow_selection_scores_only_its_chunks_and_all_of_them(
    fixed_set: tuple[np.ndarray, qz.Layout, np.ndarray],
) -> None:
    matrix, layout, queries = fixed_set
    for share in (0.05, 0.5):  # below and above NARROW_SHARE: gathered, then masked
        keep = np.random.default_rng(8).random(len(layout)) < share
        selection = qz.Selection(layout, keep)
        assert (selection.parts < qz.NARROW_SHARE * layout.rows) == (share < qz.NARROW_SHARE)
        for query in queries[:5]:
            every = np.maximum.reduceat(matrix @ query, layout.starts)
            expected = np.flatnonzero(keep)[np.argsort(-every[keep], kind="stable")[:K]]
            got, scores = qz.nearest_chunks(matrix, layout, query, K, selection)
            assert np.array_equal(got, expected)
            assert np.allclose(scores, every[expected], atol=1e-6)


def test_the_binary_cut_read_off_a_sample_keeps_about_the_depth_asked() -> None:
    distance = np.random.default_rng(9).binomial(384, 0.45, 400_000).astype(np.uint16)
    for wanted in (500, 16_000):  # counted exactly; read off every 16th distance
        cut = qz.binary_cut(distance, wanted)
        below, within = int((distance < cut).sum()), int((distance <= cut).sum())
        assert below < wanted * 1.05 and within > wanted * 0.95
        if wanted < qz.SAMPLE_MIN_HITS * 2:  # a stride of 1: the exact cut
            assert below < wanted <= within


def test_codes_kept_and_appended_equal_codes_built_afresh() -> None:
    matrix = clustered(5_000, sample_seed=4)
    keep = np.random.default_rng(5).random(5_000) < 0.7
    extra = clustered(700, sample_seed=6)
    binary = qz.BinaryCodes.of(matrix)
    again = qz.BinaryCodes.of(np.vstack([matrix[keep], extra]), binary.mean)
    assert np.array_equal(binary.kept(keep).appended(extra).words, again.words)
    int8 = qz.Int8Codes.of(matrix)
    again8 = qz.Int8Codes.of(np.vstack([matrix[keep], extra]), int8.scale)
    assert np.array_equal(int8.kept(keep).appended(extra).codes, again8.codes)
    # The Hamming distance is that of the packed sign bits, word by word.
    query = extra[0]
    expected = ((matrix - binary.mean > 0) != (query > 0)).sum(axis=1)
    assert np.array_equal(binary.distances(query), expected)


def test_a_hamming_pass_split_between_two_threads_equals_one_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    matrix, query = clustered(5_000, sample_seed=10), clustered(1, sample_seed=11)[0]
    codes = qz.BinaryCodes.of(matrix)
    whole = codes.distances(query)  # below SPLIT_PARTS: one thread
    monkeypatch.setattr(qz, "SCAN_BLOCK", 1024)
    monkeypatch.setattr(qz, "SPLIT_PARTS", 2048)  # the helper takes rows 2048 on
    with ThreadPoolExecutor(1) as helper:
        assert np.array_equal(codes.distances(query, helper), whole)
    assert np.array_equal(whole, ((matrix - codes.mean > 0) != (query > 0)).sum(axis=1))


def blas_threads() -> list[int]:
    return [int(i["num_threads"]) for i in threadpool_info() if i["user_api"] == "blas"]


def test_one_blas_thread_inside_and_restored_after_the_last_holder_leaves() -> None:
    before = blas_threads()
    assert before, "numpy's BLAS is visible to threadpoolctl"
    limiter = OneBlasThread()
    inside: list[list[int]] = []

    def other() -> None:
        with limiter:
            inside.append(blas_threads())

    with limiter:
        assert blas_threads() == [1] * len(before)
        worker = threading.Thread(target=other)
        worker.start()
        worker.join()
        assert blas_threads() == [1] * len(before)  # the worker left; this thread holds it
    assert inside == [[1] * len(before)]
    assert blas_threads() == before


def test_results_do_not_change_under_the_thread_limit(
    fixed_set: tuple[np.ndarray, qz.Layout, np.ndarray],
) -> None:
    matrix, layout, queries = fixed_set
    compute = Compute()
    for query in queries[:10]:
        free = np.maximum.reduceat(matrix @ query, layout.starts)  # numpy's default threads
        chunks, scores = qz.nearest_chunks(matrix, layout, query, K, compute=compute)
        order = np.argsort(-free, kind="stable")[:K]
        assert np.array_equal(chunks, order)
        assert np.allclose(scores, free[order], atol=1e-6)


def test_the_settings_default_is_auto_with_the_tested_depth(demo_index: Settings) -> None:
    from engine.settings.table import SETTINGS

    assert demo_index.search.vector_scan == "auto"
    assert demo_index.search.vector_rescore == DEFAULT_RESCORE
    limit = qz.AUTO_BINARY_PARTS
    assert (qz.scan_for("auto", limit - 1), qz.scan_for("auto", limit)) == ("exact", "binary")
    assert qz.scan_for("int8", 10) == "int8"
    row = next(s for s in SETTINGS if s.name == "search.vector_scan")
    assert f"{limit:,}" in row.help and row.choices == qz.SCANS


def test_binary_cache_equals_exact_cache_on_the_demo_index(demo_index: Settings) -> None:
    """The real model's vectors of the demo layer (~2,900 parts): at a depth of 40 × k
    (160 × k at 1M parts: a quarter of it at the demo's size) the binary scan returns
    exactly the exact scan's chunks, in order, with the same cosines."""
    from engine.embedders import create_embedder

    embedder = create_embedder(demo_index)
    default = VectorCache(demo_index.db_path, "binary", 160)  # 40 × 50 < the demo's parts
    assert qz.rescore_depth(160, K, 2_900) == 40 * K
    exact = VectorCache(demo_index.db_path, "exact")
    assert VectorCache.of(demo_index).scan == "auto"
    filters = (*test_vector_cache.FILTERS, Filters(people=default_people(demo_index)))
    for query in test_vector_cache.QUERIES:
        qvec = embedder.embed_query(query)
        for f in filters:
            for k in (10, K):
                got, expected = default.knn(qvec, k, f), exact.knn(qvec, k, f)
                assert [seq for seq, _ in got] == [seq for seq, _ in expected]
                assert [c for _, c in got] == pytest.approx([c for _, c in expected], abs=1e-6)
    assert default._codes is not None and default._codes.nbytes < default.matrix.nbytes / 20
    # Asked for the exact scan, a binary cache at any depth answers as the exact one.
    shallow = VectorCache(demo_index.db_path, "binary", 8)
    for query in test_vector_cache.QUERIES:
        qvec = embedder.embed_query(query)
        assert shallow.knn(qvec, K)  # the binary scan, which builds the codes
        got, expected = shallow.knn(qvec, K, exact=True), exact.knn(qvec, K)
        assert [seq for seq, _ in got] == [seq for seq, _ in expected]
    assert shallow._codes is not None  # it has its codes; the exact scan did not use them
    default.close(), exact.close(), shallow.close()


def default_people(settings: Settings) -> tuple:  # type: ignore[type-arg]
    from engine.people import load_people

    return tuple(p for p in load_people(settings) if p.name == "Priya Raman")


def test_codes_follow_the_index_incrementally(small: Settings) -> None:
    from engine.index.runs import reindex

    notes = small.roots[0] / "notes"
    for i in range(12):  # chunks of several parts: the 3 nearest parts name < 3 chunks
        paragraphs = [
            f"Paragraph {j} of note {i}: " + "the scheduler ran late " * 15 for j in range(3)
        ]
        (notes / f"n{i}.md").write_text(f"# Note {i}\n" + "\n".join(paragraphs) + "\n")
    reindex(settings=small)
    quantized = VectorCache(small.db_path, "binary", 1)
    exact = VectorCache(small.db_path, "exact")
    probe = np.ones(64, dtype=np.float32) / 8
    assert_exact_cosines(quantized.knn(probe, 3), exact)
    codes = quantized._codes
    assert isinstance(codes, qz.BinaryCodes) and codes.words.shape[1] == quantized.matrix.shape[0]
    (notes / "bikes.md").write_text("# Ferry\nBodø to Moskenes with the bikes.\n")
    (notes / "garden.md").unlink()
    reindex(settings=small)
    assert_exact_cosines(quantized.knn(probe, 3), exact)
    assert quantized.updates == 1 and quantized.loads == 1
    assert quantized.matrix.shape[0] > 2 * len(quantized)  # several parts a chunk
    updated = quantized._codes
    assert isinstance(updated, qz.BinaryCodes) and updated is not codes
    afresh = qz.BinaryCodes.of(quantized.matrix, codes.mean)
    assert np.array_equal(updated.words, afresh.words)  # kept and appended, not rebuilt
    quantized.close(), exact.close()


def assert_exact_cosines(hits: list[tuple[int, float]], exact: VectorCache) -> None:
    """Hits of a quantized scan carry their exact best-part cosines, best first."""
    probe = np.ones(64, dtype=np.float32) / 8
    every = dict(exact.knn(probe, 10_000))
    assert (
        len(every) > 10
        and len(hits) == 3
        and [c for _, c in hits] == sorted((c for _, c in hits), reverse=True)
    )
    for seq, cosine in hits:
        assert cosine == pytest.approx(every[seq], abs=1e-6)


def test_the_rescore_depth_grows_as_the_root_of_the_parts() -> None:
    assert qz.rescore_depth(240, 50, 1_000_000) == 240 * 50
    assert qz.rescore_depth(240, 50, 4_000_000) == 2 * 240 * 50  # 4× the parts: 2× the depth
    assert qz.rescore_depth(240, 50, 250_000) == 240 * 50 // 2
    assert qz.rescore_depth(240, 50, 1_000) == 240 * 50 // 4  # never below a quarter
    assert qz.rescore_depth(1, 1, 10) == 1
