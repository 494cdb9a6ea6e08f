"""The vector side of a one-shot search, from the matrix a warm process kept beside the index.

A one-shot process (`memex --search`) reads no index into memory: its vector side was
sqlite-vec's vec0 scan, which reads every vector through SQLite (at 1M chunks of
384-dimensional vectors a one-shot search took 1.71 s with it, 0.68 s with the file:
docs/benchmarks.md "Cold start"). A warm process writes its matrix to `memex.db.vectors`
(engine/search/retrieve/vector_cache.py) with the writer's stamp of the chunks' state it
was read at (engine/store/sql/chunk_state.py). When the index still carries that stamp
(same origin, same stamp, same active embedder: no chunk added, removed or given another
id, type, date or vector since), the file holds exactly the index's vectors, and the
one-shot maps it and scans it exactly (float32, as vec0 scans): the same neighbours, those
of equal cosine in the warm process's order. Any other file, or none, and the search asks
vec0 as before.
"""

from __future__ import annotations

from pathlib import Path

import apsw
import numpy as np
import numpy.typing as npt

from engine.search.query.filters import Filters, chunk_filter_sql, columns_mask
from engine.search.retrieve.backends import Vec0Backend, VectorBackend
from engine.search.retrieve.compute import Compute
from engine.search.retrieve.quantized import Layout, Selection, nearest_chunks
from engine.store import db, mapped
from engine.store.sql import chunks

FloatArray = npt.NDArray[np.float32]
SAVED_FORMAT = 1  # the layout of the matrix's file; another one is not taken up
SUFFIX = ".vectors"  # the matrix's file: memex.db → memex.db.vectors


def active_embedder(conn: apsw.Connection) -> str | None:
    """The key the matrix is read under: a swap of the active embedder reloads it."""
    return db.get_meta(conn, "embedder")


def stamp_fields(conn: apsw.Connection) -> dict[str, int]:
    """The writer's stamp of the chunks' state in this snapshot (the one a matrix is read
    in), which a one-shot search checks before it trusts the file; none for an index
    without one."""
    state = db.chunk_state(conn)
    return {} if state is None else {"origin": state.origin, "stamp": state.stamp}


class SavedVectors:
    """Exact cosine KNN over the mapped matrix, in the caller's snapshot (`conn`: the
    person filter's chunks are found through its FTS index)."""

    def __init__(
        self,
        conn: apsw.Connection,
        matrix: FloatArray,
        seqs: npt.NDArray[np.int64],
        types: npt.NDArray[np.int16],
        days: npt.NDArray[np.int32],
        type_codes: dict[str, int],
        compute: Compute | None = None,
    ) -> None:
        self.conn, self.compute = conn, compute
        self.matrix, self.seqs, self.types, self.days = matrix, seqs, types, days
        self.type_codes = type_codes
        changed = np.ones(seqs.shape[0], dtype=bool)
        changed[1:] = seqs[1:] != seqs[:-1]
        self.layout = Layout(np.flatnonzero(changed), seqs.shape[0])

    @classmethod
    def open(
        cls, conn: apsw.Connection, path: Path, compute: Compute | None = None
    ) -> SavedVectors | None:
        """The matrix kept beside the index at `path` when it holds the index's state as
        `conn`'s snapshot sees it; None otherwise (no file, or the index moved on)."""
        state = db.chunk_state(conn)
        if state is None:
            return None
        wanted = {
            "format": SAVED_FORMAT,
            "key": active_embedder(conn),
            "origin": state.origin,
            "stamp": state.stamp,
        }
        found = mapped.read_if(Path(str(path) + SUFFIX), wanted)
        type_codes = None if found is None else found[0].get("type_codes")
        if found is None or not isinstance(type_codes, dict):
            return None
        arrays = found[1]
        try:
            matrix, seqs = arrays["matrix"], arrays["seqs"]
            types, days = arrays["types"], arrays["days"]
        except KeyError:
            return None
        rows = matrix.shape[0] if matrix.ndim == 2 else -1
        if not seqs.shape == types.shape == days.shape == (rows,):
            return None
        return cls(conn, matrix, seqs, types, days, dict(type_codes), compute)

    def knn(
        self, query: FloatArray, k: int, filters: Filters | None = None, exact: bool = False
    ) -> list[tuple[int, float]]:
        """(seq, cosine) of the k chunks nearest by their best part, best first, filtered
        (always an exact scan: `exact` changes nothing)."""
        if k < 1 or not self.seqs.shape[0] or self.matrix.shape[1] != len(query):
            return []
        chunk_numbers, scores = nearest_chunks(
            self.matrix,
            self.layout,
            np.asarray(query, dtype=np.float32),
            k,
            self._selection(filters),
            None,
            0,
            self.compute,
        )
        seqs = self.seqs[self.layout.starts[chunk_numbers]]
        return [(int(s), float(v)) for s, v in zip(seqs, scores, strict=True)]

    def _selection(self, filters: Filters | None) -> Selection | None:
        if filters is None or filters.empty:
            return None
        starts = self.layout.starts
        keep = columns_mask(filters, self.types[starts], self.type_codes, self.days[starts])
        if filters.people:
            where, params = chunk_filter_sql(Filters(people=filters.people), people_index=True)
            found = self.conn.execute(chunks.embedded_seqs_where_sql(where), params)
            named = np.fromiter((r[0] for r in found), dtype=np.int64)
            keep &= np.isin(self.seqs[starts], named)
        return Selection(self.layout, keep)


class OneShotVectors:
    """The vector side of a process that holds no matrix: the saved one when it holds the
    state `conn`'s snapshot sees (looked at on each call), else vec0."""

    def __init__(self, conn: apsw.Connection, path: Path, compute: Compute | None = None) -> None:
        self.conn, self.path, self.compute = conn, path, compute

    def backend(self) -> VectorBackend:
        """What answers a call made now."""
        saved = SavedVectors.open(self.conn, self.path, self.compute)
        return Vec0Backend(self.conn) if saved is None else saved

    def knn(
        self, query: FloatArray, k: int, filters: Filters | None = None, exact: bool = False
    ) -> list[tuple[int, float]]:
        return self.backend().knn(query, k, filters, exact)
