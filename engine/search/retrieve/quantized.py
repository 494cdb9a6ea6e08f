"""Chunks nearest a query by their best part: an exact float scan, or a quantized scan of
the part matrix whose head is re-scored exactly in float32.

`nearest_chunks` is the whole scoring step of the warm vector path (engine/search/
vector_cache.py calls it under its lock; bench/vector_scale.py calls it on a synthetic
matrix), over rows that are L2-normalised part vectors, a chunk's parts consecutive.

- `exact`: one float32 matrix-vector product, the best part per chunk, the top k. With
  a `Compute` (engine/search/retrieve/compute.py, the engine's), BLAS is held to one thread for the
  whole scan and a large binary pass takes its helper thread; without one, numpy's own
  threads do the products and the pass runs on the calling thread.
- `binary`: the sign bits of each part vector minus the mean part vector (48 bytes a part
  at 384-d), stored word-major so the Hamming distance to the query's sign bits is six XOR +
  popcount passes over contiguous words. The `rescore` nearest parts (ties at the cut
  included) are scored exactly in float32; the `RESCORED_CHUNKS` × k chunks whose best
  candidate part is nearest are then scored on every part, so a returned chunk's score is
  its true best-part cosine. Scoring only the candidate parts first, not every part of
  every candidate's chunk, gives the same recall for a fraction of the work at 1M parts.
  Subtracting the mean
  does not change the order of q·x (q·μ is the same for every x) but spreads the bits:
  MiniLM's vectors share a mean component, and uncentred signs of such dimensions say little.
  The cut (the distance within which about `rescore` parts lie) is read off a sample of
  the distances, and from `SPLIT_PARTS` parts on a helper thread (the Compute's)
  computes half of them.
- `auto` (the default): `binary` from `AUTO_BINARY_PARTS` parts on, `exact` below, where
  the float scan on one thread costs little and every hit is the exact one.
- `int8`: each part vector scaled by one global factor into int8 (384 bytes a part), scored
  in blocks cast to float32; the same re-score. numpy has no int8 product kernel, so this
  saves memory traffic but not time.

What each of these costs and saves at 10k, 100k and 1M chunks: `bench/scan_options.py` and
`bench/vector_scale.py`, reported in docs/benchmarks.md.
"""

from __future__ import annotations

import math
from concurrent.futures import Executor
from contextlib import AbstractContextManager, nullcontext, suppress

import numpy as np
import numpy.typing as npt

from engine.search.retrieve.compute import Compute

FloatArray = npt.NDArray[np.float32]
IndexArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
SCANS = ("auto", "exact", "binary", "int8")
AUTO_BINARY_PARTS = 60_000  # `auto`: binary from here on; below, exact (every hit)
INT8_BLOCK = 1024  # rows cast to float32 at a time: 1.5 MB, inside the L2 cache
# Chunks scored on every part, per chunk asked for: the best by their candidate parts.
RESCORED_CHUNKS = 2
PACK_BLOCK = 65536  # rows quantized at a time, so building the codes needs no full-size temporary
SCAN_BLOCK = 65536  # parts whose Hamming distances are summed at a time
SPLIT_PARTS = 4 * SCAN_BLOCK  # from here, two threads share the Hamming pass
RESCORE_AT = 1_000_000  # the parts at which `search.vector_rescore` × k parts are re-scored
MIN_DEPTH_SCALE = 0.25  # the depth never falls below this share of that
SAMPLE_STRIDE = 16  # the binary cut is read off every 16th part's distance …
SAMPLE_MIN_HITS = 1000  # … or a denser sample, so ≥ 1,000 sampled parts lie below it
NARROW_SHARE = 0.2  # an exact scan of fewer kept parts than this share gathers them


