"""The active vectors as an in-memory float32 matrix, for the vector side of warm searches.

A vec0 float KNN scans every vector inside SQLite, several times slower than one numpy
matrix-vector product over the same vectors (docs/benchmarks.md: vec0 beside the numpy
scan). A long-lived process (the desktop app, `engine.search`) keeps the matrix; a one-shot
process (`memex --search`) does not, since loading every vector costs more than one vec0
scan. sqlite-vec stays the store, the path of one-shot processes and of the person filter.

One cache per engine (`engine.core.Engine`) is shared by its Searchers (the desktop runs one
per reader thread), on its own read connection, behind a lock; a Searcher made on its own
may hold a private one. It follows the index through an `IndexMirror`
(engine/search/retrieve/mirror.py): `PRAGMA data_version` is the cheap check made before each query;
when it moved, the `(seq, id)` pairs of the embedded chunks are compared with those held,
the rows gone or replaced are dropped, and only the new rows' vectors are read. A change
of the active embedder (a swap) reloads everything. Its snapshot may be a commit apart from
the Searcher's: a hit the Searcher's snapshot does not hold is dropped by the pipeline.

The matrix read in full is written to `memex.db.vectors` beside the index with its
columns and the chunks' ids (engine/store/mapped.py) and mapped from there, by this process
at once and by the next one in place of the read: the mirror takes the file up when it was
written under the same active embedder, and applies the changes since as it applies any
(engine/search/retrieve/mirror.py); a matrix changed that way is written anew.

Filters are boolean masks over the scores (source type and day from the matrix's own
columns; people as the set of chunks that name them, found through the FTS index), so a
narrow filter still returns k hits whenever k match; each filter's masks are made once per
index state (`quantized.Selection`) and shared by every Searcher, as is where each chunk's
parts lie (`quantized.Layout`).

The scan (`search.vector_scan`, engine/search/retrieve/quantized.py) is exact float32, or a binary or
int8 copy of the matrix scanned first, the chunks of its nearest `rescore_depth`
parts re-scored exactly from the float matrix, which is kept for that (4 bytes a dimension a
part, against one bit for the binary copy: docs/benchmarks.md).
`auto` scans a large matrix binary and a small one exactly. The scan runs on the cache's
`Compute` (engine/search/retrieve/compute.py): the engine's, passed in, or one of its own that
`close()` stops.
"""

from __future__ import annotations

import itertools
import threading
from pathlib import Path

import numpy as np
import numpy.typing as npt

from engine.records import Person
from engine.search.query.filters import Filters
from engine.search.retrieve.compute import Compute
from engine.search.retrieve.mirror import (
    IndexMirror,
    Memo,
    Mirrored,
    Pairs,
    embedded_pairs,
    pairs_of,
    people_key,
)
from engine.search.retrieve.quantized import (
    Codes,
    Layout,
    Selection,
    build_codes,
    nearest_chunks,
    rescore_depth,
    scan_for,
)
from engine.search.retrieve.saved_vectors import (
    SAVED_FORMAT,
    SUFFIX,
    active_embedder,
    filter_selection,
    named_seqs,
    read_matrix,
    stamp_fields,
)
from engine.settings import Settings
from engine.store import db, mapped
from engine.store.sql import chunks, database

FloatArray = npt.NDArray[np.float32]
SeqArray = npt.NDArray[np.int64]
LOAD_BATCH = 2048
PEOPLE_MEMO = 16  # person-filter chunk sets remembered until the index changes
SELECTION_MEMO = 16  # filters' selections remembered until the index changes


