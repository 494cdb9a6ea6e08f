"""BM25 over in-memory postings: the pruned path returns what scoring every row returns."""

from __future__ import annotations

import numpy as np
import pytest

from engine.search.retrieve import bm25
from engine.search.retrieve.postings import FloatArray, RowArray

ROWS = 20_000


def corpus(seed: int) -> tuple[list[tuple[RowArray, FloatArray]], np.ndarray, np.ndarray]:
    """Terms from very common to rare (Zipf-like), small integer frequencies (titles weigh
    2), row lengths as chat windows vary, and seqs with gaps."""
    rng = np.random.default_rng(seed)
    found = []
    for share in (0.4, 0.2, 0.05, 0.012, 0.003, 0.0008, 0.0002):
        rows = np.sort(rng.choice(ROWS, max(1, int(share * ROWS)), replace=False)).astype(np.int32)
        freqs = rng.choice([1.0, 1.0, 1.0, 2.0, 3.0], rows.shape[0]).astype(np.float32)
        found.append((rows, freqs))
    lengths = rng.integers(5, 400, ROWS)
    norm = bm25.K1 * (1 - bm25.B + bm25.B * lengths / lengths.mean())
    seqs = np.cumsum(rng.integers(1, 4, ROWS)).astype(np.int64)
    return found, norm, seqs


def brute_force(found, norm, seqs, k, keep=None, require_all=False):  # type: ignore[no-untyped-def]
    """Every row scored one by one, as FTS5's bm25() does, sorted by (-score, seq)."""
    scores: dict[int, float] = {}
    held: dict[int, int] = {}
    for i, (rows, freqs) in enumerate(found):
        weight = bm25.idf(ROWS, rows.shape[0])
        for row, f in zip(rows.tolist(), freqs.tolist(), strict=True):
            f = float(f)
            part = weight * (f * (bm25.K1 + 1.0) / (f + norm[row]))
            scores[row] = scores.get(row, 0.0) + part
            held[row] = held.get(row, 0) | 1 << i
    rows = [r for r in scores if keep is None or keep[r]]
    if require_all:
        rows = [r for r in rows if held[r] == (1 << len(found)) - 1]
    rows.sort(key=lambda r: (-scores[r], seqs[r]))
    return rows[:k]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_query_and_filter_ranks_as_scoring_every_row(seed: int) -> None:
    found, norm, seqs = corpus(seed)
    rng = np.random.default_rng(seed + 10)
    keeps = [None, rng.random(ROWS) < 0.5, rng.random(ROWS) < 0.01]
    # Common and rare terms mixed, rare only, common only, one term.
    for picked in ([0, 1, 4], [0, 5], [3, 4, 6], [0, 1, 2], [6], [0, 2, 3, 5, 6]):
        terms = [found[i] for i in picked]
        for keep in keeps:
            for k in (1, 10, 50):
                expected = brute_force(terms, norm, seqs, k, keep)
                got = bm25.top_rows(terms, ROWS, norm, seqs, k, keep)
                assert got.tolist() == expected, (picked, k)
        every = brute_force(terms, norm, seqs, 20, None, True)
        assert bm25.top_rows(terms, ROWS, norm, seqs, 20, None, True).tolist() == every


def test_which_terms_rows_hold() -> None:
    found = [
        (np.array([1, 4, 9], dtype=np.int32), np.ones(3, np.float32)),
        (np.array([4], dtype=np.int32), np.ones(1, np.float32)),
        (np.zeros(0, dtype=np.int32), np.zeros(0, np.float32)),
    ]
    bits = bm25.held_bits(found, np.array([9, 4, 2, 1]))
    assert bits.tolist() == [0b1, 0b11, 0, 0b1]
    assert bm25.idf(100, 90) == 1e-6 and bm25.idf(100, 1) > 4
