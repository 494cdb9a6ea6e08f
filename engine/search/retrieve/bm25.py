"""FTS5's bm25() over in-memory postings (engine/search/retrieve/keyword_index.py), exactly.

A term's part of a row's score is idf × f(k1 + 1) / (f + k1(1 − b + b·len/avglen)), with
FTS5's constants, its IDF (log((N − n + 0.5) / (n + 0.5)), at least 1e-6) and its order
of additions, so the scores are FTS5's to the last bit and the lists are its lists.

Most of the work is in the common words: a chat word in 40 % of the chunks has a posting
for 40 % of the rows, and an IDF of ~0.4. Before scoring every row, the rows holding a
rarer term are scored alone, each with every term's part (MaxScore, Turtle & Flood 1995):
a row holding only common terms scores less than the sum of their upper bounds (idf ×
the term part at its highest frequency and the lowest length norm), so when that sum is
below the k-th best score found, no such row can enter the top k, nor tie with it, and
the rarer terms' rows are the whole answer. When it is not, the next rarest term joins
the rare ones and the proof is tried again, until the candidates pass 2 % of the
rows (a query of common words only, a filter that leaves too few): then every row is
scored, and only the rows scoring at least the k-th best of a sample of every row are
sorted (the k-th best of any rows is no more than the k-th best of all).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from engine.search.retrieve.postings import FloatArray, RowArray

K1, B = 1.2, 0.75  # FTS5's bm25() constants
COMMON_SHARE = 0.01  # a term held by more than this share of the rows is a common one
CANDIDATE_SHARE = 0.02  # past this share of the rows as candidates, every row is scored
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
    if not require_all and k > 0:
        pruned = _pruned(found, idfs, rows, norm, k, keep)
        if pruned is not None:
            candidates, scores = pruned
            return _best(candidates, scores, seqs, k)
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


def _pruned(
    found: Sequence[Postings],
    idfs: Sequence[float],
    rows: int,
    norm: Scores,
    k: int,
    keep: BoolArray | None,
) -> tuple[npt.NDArray[np.int64], Scores] | None:
    """The rows holding a rarer term, with their whole scores, when they are provably the
    top k's only members (see the module's docstring); None when that cannot be shown."""
    sizes = [int(w.shape[0]) for w, _ in found]
    order = sorted((i for i in range(len(found)) if sizes[i]), key=sizes.__getitem__)
    if len(order) < 2:
        return None
    lowest = float(norm.min()) if norm.shape[0] else 0.0
    bounds = [_upper_bound(freqs, w, lowest) for (_, freqs), w in zip(found, idfs, strict=True)]
    # The rarest terms first; a common one joins them while their rows stay few.
    rare = 1
    while rare < len(order) and sizes[order[rare]] <= COMMON_SHARE * rows:
        rare += 1
    while rare < len(order) and sum(sizes[i] for i in order[:rare]) <= CANDIDATE_SHARE * rows:
        proven = _proven(found, idfs, bounds, order[:rare], norm, k, keep)
        if proven is not None:
            return proven
        rare += 1
    return None


def _upper_bound(freqs: FloatArray, weight: float, lowest_norm: float) -> float:
    """No row scores more than this for the term: its highest frequency over the lowest
    length norm of any row (a term's part grows with f and falls with the norm)."""
    if not freqs.shape[0]:
        return 0.0
    f = float(freqs.max())
    return weight * (f * (K1 + 1.0) / (f + lowest_norm))


def _proven(
    found: Sequence[Postings],
    idfs: Sequence[float],
    bounds: Sequence[float],
    rare: Sequence[int],
    norm: Scores,
    k: int,
    keep: BoolArray | None,
) -> tuple[npt.NDArray[np.int64], Scores] | None:
    """The rows holding any of the `rare` terms, scored on every term, if no row holding
    only the others can reach their k-th best score; else None."""
    candidates = np.unique(np.concatenate([found[i][0] for i in rare])).astype(np.int64)
    if keep is not None:
        candidates = candidates[keep[candidates]]
    if candidates.shape[0] < k:
        return None
    scores = np.zeros(candidates.shape[0], dtype=np.float64)
    for (where, freqs), weight in zip(found, idfs, strict=True):  # in term order, as FTS5 adds
        hit, at = _lookup(where, candidates)
        if hit.any():
            scores[hit] += _parts(where[at[hit]], freqs[at[hit]], weight, norm)
    kth = float(np.partition(scores, scores.shape[0] - k)[scores.shape[0] - k])
    others = sum(b for i, b in enumerate(bounds) if i not in rare)
    if others >= kth * (1 - 1e-9):  # a row of the other terms only might reach the top k
        return None
    return candidates, scores


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