class VectorCache(Mirrored):
    """Exact cosine KNN over an in-memory copy of `chunks.embedding` (L2-normalised rows).

    One row per part (engine/parts.py): a chunk's parts are consecutive rows, and a chunk
    scores the best of its parts' cosines. `seqs`, `ids`, `types` and `days` are per row.
    """

    def __init__(
        self,
        path: Path | str,
        scan: str = "exact",
        rescore: int = 1,
        compute: Compute | None = None,
        keep_file: bool = True,
    ) -> None:
        """`scan`: auto, exact, binary or int8; `rescore`: with a quantized scan, the parts
        re-scored exactly per chunk asked for (their chunks are, every part); `compute`:
        what the scan runs on (None: one of its own, stopped by `close`); `keep_file`: keep
        the matrix in `memex.db.vectors` beside the index and take it up from there."""
        self.path = Path(path)
        self.saved_path = Path(str(self.path) + SUFFIX) if keep_file else None
        self.scan, self.rescore = scan, rescore
        self._owns_compute = compute is None
        self.compute = Compute() if compute is None else compute
        self._codes: Codes | None = None  # the quantized copy, built on first use
        self.conn = db.connect(self.path, create=False)
        self._lock = threading.Lock()
        self.mirror = IndexMirror(embedded_pairs, active_embedder)
        self.matrix: FloatArray = np.zeros((0, 0), dtype=np.float32)
        self.seqs = np.zeros(0, dtype=np.int64)
        self.types = np.zeros(0, dtype=np.int16)
        self.days = np.zeros(0, dtype=np.int32)
        self.type_codes: dict[str, int] = {}
        self._people: Memo[tuple[str, ...], SeqArray] = self.mirror.memo(PEOPLE_MEMO)
        self._selections: Memo[Filters, Selection] = self.mirror.memo(SELECTION_MEMO)
        self._layout: Layout | None = None  # where each chunk's rows lie
        self._file_stamp: dict[str, object] = {}  # the stamp of the file taken up

    @classmethod
    def of(cls, settings: Settings, compute: Compute | None = None) -> VectorCache:
        """The cache of this index, scanning as the settings say, on `compute`."""
        search = settings.search
        return cls(settings.db_path, search.vector_scan, search.vector_rescore, compute)

    def __len__(self) -> int:
        """How many chunks the matrix holds."""
        return int(self.starts.shape[0])

    @property
    def starts(self) -> SeqArray:
        """The first row of each chunk (its parts are the rows up to the next start)."""
        return self.layout.starts

    @property
    def layout(self) -> Layout:
        """Where each chunk's parts lie (made once per matrix state)."""
        if self._layout is None:
            self._layout = Layout.of_rows(self.seqs)
        return self._layout

    def close(self) -> None:
        """Close the cache's connection (and its own Compute) once no search is using it."""
        with self._lock:
            self.conn.close()
            if self._owns_compute:
                self.compute.close()

    # -- freshness --------------------------------------------------------------------------

    def refresh(self) -> bool:
        """Bring the matrix in line with the index if it changed; True when it did."""
        with self._lock:
            return self._refresh()

    def _refresh(self) -> bool:
        return self.mirror.follow(self.conn, self)

    def apply(self, gone: SeqArray, new: list[int]) -> Pairs:
        """Drop the parts of the chunks `gone`, append those of the chunks `new`."""
        if gone.shape[0]:
            keep = ~np.isin(self.seqs, gone)
            self.matrix, self.seqs = self.matrix[keep], self.seqs[keep]
            self.types, self.days = self.types[keep], self.days[keep]
            self._layout = None
            if self._codes is not None:
                self._codes = self._codes.kept(keep)
        rows = self._read_rows(new)
        self._append(rows)
        return pairs_of([(r[0], r[1]) for r in rows])

    def _read_rows(self, seqs: list[int] | None) -> list[tuple[int, str, bytes, str, str | None]]:
        rows: list[tuple[int, str, bytes, str, str | None]] = []
        if seqs is None:
            rows += self.conn.execute(chunks.embedded_rows_sql()).fetchall()
            return rows
        for start in range(0, len(seqs), LOAD_BATCH):
            batch = seqs[start : start + LOAD_BATCH]
            rows += self.conn.execute(chunks.embedded_rows_by_seq_sql(len(batch)), batch).fetchall()
        return rows

    def _reset(self) -> None:
        """Hold nothing (before a full load)."""
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.seqs = np.zeros(0, dtype=np.int64)
        self.type_codes = {}
        self.types = np.zeros(0, dtype=np.int16)
        self.days = np.zeros(0, dtype=np.int32)
        self._codes, self._layout = None, None

    def load(self) -> Pairs:
        """Every embedded chunk's parts anew (the mirror's `Follower`, inside its snapshot),
        streamed into a matrix made once at its final size (read whole, joined, then copied,
        the blobs would take the RSS to over twice the matrix); the chunks held."""
        self._reset()
        dim = int(db.get_meta(self.conn, "dimension") or 0)
        size = int(self.conn.execute(chunks.embedded_bytes_sql()).fetchone()[0])
        if not dim or not size:
            rows = self._read_rows(None)
            self._append(rows)
            return pairs_of([(r[0], r[1]) for r in rows])
        matrix = np.empty((size // (4 * dim), dim), dtype=np.float32)
        listed: list[tuple[int, str, int, str, str | None]] = []
        filled = 0
        cursor = self.conn.execute(chunks.embedded_rows_sql())
        while batch := list(itertools.islice(cursor, LOAD_BATCH)):
            block = np.frombuffer(b"".join(r[2] for r in batch), dtype=np.float32)
            matrix[filled : filled + block.shape[0] // dim] = block.reshape(-1, dim)
            filled += block.shape[0] // dim
            listed += [(r[0], r[1], len(r[2]), r[3], r[4]) for r in batch]
        self.seqs, self.types, self.days = self._columns(listed, dim)
        self.matrix = matrix[:filled]
        self.conn.execute(database.shrink_memory_sql())  # no query reads those pages again
        pairs = pairs_of([(r[0], r[1]) for r in listed])
        return self._keep(pairs) or pairs

    def caught_up(self, pairs: Pairs, changed: bool) -> None:
        """The matrix taken up from its file changed since, or the file does not carry the
        writer's stamp of the state it holds (its index was rebuilt with the same chunks,
        or stamped after the file was written): written anew, mapped again. A one-shot
        search trusts the file only by that stamp (engine/search/retrieve/saved_vectors.py)."""
        if changed or self._file_stamp != stamp_fields(self.conn):
            self._keep(pairs)

    def _keep(self, pairs: Pairs) -> Pairs | None:
        """Write the matrix and its columns into their file and map them from there (the
        arrays held are let go); None when there is no file to keep or it cannot be written."""
        if self.saved_path is None or not self.matrix.size:
            return None
        ids, id_offsets = mapped.strings_array(pairs[1])
        arrays: mapped.Arrays = {
            "matrix": self.matrix,
            "seqs": self.seqs,
            "types": self.types,
            "days": self.days,
            "chunk_seqs": np.asarray(pairs[0], dtype=np.int64),
            "ids": ids,
            "id_offsets": id_offsets,
        }
        key = active_embedder(self.conn)
        fields = {**self._match(key), "type_codes": self.type_codes, **stamp_fields(self.conn)}
        if not mapped.write(self.saved_path, fields, arrays):
            return None
        codes = self._codes
        found = self.saved(key)
        self._codes = codes  # the same rows: the quantized copy stays valid
        return found

    def _match(self, key: str | None) -> dict[str, object]:
        """What the matrix's file must have been written under to be taken up."""
        return {"format": SAVED_FORMAT, "key": key}

    def saved(self, key: str | None) -> Pairs | None:
        """The matrix taken up from its file if it was written under `key` (the mirror's
        `Follower`); the chunks it holds."""
        found = read_matrix(self.saved_path, self._match(key))
        if found is None:
            return None
        arrays = found.arrays
        try:
            chunk_seqs = arrays["chunk_seqs"]
            ids = mapped.Strings(arrays["ids"], arrays["id_offsets"]).all()
        except (KeyError, UnicodeDecodeError):
            return None
        if len(ids) != chunk_seqs.shape[0]:
            return None
        self._reset()
        self.matrix, self.seqs, self.types, self.days = (
            found.matrix,
            found.seqs,
            found.types,
            found.days,
        )
        self.type_codes = found.type_codes
        self._file_stamp = {k: found.fields[k] for k in ("origin", "stamp") if k in found.fields}
        return chunk_seqs, ids

    def _columns(
        self, rows: list[tuple[int, str, int, str, str | None]], dim: int
    ) -> tuple[SeqArray, npt.NDArray[np.int16], npt.NDArray[np.int32]]:
        """Per part: seq, type code and day, from (seq, id, blob size, type, date) rows."""
        counts = np.fromiter((r[2] // (4 * dim) for r in rows), dtype=np.int64, count=len(rows))
        codes = (self.type_codes.setdefault(r[3], len(self.type_codes)) for r in rows)
        types = np.repeat(np.fromiter(codes, dtype=np.int16, count=len(rows)), counts)
        days = (db.day_number(r[4]) for r in rows)
        days_array = np.repeat(np.fromiter(days, dtype=np.int32, count=len(rows)), counts)
        seqs = np.repeat(np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)), counts)
        return seqs, types, days_array

    def _append(self, rows: list[tuple[int, str, bytes, str, str | None]]) -> None:
        if not rows:
            return
        dim = int(db.get_meta(self.conn, "dimension") or 0) or len(rows[0][2]) // 4
        matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(-1, dim)
        listed = [(r[0], r[1], len(r[2]), r[3], r[4]) for r in rows]
        seqs, types, days = self._columns(listed, dim)
        self._layout = None
        if self.seqs.shape[0] and self.matrix.shape[1] == dim:
            if self._codes is not None:
                self._codes = self._codes.appended(matrix)
            self.matrix = np.vstack([self.matrix, matrix])
            self.seqs = np.concatenate([self.seqs, seqs])
            self.types = np.concatenate([self.types, types])
            self.days = np.concatenate([self.days, days])
        else:
            self._codes = None
            self.matrix, self.seqs, self.types, self.days = matrix.copy(), seqs, types, days

    # -- search -----------------------------------------------------------------------------

    def people_seqs(self, people: tuple[Person, ...]) -> SeqArray:
        """The embedded chunks that name these people (sorted seqs), found through the FTS
        index (engine/search/query/filters.py, `people_match_expression`) and kept until the
        index changes: typing with a person chip set looks them up once, not per keystroke."""
        with self._lock:
            self._refresh()
            return self._people_seqs(people)

    def _people_seqs(self, people: tuple[Person, ...]) -> SeqArray:
        return self._people.get(people_key(people), lambda: named_seqs(self.conn, people))

    def _selection(self, filters: Filters | None) -> Selection | None:
        """The chunks that pass the filters (None when nothing filters), kept until the
        index changes: typing with a filter set builds its masks once, not per keystroke
        (a source filter's mask over 1.9M parts took 12.9 ms)."""
        if filters is None or filters.empty:
            return None

        def selected() -> Selection:
            return filter_selection(
                self.layout,
                self.seqs,
                self.types,
                self.days,
                self.type_codes,
                filters,
                lambda: self._people_seqs(filters.people),
            )

        return self._selections.get(filters, selected)

    def knn(
        self, query: FloatArray, k: int, filters: Filters | None = None, exact: bool = False
    ) -> list[tuple[int, float]]:
        """(seq, cosine) of the k chunks nearest by their best part, best first, filtered;
        `exact`: the float scan whatever `scan` says."""
        with self._lock:
            self._refresh()
            if not len(self) or k < 1 or self.matrix.shape[1] != len(query):
                return []
            chunks, scores = nearest_chunks(
                self.matrix,
                self.layout,
                np.asarray(query, dtype=np.float32),
                k,
                self._selection(filters),
                None if exact else self._scan_codes(),
                rescore_depth(self.rescore, k, self.matrix.shape[0]),
                self.compute,
            )
            seqs = self.seqs[self.starts[chunks]]
        return [(int(s), float(v)) for s, v in zip(seqs, scores, strict=True)]

    def _scan_codes(self) -> Codes | None:
        scan = scan_for(self.scan, self.matrix.shape[0])
        if scan == "exact":
            self._codes = None
        elif self._codes is None:
            self._codes = build_codes(scan, self.matrix)
        return self._codes
