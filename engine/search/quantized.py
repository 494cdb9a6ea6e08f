"""Chunks nearest a query by their best part: an exact float scan, or a quantized scan of
the part matrix whose head is re-scored exactly in float32.

`nearest_chunks` is the whole scoring step of the warm vector path (engine/search/
vector_cache.py calls it under its lock; bench/vector_scale.py calls it on a synthetic
matrix), over rows that are L2-normalised part vectors, a chunk's parts consecutive.

- `exact`: one float32 matrix-vector product (BLAS held to one thread, engine/search/
  blas.py), the best part per chunk, the top k.
- `binary`: the sign bits of each part vector minus the mean part vector (48 bytes a part
  at 384-d), stored word-major so the Hamming distance to the query's sign bits is six XOR +
  popcount passes over contiguous words. The `rescore` nearest parts (ties at the cut
  included) are scored exactly in float32; the `RESCORED_CHUNKS` × k chunks whose best
  candidate part is nearest are then scored on every part, so a returned chunk's score is
  its true best-part cosine. Scoring only the candidate parts first, not every part of
  every candidate's chunk, made 320 × k at 1M parts 17.8 ms instead of 43.1 ms, for the
  same recall (docs/benchmarks.md, "Speed at 100k and 1M"). Subtracting the mean
  does not change the order of q·x (q·μ is the same for every x) but spreads the bits:
  MiniLM's vectors share a mean component, and uncentred signs of such dimensions say little.
- `auto` (the default): `binary` from `AUTO_BINARY_PARTS` parts on, `exact` below, where
  the float scan stays under ~7 ms on one thread (0.11 ms per 1,000 parts here: 20 ms for
  the 100k layer's 180k parts) and every hit is the exact one (docs/benchmarks.md, "Speed
  at 100k and 1M").
- `int8`: each part vector scaled by one global factor into int8 (384 bytes a part), scored
  in blocks cast to float32; the same re-score. numpy has no int8 product kernel, so this
  saves memory traffic but not time (docs/benchmarks.md, "Vector side at scale").
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from engine.search.blas import one_blas_thread

FloatArray = npt.NDArray[np.float32]
IndexArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
SCANS = ("auto", "exact", "binary", "int8")
AUTO_BINARY_PARTS = 60_000  # `auto`: binary from here on; below, exact (≤ ~7 ms, every hit)
INT8_BLOCK = 1024  # rows cast to float32 at a time: 1.5 MB, inside the L2 cache
# Chunks scored on every part, per chunk asked for: the best by their candidate parts.
RESCORED_CHUNKS = 2
PACK_BLOCK = 65536  # rows quantized at a time, so building the codes needs no full-size temporary
SCAN_BLOCK = 65536  # parts whose Hamming distances are summed at a time
RESCORE_AT = 1_000_000  # the parts at which `search.vector_rescore` × k parts are re-scored
MIN_DEPTH_SCALE = 0.25  # the depth never falls below this share of that


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

    def distances(self, query: FloatArray) -> npt.NDArray[np.uint16]:
        """Hamming distance of every part's bits to the query's (its own signs: q·(x − μ)
        orders the parts as q·x does)."""
        bits = self._pack(query.reshape(1, -1), np.zeros_like(query))[:, 0]
        rows = self.words.shape[1]
        out = np.empty(rows, dtype=np.uint16)
        # In blocks that stay in the cache, into buffers made once: 10.0 ms instead of
        # 13.9 ms for the whole-column passes at 1.9M parts.
        size = min(rows, SCAN_BLOCK)
        xor, count = np.empty(size, dtype=np.uint64), np.empty(size, dtype=np.uint8)
        for start in range(0, rows, SCAN_BLOCK):
            end = min(rows, start + SCAN_BLOCK)
            n, total = end - start, out[start:end]
            total[:] = 0
            for word, qword in zip(self.words[:, start:end], bits, strict=True):
                np.bitwise_xor(word, qword, out=xor[:n])
                np.bitwise_count(xor[:n], out=count[:n])
                np.add(total, count[:n], out=total)
        return out

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
        with one_blas_thread():
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
    parts, 0.95 at 1.9M); one in proportion to the parts costs linear time; the root kept
    recall@10 at 0.97 or more at both (docs/benchmarks.md, "Speed at 100k and 1M")."""
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


