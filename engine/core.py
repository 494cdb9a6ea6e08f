"""The engine: one index and everything a process holds open to read and write it.

    with Engine(load_settings()) as engine:
        engine.reindex()
        for hit in engine.search("when did the standup move").results:
            print(hit.title)

An `Engine` owns, for one `Settings`: the embedders it has loaded (one model shared by its
readers and its writer), the in-memory vector matrix (one per engine, shared by its readers),
the people table, one `Searcher` (read connection) per thread that searches, the one
`Writer` (write connection, a single thread) and the `Compute` its searches run on (BLAS
held to one thread, the vector scan's helper thread). `close()` releases all of it: the
models' threads, the scan thread, every connection. Nothing else in the engine keeps
mutable state at module level; `engine.search()` / `engine.reindex()` go through one
default instance (`engine/__init__.py`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Unpack

from engine.embedders import Embedder, EmbedderPool
from engine.index.indexer import Reporter
from engine.index.runs import reindex
from engine.index.writer import Writer
from engine.people.cards import carded
from engine.records import IndexStats, Person
from engine.search import Searcher, SearchOptions, SearchResponse
from engine.search.retrieve.compute import Compute
from engine.search.retrieve.keyword_index import KeywordIndex
from engine.search.retrieve.vector_cache import VectorCache
from engine.settings import Settings
from engine.store import opens
from engine.store.directory import read_people as read_people


class EngineClosed(RuntimeError):
    """The engine was closed; make a new one."""


class Engine:
    """One index's readers, writer, vector cache, people and models; thread-safe."""

    def __init__(
        self,
        settings: Settings,
        *,
        embedder: Embedder | None = None,
        reporter: Reporter | None = None,
    ) -> None:
        """`embedder` fixes the model for every search and index run (tests, benchmarks);
        `reporter` hears the writer's progress and errors (a front end's progress bar)."""
        self.settings = settings
        self.reporter = reporter
        self.embedders = EmbedderPool()
        self._embedder = embedder
        self._lock = threading.Lock()
        self._local = threading.local()
        self._generation = 0
        self._searchers: list[Searcher] = []
        self._people: list[Person] | None = None
        self._directory: list[Person] = []
        self._vector_cache: VectorCache | None = None
        self._keyword_index: KeywordIndex | None = None
        self._compute: Compute | None = None
        self._writer: Writer | None = None
        self._closed = False

    # -- reading ----------------------------------------------------------------------------

    def searcher(self) -> Searcher:
        """The calling thread's Searcher (its own read connection), made on first use and
        again after `refresh`. Raises NoIndexError when there is no index yet."""
        self._check_open()
        local = self._local
        if getattr(local, "generation", None) == self._generation and local.searcher:
            searcher: Searcher = local.searcher
            return searcher
        old = getattr(local, "searcher", None)
        local.searcher = None
        if old is not None:
            self._forget(old)
        fresh = Searcher(
            self.settings,
            self._embedder,
            vector_cache=False,
            keyword_index=False,
            embedders=self.embedders,
            people=self.people(),
            compute=self.compute(),
        )
        # Attached once the Searcher found an index: each opens a connection of its own.
        fresh.vector_cache = self._cache()
        fresh.keyword_index = self._index()
        with self._lock:
            if self._closed:
                fresh.close()
                raise EngineClosed("this engine is closed")
            self._searchers.append(fresh)
        local.searcher, local.generation = fresh, self._generation
        return fresh

    def search(
        self,
        query: str,
        limit: int | None = None,
        source_types: Sequence[str] | None = None,
        **options: Unpack[SearchOptions],
    ) -> SearchResponse:
        """Search on the calling thread's Searcher; see `Searcher.search`."""
        return self.searcher().search(query, limit, source_types, **options)

    def people(self) -> list[Person]:
        """The people with a card (the presence threshold, engine/people/directory.py):
        what names are matched against, read once per `refresh`."""
        with self._lock:
            if self._people is not None:
                return list(self._people)
            generation = self._generation
        everyone = read_people(self.settings)  # outside the lock: it may rebuild in memory
        people = carded(everyone, self.settings)
        with self._lock:
            if self._generation == generation:  # no refresh meanwhile
                self._directory, self._people = everyone, people
            return list(people)

    def directory(self) -> list[Person]:
        """Everyone the people directory knows, below the card threshold too."""
        self.people()
        with self._lock:
            return list(self._directory)

    def refresh(self) -> None:
        """The index or the people file changed in ways a Searcher caches (the people, the
        model): every thread gets a fresh Searcher on its next search."""
        with self._lock:
            self._people = None
            self._generation += 1

    def compute(self) -> Compute:
        """What this engine's searches compute on (made on first use, stopped by `close`)."""
        with self._lock:
            self._check_open()
            if self._compute is None:
                self._compute = Compute()
            return self._compute

    def _cache(self) -> VectorCache | None:
        if not self.settings.search.vector_cache:
            return None
        compute = self.compute()
        with self._lock:
            self._check_open()
            if self._vector_cache is None:
                self._vector_cache = VectorCache.of(self.settings, compute)
            return self._vector_cache

    def _index(self) -> KeywordIndex | None:
        if not self.settings.search.keyword_index:
            return None
        with self._lock:
            self._check_open()
            if self._keyword_index is None:
                self._keyword_index = KeywordIndex.of(self.settings)
            return self._keyword_index

    # -- writing ----------------------------------------------------------------------------

    @property
    def writer(self) -> Writer:
        """The one writer thread of this engine (made on first use)."""
        with self._lock:
            self._check_open()
            if self._writer is None:
                self._writer = Writer(
                    self.settings,
                    embedder=self._embedder,
                    reporter=self.reporter,
                    embedders=self.embedders,
                )
            return self._writer

    def record_open(self, result_id: str, source_file: str) -> Future[None]:
        """Note, on the writer thread, that the user opened this result (frecency,
        engine/store/opens.py): the next searches lift it a little."""
        fixed = self.settings.now
        when = datetime.fromisoformat(fixed) if fixed else datetime.now()
        path = self.settings.db_path
        return self.writer.submit(lambda: opens.record_open(path, result_id, source_file, when))

    def reindex(
        self,
        paths: Iterable[str | Path] | None = None,
        *,
        full: bool = False,
        reporter: Reporter | None = None,
    ) -> IndexStats:
        """Index what changed, in the calling thread, with this engine's model; then
        `refresh`. (Long-lived front ends queue work on `writer` instead.)"""
        self._check_open()
        stats = reindex(
            paths,
            settings=self.settings,
            reporter=reporter or self.reporter,
            full=full,
            embedder=self._embedder,
            make=self.embedders.get,
        )
        self.refresh()
        return stats

    # -- life cycle -------------------------------------------------------------------------

    def successor(self, settings: Settings) -> Engine:
        """A new engine for changed settings that takes over what still fits: the loaded
        models (the pool is keyed by embedder settings) and, for the same index file, the
        vector matrix and the keyword postings (reloading 100k chunks takes seconds). Close
        this one afterwards."""
        new = Engine(settings, embedder=self._embedder, reporter=self.reporter)
        with self._lock:
            self._check_open()
            new.embedders, self.embedders = self.embedders, EmbedderPool()
            new._compute, self._compute = self._compute, None  # the cache below scans on it
            if settings.db_path == self.settings.db_path:
                new._vector_cache, self._vector_cache = self._vector_cache, None
                new._keyword_index, self._keyword_index = self._keyword_index, None
        return new

    def close_writer(self) -> None:
        """Stop the writer between two files and close its connection (reads go on)."""
        with self._lock:
            writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()

    def close(self) -> None:
        """Stop the writer between two files, close every connection, drop the models.
        Searches still running on other threads should be finished first. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            writer, self._writer = self._writer, None
            searchers, self._searchers = self._searchers, []
            caches = [self._vector_cache, self._keyword_index]
            self._vector_cache = self._keyword_index = None
            compute, self._compute = self._compute, None
        if writer is not None:
            writer.close()
        for searcher in searchers:
            searcher.close()
        for cache in caches:
            if cache is not None:
                cache.close()
        if compute is not None:
            compute.close()
        self.embedders.close()

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> Engine:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _forget(self, searcher: Searcher) -> None:
        with self._lock:
            if searcher in self._searchers:
                self._searchers.remove(searcher)
        searcher.close()

    def _check_open(self) -> None:
        if self._closed:
            raise EngineClosed("this engine is closed")
