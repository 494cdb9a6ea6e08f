"""Chunks scored by their best part: from vec0 part hits, or from stored part vectors.

A chunk has one vector per part (engine/parts.py), concatenated in `chunks.embedding`;
its cosine to a query is the best of its parts' (a bounded aggregation: a long window
with many near-matching parts scores no higher than its best one). The Searcher holds BLAS
to one thread around each search (engine/search/retrieve/compute.py), so these products do too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import apsw
import numpy as np
import numpy.typing as npt

from engine import parts
from engine.store.sql import chunks as chunks_sql

FANOUT = 3  # vec0 part hits fetched per chunk wanted: several parts of one chunk may rank


def chunk_hits(rows: Iterable[tuple[int, float]], k: int) -> list[tuple[int, float]]:
    """(seq, cosine) of the first k chunks among vec0 (rowid, cosine distance) part hits,
    best first: a chunk's first hit is its best part."""
    hits: dict[int, float] = {}
    for part_rowid, distance in rows:
        seq = parts.seq_of(part_rowid)
        if seq not in hits:
            hits[seq] = 1.0 - float(distance)
            if len(hits) == k:
                break
    return list(hits.items())


def part_cosines(blob: bytes, query: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The cosine of each part of one chunk (its `chunks.embedding`) to the query."""
    matrix = np.frombuffer(blob, dtype=np.float32).reshape(-1, query.shape[0])
    cosines: npt.NDArray[np.float32] = matrix @ query
    return cosines


def best_chunks(
    rows: Iterable[tuple[int, bytes]], query: npt.NDArray[np.float32], k: int
) -> list[tuple[int, float]]:
    """(seq, cosine) of the k chunks whose best part is nearest, from (seq, vectors) rows."""
    query = np.asarray(query, dtype=np.float32).reshape(-1)
    scored = [(seq, float(part_cosines(blob, query).max())) for seq, blob in rows if blob]
    scored.sort(key=lambda hit: -hit[1])
    return scored[:k]


def best_spans(
    conn: apsw.Connection,
    seqs: Sequence[int],
    query: npt.NDArray[np.float32],
    texts: Mapping[int, str],
) -> dict[int, parts.Span]:
    """seq -> the span of the chunk's text whose part is nearest the query (for snippets)."""
    if not seqs:
        return {}
    query = np.asarray(query, dtype=np.float32).reshape(-1)
    out = {}
    for seq, blob in conn.execute(chunks_sql.embedding_by_seq_sql(len(seqs)), list(seqs)):
        spans = parts.split_parts(texts[seq])
        cosines = part_cosines(blob, query)
        if len(spans) == len(cosines) > 1:
            out[seq] = spans[int(cosines.argmax())]
    return out
