"""The vector phase of a run: every chunk stored without a vector gets one, newest first.

Indexing is keyword first: the file phase (`Indexer.index_file`) stores chunks with no vector,
so they are searchable by keyword at once (FTS5 writes run at thousands of chunks a second),
and this phase embeds them afterwards in large length-sorted batches (the model's best rate),
newest content first (recent messages are what people look for), one transaction per batch.
A kill or a stop between two batches loses nothing: the next run goes on where this one
stopped. While a new embedder's table is built aside (`engine.store.vectors`), the phase fills
that table instead and swaps it in when complete.

The phase knows nothing of the indexer: it works on a `VectorTarget` (the connection, the
embedder, the tables, the run's counts and where to tell progress and errors) and leaves what
changed on itself (`failed`, `tables`) for its caller to read.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import apsw

from engine.embedders import Embedder, EmbedderError, Vectors
from engine.index.counts import RunCounts
from engine.store import db, vectors
from engine.store.sql import chunks as chunks_sql

BATCH = 256  # chunks embedded and committed per step: bounds memory and the work a kill loses


def _never() -> bool:
    return False


@dataclass(frozen=True)
class VectorTables:
    """A run's vec0 tables: the active one, and a new embedder's being built aside (new
    vectors go only there until the swap)."""

    active: str | None
    building: str | None = None


@dataclass(frozen=True)
class VectorTarget:
    """What the vector phase works on, handed to it by the run it belongs to."""

    conn: apsw.Connection
    embedder: Embedder | None
    tables: VectorTables
    counts: RunCounts
    on_embedding: Callable[[int, int], None]  # (chunks done, chunks to do)
    on_error: Callable[[str, str], None]  # (path, message): an error of the run
    reason: Callable[[int], str]  # why the chunk of this seq is embedded: "new", "changed", …


class VectorPhase:
    """Embeds what lacks a vector in one target; stops between two batches."""

    def __init__(self, target: VectorTarget, *, should_stop: Callable[[], bool] = _never,
                 budget_seconds: float | None = None) -> None:  # fmt: skip
        self.target = target
        self.embedder = target.embedder
        self.tables = target.tables  # after run(): the active table, once a build is swapped in
        self.failed = False  # the embedder failed: the rest waits for another run
        self.should_stop = should_stop
        self.deadline = None if budget_seconds is None else time.monotonic() + budget_seconds
        self.total = pending_vectors(target.conn)
        self.done = 0

    def run(self) -> bool:
        """Embed until nothing is left (True), or the embedder fails, a stop is asked for,
        or the time budget is spent (False: call again later)."""
        if self.embedder is None or not (self.tables.building or self.tables.active):
            return self.total == 0
        if self.total:  # the file phase is over: keyword search works
            self.target.on_embedding(0, self.total)
        if self.tables.building:
            return self._fill_build(self.tables.building)
        while True:
            rows = self.target.conn.execute(chunks_sql.unembedded_batch_sql(), (BATCH,)).fetchall()
            if not rows:
                return True
            blobs = vectors.embed_chunks([r[1] for r in rows], self.embed)
            if blobs is None:
                return False
            self._store(rows, blobs)
            self._progress(len(rows))

    def embed(self, texts: Sequence[str]) -> Vectors | None:
        """The parts' vectors, or None when the phase must pause (stop, budget, failure)."""
        if self.embedder is None or self._paused():
            return None
        started = time.perf_counter()
        try:
            out = self.embedder.embed(texts)
        except EmbedderError as exc:
            self.target.on_error("<embedder>", f"embedding failed, stored without vectors: {exc}")
            self.embedder, self.failed = None, True
            return None
        self.target.counts.add_time("embed", started)
        return out

    def _built(self, chunks: int) -> None:
        self.target.counts.count("embedded.embedder_change", chunks)
        self._progress(chunks)

    def _progress(self, chunks: int) -> None:
        """`chunks` more chunks have all their parts' vectors."""
        self.target.counts.embedded += chunks
        self.done += chunks
        self.target.on_embedding(self.done, self.total)

    def _paused(self) -> bool:
        # The budget is checked after the first batch: every slice makes progress.
        over = self.deadline is not None and self.done > 0 and time.monotonic() >= self.deadline
        return over or self.should_stop()

    def _store(self, rows: list[tuple[int, str, str, str | None]], blobs: list[bytes]) -> None:
        conn, table, counts = self.target.conn, self.tables.active, self.target.counts
        assert table is not None
        with db.transaction(conn):
            for (seq, _, source_type, date), blob in zip(rows, blobs, strict=True):
                conn.execute(chunks_sql.update_embedding_sql(), (blob, seq))
                vectors.insert_vector(conn, table, seq, blob, source_type, date)
                counts.count("embedded." + self.target.reason(seq), 1)

    def _fill_build(self, building: str) -> bool:
        """Fill the new embedder's table built aside, then make it the active one."""
        conn = self.target.conn
        complete = vectors.fill_pending(conn, building, self.embed, on_batch=self._built)
        if complete and vectors.swap(conn):
            self.tables = VectorTables(db.active_vec_table(conn))
        return complete


def pending_vectors(conn: apsw.Connection) -> int:
    """Chunks still to embed: without a vector, or missing from a table being built aside."""
    building = vectors.build_progress(conn)
    if building is not None:
        return max(0, building.total - building.done)
    return int(conn.execute(chunks_sql.count_unembedded_sql()).fetchone()[0])
