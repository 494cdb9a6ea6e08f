"""The two retrievers' backends: what the pipeline asks of each side, and the SQL ones.

Each side's backends give the same answers (tests/test_backends.py runs one contract suite
against each):

- keyword: FTS5's BM25 over SQL (`Fts5Backend`, the one-shot path) or the FTS index's
  postings in memory (engine/search/retrieve/keyword_index.py `KeywordIndex`, the warm one);
- vector: sqlite-vec's vec0 KNN (`Vec0Backend`, the one-shot path), the in-memory matrix
  (engine/search/retrieve/vector_cache.py `VectorCache`, the warm one) or the matrix a warm
  process kept beside the index, while the index holds its state
  (engine/search/retrieve/saved_vectors.py `SavedVectors`, the one-shot path then).

The in-memory backends follow the index on their own connection (engine/search/retrieve/mirror.py);
the SQL ones read the caller's, inside the caller's snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import apsw
import numpy as np
import numpy.typing as npt

from engine.search.query.filters import Filters, chunk_filter_sql, vec_filter_sql
from engine.search.retrieve import part_vectors
from engine.search.retrieve.keyword_share import Fts5Keywords, Keywords
from engine.store import db
from engine.store.sql import chunks, vec

FloatArray = npt.NDArray[np.float32]
KNN_MAX = 4096  # vec0's largest k


class KeywordBackend(Protocol):
    """The keyword side: BM25 hits, and what any chunk holds of the query."""

    def search(
        self,
        terms: Sequence[str],
        k: int,
        filters: Filters | None = None,
        prefix: bool = False,
        require_all: bool = False,
    ) -> Keywords | None:
        """The k best BM25 chunks for these terms (OR-ed, or AND-ed with `require_all`; the
        last a prefix with `prefix`), filtered; None when this backend cannot answer now
        (the caller asks FTS5)."""
        ...


class VectorBackend(Protocol):
    """The vector side: chunks nearest a query vector by their best part."""

    def knn(
        self, query: FloatArray, k: int, filters: Filters | None = None, exact: bool = False
    ) -> list[tuple[int, float]]:
        """(seq, cosine) of the k chunks nearest by their best part, best first, filtered;
        `exact`: an exact scan even where the backend would scan a quantized copy."""
        ...


class Fts5Backend:
    """The keyword side as FTS5 answers it, on a connection (`Fts5Keywords`)."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn

    def search(
        self,
        terms: Sequence[str],
        k: int,
        filters: Filters | None = None,
        prefix: bool = False,
        require_all: bool = False,
    ) -> Fts5Keywords:
        chosen = Filters() if filters is None else filters
        return Fts5Keywords.search(self.conn, terms, k, chosen, prefix, require_all)


class Vec0Backend:
    """The vector side as sqlite-vec answers it: a vec0 KNN over the active table, its
    metadata columns filtering during the scan (every vec0 float scan is exact)."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn

    def knn(
        self, query: FloatArray, k: int, filters: Filters | None = None, exact: bool = False
    ) -> list[tuple[int, float]]:
        table = db.active_vec_table(self.conn)
        if k < 1 or not table or not db.table_exists(self.conn, table):
            return []
        chosen = Filters() if filters is None else filters
        if chosen.people:
            # People are not vec0 metadata: score the filtered chunks exactly instead, found
            # through the FTS index (a phrase per name), not by reading every chunk's text.
            where, params = chunk_filter_sql(chosen, people_index=True)
            rows = self.conn.execute(chunks.embedded_where_sql(where), params)
            return part_vectors.best_chunks(rows, query, k)
        where, params = vec_filter_sql(chosen)
        fetch = min(k * part_vectors.FANOUT, KNN_MAX)
        blob = np.asarray(query, dtype=np.float32).tobytes()
        rows = self.conn.execute(vec.knn_sql(table, where), (blob, fetch, *params))
        return part_vectors.chunk_hits(rows, k)
