"""Pseudo-relevance feedback on the vector side (Rocchio): the query vector moved toward
the best parts of its first pass's top chunks, for a second vector scan.

The top chunks' part vectors are read from `chunks.embedding` by seq, so the warm
in-memory matrix and the vec0 backend move the query the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

import apsw
import numpy as np
import numpy.typing as npt

from engine.search.retrieve.part_vectors import part_cosines
from engine.store.sql import chunks as chunks_sql

FloatArray = npt.NDArray[np.float32]


def best_parts(conn: apsw.Connection, seqs: Sequence[int], query: FloatArray) -> list[FloatArray]:
    """Each chunk's part vector nearest the query, for the embedded chunks among `seqs`."""
    if not seqs:
        return []
    dim = query.shape[0]
    out = []
    for _seq, blob in conn.execute(chunks_sql.embedding_by_seq_sql(len(seqs)), list(seqs)):
        matrix = np.frombuffer(blob, dtype=np.float32).reshape(-1, dim)
        out.append(matrix[int(part_cosines(blob, query).argmax())])
    return out


def moved_query(query: FloatArray, feedback: Sequence[FloatArray], beta: float) -> FloatArray:
    """normalise(query + beta · mean(feedback)); the query unchanged when there is no
    feedback or beta is 0."""
    query = np.asarray(query, dtype=np.float32).reshape(-1)
    if beta == 0 or not feedback:
        return query
    moved = query + np.float32(beta) * np.mean(np.stack(feedback), axis=0, dtype=np.float32)
    norm = float(np.linalg.norm(moved))
    return query if norm == 0 else (moved / np.float32(norm)).astype(np.float32)
