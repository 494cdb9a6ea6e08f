"""The Searcher: a read connection, the query embedder and the people, reused across
queries; each search walks the stages of engine/search/order.py, then dresses the hits."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from engine.embedders import Embedder, EmbedderPool
from engine.people import PeopleMatcher, load_people
from engine.records import Person, SearchResult
from engine.search.context import Reranking, SearchContext, Stage
from engine.search.hits import ChunkRow, Hit
from engine.search.order import STAGES
from engine.search.outcome import NEAR_EMPTY, Coverage, FilterOutcome, Missed, SearchOutcome
from engine.search.present import dress, facets
from engine.search.present.response import (
    MODES,
    NoIndexError,
    SearchError,
    SearchResponse,
    StageTiming,
)
from engine.search.query import dates, forms, suggest
from engine.search.query.dates import DateRange
from engine.search.query.filters import Filters
from engine.search.query.inputs import SearchInputs, search_inputs
from engine.search.retrieve import keyword_share
from engine.search.retrieve.backends import Fts5Backend
from engine.search.retrieve.compute import Compute
from engine.search.retrieve.query_embedder import QueryEmbedder
from engine.search.retrieve.rows import chunk_rows
from engine.search.retrieve.saved_vectors import OneShotVectors
from engine.search.retrieve.vector_coverage import VectorCoverage
from engine.settings import Settings
from engine.sources import PROFILE_TYPE
from engine.store import db

if TYPE_CHECKING:  # imported when a Searcher makes one: a one-shot search loads neither
    from engine.search.retrieve.keyword_index import KeywordIndex
    from engine.search.retrieve.vector_cache import VectorCache

Copy = TypeVar("Copy")

# What the phases around the stages read of the context, declared as each stage's `reads`
# is and held to the code by tests/test_stage_declarations.py; the query phase before them
# (`Searcher._context`) writes the context whole.
DRESS_READS = ("terms", "retrieved", "explain")  # `Searcher._dress`: the hits as results
OUTCOME_READS = (  # `Searcher._outcome`: what happened, as fields
    "retrieved", "mode", "rerank_miss", "inputs", "filters", "dated", "unknown_filters", "prefix",
)  # fmt: skip


class Searcher:
    """A read connection, the query embedder and the people table, reused across queries."""

    def __init__(
        self,
        settings: Settings,
        embedder: Embedder | None = None,
        *,
        vector_cache: VectorCache | bool | None = None,
        keyword_index: KeywordIndex | bool | None = None,
        embedders: EmbedderPool | None = None,
        people: Sequence[Person] | None = None,
        compute: Compute | None = None,
    ) -> None:
        """`vector_cache`: serve the vector side from an in-memory matrix
        (engine/search/retrieve/vector_cache.py): a `VectorCache` to share (an engine's readers do),
        True for one of its own, False for none, None to follow `search.vector_cache`. A
        one-shot process passes False: it scans the matrix a warm process kept beside the
        index when that still holds the index's state (engine/search/retrieve/saved_vectors.py),
        else vec0, either cheaper than loading every vector.
        `keyword_index`: the same for the keyword side (engine/search/retrieve/keyword_index.py,
        `search.keyword_index`).
        `embedders` and `people`: what an engine already loaded, shared by its readers;
        `compute`: the engine's BLAS limit and scan thread (None: one of its own), held
        around each search, so every product in it runs on one BLAS thread."""
        self.settings = settings
        self.config = settings.search
        path = settings.db_path
        if not path.exists():
            raise NoIndexError(f"no index at {path}; run 'memex reindex' or 'memex demo' first")
        self.conn = db.connect(path, create=False)
        if not db.has_schema(self.conn):
            self.conn.close()
            raise NoIndexError(f"{path} holds no Memex index; run 'memex reindex' first")
        # Models it loads itself are its own, closed with it (their threads stop).
        models = EmbedderPool() if embedders is None else embedders
        self._own_models = models if embedders is None else None
        self._query_embedder = QueryEmbedder(settings, self.conn, embedder, models.get)
        self.matcher = PeopleMatcher(load_people(settings) if people is None else people)
        self._lock = threading.Lock()
        self._coverage = VectorCoverage(self.conn)
        self._dressing = dress.Dressing.of(settings, self.conn)
        self._owns_compute = compute is None
        self.compute = Compute() if compute is None else compute
        self.vector_cache, self._owns_cache = own_copy(
            vector_cache, self.config.vector_cache, lambda: new_vector_cache(settings, self.compute)
        )
        self.keyword_index, self._owns_index = own_copy(
            keyword_index, self.config.keyword_index, lambda: new_keyword_index(settings)
        )
        self.exact_vectors = False  # True: the warm `memex --search`'s (the one-shot's answer)
        self._reranker: Reranking | None = None
        self.stages: tuple[Stage, ...] = STAGES  # what each search walks, in order

    def close(self) -> None:
        """Close the connection (after a search running on another thread finishes)."""
        with self._lock:
            if self._owns_cache and self.vector_cache is not None:
                self.vector_cache.close()
            if self._owns_index and self.keyword_index is not None:
                self.keyword_index.close()
            if self._owns_compute:
                self.compute.close()
            if self._own_models is not None:
                self._own_models.close()
            self.conn.close()

    # -- retrievers -------------------------------------------------------------------------

    def keywords(
        self,
        terms: list[str],
        k: int,
        filters: Filters,
        prefix: bool = False,
        require_all: bool = False,
    ) -> keyword_share.Keywords:
        """The keyword side of a query: from the in-memory index when this Searcher has one
        (the same ranking, engine/search/retrieve/keyword_index.py), else from FTS5."""
        if terms and self.keyword_index is not None:
            hits = self.keyword_index.search(terms, k, filters, prefix, require_all)
            if hits is not None:
                return hits
        return Fts5Backend(self.conn).search(terms, k, filters, prefix, require_all)

    def vector(self, qvec: np.ndarray, k: int, filters: Filters) -> list[tuple[int, float]]:
        """(seq, cosine) of the k chunks whose best part is nearest the query, best first:
        from the in-memory matrix when this Searcher has one, else from the matrix a warm
        process kept beside the index when it still holds the index's state, else from
        vec0 (engine/search/retrieve/backends.py, saved_vectors.py)."""
        table = db.active_vec_table(self.conn)  # in this Searcher's snapshot
        if not table or not db.table_exists(self.conn, table):
            return []
        if self.vector_cache is not None:
            return self.vector_cache.knn(qvec, k, filters, self.exact_vectors)
        return OneShotVectors(self.conn, self.settings.db_path, self.compute).knn(qvec, k, filters)

    def coverage(self) -> tuple[int, int]:
        """(chunks with a vector, all chunks), in this Searcher's snapshot."""
        return self._coverage.counts()

    def rows(self, seqs: Sequence[int]) -> dict[int, ChunkRow]:
        """seq -> the row a result shows, in this Searcher's snapshot."""
        return chunk_rows(self.conn, seqs)

    # -- pipeline ---------------------------------------------------------------------------

    def search(
        self,
        query: str,
        limit: int | None = None,
        source_types: Sequence[str] | None = None,
        *,
        since: str | None = None,
        until: str | None = None,
        people: Sequence[str] | None = None,
        mode: str = "hybrid",
        explain: bool = False,
        prefix: bool = False,
        now: datetime | None = None,
    ) -> SearchResponse:
        started = time.perf_counter()
        if mode not in MODES:
            raise SearchError(f"unknown mode '{mode}' (use one of: {', '.join(MODES)})")
        clock = self._clock(now)  # below: safe text, checked limits
        asked = search_inputs(
            query, limit or self.config.limit, source_types, since, until, people, clock
        )
        vectors = mode in ("hybrid", "vector") and bool(asked.query.strip())
        # BLAS on one thread for the vector side's products (engine/search/retrieve/compute.py);
        # one read snapshot, so a writer's commit cannot mix states.
        products: AbstractContextManager[object] = self.compute.blas if vectors else nullcontext()
        with self._lock, products, db.read_snapshot(self.conn):
            began = time.perf_counter()
            ctx = self._context(asked, clock, mode, prefix, explain, vectors)
            query_ms = (time.perf_counter() - began) * 1000
            ctx.timings.append(StageTiming("query", query_ms, 0))  # the query phase
            hits = self._walk(ctx)
            began = time.perf_counter()
            results = self._dress(ctx, hits)
            dress_ms = (time.perf_counter() - began) * 1000
            ctx.timings.append(StageTiming("dress", dress_ms, len(results)))  # the last line
            outcome = self._outcome(ctx, results)
        took = (time.perf_counter() - started) * 1000
        searched = dates.searched(asked.since, asked.until, ctx.dated)
        return SearchResponse(
            asked.query, ctx.retrieved.mode, results, ctx.warnings, took, searched, ctx.timings,
            outcome,
        )  # fmt: skip

    def _context(
        self,
        asked: SearchInputs,
        clock: datetime,
        mode: str,
        prefix: bool,
        explain: bool,
        vectors: bool,
    ) -> SearchContext:
        """The search as its stages see it. The query is embedded on a thread
        (search/retrieve/query_embedder.py) while its dates and keywords are read."""
        misses: list[Missed] = []
        embedding = self._query_embedder.start(asked.query, misses) if vectors else None
        dated, keywords = self._query_dates(asked.query, asked, clock)
        filters, floored = self._date_filters(asked, dated)
        unknown = suggest.unknown_filters(self.conn, self.matcher, asked.source_types, asked.people)
        warnings = suggest.unknown_filter_warnings(self.conn, self.matcher, *unknown)
        return SearchContext(
            query=asked.query,
            inputs=asked,
            filters=filters,
            clock=clock,
            settings=self.settings,
            matcher=self.matcher,
            conn=self.conn,
            terms=forms.keyword_terms(self.conn, keywords, self.config.stop_words),
            written=forms.written_words(self.conn, keywords, self.config.stop_words),
            mode=mode,
            prefix=prefix,
            dated=dated,
            floored=floored,
            retrievers=self,
            reranker=self._reranking(),
            embedding=embedding,
            explain=explain,
            warnings=warnings,
            vector_misses=misses,
            unknown_filters=unknown,
        )

    def _walk(self, ctx: SearchContext) -> list[Hit]:
        """The hits after every stage of `self.stages`, each stage's time and output size
        noted in `ctx.timings`."""
        hits: list[Hit] = []
        for stage in self.stages:
            began = time.perf_counter()
            hits = stage(ctx, hits)
            ms = (time.perf_counter() - began) * 1000
            ctx.timings.append(StageTiming(stage.name, ms, len(hits)))
        return hits

    def _clock(self, now: datetime | None) -> datetime:
        """The search's "now": the caller's, else `settings.now` (tests, benchmarks), else
        the wall clock. Relative dates and recency both count from it."""
        fixed = self.settings.now
        return now or (datetime.fromisoformat(fixed) if fixed else datetime.now())

    def _query_dates(
        self, query: str, asked: SearchInputs, clock: datetime
    ) -> tuple[DateRange | None, str]:
        """The days the query names and the query without those words, for its keywords;
        (None, query) when it names none, when `search.query_dates` is off, or when the
        caller gave --since or --until (their range is the one searched)."""
        if self.config.query_dates == "off" or asked.since or asked.until:
            return None, query
        found = dates.find_in_query(query, clock)
        return (None, query) if found is None else found

    def _date_filters(self, asked: SearchInputs, dated: DateRange | None) -> tuple[Filters, bool]:
        """The filters searched (the caller's, narrowed to the query's days when
        `search.query_dates` is filter) and whether the relevance floor applies."""
        people = self._people(asked.people)
        chips = Filters(asked.source_types, asked.since, asked.until, people)
        if dated is None or self.config.query_dates != "filter":
            return chips, chips.empty
        # No floor on the query's own days, as for a date chip: the date is evidence the
        # floor cannot weigh ("what did I do yesterday" holds no keyword and is near no
        # chunk, yet asks for every hit of that day).
        narrowed = replace(chips, since=dated.since.isoformat(), until=dated.until.isoformat())
        return narrowed, False

    def _reranking(self) -> Reranking:
        """The re-ranking stage's holder (engine/search/rerank/), made at the first search
        and kept, so a Searcher still constructs quickly; nothing is loaded while the
        backend is off."""
        from engine.search.rerank import Reranker

        if self._reranker is None:
            self._reranker = Reranker(self.settings)
        return self._reranker

    def _dress(self, ctx: SearchContext, hits: list[Hit]) -> list[SearchResult]:
        """The hits as results (reading `DRESS_READS` of the context)."""
        return dress.results(
            self.conn,
            hits,
            ctx.terms,
            ctx.retrieved.qvec,
            replace(self._dressing, explain=ctx.explain),
            self.matcher.by_slug,
        )

    def _outcome(self, ctx: SearchContext, results: list[SearchResult]) -> SearchOutcome:
        """What happened, as fields (engine/search/outcome.py), from what the stages wrote
        (`OUTCOME_READS` of the context)."""
        got = ctx.retrieved
        coverage = None if got.coverage is None else Coverage(*got.coverage)
        reranked = ctx.rerank_miss is None
        filters = self._filter_outcome(ctx, results)
        return SearchOutcome(ctx.mode, got.miss, coverage, reranked, ctx.rerank_miss, filters)

    def _filter_outcome(self, ctx: SearchContext, results: list[SearchResult]) -> FilterOutcome:
        """The filters applied; under a filter with fewer than `NEAR_EMPTY` hits on the
        page, or with no keyword match (the page is what the vectors found nearest), the
        query's keyword matches without any filter (one GROUP BY over the
        match, engine/search/present/facets.py), so a front end can offer them."""
        asked, searched = ctx.inputs, ctx.filters
        from_query = ctx.dated is not None and self.config.query_dates == "filter"
        types, people = ctx.unknown_filters
        applied = FilterOutcome(
            asked.source_types, searched.since, searched.until, asked.people, from_query,
            types, people,
        )  # fmt: skip
        direct = sum(not r.related and r.source_type != PROFILE_TYPE for r in results)
        by_words = bool(ctx.retrieved.lists.get("bm25"))  # a keyword match under the filter
        if not applied.on or (direct >= NEAR_EMPTY and by_words):
            return applied
        counts = facets.type_counts(
            self.conn, asked.query, prefix=ctx.prefix, stop_words=self.config.stop_words
        )
        return replace(applied, without_filters=sum(counts.values()))

    def _people(self, names: Sequence[str]) -> tuple[Person, ...]:
        found = []
        for name in names:
            person = self.matcher.by_name(name)
            if person is None:
                # An unknown name still filters, by the name itself.
                person = Person(name=name, slug=name.lower())
            found.append(person)
        return tuple(found)


def own_copy(
    wanted: Copy | bool | None, default: bool, make: Callable[[], Copy]
) -> tuple[Copy | None, bool]:
    """The in-memory copy of the index a Searcher uses (`wanted`: one to share, True for one
    of its own, False for none, None for `default`), and whether it is its own (to close)."""
    chosen = default if wanted is None else wanted
    if isinstance(chosen, bool):
        return (make(), True) if chosen else (None, False)
    return chosen, False


def new_vector_cache(settings: Settings, compute: Compute) -> VectorCache:
    from engine.search.retrieve.vector_cache import VectorCache

    return VectorCache.of(settings, compute)


def new_keyword_index(settings: Settings) -> KeywordIndex:
    from engine.search.retrieve.keyword_index import KeywordIndex

    return KeywordIndex.of(settings)
