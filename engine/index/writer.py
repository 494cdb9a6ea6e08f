"""The one writer: a single thread that owns the write connection and runs index jobs in order.

Every change to the index made by a long-running front end (the watcher, the desktop app) goes
through `Writer`: index some paths, reconcile (a normal `reindex`, which skips unchanged
files), maintenance. Each job holds `writer_lock` so another process cannot write meanwhile,
and each file is its own transaction, so readers on their own connections never block and
never see half a file. Jobs return `concurrent.futures.Future`s; nothing here imports Qt.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import apsw

from engine.embedders import Embedder
from engine.index import maintenance, runlog
from engine.index.indexer import (
    Indexer,
    NullReporter,
    Reporter,
    load_embedder,
    open_writer,
    reindex,
    run_record,
    writer_lock,
)
from engine.index.routes import classify, discover
from engine.records import IndexStats
from engine.settings import Settings
from engine.store import vectors

T = TypeVar("T")


class WriterStopped(Exception):
    """Raised inside a job to abandon it between two files when the writer stops."""


@dataclass(frozen=True)
class FileChange:
    """What a watcher batch did to one file."""

    path: str
    action: str  # "indexed" | "deleted" | "error"
    new_chunks: int = 0
    deleted_chunks: int = 0
    unchanged_chunks: int = 0
    message: str = ""


@dataclass(frozen=True)
class BatchResult:
    """One writer job's outcome: the kind of job, its files and its statistics."""

    kind: str  # "paths" | "reconcile" | "reindex-full"
    stats: IndexStats
    changes: tuple[FileChange, ...] = field(default=())


class _StoppableReporter:
    """Passes progress on, and abandons the job between files once the writer stops."""

    def __init__(self, inner: Reporter, stopping: threading.Event) -> None:
        self.inner = inner
        self.stopping = stopping

    def on_progress(self, done: int, total: int, path: str) -> None:
        if self.stopping.is_set():
            raise WriterStopped
        self.inner.on_progress(done, total, path)

    def on_error(self, path: str, message: str) -> None:
        self.inner.on_error(path, message)


class Writer:
    """A single-thread executor that owns the write connection and the embedder."""

    def __init__(self, settings: Settings, *, embedder: Embedder | None = None,
                 reporter: Reporter | None = None) -> None:
        self.settings = settings
        self.reporter = reporter or NullReporter()
        self._embedder = embedder
        self._embedder_tried = embedder is not None
        self._conn: apsw.Connection | None = None
        self._stopping = threading.Event()
        self._pending = 0
        self._pending_lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memex-writer")

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
        return self.submit(lambda: self._index_paths(batch))

    def reconcile(self, *, full: bool = False) -> Future[BatchResult]:
        """A normal reindex of every root: unchanged files are skipped by mtime/size."""
        return self.submit(lambda: self._reconcile(full))

    def maintenance(self, *, vacuum: bool = True) -> Future[dict[str, Any]]:
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

    def _active_embedder(self, conn: apsw.Connection) -> Embedder | None:
        if not self._embedder_tried:
            self._embedder_tried = True
            self._embedder = load_embedder(self.settings, conn, self.reporter)
        elif self._embedder is not None:
            vectors.ensure_vec_table(conn, self._embedder)  # another process may have switched
        return self._embedder

    def _index_paths(self, paths: Sequence[str]) -> BatchResult:
        started = time.perf_counter()
        with writer_lock(self.settings):
            conn = self._connection()
            indexer = Indexer(self.settings, conn, self._active_embedder(conn), self.reporter)
            changes: list[FileChange] = []
            for raw in paths:
                if self._stopping.is_set():
                    break
                changes += self._apply_path(indexer, conn, Path(raw))
            if not self._stopping.is_set():
                indexer.embed_missing()
            stats = indexer.stats(time.perf_counter() - started)
        if changes or stats.errors:
            runlog.append(self.settings, run_record(indexer.run, stats, "watch"))
        return BatchResult("paths", stats, tuple(changes))

    def _apply_path(self, indexer: Indexer, conn: apsw.Connection, path: Path) -> list[FileChange]:
        if path.is_dir():
            return [c for f in discover(self.settings) if path in f.path.parents
                    for c in _index_one(indexer, f.path, self.settings)]
        if path.exists():
            return _index_one(indexer, path, self.settings)
        return [_delete_one(indexer, known) for known in _known_under(conn, path)]

    def _reconcile(self, full: bool) -> BatchResult:
        reporter = _StoppableReporter(self.reporter, self._stopping)
        kind = "reindex-full" if full else "reconcile"
        with writer_lock(self.settings):  # load the model once, not on every scan
            embedder = self._active_embedder(self._connection())
        try:
            stats = reindex(settings=self.settings, reporter=reporter, full=full,
                            embedder=embedder, kind=kind)
        except WriterStopped:
            stats = IndexStats()
        return BatchResult(kind, stats)

    def _maintenance(self, vacuum: bool) -> dict[str, Any]:
        with writer_lock(self.settings):
            return maintenance.maintain_locked(self._connection(), self.settings, vacuum=vacuum)


def _index_one(indexer: Indexer, path: Path, settings: Settings) -> list[FileChange]:
    found = classify(path, settings)
    if found is None or found.size < 0:
        return []
    run = indexer.run
    before = (run.files, run.chunks, run.deleted, run.unchanged, len(run.errors))
    indexer.index_file(found)
    if run.files == before[0]:
        return []  # unchanged by mtime/size: an event without a change
    if len(run.errors) > before[4]:
        return [FileChange(str(found.path), "error", message=run.errors[-1][1])]
    return [FileChange(str(found.path), "indexed", run.chunks - before[1],
                       run.deleted - before[2], run.unchanged - before[3])]


def _delete_one(indexer: Indexer, known: str) -> FileChange:
    before = indexer.run.deleted
    indexer.delete_file(known)
    return FileChange(known, "deleted", deleted_chunks=indexer.run.deleted - before)


def _known_under(conn: apsw.Connection, path: Path) -> list[str]:
    """Indexed files at `path`, or under it if it was a folder (renamed or deleted)."""
    target = str(path.resolve() if path.parent.exists() else path.absolute())
    prefix = target.rstrip(os.sep) + os.sep
    rows = conn.execute(
        "SELECT source_file FROM index_state WHERE source_file = ? "
        "OR substr(source_file, 1, ?) = ?", (target, len(prefix), prefix)).fetchall()
    return [r[0] for r in rows]


__all__ = ["BatchResult", "FileChange", "Writer", "WriterStopped"]
