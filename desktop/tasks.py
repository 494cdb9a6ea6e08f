"""All of the desktop's threading, in one place (Anki's task manager pattern).

- Database writes go through the engine's one `Writer` (a single thread): reindex, watcher
  batches, maintenance. Jobs never overlap, and each file is its own transaction.
- Reads run on a small pool; each pool thread uses its own `Searcher` (its own read
  connection) from the engine's one `Engine`, which also owns the writer, the vector cache
  and the model; a new `Engine` replaces it when the settings change.
- Results come back to the GUI thread one way only: the `_deliver` signal carries a callable
  that Qt runs on the thread that owns this object (queued across threads).
- Searches and previews are "latest only": each request gets a sequence number and an answer
  is dropped when a newer request of its channel was made meanwhile.

Widgets never create threads; they call the typed one-liners below with an `on_done`.
"""

from __future__ import annotations

import contextlib
import time
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import apsw
from PySide6.QtCore import QObject, Signal

from desktop.card_counts import card_counts, keyword_counts
from desktop.progress import EmbeddingRate, WorkState
from desktop.requests import SearchAnswer, SearchRequest
from desktop.survey import Survey, survey_folder
from engine.core import Engine, EngineClosed
from engine.index.reports import IndexStatus, MaintenanceResult
from engine.index.status import collect_status
from engine.index.watcher import Watcher
from engine.index.writer import BatchResult, Writer
from engine.records import IndexStats, Person, SearchResult
from engine.search import Searcher
from engine.search.present.neighbours import Neighbour, neighbours
from engine.settings import Settings
from engine.sources import PROFILE_TYPE

T = TypeVar("T")
READERS = 2
PROGRESS_INTERVAL = 0.05  # seconds between two progress updates sent to the GUI


