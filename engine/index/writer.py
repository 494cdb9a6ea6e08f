"""The one writer: a single thread that owns the write connection and runs index jobs in order.

Every change to the index made by a long-running front end (the watcher, the desktop app) goes
through `Writer`: index some paths, reconcile every root (both through
`engine.index.runs.run_index`, the path `memex reindex` takes too), maintenance. Each job holds
`writer_lock` so another process cannot write meanwhile, and each file is its own
transaction, so readers on their own connections never block and never see half a file.
Jobs return `concurrent.futures.Future`s; nothing here imports Qt.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

import apsw

from engine.embedders import Embedder, EmbedderPool, create_embedder
from engine.index import maintenance
from engine.index.embedding import pending_vectors
from engine.index.indexer import FileOutcome, Indexer, NullReporter, Reporter
from engine.index.reports import MaintenanceResult
from engine.index.runs import HeldErrors, open_writer, prepare_embedder, run_index, writer_lock
from engine.records import IndexStats
from engine.settings import Settings

T = TypeVar("T")
VECTOR_SLICE_SECONDS = 2.0  # the writer's vector work between two other jobs, at most
BACKGROUND_NICE = 10  # the writer thread's niceness (Linux: per thread)


def background_priority() -> None:
    """Lower the calling thread's CPU priority where the platform allows it per thread
    (Linux), so indexing in a long-lived app yields to what the user is doing."""
    if sys.platform.startswith("linux") and hasattr(os, "setpriority"):
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICE)


@dataclass(frozen=True)
class BatchResult:
    """One writer job's outcome: the kind of job, its files and its statistics."""

    kind: str  # "paths" | "reconcile" | "reindex-full"
    stats: IndexStats
    changes: tuple[FileOutcome, ...] = field(default=())  # files read or deleted


class Writer:
    """A single-thread executor that owns the write connection and the embedder."""

    def __init__(
        self,
        settings: Settings,
        *,
        embedder: Embedder | None = None,
        reporter: Reporter | None = None,
        embedders: EmbedderPool | None = None,
    ) -> None:
        """`embedders`: the engine's pool, so the writer and the readers share one model."""
        self.settings = settings
        self._make = create_embedder if embedders is None else embedders.get
        self.reporter = reporter or NullReporter()
        self._embedder = embedder
        self._embedder_tried = embedder is not None
        self._conn: apsw.Connection | None = None
        self._stopping = threading.Event()
        self._pending = 0
        self._pending_lock = threading.Lock()
        self._vectors_queued = False
        self._executor = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="memex-writer", initializer=background_priority
        )

    # -- public jobs ------------------------------------------------------------------------

    def submit(self, job: Callable[[], T]) -> Future[T]:
        """Run `job` on the writer thread after the jobs already queued."""
        with self._pending_lock:
            self._pending += 1
        future = self._executor.submit(job)
        future.add_done_callback(self._job_done)
        return future

    def index_paths(self, paths: Iterable[str]) -> Future[BatchResult]:
        """Index, reindex or delete these files (or folders), each in its own transaction."""
        batch = sorted(set(paths))
        return self.submit(lambda: self._run("paths", batch))

    def reconcile(self, *, full: bool = False) -> Future[BatchResult]:
        """A normal reindex of every root: unchanged files are skipped by mtime/size."""
        return self.submit(lambda: self._run("reindex-full" if full else "reconcile", full=full))

    def maintenance(self, *, vacuum: bool = True) -> Future[MaintenanceResult]:
        """Rebuild vectors and VACUUM, as the one writer."""
        return self.submit(lambda: self._maintenance(vacuum))

    @property
    def busy(self) -> bool:
        with self._pending_lock:
            return self._pending > 0

    def close(self) -> None:
        """Abandon the running job between two files, skip queued jobs, close the connection."""
        self._stopping.set()
        self._executor.submit(self._close_connection)
        self._executor.shutdown(wait=True, cancel_futures=True)

    # -- on the writer thread -------------------------------------------------------------------

    def _job_done(self, _future: Future[Any]) -> None:
        with self._pending_lock:
            self._pending -= 1

    def _close_connection(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _connection(self) -> apsw.Connection:
        if self._conn is None:
            self._conn = open_writer(self.settings)
        return self._conn

    def _run(
        self, kind: str, paths: Sequence[str] | None = None, full: bool = False
    ) -> BatchResult:
        """One `run_index` on the writer's connection, under the writer lock; a stop
        requested meanwhile ends it between two files."""
        started = time.perf_counter()
        with writer_lock(self.settings):
            conn = self._connection()
            held = HeldErrors(self.reporter)  # a failed load is an error of this run
            self._embedder, reason = prepare_embedder(
                conn,
                self.settings,
                held,
                self._embedder,
                load=not self._embedder_tried,
                make=self._make,
            )
            self._embedder_tried = True
            result = run_index(
                conn,
                self.settings,
                self._embedder,
                self.reporter,
                paths=paths,
                full=full,
                kind="watch" if paths is not None else kind,
                missing_reason=reason,
                should_stop=self._stopping.is_set,
                started=started,
                vector_seconds=VECTOR_SLICE_SECONDS,
                errors_before=held.errors,
            )
        self._queue_vectors(result.vectors_left)
        return BatchResult(kind, result.stats, result.changes)

    def _queue_vectors(self, left: int) -> None:
        """Embed the rest in slices, each queued behind the jobs waiting now: a watcher
        batch never waits for more than one slice of a long first embedding."""
        with self._pending_lock:
            if not left or self._embedder is None or self._vectors_queued:
                return
            if self._stopping.is_set():
                return
            self._vectors_queued = True
        self.submit(self._vector_slice)

    def _vector_slice(self) -> int:
        """One slice of the vector phase; the chunks still to embed after it."""
        with self._pending_lock:
            self._vectors_queued = False
        with writer_lock(self.settings):
            conn = self._connection()
            indexer = Indexer(self.settings, conn, self._embedder, self.reporter)
            indexer.embed_missing(
                should_stop=self._stopping.is_set, budget_seconds=VECTOR_SLICE_SECONDS
            )
            left = pending_vectors(conn)
        if indexer.embedder is None:  # it failed: the next job or reconcile tries again
            self._embedder = None
            self._embedder_tried = False
            return left
        self._queue_vectors(left)
        return left

    def _maintenance(self, vacuum: bool) -> MaintenanceResult:
        with writer_lock(self.settings):
            return maintenance.maintain_locked(self._connection(), self.settings, vacuum=vacuum)


__all__ = ["BatchResult", "Writer"]