class BinaryCodes:
    """Sign bits of (part vector − mean), word-major: `words[w, i]` is part i's word w."""

    def __init__(self, words: npt.NDArray[np.uint64], mean: FloatArray) -> None:
        self.words, self.mean = words, mean

    @classmethod
    def of(cls, matrix: FloatArray, mean: FloatArray | None = None) -> BinaryCodes:
        if mean is None:
            mean = matrix.mean(axis=0, dtype=np.float32) if len(matrix) else matrix[:0].sum(0)
        return cls(cls._pack(matrix, mean), mean)

    @staticmethod
    def _pack(matrix: FloatArray, mean: FloatArray) -> npt.NDArray[np.uint64]:
        rows, dim = matrix.shape
        words = np.empty((-(-dim // 64), rows), dtype=np.uint64)
        padded = np.zeros((min(rows, PACK_BLOCK), words.shape[0] * 64), dtype=bool)
        for start in range(0, rows, PACK_BLOCK):
            end = min(rows, start + PACK_BLOCK)
            np.greater(matrix[start:end], mean, out=padded[: end - start, :dim])
            packed = np.packbits(padded[: end - start], axis=1).view(np.uint64)
            words[:, start:end] = packed.T
        return words

    def kept(self, keep: BoolArray) -> BinaryCodes:
        return BinaryCodes(np.ascontiguousarray(self.words[:, keep]), self.mean)

    def appended(self, matrix: FloatArray) -> BinaryCodes:
        new = self._pack(matrix, self.mean)
        return BinaryCodes(np.ascontiguousarray(np.hstack([self.words, new])), self.mean)

    def distances(
        self, query: FloatArray, helper: Executor | None = None
    ) -> npt.NDArray[np.uint16]:
        """Hamming distance of every part's bits to the query's (its own signs: q·(x − μ)
        orders the parts as q·x does). From `SPLIT_PARTS` parts on, `helper` (a thread)
        takes the second half (numpy lets go of the GIL in each pass)."""
        bits = self._pack(query.reshape(1, -1), np.zeros_like(query))[:, 0]
        rows = self.words.shape[1]
        out = np.empty(rows, dtype=np.uint16)
        middle = rows // 2 // SCAN_BLOCK * SCAN_BLOCK
        second = None
        if rows >= SPLIT_PARTS and helper is not None:
            with suppress(RuntimeError):  # shut down (its engine closed): one thread
                second = helper.submit(self._fill, bits, out, middle, rows)
        self._fill(bits, out, 0, rows if second is None else middle)
        if second is not None:
            second.result()
        return out

    def _fill(
        self, bits: npt.NDArray[np.uint64], out: npt.NDArray[np.uint16], start: int, end: int
    ) -> None:
        """`out[start:end]`: in blocks that stay in the cache, into buffers made once."""
        size = min(end - start, SCAN_BLOCK)
        xor, count = np.empty(size, dtype=np.uint64), np.empty(size, dtype=np.uint8)
        for first in range(start, end, SCAN_BLOCK):
            last = min(end, first + SCAN_BLOCK)
            n, total = last - first, out[first:last]
            total[:] = 0
            for word, qword in zip(self.words[:, first:last], bits, strict=True):
                np.bitwise_xor(word, qword, out=xor[:n])
                np.bitwise_count(xor[:n], out=count[:n])
                np.add(total, count[:n], out=total)

    @property
    def nbytes(self) -> int:
        return int(self.words.nbytes)


class Int8Codes:
    """Part vectors × one global scale, rounded to int8."""

    def __init__(self, codes: npt.NDArray[np.int8], scale: float) -> None:
        self.codes, self.scale = codes, scale

    @classmethod
    def of(cls, matrix: FloatArray, scale: float | None = None) -> Int8Codes:
        if scale is None:
            peak = float(np.abs(matrix).max()) if matrix.size else 1.0
            scale = 127.0 / max(peak, 1e-6)
        return cls(cls._quantize(matrix, scale), scale)

    @staticmethod
    def _quantize(matrix: FloatArray, scale: float) -> npt.NDArray[np.int8]:
        out = np.empty(matrix.shape, dtype=np.int8)
        for start in range(0, matrix.shape[0], PACK_BLOCK):
            block = matrix[start : start + PACK_BLOCK] * scale
            out[start : start + PACK_BLOCK] = np.clip(np.rint(block), -127, 127)
        return out

    def kept(self, keep: BoolArray) -> Int8Codes:
        return Int8Codes(self.codes[keep], self.scale)

    def appended(self, matrix: FloatArray) -> Int8Codes:
        return Int8Codes(np.vstack([self.codes, self._quantize(matrix, self.scale)]), self.scale)

    def scores(self, query: FloatArray) -> FloatArray:
        rows = self.codes.shape[0]
        out = np.empty(rows, dtype=np.float32)
        block = np.empty((min(INT8_BLOCK, rows), self.codes.shape[1]), dtype=np.float32)
        for start in range(0, rows, INT8_BLOCK):
            end = min(rows, start + INT8_BLOCK)
            np.copyto(block[: end - start], self.codes[start:end], casting="unsafe")
            np.dot(block[: end - start], query, out=out[start:end])
        return out

    @property
    def nbytes(self) -> int:
        return int(self.codes.nbytes)


Codes = BinaryCodes | Int8Codes


def rescore_depth(rescore: int, k: int, rows: int) -> int:
    """The parts a quantized scan re-scores for k chunks: `rescore` × k at `RESCORE_AT`
    parts, in proportion to the square root of the parts (never below a quarter of that).
    A fixed depth loses recall as the matrix grows (160 × k: recall@10 0.99 at 180k real
    parts, 0.95 at 1.9M); one in proportion to the parts costs linear time; the root keeps
    recall@10 at 0.97 or more at both (bench/vector_scale.py)."""
    scale = max(MIN_DEPTH_SCALE, math.sqrt(rows / RESCORE_AT))
    return max(1, int(rescore * k * scale))


def scan_for(scan: str, rows: int) -> str:
    """The scan a matrix of `rows` parts gets (`auto` picks by size)."""
    if scan == "auto":
        return "binary" if rows >= AUTO_BINARY_PARTS else "exact"
    return scan


def build_codes(scan: str, matrix: FloatArray) -> Codes | None:
    """The quantized copy a scan needs (None for `exact`)."""
    if scan == "binary":
        return BinaryCodes.of(matrix)
    if scan == "int8":
        return Int8Codes.of(matrix)
    return None


class Layout:
    """Where each chunk's parts lie in the matrix, worked out once per matrix state (the
    cache keeps it): `starts` (each chunk's first row), `ends` (the row after its last) and
    `owners` (each row's chunk), not per query."""

    def __init__(self, starts: IndexArray, rows: int) -> None:
        self.starts = np.asarray(starts, dtype=np.int64)
        self.ends = np.append(self.starts[1:], rows).astype(np.int64)
        self.rows = rows
        chunk_numbers = np.arange(self.starts.shape[0], dtype=np.int32)
        self.owners = np.repeat(chunk_numbers, self.ends - self.starts)

    @classmethod
    def of_rows(cls, seqs: npt.NDArray[np.int64]) -> Layout:
        """The layout of a matrix whose rows belong to the chunks `seqs` names, each chunk's
        rows consecutive."""
        changed = np.ones(seqs.shape[0], dtype=bool)
        changed[1:] = seqs[1:] != seqs[:-1]
        return cls(np.flatnonzero(changed), seqs.shape[0])

    def __len__(self) -> int:
        return int(self.starts.shape[0])


class Selection:
    """The chunks that pass a search's filters (`chunks`, a mask per chunk) and the rows
    that do not (`dropped`, a mask per row), made once per filter and index state."""

    def __init__(self, layout: Layout, chunks: BoolArray) -> None:
        self.chunks = chunks
        self.dropped = ~chunks[layout.owners]
        self.count = int(chunks.sum())
        self.parts = int(layout.rows - self.dropped.sum())
        self._indices: IndexArray | None = None

    def indices(self) -> IndexArray:
        """The kept chunks' numbers, ascending (found once: the selection outlives a query)."""
        if self._indices is None:
            self._indices = np.flatnonzero(self.chunks)
        return self._indices


def nearest_chunks(
    matrix: FloatArray,
    layout: Layout,
    query: FloatArray,
    k: int,
    selection: Selection | None = None,
    codes: Codes | None = None,
    rescore: int = 0,
    compute: Compute | None = None,
) -> tuple[IndexArray, FloatArray]:
    """(chunk numbers, best-part cosines) of the k chunks nearest the query, best first.

    `selection`: the chunks that pass the filters (None: all); `codes`: the quantized copy
    of `matrix` to scan first, its `rescore` nearest parts naming the chunks scored exactly
    (None, or `rescore` ≥ the rows: an exact scan; so is a scan whose candidates name fewer
    than k chunks while more pass the filters); `compute`: BLAS held to one thread and the
    scan's helper thread (engine/search/retrieve/compute.py)."""
    limit: AbstractContextManager[object] = nullcontext() if compute is None else compute.blas
    with limit:
        return _nearest(matrix, layout, query, k, selection, codes, rescore, compute)


def _nearest(
    matrix: FloatArray,
    layout: Layout,
    query: FloatArray,
    k: int,
    selection: Selection | None,
    codes: Codes | None,
    rescore: int,
    compute: Compute | None,
) -> tuple[IndexArray, FloatArray]:
    query = np.asarray(query, dtype=np.float32).reshape(-1)
    chunks = np.zeros(0, dtype=np.int64)
    if codes is not None and 0 < rescore < matrix.shape[0]:
        helper = None if compute is None else compute.helper()
        chunks = candidate_chunks(matrix, layout, codes, query, selection, rescore, k, helper)
    available = len(layout) if selection is None else selection.count
    if chunks.shape[0] >= min(k, available):
        scores = chunk_scores(matrix, layout, chunks, query)
    else:  # no codes, or the candidates' parts fell in fewer than k chunks: scan exactly
        chunks, scores = exact_scores(matrix, layout, query, selection)
    k = min(k, scores.shape[0])
    if k < 1:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.argsort(-scores[top], kind="stable")]
    return chunks[top], scores[top]


def exact_scores(
    matrix: FloatArray, layout: Layout, query: FloatArray, selection: Selection | None
) -> tuple[IndexArray, FloatArray]:
    """Every selected chunk's best-part cosine: one product over the matrix, or over the
    kept parts alone when they are fewer than `NARROW_SHARE` of it (a person filter at 1M
    parts scanned 1.9M rows for a few thousand)."""
    if selection is not None and selection.parts < NARROW_SHARE * layout.rows:
        chunks = selection.indices()
        return chunks, chunk_scores(matrix, layout, chunks, query)
    rows = matrix @ query
    scores = np.maximum.reduceat(rows, layout.starts) if len(layout) else rows[:0]
    chunks = np.arange(len(layout), dtype=np.int64)
    if selection is None:
        return chunks, scores
    return chunks[selection.chunks], scores[selection.chunks]


def candidate_chunks(
    matrix: FloatArray,
    layout: Layout,
    codes: Codes,
    query: FloatArray,
    selection: Selection | None,
    wanted: int,
    k: int,
    helper: Executor | None = None,
) -> IndexArray:
    """The chunks (passing the selection) to score exactly: the `RESCORED_CHUNKS` × k
    whose best part is nearest among the `wanted` nearest parts by the codes, each of
    those parts scored exactly (a chunk's other parts are scored by `chunk_scores`, for
    the few kept)."""
    parts = candidate_parts(codes, query, selection, wanted, helper)
    if not parts.shape[0]:
        return np.zeros(0, dtype=np.int64)
    owners = layout.owners[parts]
    cosines = matrix[parts] @ query
    first = np.ones(owners.shape[0], dtype=bool)
    first[1:] = owners[1:] != owners[:-1]
    heads = np.flatnonzero(first)
    chunks, best = owners[heads].astype(np.int64), np.maximum.reduceat(cosines, heads)
    keep_count = RESCORED_CHUNKS * k
    if chunks.shape[0] > keep_count:
        chunks = np.sort(chunks[np.argpartition(-best, keep_count - 1)[:keep_count]])
    return chunks


def candidate_parts(
    codes: Codes,
    query: FloatArray,
    selection: Selection | None,
    wanted: int,
    helper: Executor | None = None,
) -> IndexArray:
    """About the `wanted` nearest parts by the codes (sorted rows, of selected chunks):
    for binary codes, every part as near as the cut, which is read off a sample of the
    distances (every `SAMPLE_STRIDE`-th; a histogram of all 1.9M took 2.5 ms)."""
    if isinstance(codes, BinaryCodes):
        distance = codes.distances(query, helper)
        if selection is not None:
            np.putmask(distance, selection.dropped, np.iinfo(np.uint16).max)
        cut = binary_cut(distance, wanted)
        return np.flatnonzero(distance <= min(cut, np.iinfo(np.uint16).max - 1))
    approximate = codes.scores(query)
    if selection is not None:
        np.putmask(approximate, selection.dropped, -np.inf)
    picked = np.argpartition(-approximate, wanted - 1)[:wanted]
    return np.sort(picked[np.isfinite(approximate[picked])])


def binary_cut(distance: npt.NDArray[np.uint16], wanted: int) -> int:
    """The Hamming distance within which about `wanted` of these parts lie: counted on a
    sample of at least `SAMPLE_MIN_HITS` × the stride parts below the cut, exact (every
    part counted) when the depth is too small for that."""
    stride = max(1, min(SAMPLE_STRIDE, wanted // SAMPLE_MIN_HITS))
    sample = distance[::stride]
    return int(np.searchsorted(np.cumsum(np.bincount(sample)), -(-wanted // stride)))


def chunk_scores(
    matrix: FloatArray, layout: Layout, chunks: IndexArray, query: FloatArray
) -> FloatArray:
    """The exact best-part cosine of each of these chunks (all their parts scored)."""
    if not chunks.shape[0]:
        return np.zeros(0, dtype=np.float32)
    begins = layout.starts[chunks]
    lengths = layout.ends[chunks] - begins
    offsets = np.cumsum(lengths) - lengths
    rows = np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(begins - offsets, lengths)
    cosines = matrix[rows] @ query
    return np.maximum.reduceat(cosines, offsets)