def nearest_chunks(
    matrix: FloatArray,
    starts: IndexArray,
    query: FloatArray,
    k: int,
    keep: BoolArray | None = None,
    codes: Codes | None = None,
    rescore: int = 0,
) -> tuple[IndexArray, FloatArray]:
    """(chunk indices, best-part cosines) of the k chunks nearest the query, best first.

    `starts`: each chunk's first row; `keep`: the chunks that pass the filters (None: all);
    `codes`: the quantized copy of `matrix` to scan first, its `rescore` nearest parts
    naming the chunks scored exactly (None, or `rescore` ≥ the rows: an exact scan; so is a
    scan whose candidates name fewer than k chunks while more pass the filters)."""
    query = np.asarray(query, dtype=np.float32).reshape(-1)
    chunks = np.zeros(0, dtype=np.int64)
    if codes is not None and 0 < rescore < matrix.shape[0]:
        chunks = candidate_chunks(matrix, codes, starts, query, keep, rescore, k)
    available = starts.shape[0] if keep is None else int(keep.sum())
    if chunks.shape[0] >= min(k, available):
        scores = chunk_scores(matrix, starts, chunks, query)
    else:  # no codes, or the candidates' parts fell in fewer than k chunks: scan exactly
        with one_blas_thread():
            rows = matrix @ query
        scores = np.maximum.reduceat(rows, starts)
        chunks = np.arange(starts.shape[0], dtype=np.int64)
        if keep is not None:
            chunks, scores = chunks[keep], scores[keep]
    k = min(k, scores.shape[0])
    if k < 1:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.argsort(-scores[top], kind="stable")]
    return chunks[top], scores[top]


def chunk_ends(starts: IndexArray, rows: int) -> IndexArray:
    """The row after each chunk's last part."""
    return np.append(starts[1:], rows).astype(np.int64)


def candidate_chunks(
    matrix: FloatArray,
    codes: Codes,
    starts: IndexArray,
    query: FloatArray,
    keep: BoolArray | None,
    wanted: int,
    k: int,
) -> IndexArray:
    """The chunks (passing `keep`) to score exactly: the `RESCORED_CHUNKS` × k whose best
    part is nearest among the `wanted` nearest parts by the codes, each of those parts
    scored exactly (a chunk's other parts are scored by `chunk_scores`, for the few kept)."""
    parts = candidate_parts(codes, starts, query, keep, wanted)
    if not parts.shape[0]:
        return np.zeros(0, dtype=np.int64)
    owners = np.searchsorted(starts, parts, side="right") - 1
    with one_blas_thread():
        cosines = matrix[parts] @ query
    first = np.ones(owners.shape[0], dtype=bool)
    first[1:] = owners[1:] != owners[:-1]
    heads = np.flatnonzero(first)
    chunks, best = owners[heads], np.maximum.reduceat(cosines, heads)
    keep_count = RESCORED_CHUNKS * k
    if chunks.shape[0] > keep_count:
        chunks = np.sort(chunks[np.argpartition(-best, keep_count - 1)[:keep_count]])
    return chunks


def candidate_parts(
    codes: Codes, starts: IndexArray, query: FloatArray, keep: BoolArray | None, wanted: int
) -> IndexArray:
    """The `wanted` nearest parts by the codes (sorted rows, their chunks passing `keep`);
    for binary codes every part as near as the `wanted`-th is included."""
    rows = codes.words.shape[1] if isinstance(codes, BinaryCodes) else codes.codes.shape[0]
    row_keep = None if keep is None else np.repeat(keep, chunk_ends(starts, rows) - starts)
    if isinstance(codes, BinaryCodes):
        distance = codes.distances(query)
        if row_keep is not None:
            distance[~row_keep] = np.iinfo(np.uint16).max
        cut = int(np.searchsorted(np.cumsum(np.bincount(distance)), wanted))
        picked = np.flatnonzero(distance <= min(cut, np.iinfo(np.uint16).max - 1))
    else:
        approximate = codes.scores(query)
        if row_keep is not None:
            approximate[~row_keep] = -np.inf
        picked = np.argpartition(-approximate, wanted - 1)[:wanted]
        picked = np.sort(picked[np.isfinite(approximate[picked])])
    if keep is None:
        return picked
    return picked[keep[np.searchsorted(starts, picked, side="right") - 1]]


def chunk_scores(
    matrix: FloatArray, starts: IndexArray, chunks: IndexArray, query: FloatArray
) -> FloatArray:
    """The exact best-part cosine of each of these chunks (all their parts scored)."""
    if not chunks.shape[0]:
        return np.zeros(0, dtype=np.float32)
    begins = starts[chunks]
    lengths = chunk_ends(starts, matrix.shape[0])[chunks] - begins
    offsets = np.cumsum(lengths) - lengths
    rows = np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(begins - offsets, lengths)
    with one_blas_thread():
        cosines = matrix[rows] @ query
    return np.maximum.reduceat(cosines, offsets)
