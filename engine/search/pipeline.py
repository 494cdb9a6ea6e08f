"""The search pipeline: retrieve, fuse, decay, inject, diversify, then dress the results."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np

from engine.embedders import Embedder, EmbedderPool
from engine.people import PeopleMatcher, load_people
from engine.records import Person, SearchResult
from engine.search import (
    coordination,
    dates,
    dress,
    entity,
    floor,
    frecency,
    fts,
    ranking,
    related,
    sections,
    stages,
    suggest,
)
from engine.search.backends import Fts5Backend, Vec0Backend
from engine.search.compute import Compute
from engine.search.coverage import VectorCoverage
from engine.search.dates import DateRange
from engine.search.filters import Filters
from engine.search.inputs import SearchInputs, search_inputs
from engine.search.keyword_index import KeywordIndex, searcher_index
from engine.search.query_embedder import QueryEmbedder
from engine.search.response import (
    MODES,
    NoIndexError,
    SearchError,
    SearchResponse,
)
from engine.search.vector_cache import VectorCache, searcher_cache
from engine.settings import Settings
from engine.store import db

# The relevance floor on a search whose date came from the query (search.query_dates =
# filter): off, as for a date chip. The date is evidence the floor cannot weigh: "what did
# I do yesterday" holds no keyword and is near no chunk, yet asks for every hit of that day
# (docs/benchmarks.md, "Dates in queries").
FLOOR_ON_QUERY_DATES = False


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
        (engine/search/vector_cache.py): a `VectorCache` to share (an engine's readers do),
        True for one of its own, False for none, None to follow `search.vector_cache`. A
        one-shot process passes False: one vec0 scan is cheaper than loading every vector.
        `keyword_index`: the same for the keyword side (engine/search/keyword_index.py,
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
        self.vector_cache, self._owns_cache = searcher_cache(settings, vector_cache, self.compute)
        self.keyword_index, self._owns_index = searcher_index(settings, keyword_index)
        self.exact_vectors = False  # True: the warm `memex --search`'s (the one-shot's answer)

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

    def bm25(
        self,
        terms: list[str],
        k: int,
        filters: Filters,
        prefix: bool = False,
        require_all: bool = False,
    ) -> dict[int, int]:
        """seq -> the terms it holds (bit i: terms[i]) of the k best BM25 hits, best first."""
        return self.keywords(terms, k, filters, prefix, require_all).top

    def keywords(
        self,
        terms: list[str],
        k: int,
        filters: Filters,
        prefix: bool = False,
        require_all: bool = False,
    ) -> coordination.Keywords:
        """The keyword side of a query: from the in-memory index when this Searcher has one
        (the same ranking, engine/search/keyword_index.py), else from FTS5."""
        if terms and self.keyword_index is not None:
            hits = self.keyword_index.search(terms, k, filters, prefix, require_all)
            if hits is not None:
                return hits
        return Fts5Backend(self.conn).search(terms, k, filters, prefix, require_all)

    def vector(self, qvec: np.ndarray, k: int, filters: Filters) -> list[tuple[int, float]]:
        """(seq, cosine) of the k chunks whose best part is nearest the query, best first:
        from the in-memory matrix when this Searcher has one, else from vec0
        (engine/search/backends.py)."""
        if self.vector_cache is None:
            return Vec0Backend(self.conn).knn(qvec, k, filters)
        table = db.active_vec_table(self.conn)  # in this Searcher's snapshot
        if not table or not db.table_exists(self.conn, table):
            return []
        return self.vector_cache.knn(qvec, k, filters, self.exact_vectors)

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
        cfg, clock = self.config, self._clock(now)  # below: safe text, checked limits
        asked = search_inputs(query, limit or cfg.limit, source_types, since, until, people, clock)
        query, limit, source_types = asked.query, asked.limit, asked.source_types
        warnings: list[str] = []
        vectors = mode in ("hybrid", "vector") and bool(query.strip())
        # BLAS on one thread for the vector side's products (engine/search/compute.py);
        # one read snapshot, so a writer's commit cannot mix states.
        products: AbstractContextManager[object] = self.compute.blas if vectors else nullcontext()
        with self._lock, products, db.read_snapshot(self.conn):
            # Embedded on a thread (search/query_embedder.py) while dates and keywords run.
            embedding = self._query_embedder.start(query, warnings) if vectors else None
            dated, keywords = self._query_dates(query, asked, clock)
            filters, floored = self._date_filters(asked, dated)
            terms = fts.query_terms(keywords, cfg.stop_words)
            k = max(limit * cfg.overfetch, cfg.min_candidates)  # a short list's head = a long one's
            got = self._retrieve(embedding, terms, k, filters, mode, prefix, warnings)
            warnings += suggest.filter_warnings(self.conn, self.matcher, source_types, asked.people)
            candidates = ranking.fused(got.lists, got.shares, cfg)
            rows = dress.chunk_rows(self.conn, [c.key for c in candidates])
            candidates = dress.located(candidates, rows)
            candidates = self._ordered(
                candidates, query, filters, rows, dated, clock, limit, warnings
            )
            candidates = self._floored(candidates, terms, prefix, got, limit, floored)
            shown, rows = related.appended(self.conn, candidates[:limit], rows, cfg, filters)
            results = self._dress(shown, rows, terms, explain, got.qvec)
        took = (time.perf_counter() - started) * 1000
        searched = dates.searched(asked.since, asked.until, dated)
        return SearchResponse(query, got.mode, results, warnings, took, searched)

    def _ordered(
        self,
        candidates: list[stages.Candidate],
        query: str,
        filters: Filters,
        rows: dict[int, dict[str, Any]],
        dated: DateRange | None,
        clock: datetime,
        limit: int,
        warnings: list[str],
    ) -> list[stages.Candidate]:
        """The fused candidates through the ranking stages, in order: the query's days,
        frecency, note-level grouping, recency / entity injection / MMR, re-ranking, and
        entity-first (each a no-op when its setting is off)."""
        cfg = self.config
        candidates = self._boosted(candidates, dated)
        candidates = frecency.boosted(self.conn, candidates, rows, cfg, clock)
        candidates = sections.grouped(candidates, cfg)
        candidates = ranking.ranked(candidates, query, filters, clock, limit, cfg, self.matcher)
        candidates = self._reranked(candidates, query, rows, warnings)
        return entity.first(candidates, query, self.matcher, filters, rows, cfg)

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
        narrowed = replace(chips, since=dated.since.isoformat(), until=dated.until.isoformat())
        return narrowed, chips.empty and FLOOR_ON_QUERY_DATES

    def _boosted(
        self, candidates: list[stages.Candidate], dated: DateRange | None
    ) -> list[stages.Candidate]:
        """With `search.query_dates` = boost: the query's days lifted in the ranking."""
        if dated is None or self.config.query_dates != "boost":
            return candidates
        since, until = dated.since.isoformat(), dated.until.isoformat()
        return stages.boost_dates(candidates, since, until, self.config.query_date_boost)

    def _retrieve(
        self,
        embedding: Callable[[], np.ndarray | None] | None,
        terms: list[str],
        k: int,
        filters: Filters,
        mode: str,
        prefix: bool,
        warnings: list[str],
    ) -> Retrieved:
        """Each retriever's ranked seqs, and the mode used (bm25 when the vector side
        cannot run: no model, a failing server, an empty query; `embedding` None)."""
        lists: dict[str, list[int]] = {}
        qvec, cosines = None, {}
        keywords = self.keywords(terms, k, filters, prefix) if mode in ("hybrid", "bm25") else None
        if keywords is not None:
            lists["bm25"] = list(keywords.top)
        shares = (
            self._keyword_votes(lists, terms, keywords, filters, prefix, k)
            if keywords is not None and mode == "hybrid"
            else {}
        )
        if mode in ("hybrid", "vector"):
            qvec = embedding() if embedding is not None else None
            if qvec is not None:
                hits = self.vector(qvec, k, filters)
                cosines = dict(hits)
                lists["vector"] = [seq for seq, _ in hits]
                partial = self._coverage.warning()
                if partial:
                    warnings.append(partial)
            elif mode == "vector" or warnings:
                if keywords is None:
                    keywords = self.keywords(terms, k, filters, prefix)
                lists = {"bm25": list(keywords.top)}
                mode = "bm25"
        return Retrieved(lists, mode, qvec, cosines, shares, keywords)

    def _keyword_votes(
        self,
        lists: dict[str, list[int]],
        terms: list[str],
        keywords: coordination.Keywords,
        filters: Filters,
        prefix: bool,
        k: int,
    ) -> dict[int, float]:
        """The hybrid's extra keyword lists, added to `lists`: the chunks holding every term
        (voted for once more, so vector noise cannot push an exact match out of the head)
        and the keyword hits by the share of the query they hold (engine/search/
        coordination.py). Returns those shares, which the relevance floor reuses."""
        cfg, found = self.config, lists["bm25"]
        if cfg.exact_weight > 0 and found:
            lists["exact"] = list(self.bm25(terms, k, filters, prefix, require_all=True))
        if cfg.coverage_weight <= 0 or not found:
            return {}
        shares = coordination.keyword_shares(
            self.conn, terms, found, prefix, keywords.top, keywords.weights()
        )
        lists["coverage"] = coordination.by_share(found, shares)
        return shares

    def _floored(
        self,
        candidates: list[stages.Candidate],
        terms: list[str],
        prefix: bool,
        got: Retrieved,
        limit: int,
        floored: bool,
    ) -> list[stages.Candidate]:
        """The first `limit` candidates that pass the relevance floor (engine/search/floor.py),
        each noted with its evidence; a profile always passes. Applied (`floored`) only to
        an unfiltered search that ran the vector side: a source, date or person filter asks
        to browse what it selects."""
        cfg = self.config
        if got.qvec is None or not cfg.floor or not floored:
            return candidates
        head = candidates[: limit * 2]
        seqs = [int(c.key) for c in head if c.key.isdigit()]
        found = floor.evidence(
            self.conn, terms, seqs, got.qvec, got.cosines, prefix, got.shares, got.keywords
        )
        rule = floor.CosineRule(
            cfg.floor_cosine, cfg.floor_cosine_low, cfg.floor_cosine_margin, cfg.floor_cosine_spread
        )
        cut = floor.cosine_cut(got.cosines.values(), rule)
        return floor.passing(head, found, cfg.floor_keyword, cut)[:limit]

    def _reranked(
        self,
        candidates: list[stages.Candidate],
        query: str,
        rows: dict[int, dict[str, Any]],
        warnings: list[str],
    ) -> list[stages.Candidate]:
        """The ranked pool's head re-scored by a cross-encoder (engine/search/rerank/,
        `rerank.backend`). The stage is made at the first search and kept, so a Searcher
        still constructs quickly; nothing is loaded while the backend is off."""
        from engine.search.rerank import Reranker

        stage: Reranker | None = getattr(self, "_reranker", None)
        if stage is None:
            stage = self._reranker = Reranker(self.settings)
        return stage.apply(candidates, query, rows, warnings)

    def _dress(
        self,
        candidates: list[stages.Candidate],
        rows: dict[int, dict[str, Any]],
        terms: list[str],
        explain: bool,
        qvec: np.ndarray | None,
    ) -> list[SearchResult]:
        return dress.results(
            self.conn,
            candidates,
            rows,
            terms,
            qvec,
            replace(self._dressing, explain=explain),
            self.matcher.by_slug,
        )

    def _people(self, names: Sequence[str]) -> tuple[Person, ...]:
        found = []
        for name in names:
            person = self.matcher.by_name(name)
            if person is None:
                # An unknown name still filters, by the name itself.
                person = Person(name=name, slug=name.lower())
            found.append(person)
        return tuple(found)


@dataclass(frozen=True)
class Retrieved:
    """What the retrievers found: each one's ranked seqs, the mode that ran, the query's
    vector (None when the vector side did not run), the vector hits' cosines, the keyword
    hits' shares of the query (engine/search/coordination.py; empty when the coverage list
    did not run) and the keyword side itself (None when it did not run)."""

    lists: dict[str, list[int]]
    mode: str
    qvec: np.ndarray | None
    cosines: dict[int, float]
    shares: dict[int, float]
    keywords: coordination.Keywords | None
