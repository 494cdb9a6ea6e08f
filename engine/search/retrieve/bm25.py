"""FTS5's bm25() over in-memory postings (engine/search/retrieve/keyword_index.py), exactly.

A term's part of a row's score is idf × f(k1 + 1) / (f + k1(1 − b + b·len/avglen)), with
FTS5's constants, its IDF (log((N − n + 0.5) / (n + 0.5)), at least 1e-6) and its order
of additions, so the scores are FTS5's to the last bit and the lists are its lists.

Every row holding a term is scored (`np.add.at` over each term's postings, faster than a
fancy-indexed `+=`, the same sums), and only the rows scoring at least the k-th best of a
sample of every row are sorted (the k-th best of any rows is no more than the k-th best of
all). Pruning by upper bounds (MaxScore) was measured slower than scoring every row at 10k,
100k and 1M chunks (`bench/scan_options.py`), so there is none.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from engine.search.retrieve.postings import FloatArray, RowArray

K1, B = 1.2, 0.75  # FTS5's bm25() constants
FLOOR_STRIDE = 16  # every row scored: the k-th best of every 16th bounds the k-th below
BoolArray = npt.NDArray[np.bool_]
Postings = tuple[RowArray, FloatArray]  # rows (ascending) and the term's weighted frequency
Scores = npt.NDArray[np.float64]


def idf(rows: int, hits: int) -> float:
    """FTS5's IDF of a term held by `hits` of `rows` rows."""
    value = math.log((rows - hits + 0.5) / (hits + 0.5))
    return value if value > 0 else 1e-6


def top_rows(
    found: Sequence[Postings],
    rows: int,
    norm: Scores,
    seqs: npt.NDArray[np.int64],
    k: int,
    keep: BoolArray | None = None,
    require_all: bool = False,
) -> npt.NDArray[np.int64]:
    """The k best rows holding any term (every term, with `require_all`) that pass
    `keep`, best first, equal scores in seq order as FTS5 sorts them. `found`: each term's
    live postings; `rows`: the live row count; `norm`: k1(1 − b + b·len/avglen) per row."""
    idfs = [idf(rows, int(where.shape[0])) for where, _ in found]
    scores = np.zeros(norm.shape[0], dtype=np.float64)
    for (where, freqs), weight in zip(found, idfs, strict=True):
        if where.shape[0]:  # `add.at`: 2.5× a fancy-indexed +=, the same sums (rows unique)
            np.add.at(scores, where, _parts(where, freqs, weight, norm))
    if keep is not None:
        scores[~keep] = 0.0
    if require_all:
        matched = np.flatnonzero(scores)  # every part is > 0: a matching row scores above 0
        matched = matched[held_bits(found, matched) == (1 << len(found)) - 1]
    else:
        matched = _at_least_kth(scores, k)
    return _best(matched, scores[matched], seqs, k)


def _at_least_kth(scores: Scores, k: int) -> npt.NDArray[np.int64]:
    """The matching rows (score > 0) that may be among the k best: those scoring at least
    the k-th best of every `FLOOR_STRIDE`-th row, which no k-th best of all rows is below.
    At 1M rows a third of them match a query of chat words: listing every matching row
    costs more than this cut, and a partition of every row more still (the zeros tie;
    bench/scan_options.py measures both)."""
    sample = scores[::FLOOR_STRIDE]
    if 0 < k < sample.shape[0]:
        floor = float(np.partition(sample, sample.shape[0] - k)[sample.shape[0] - k])
        if floor > 0.0:
            return np.flatnonzero(scores >= floor)
    return np.flatnonzero(scores)


def held_bits(found: Sequence[Postings], rows: npt.NDArray[np.integer]) -> npt.NDArray[np.int64]:
    """Which terms each of these rows holds, as bitmasks (bit i: term i)."""
    bits = np.zeros(rows.shape[0], dtype=np.int64)
    for i, (where, _) in enumerate(found):
        hit, _ = _lookup(where, rows)
        bits[hit] |= 1 << i
    return bits


def _parts(where: RowArray, freqs: FloatArray, weight: float, norm: Scores) -> Scores:
    """A term's part of each of its rows' scores, in FTS5's order of operations."""
    f = freqs.astype(np.float64)
    below = norm[where]
    below += f
    f *= K1 + 1.0
    f /= below
    f *= weight  # weight × (f(k1 + 1) / (f + norm)), in place: no temporaries
    return f


def _lookup(
    where: RowArray, rows: npt.NDArray[np.integer]
) -> tuple[BoolArray, npt.NDArray[np.int64]]:
    """Which of `rows` (any order) are in the ascending `where`, and at which position."""
    if not where.shape[0]:
        return np.zeros(rows.shape[0], dtype=bool), np.zeros(rows.shape[0], dtype=np.int64)
    at = np.minimum(np.searchsorted(where, rows), where.shape[0] - 1)
    return where[at] == rows, at


def _best(
    candidates: npt.NDArray[np.int64], scores: Scores, seqs: npt.NDArray[np.int64], k: int
) -> npt.NDArray[np.int64]:
    """The k best candidates, best first, equal scores in seq order."""
    if candidates.shape[0] > k > 0:  # the k best, and every row tied with the k-th
        cut = scores[np.argpartition(-scores, k - 1)[:k]].min()
        chosen = scores >= cut
        candidates, scores = candidates[chosen], scores[chosen]
    order = np.lexsort((seqs[candidates], -scores))
    return candidates[order][: max(k, 0)]
