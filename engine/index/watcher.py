"""The file watcher: watchdog observers on every root, debounced, feeding the one writer.

Events are hints. A path that a route claims, or a sibling its files' reader reads
(`users.json`: its day files are reindexed), is remembered with the time of its last event;
once it has been quiet for `watch.debounce_seconds` it goes to the writer in a batch, and the
writer re-checks mtime/size before reading it (200 appends make one or two reindexes, not 600).
Atomic saves (temp file, then a move onto the target) arrive as a `moved` event: its
`dest_path` is what counts. Renames index the new path and delete the old one; deleted or moved
folders delete every file under them. A reconcile scan (a normal reindex, which skips unchanged
files) runs at start, after resuming, after an observer restart and every
`watch.reconcile_seconds`. If inotify runs out of watches (errno 28) the watcher polls instead
and says so; an observer or emitter thread that dies is restarted.

Thread-based, no Qt: the desktop passes callbacks and marshals them to its own thread.
"""

from __future__ import annotations

import contextlib
import errno
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import apsw
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from engine.embedders import Embedder
from engine.index.archives import is_archive
from engine.index.routes import classify
from engine.index.siblings import SIBLING_NAMES
from engine.index.writer import BatchResult, Writer
from engine.settings import Settings
from engine.store import db

HINT_EVENTS = {"created", "modified", "moved", "deleted", "closed"}
WATCH_LIMIT_ERRNOS = {errno.ENOSPC, errno.EMFILE}  # inotify watches / instances exhausted
RESTART_BACKOFF_SECONDS = 2.0
NATIVE_RESTARTS_BEFORE_POLLING = 3
MAX_WAIT_DEBOUNCES = 10  # a path that never goes quiet is still indexed this often

IndexedCallback = Callable[[BatchResult], None]
ErrorCallback = Callable[[str, str], None]
NoticeCallback = Callable[[str], None]


def _ignore(*_args: Any) -> None:
    pass


class _Hints(FileSystemEventHandler):
    """Turns watchdog events into path hints for the watcher."""

    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in HINT_EVENTS:
            return
        if event.is_directory and event.event_type in ("modified", "closed"):
            return  # a folder's own mtime: its files send their own events
        self.watcher.hint(_text(event.src_path), event.is_directory)
        if event.event_type == "moved":
            self.watcher.hint(_text(event.dest_path), event.is_directory)


def _text(path: str | bytes) -> str:
    return path.decode() if isinstance(path, bytes) else path


class _Reporter:
    def __init__(self, on_error: ErrorCallback) -> None:
        self.on_error = on_error

    def on_progress(self, done: int, total: int, path: str) -> None:
        pass

    def on_embedding(self, done: int, total: int) -> None:
        pass


