"""The same retrieval done other ways, on the same chunks and vectors as the Memex index.

- the peer stack a user would assemble: Chroma (in-process, HNSW cosine) + rank_bm25
  (BM25Okapi), fused by Reciprocal Rank Fusion;
- the floor: an exact numpy scan of the float32 part vectors (memory bandwidth; a chunk
  scores its best part, as in the engine) and FTS5 alone;
- the seed design of the SPEC in raw SQL: vec0 float KNN + FTS5 + RRF, no later stages.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass

import apsw
import numpy as np
import numpy.typing as npt

from engine import parts
from engine.search.query import fts
from engine.search.retrieve import part_vectors
from engine.store import db

FloatArray = npt.NDArray[np.float32]
RRF_K = 60.0
_WORD = re.compile(r"\w+")


@dataclass
class Corpus:
    """Every embedded chunk: its seq and text, in seq order, and its part vectors (one
    matrix row each, a chunk's rows consecutive from `starts[i]`, `owners` their seqs)."""

    seqs: npt.NDArray[np.int64]
    texts: list[str]
    matrix: FloatArray
    owners: npt.NDArray[np.int64]
    starts: npt.NDArray[np.int64]


def load_corpus(conn: apsw.Connection) -> Corpus:
    rows = conn.execute(
        "SELECT seq, content, embedding FROM chunks WHERE embedding IS NOT NULL ORDER BY seq"
    ).fetchall()
    dim = int(db.get_meta(conn, "dimension") or 0)
    matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(-1, dim)
    counts = np.array([len(r[2]) // (4 * dim) for r in rows], dtype=np.int64)
    seqs = np.array([r[0] for r in rows], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    return Corpus(seqs, [r[1] for r in rows], matrix.copy(), np.repeat(seqs, counts), starts)


def first_chunks(owners: Sequence[int], k: int) -> list[int]:
    """The first k distinct chunks among part hits in rank order (a chunk's best part)."""
    return list(dict.fromkeys(int(o) for o in owners))[:k]


def rrf(lists: Sequence[Sequence[int]], limit: int, k: float = RRF_K) -> list[int]:
    scores: dict[int, float] = {}
    for ranked in lists:
        for rank, key in enumerate(ranked):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank + 1)
    return sorted(scores, key=lambda key: -scores[key])[:limit]


def tokens(text: str) -> list[str]:
    return [t for t in _WORD.findall(text.lower()) if t not in fts.STOP_WORDS]


# -- the floor ------------------------------------------------------------------------------


class ExactScan:
    """Exact cosine top-k: one matrix-vector product over normalised float32 rows."""

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus

    def knn(self, query: FloatArray, k: int) -> list[int]:
        """The k chunks whose best part is nearest (exact: the max over each chunk's rows)."""
        scores = np.maximum.reduceat(self.corpus.matrix @ query, self.corpus.starts)
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [int(s) for s in self.corpus.seqs[top]]


class Fts5:
    """FTS5 BM25 alone, with the engine's own query sanitising."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn

    def top(self, query: str, k: int) -> list[int]:
        expression = fts.match_expression(fts.query_terms(query))
        if expression is None:
            return []
        return [r[0] for r in self.conn.execute(fts.bm25_sql(""), (expression, k))]


class Vec0:
    """vec0 float KNN inside SQLite, as the seed design does it."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn
        self.table = db.active_vec_table(conn)

    def knn(self, query: FloatArray, k: int) -> list[int]:
        sql = f"SELECT rowid FROM {self.table} WHERE embedding MATCH ? AND k = ? ORDER BY distance"
        blob = query.astype(np.float32).tobytes()
        rows = self.conn.execute(sql, (blob, min(4096, k * part_vectors.FANOUT)))
        return first_chunks([parts.seq_of(r[0]) for r in rows], k)


# -- the peer stack -------------------------------------------------------------------------


class ChromaPeer:
    """Chroma in-process (ephemeral), HNSW with cosine space, our vectors added as given."""

    def __init__(self, corpus: Corpus) -> None:
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        client = chromadb.EphemeralClient(settings=ChromaSettings(anonymized_telemetry=False))
        started = time.perf_counter()
        self.collection = client.create_collection(
            f"memex-bench-{int(time.time())}",
            configuration={"hnsw": {"space": "cosine"}},
            embedding_function=None,
        )
        step = client.get_max_batch_size()
        for i in range(0, len(corpus.owners), step):
            self.collection.add(
                ids=[str(r) for r in range(i, min(i + step, len(corpus.owners)))],
                embeddings=corpus.matrix[i : i + step],
            )
        self.owners = corpus.owners
        self.build_seconds = time.perf_counter() - started

    def knn(self, query: FloatArray, k: int) -> list[int]:
        """One HNSW row per part, as the engine stores them; the first k distinct chunks."""
        wanted = k * part_vectors.FANOUT
        found = self.collection.query(query_embeddings=query[None, :], n_results=wanted, include=[])
        return first_chunks([self.owners[int(i)] for i in found["ids"][0]], k)


class Bm25Peer:
    """rank_bm25's BM25Okapi over the chunk texts (lower-cased words, stop words dropped)."""

    def __init__(self, corpus: Corpus) -> None:
        from rank_bm25 import BM25Okapi

        started = time.perf_counter()
        self.bm25 = BM25Okapi([tokens(t) for t in corpus.texts])
        self.seqs = corpus.seqs
        self.build_seconds = time.perf_counter() - started

    def top(self, query: str, k: int) -> list[int]:
        terms = tokens(query)
        if not terms:
            return []
        scores = self.bm25.get_scores(terms)
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [int(self.seqs[i]) for i in top if scores[i] > 0]