class _GuiReporter:
    """The engine's Reporter, forwarding throttled progress to the GUI thread."""

    def __init__(self, tasks: Tasks) -> None:
        self._tasks = tasks
        self._last = 0.0

    def on_progress(self, done: int, total: int, path: str) -> None:
        now = time.monotonic()
        if done < total and now - self._last < PROGRESS_INTERVAL:
            return
        self._last = now
        self._tasks.post(lambda: self._tasks._set_progress(done, total))

    def on_embedding(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self._last < PROGRESS_INTERVAL:
            return
        self._last = now
        self._tasks.post(lambda: self._tasks._set_embedding(done, total))

    def on_error(self, path: str, message: str) -> None:
        self._tasks.post(lambda: self._tasks.file_error.emit(path, message))


def _print_failure(future: Future[Any]) -> None:
    error = future.exception()
    if error is not None:
        traceback.print_exception(error)


class Tasks(QObject):
    """The task manager: a writer, a reader pool, and the way back to the GUI thread."""

    _deliver = Signal(object)
    work_changed = Signal(object)  # WorkState
    file_error = Signal(str, str)  # path, message
    index_changed = Signal()  # a writer job changed the index
    watched = Signal(object)  # BatchResult of a watcher batch or scan
    notice = Signal(str)  # something the user should know (the watcher polls, …)

    def __init__(self, settings: Settings, readers: int = READERS) -> None:
        super().__init__()
        self.settings = settings
        self._deliver.connect(self._run)
        self._pool = ThreadPoolExecutor(readers, thread_name_prefix="memex-read")
        self._readers = readers
        # Starting and stopping the watcher can take a moment (observers, joins): in order,
        # off the GUI thread.
        self._control = ThreadPoolExecutor(1, thread_name_prefix="memex-watch-control")
        self._latest: dict[str, int] = {}
        self._jobs: list[str] = []
        self._progress = (0, 0)
        self._embedding = WorkState()
        self._embedding_rate: EmbeddingRate | None = None
        self._closed = False
        self.engine = Engine(settings, reporter=_GuiReporter(self))
        self.watcher: Watcher | None = None
        # Tests replace this to slow a search down or count calls.
        self.search_fn: Callable[[SearchRequest], SearchAnswer] = self.run_search

    # -- the way back ---------------------------------------------------------------------------

    def post(self, fn: Callable[[], Any]) -> None:
        """Run `fn` on the GUI thread (safe to call from any thread)."""
        if not self._closed:
            self._deliver.emit(fn)

    def _run(self, fn: Callable[[], Any]) -> None:
        fn()

    # -- reads (pool) ----------------------------------------------------------------------------

    @property
    def writer(self) -> Writer:
        """The engine's one writer."""
        return self.engine.writer

    def searcher(self) -> Searcher:
        """This pool thread's Searcher, from the current engine."""
        return self.engine.searcher()

    def _reading(self, fn: Callable[[Searcher], T]) -> T:
        """`fn` on this thread's Searcher; once more on a fresh one if the settings changed
        meanwhile and the old engine's connections were closed under it."""
        try:
            return fn(self.searcher())
        except (apsw.ConnectionClosedError, EngineClosed):
            return fn(self.searcher())

    def read(
        self,
        fn: Callable[[], T],
        on_done: Callable[[T], Any],
        on_error: Callable[[BaseException], Any] | None = None,
        channel: str | None = None,
    ) -> int:
        """Run `fn` on the pool; `on_done(result)` on the GUI thread unless superseded.

        After `shutdown` a read is dropped: a signal queued before the shutdown (a watcher
        batch asking for a status refresh) may still be delivered, and nobody waits for it.
        """
        seq = self._latest.get(channel or "", 0) + 1
        if channel:
            self._latest[channel] = seq
        if self._closed:
            return seq
        future = self._pool.submit(fn)
        future.add_done_callback(
            lambda f: self.post(lambda: self._finish(f, on_done, on_error, channel, seq))
        )
        return seq

    def _finish(
        self,
        future: Future[T],
        on_done: Callable[[T], Any],
        on_error: Callable[[BaseException], Any] | None,
        channel: str | None,
        seq: int,
    ) -> None:
        if channel and self._latest.get(channel) != seq:
            return  # a newer request of this channel was made: drop the stale answer
        error = future.exception()
        if error is None:
            on_done(future.result())
        elif on_error is not None:
            on_error(error)
        else:
            traceback.print_exception(error)

    def search(self, request: SearchRequest, on_done: Callable[[SearchAnswer], Any]) -> int:
        """Search and count chips off the GUI thread; only the newest answer is delivered."""
        fn = self.search_fn
        return self.read(
            lambda: fn(request),
            on_done,
            lambda e: on_done(SearchAnswer.failed(request, e)),
            "search",
        )

    def run_search(self, request: SearchRequest) -> SearchAnswer:
        """The default search function, run on a pool thread."""
        return self._reading(lambda searcher: self._search_on(searcher, request))

    def _search_on(self, searcher: Searcher, request: SearchRequest) -> SearchAnswer:
        response = searcher.search(
            request.query,
            request.limit,
            request.source_types or None,
            since=request.since,
            until=request.until,
            people=request.people or None,
            prefix=request.prefix,
        )
        stop_words = self.settings.search.stop_words
        counts = keyword_counts(searcher, request, stop_words)
        person = next(
            (r.profile for r in response.results if r.source_type == PROFILE_TYPE and r.profile),
            None,
        )
        if person is None:  # the engine leaves it out under a type filter; the card stays
            found = searcher.matcher.find(request.query)
            person = found.as_dict() if found else None
        if person is None:
            return SearchAnswer(request, response, counts)
        on_card = card_counts(searcher, request, str(person["name"]), stop_words)
        return SearchAnswer(request, response, counts, person=person, card_counts=on_card)

    def record_open(self, result: SearchResult) -> None:
        """The user opened this hit: noted on the writer thread, for frecency (a failure
        only costs the lift, so it is printed, not shown)."""
        if self._closed:
            return
        future = self.engine.record_open(result.id, result.source_file)
        future.add_done_callback(_print_failure)

    def warm_up(self) -> None:
        """Open each reader's connection and load its query model before the first keystroke."""

        def warm() -> None:
            # No index yet, no model: the first real search will say so.
            with contextlib.suppress(Exception):
                self.searcher().search("memex", 1)

        if self._closed:
            return
        for _ in range(self._readers):
            self._pool.submit(warm)

    def neighbours(self, chunk_id: str, on_done: Callable[[list[Neighbour]], Any]) -> int:
        """The hit and the chunks around it in its file (latest only)."""
        return self.read(
            lambda: self._reading(lambda s: neighbours(s.conn, chunk_id)),
            on_done,
            lambda e: on_done([]),
            "neighbours",
        )

    def discover(
        self,
        folder: Path,
        on_done: Callable[[Survey], Any],
        on_error: Callable[[BaseException], Any] | None = None,
    ) -> int:
        """What `folder` holds, per export (the welcome's list); latest only."""
        settings = self.settings
        return self.read(lambda: survey_folder(settings, folder), on_done, on_error, "discover")

    def people(self, on_done: Callable[[list[Person]], Any]) -> int:
        return self.read(lambda: self.engine.people(), on_done, lambda e: on_done([]))

    def status(
        self,
        on_done: Callable[[IndexStatus], Any],
        on_error: Callable[[BaseException], Any] | None = None,
    ) -> int:
        """`memex status` (counts, sizes, last run, bloat), read off the GUI thread."""
        settings = self.settings

        return self.read(lambda: collect_status(settings), on_done, on_error)

    # -- writes (the engine's one writer) --------------------------------------------------------

    def reindex(
        self,
        on_done: Callable[[IndexStats], Any],
        *,
        full: bool = False,
        on_error: Callable[[BaseException], Any] | None = None,
    ) -> None:
        label = "Reindexing everything" if full else "Reindexing"
        self._write(label, self.writer.reconcile(full=full), lambda r: on_done(r.stats), on_error)

    def index_paths(self, paths: Iterable[str], on_done: Callable[[BatchResult], Any]) -> None:
        """A watcher batch: index, reindex or delete these files."""
        self._write("Updating", self.writer.index_paths(paths), on_done, None)

    def maintenance(
        self,
        on_done: Callable[[MaintenanceResult], Any],
        on_error: Callable[[BaseException], Any] | None = None,
    ) -> None:
        self._write(
            "Rebuilding vector index", self.writer.maintenance(vacuum=True), on_done, on_error
        )

    def _write(
        self,
        label: str,
        future: Future[T],
        on_done: Callable[[T], Any],
        on_error: Callable[[BaseException], Any] | None,
    ) -> None:
        self._jobs.append(label)
        self._progress = (0, 0)
        self.work_changed.emit(self.work_state())
        future.add_done_callback(
            lambda f: self.post(lambda: self._write_done(label, f, on_done, on_error))
        )

    def _write_done(
        self,
        label: str,
        future: Future[T],
        on_done: Callable[[T], Any],
        on_error: Callable[[BaseException], Any] | None,
    ) -> None:
        self._jobs.remove(label)
        self._progress = (0, 0)
        self.engine.refresh()  # people and embedder may have changed: fresh searchers
        self.work_changed.emit(self.work_state())
        self.index_changed.emit()
        self._finish(future, on_done, on_error, None, 0)

    def _set_progress(self, done: int, total: int) -> None:
        self._progress = (done, total)
        self.work_changed.emit(self.work_state())

    def _set_embedding(self, done: int, total: int) -> None:
        rate = self._embedding_rate or EmbeddingRate()
        self._embedding = rate.add(done, total)
        queue_left = self._embedding.done < self._embedding.total
        self._embedding_rate = rate if queue_left else None  # the queue is empty: start over
        self.work_changed.emit(self.work_state())

    def work_state(self) -> WorkState:
        if self._jobs:
            return WorkState(self._jobs[0], *self._progress)
        if self._progress[1] and self._progress[0] < self._progress[1]:
            return WorkState("Updating", *self._progress)  # the watcher's own scan
        if self._embedding.total > self._embedding.done:
            return self._embedding  # vectors filling in behind: keyword search works
        return WorkState()

    # -- watching (the engine's watcher, feeding the same writer) --------------------------------

    def start_watching(self) -> None:
        """Watch the roots; changed files go to the one writer (a catch-up scan runs first)."""
        if self.watcher is not None or not self.settings.roots:
            return
        self.watcher = Watcher(
            self.settings,
            writer=self.writer,
            on_indexed=lambda batch: self.post(lambda: self._watched(batch)),
            on_error=lambda path, message: self.post(lambda: self.file_error.emit(path, message)),
            on_notice=lambda text: self.post(lambda: self.notice.emit(text)),
        )
        self._control.submit(self.watcher.start)

    def stop_watching(self) -> None:
        watcher, self.watcher = self.watcher, None
        if watcher is not None:
            self._control.submit(watcher.stop)

    def set_paused(self, paused: bool) -> None:
        if self.watcher is not None:
            (self.watcher.pause if paused else self.watcher.resume)()

    @property
    def watching(self) -> bool:
        return self.watcher is not None and not self.watcher.paused

    def _watched(self, batch: BatchResult) -> None:
        self._progress = (0, 0)
        self.engine.refresh()
        self.work_changed.emit(self.work_state())
        if batch.stats.files or batch.stats.deleted_chunks:
            self.index_changed.emit()
        self.watched.emit(batch)

    @property
    def busy(self) -> bool:
        return bool(self._jobs)

    # -- life cycle ------------------------------------------------------------------------------

    def update_settings(self, settings: Settings) -> None:
        """Use new settings: a new engine (searchers, writer) that keeps the loaded model
        and vector matrix; the old one finishes its running job and is closed off the GUI
        thread."""
        watching = self.watcher is not None
        self.stop_watching()
        self.settings = settings
        old, self.engine = self.engine, self.engine.successor(settings)
        self._pool.submit(old.close)  # waits for its writer's job and running searches
        if watching:
            self.start_watching()

    def shutdown(self) -> None:
        """Stop the writer between two files, finish reads, close every connection.
        A second call does nothing."""
        if self._closed:
            return
        self._closed = True
        self.stop_watching()
        self._control.shutdown(wait=True)
        self.engine.close_writer()
        self._pool.shutdown(wait=True, cancel_futures=True)
        self.engine.close()