class Watcher:
    """Watch the roots and keep the index fresh; start/stop/pause/resume from any thread."""

    def __init__(
        self,
        settings: Settings,
        *,
        on_indexed: IndexedCallback | None = None,
        on_error: ErrorCallback | None = None,
        on_notice: NoticeCallback | None = None,
        writer: Writer | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self.settings = settings
        self.on_indexed = on_indexed or _ignore
        self.on_error = on_error or _ignore
        self.on_notice = on_notice or _ignore
        self._own_writer = writer is None
        self.writer = writer or Writer(
            settings, embedder=embedder, reporter=_Reporter(self._report_error)
        )
        self.polling = bool(settings.watch.polling)
        self._debounce = float(settings.watch.debounce_seconds)
        self._reconcile_every = float(settings.watch.reconcile_seconds)
        self._max_wait = MAX_WAIT_DEBOUNCES * self._debounce
        # The index's own files (db, -wal, -shm, .lock), as given and with symlinks resolved.
        self._db_prefixes = (str(settings.db_path.absolute()), str(settings.db_path.resolve()))
        self._pending: dict[str, tuple[float, float]] = {}  # path -> (first, last) event time
        self._lock = threading.Condition()
        self._paused = False
        self._stopping = threading.Event()
        self._observer: BaseObserver | None = None
        self._service: threading.Thread | None = None
        self._inflight: Future[BatchResult] | None = None
        self._reconciling: Future[BatchResult] | None = None
        self._next_reconcile = 0.0
        self._next_restart = 0.0
        self.restarts = 0

    # -- control ----------------------------------------------------------------------------

    def start(self) -> Future[BatchResult]:
        """Start observing; returns the catch-up scan, which runs on the writer thread."""
        self._observer = self._start_observer()
        catch_up = self._schedule_reconcile()
        self._service = threading.Thread(target=self._serve, name="memex-watcher", daemon=True)
        self._service.start()
        return catch_up

    def stop(self) -> None:
        """Stop observing; abandon queued work (the next start reconciles)."""
        self._stopping.set()
        with self._lock:
            self._lock.notify_all()
        if self._service is not None:
            self._service.join()
        self._stop_observer()
        if self._own_writer:
            self.writer.close()

    def pause(self) -> None:
        with self._lock:
            self._paused = True
            self._pending.clear()

    def resume(self) -> None:
        with self._lock:
            self._paused = False
        self._schedule_reconcile()

    @property
    def paused(self) -> bool:
        return self._paused

    def reconcile_now(self) -> Future[BatchResult]:
        """Scan every root now (what the tray's "Reindex now" does)."""
        return self._schedule_reconcile()

    def wait_idle(self, timeout: float) -> bool:
        """True once no change is pending and the writer has nothing to do (tests, benches)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                quiet = not self._pending
            if quiet and not self.writer.busy:
                return True
            time.sleep(0.02)
        return False

    def status(self) -> dict[str, Any]:
        with self._lock:
            pending = len(self._pending)
        return {
            "paused": self._paused,
            "polling": self.polling,
            "pending": pending,
            "busy": self.writer.busy,
            "observer_restarts": self.restarts,
        }

    # -- events -----------------------------------------------------------------------------

    def hint(self, path: str, is_directory: bool = False) -> None:
        """A path may have changed; index it once it has been quiet for the debounce period."""
        if self._paused or path.startswith(self._db_prefixes):
            return
        if (
            not is_directory
            and not Path(path).is_dir()
            and classify(Path(path), self.settings) is None
            and Path(path).name not in SIBLING_NAMES  # users.json: its day files depend on it
            and not is_archive(Path(path))  # an export's .zip: its members
        ):
            return
        now = time.monotonic()
        with self._lock:
            first, _ = self._pending.get(path, (now, now))
            self._pending[path] = (first, now)
            self._lock.notify_all()

    # -- the service thread: flush, reconcile, supervise -------------------------------------

    def _serve(self) -> None:
        tick = max(0.02, min(0.25, self._debounce / 4))
        while not self._stopping.is_set():
            with self._lock:
                self._lock.wait(timeout=tick)
            if self._stopping.is_set():
                return
            self._flush_due()
            if not self._paused and time.monotonic() >= self._next_reconcile:
                self._schedule_reconcile()
            self._supervise()

    def _flush_due(self) -> None:
        if self._inflight is not None and not (self._inflight.running() or self._inflight.done()):
            return  # a batch is still queued: keep gathering into the next one
        now = time.monotonic()
        with self._lock:
            # Quiet for the debounce period, or changing for too long (a log written nonstop).
            due = [
                p
                for p, (first, last) in self._pending.items()
                if now - last >= self._debounce or now - first >= self._max_wait
            ]
            for path in due:
                del self._pending[path]
        if due and not self._paused:
            self._inflight = self.writer.index_paths(due)
            self._inflight.add_done_callback(self._batch_done)

    def _schedule_reconcile(self) -> Future[BatchResult]:
        self._next_reconcile = time.monotonic() + self._reconcile_every
        queued = self._reconciling
        if queued is not None and not (queued.running() or queued.done()):
            return queued  # one scan waiting in the queue is enough
        future = self.writer.reconcile()
        future.add_done_callback(self._batch_done)
        self._reconciling = future
        return future

    def _batch_done(self, future: Future[BatchResult]) -> None:
        if future.cancelled():
            return
        exc = future.exception()
        if exc is not None:
            self._report_error("<writer>", failure_text(self.settings.db_path, exc))
            return
        self._safely(self.on_indexed, future.result())

    def _report_error(self, path: str, message: str) -> None:
        self._safely(self.on_error, path, message)

    @staticmethod
    def _safely(callback: Callable[..., None], *args: Any) -> None:
        # A front end's failing callback must never kill the writer or the watcher.
        with contextlib.suppress(Exception):
            callback(*args)

    # -- observers --------------------------------------------------------------------------

    def _start_observer(self) -> BaseObserver:
        try:
            return self._make_observer(self.polling)
        except OSError as exc:
            if self.polling or exc.errno not in WATCH_LIMIT_ERRNOS:
                raise
            self.polling = True
            self._safely(
                self.on_notice,
                "the inotify watch limit is reached "
                "(raise fs.inotify.max_user_watches); polling the roots instead",
            )
            return self._make_observer(True)

    def _make_observer(self, polling: bool) -> BaseObserver:
        observer: BaseObserver = PollingObserver(timeout=1.0) if polling else Observer()
        observer.daemon = True
        handler = _Hints(self)
        for root in self.settings.roots:
            if root.is_dir():
                observer.schedule(handler, str(root), recursive=True)
        try:
            observer.start()
        except BaseException:
            observer.stop()
            raise
        return observer

    def _stop_observer(self) -> None:
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            if observer.is_alive():
                observer.join(timeout=5)

    def _supervise(self) -> None:
        observer = self._observer
        if (
            observer is not None
            and observer.is_alive()
            and all(e.is_alive() for e in observer.emitters)
        ):
            return
        if time.monotonic() < self._next_restart:
            return
        self._next_restart = time.monotonic() + RESTART_BACKOFF_SECONDS
        if observer is not None:
            self.restarts += 1
            self._safely(self.on_notice, "a file observer stopped; restarting it and rescanning")
            self._stop_observer()
            if self.restarts >= NATIVE_RESTARTS_BEFORE_POLLING and not self.polling:
                # inotify can also run out of watches later, inside the emitter thread.
                self.polling = True
                self._safely(self.on_notice, "native file events keep failing; polling instead")
        try:
            self._observer = self._start_observer()
        except OSError as exc:
            self._report_error("<watcher>", f"cannot restart the file observer: {exc}")
            return
        self._schedule_reconcile()


def failure_text(db_path: Path, exc: BaseException) -> str:
    """What a failed batch of the writer says: the one sentence for a busy lock, a full
    disk or a damaged file (as `memex reindex` says it), else the exception itself."""
    known = db.as_index_error(db_path, exc) if isinstance(exc, apsw.Error) else None
    if known is not None:
        return str(known)
    return f"{type(exc).__name__}: {exc}"
