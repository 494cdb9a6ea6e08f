"""The vector phase of a run: every chunk stored without a vector gets one, newest first.

Indexing is keyword first: the file phase (`Indexer.index_file`) stores chunks with no vector,
so they are searchable by keyword at once (FTS5 writes run at thousands of chunks a second),
and this phase embeds them afterwards in large length-sorted batches (the model's best rate),
newest content first (recent messages are what people look for), one transaction per batch.
A kill or a stop between two batches loses nothing: the next run goes on where this one
stopped. While a new embedder's table is built aside (`engine.store.vectors`), the phase fills
that table instead and swaps it in when complete.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import apsw

from engine.embedders import EmbedderError, Vectors
from engine.store import db, vectors
from engine.store.sql import chunks as chunks_sql

if TYPE_CHECKING:
    from engine.index.indexer import Indexer

BATCH = 256  # chunks embedded and committed per step: bounds memory and the work a kill loses


class VectorPhase:
    """Embeds what lacks a vector for one indexer's run; stops between two batches."""

    def __init__(self, indexer: Indexer, *, should_stop: Callable[[], bool],
                 budget_seconds: float | None = None) -> None:  # fmt: skip
        self.indexer = indexer
        self.should_stop = should_stop
        self.deadline = None if budget_seconds is None else time.monotonic() + budget_seconds
        self.total = pending_vectors(indexer.conn)
        self.done = 0

    def run(self) -> bool:
        """Embed until nothing is left (True), or the embedder fails, a stop is asked for,
        or the time budget is spent (False: call again later)."""
        ix = self.indexer
        if ix.embedder is None or not (ix.build_table or ix.vec_table):
            return self.total == 0
        if self.total:
            ix.reporter.on_embedding(0, self.total)  # the file phase is over: keyword search works
        if ix.build_table:
            return self._fill_build()
        while True:
            rows = ix.conn.execute(chunks_sql.unembedded_batch_sql(), (BATCH,)).fetchall()
            if not rows:
                return True
            blobs = vectors.embed_chunks([r[1] for r in rows], self.embed)
            if blobs is None:
                return False
            self._store(rows, blobs)
            self._progress(len(rows))

    def embed(self, texts: Sequence[str]) -> Vectors | None:
        """The parts' vectors, or None when the phase must pause (stop, budget, failure)."""
        ix = self.indexer
        if ix.embedder is None or self._paused():
            return None
        started = time.perf_counter()
        try:
            out = ix.embedder.embed(texts)
        except EmbedderError as exc:
            ix.report("<embedder>", f"embedding failed, stored without vectors: {exc}")
            ix.embedder = None
            return None
        ix.run.add_time("embed", started)
        return out

    def _built(self, chunks: int) -> None:
        self.indexer.run.count("embedded.embedder_change", chunks)
        self._progress(chunks)

    def _progress(self, chunks: int) -> None:
        """`chunks` more chunks have all their parts' vectors."""
        self.indexer.run.embedded += chunks
        self.done += chunks
        self.indexer.reporter.on_embedding(self.done, self.total)

    def _paused(self) -> bool:
        # The budget is checked after the first batch: every slice makes progress.
        over = self.deadline is not None and self.done > 0 and time.monotonic() >= self.deadline
        return over or self.should_stop()

    def _store(self, rows: list[tuple[int, str, str, str | None]], blobs: list[bytes]) -> None:
        ix = self.indexer
        assert ix.vec_table is not None
        with db.transaction(ix.conn):
            for (seq, _, source_type, date), blob in zip(rows, blobs, strict=True):
                ix.conn.execute(chunks_sql.update_embedding_sql(), (blob, seq))
                vectors.insert_vector(ix.conn, ix.vec_table, seq, blob, source_type, date)
                ix.run.count("embedded." + ix.stored_reason.get(seq, ix.missing_reason), 1)

    def _fill_build(self) -> bool:
        """Fill the new embedder's table built aside, then make it the active one."""
        ix = self.indexer
        assert ix.build_table is not None
        complete = vectors.fill_pending(
            ix.conn, ix.build_table, self.embed,
            on_batch=self._built,
        )  # fmt: skip
        if complete and vectors.swap(ix.conn):
            ix.vec_table, ix.build_table = db.active_vec_table(ix.conn), None
        return complete


def pending_vectors(conn: apsw.Connection) -> int:
    """Chunks still to embed: without a vector, or missing from a table being built aside."""
    building = vectors.build_progress(conn)
    if building is not None:
        return max(0, building.total - building.done)
    return int(conn.execute(chunks_sql.count_unembedded_sql()).fetchone()[0])
