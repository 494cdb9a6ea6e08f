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

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import numpy.typing as npt

from engine.records import Person
from engine.search.query.filters import Filters, chunk_filter_sql, columns_mask
from engine.search.retrieve.backends import Vec0Backend, VectorBackend
from engine.search.retrieve.compute import Compute
from engine.search.retrieve.quantized import Layout, Selection, nearest_chunks
from engine.store import db, mapped
from engine.store.sql import chunks

FloatArray = npt.NDArray[np.float32]
SeqArray = npt.NDArray[np.int64]
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


@dataclass(frozen=True)
class SavedMatrix:
    """A matrix file as mapped (engine/store/mapped.py), its per-row columns checked to
    have one value per row of the matrix."""

    fields: dict[str, Any]  # the header's own fields
    arrays: mapped.Arrays  # every array of the file
    matrix: FloatArray
    seqs: SeqArray
    types: npt.NDArray[np.int16]
    days: npt.NDArray[np.int32]
    type_codes: dict[str, int]


def read_matrix(path: Path | None, wanted: Mapping[str, Any]) -> SavedMatrix | None:
    """The matrix file at `path` if its header holds every field of `wanted` with that
    value and its arrays agree; None otherwise (no file, another state, another layout)."""
    found = mapped.read_if(path, wanted)
    type_codes = None if found is None else found[0].get("type_codes")
    if found is None or not isinstance(type_codes, dict):
        return None
    fields, arrays = found
    try:
        matrix, seqs = arrays["matrix"], arrays["seqs"]
        types, days = arrays["types"], arrays["days"]
    except KeyError:
        return None
    rows = matrix.shape[0] if matrix.ndim == 2 else -1
    if not seqs.shape == types.shape == days.shape == (rows,):
        return None
    return SavedMatrix(fields, arrays, matrix, seqs, types, days, dict(type_codes))


def named_seqs(conn: apsw.Connection, people: tuple[Person, ...]) -> SeqArray:
    """The embedded chunks that name these people (sorted seqs), found through the FTS
    index (engine/search/query/filters.py, `people_match_expression`)."""
    where, params = chunk_filter_sql(Filters(people=people), people_index=True)
    found = conn.execute(chunks.embedded_seqs_where_sql(where), params)
    return np.fromiter((r[0] for r in found), dtype=np.int64)


def filter_selection(
    layout: Layout,
    seqs: SeqArray,
    types: npt.NDArray[np.int16],
    days: npt.NDArray[np.int32],
    type_codes: dict[str, int],
    filters: Filters,
    people: Callable[[], SeqArray],
) -> Selection:
    """The chunks of a matrix that pass `filters`: source and dates from its columns,
    people as the chunks `people()` names (asked only when the filters name someone)."""
    starts = layout.starts
    keep = columns_mask(filters, types[starts], type_codes, days[starts])
    if filters.people:
        keep &= np.isin(seqs[starts], people(), assume_unique=True)
    return Selection(layout, keep)


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
        self.layout = Layout.of_rows(seqs)

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
        found = read_matrix(Path(str(path) + SUFFIX), wanted)
        if found is None:
            return None
        return cls(
            conn, found.matrix, found.seqs, found.types, found.days, found.type_codes, compute
        )

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
        return filter_selection(
            self.layout,
            self.seqs,
            self.types,
            self.days,
            self.type_codes,
            filters,
            lambda: named_seqs(self.conn, filters.people),
        )


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
