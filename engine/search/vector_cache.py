"""PROTOTYPE (not wired in): the active vectors as an in-memory float32 matrix for warm search.

A warm process (the desktop app, a long-lived `Searcher`) can keep every embedding in one
numpy matrix and answer a KNN with one matrix-vector product: at 100k × 384 that is a few
milliseconds, against ~30–50 ms for a vec0 float scan inside SQLite. sqlite-vec stays the
store and the path of a cold process; this is a structure kept beside it.

The matrix is loaded lazily on the first query and reloaded when the index changed:
`PRAGMA data_version` (per connection, changes when another connection commits) is the
cheap check, and a fingerprint of the embedded rows (count, max and sum of `seq`) decides
whether the vectors themselves changed. Source-type and date filters are boolean masks
applied to the scores, so a narrow filter still returns k hits whenever k match.
"""

from __future__ import annotations

from collections.abc import Sequence

import apsw
import numpy as np
import numpy.typing as npt

from engine.db import day_number

FloatArray = npt.NDArray[np.float32]


class VectorCache:
    """Exact cosine KNN over an in-memory copy of `chunks.embedding` (L2-normalised rows)."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn
        self._data_version: int | None = None
        self._fingerprint: tuple[int, int, int] | None = None
        self.matrix: FloatArray = np.zeros((0, 0), dtype=np.float32)
        self.seqs = np.zeros(0, dtype=np.int64)
        self.types = np.zeros(0, dtype=np.int16)
        self.days = np.zeros(0, dtype=np.int32)
        self.type_codes: dict[str, int] = {}
        self.loads = 0

    def __len__(self) -> int:
        return int(self.seqs.shape[0])

    # -- freshness --------------------------------------------------------------------------

    def refresh(self) -> bool:
        """Reload if the index changed since the last load; True when it reloaded."""
        version = int(self.conn.execute("PRAGMA data_version").fetchone()[0])
        if version == self._data_version and self._fingerprint is not None:
            return False
        self._data_version = version
        fingerprint = tuple(self.conn.execute(
            "SELECT count(*), coalesce(max(seq), 0), coalesce(sum(seq), 0) FROM chunks "
            "WHERE embedding IS NOT NULL").fetchone())
        if fingerprint == self._fingerprint:
            return False
        self._load()
        self._fingerprint = (int(fingerprint[0]), int(fingerprint[1]), int(fingerprint[2]))
        return True

    def _load(self) -> None:
        rows = self.conn.execute(
            "SELECT seq, embedding, source_type, content_date FROM chunks "
            "WHERE embedding IS NOT NULL ORDER BY seq").fetchall()
        dim = len(rows[0][1]) // 4 if rows else 0
        matrix = np.empty((len(rows), dim), dtype=np.float32)
        codes: dict[str, int] = {}
        types = np.empty(len(rows), dtype=np.int16)
        days = np.empty(len(rows), dtype=np.int32)
        for i, (_, blob, source_type, content_date) in enumerate(rows):
            matrix[i] = np.frombuffer(blob, dtype=np.float32)
            types[i] = codes.setdefault(source_type, len(codes))
            days[i] = day_number(content_date)
        self.matrix, self.types, self.days, self.type_codes = matrix, types, days, codes
        self.seqs = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        self.loads += 1

    # -- search -----------------------------------------------------------------------------

    def mask(self, source_types: Sequence[str] = (), since: str | None = None,
             until: str | None = None) -> npt.NDArray[np.bool_] | None:
        """Rows that pass the filters, or None when nothing filters."""
        if not (source_types or since or until):
            return None
        keep = np.ones(len(self), dtype=bool)
        if source_types:
            codes = [self.type_codes[t] for t in source_types if t in self.type_codes]
            keep &= np.isin(self.types, codes)
        if since:
            keep &= self.days >= day_number(since[:10])
        if until:
            keep &= (self.days <= day_number(until[:10])) & (self.days > 0)
        return keep

    def knn(self, query: FloatArray, k: int, source_types: Sequence[str] = (),
            since: str | None = None, until: str | None = None) -> list[int]:
        """The `seq`s of the k nearest rows by cosine, best first, filters applied."""
        self.refresh()
        if not len(self) or k < 1:
            return []
        scores = self.matrix @ query.astype(np.float32)
        keep = self.mask(source_types, since, until)
        if keep is not None:
            scores = np.where(keep, scores, -np.inf)
            k = min(k, int(keep.sum()))
            if k == 0:
                return []
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [int(s) for s in self.seqs[top]]
