"""The search pipeline: retrieve, fuse, decay, inject, diversify, then dress the results."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import apsw
import numpy as np

from engine.embedders import Embedder, EmbedderPool, Vectors, create_embedder
from engine.people import PeopleMatcher, load_people, profile_text
from engine.records import Person, SearchResult
from engine.search import fts, stages
from engine.search.coverage import VectorCoverage
from engine.search.filters import Filters, chunk_filter_sql, vec_filter_sql
from engine.search.query_embedder import QueryEmbedder
from engine.search.response import (
    MODES,
    NoIndexError,
    SearchError,
    SearchResponse,
)
from engine.search.snippets import make_snippet
from engine.search.vector_cache import VectorCache
from engine.settings import Settings
from engine.store import db
from engine.store.sql import chunks, vec

KNN_MAX = 4096


class Searcher:
    """A read connection, the query embedder and the people table, reused across queries."""

    def __init__(
        self,
        settings: Settings,
        embedder: Embedder | None = None,
        *,
        vector_cache: VectorCache | bool | None = None,
        embedders: EmbedderPool | None = None,
        people: Sequence[Person] | None = None,
    ) -> None:
        """`vector_cache`: serve the vector side from an in-memory matrix
        (engine/search/vector_cache.py): a `VectorCache` to share (an engine's readers do),
        True for one of its own, False for none, None to follow `search.vector_cache`. A
        one-shot process passes False: one vec0 scan is cheaper than loading every vector.
        `embedders` and `people`: what an engine already loaded, shared by its readers."""
        self.settings = settings
        self.config = settings.search
        path = settings.db_path
        if not path.exists():
            raise NoIndexError(f"no index at {path}; run 'memex reindex' or 'memex demo' first")
        self.conn = db.connect(path, create=False)
        if not db.has_schema(self.conn):
            self.conn.close()
            raise NoIndexError(f"{path} holds no Memex index; run 'memex reindex' first")
        make = create_embedder if embedders is None else embedders.get
        self._query_embedder = QueryEmbedder(settings, self.conn, embedder, make)
        self.matcher = PeopleMatcher(load_people(settings) if people is None else people)
        self._lock = threading.Lock()
        self._coverage = VectorCoverage(self.conn)
        self.vector_cache, self._owns_cache = _vector_cache(settings, vector_cache)

    def close(self) -> None:
        """Close the connection (after a search running on another thread finishes)."""
        with self._lock:
            if self._owns_cache and self.vector_cache is not None:
                self.vector_cache.close()
            self.conn.close()

    # -- retrievers -------------------------------------------------------------------------

    def bm25(
        self,
        terms: list[str],
        k: int,
        filters: Filters,
        prefix: bool = False,
        require_all: bool = False,
    ) -> list[int]:
        expression = fts.match_expression(terms, prefix_last=prefix, require_all=require_all)
        if expression is None:
            return []
        where, params = chunk_filter_sql(filters)
        try:
            rows = self.conn.execute(fts.bm25_sql(where), (expression, *params, k)).fetchall()
        except apsw.Error:
            return []
        return [r[0] for r in rows]

    def _query_vector(self, query: str, warnings: list[str]) -> Vectors | None:
        # The model of the ACTIVE vectors, even while another one is built aside.
        return self._query_embedder.vector(query, warnings)

    def vector(self, qvec: np.ndarray, k: int, filters: Filters) -> list[int]:
        table = db.active_vec_table(self.conn)
        if not table or not db.table_exists(self.conn, table):
            return []
        if self.vector_cache is not None:
            return self.vector_cache.knn(qvec, k, filters)
        blob = qvec.astype(np.float32).tobytes()
        if filters.people:
            # People are not vec0 metadata: score the filtered chunks exactly instead.
            where, params = chunk_filter_sql(filters)
            rows = self.conn.execute(chunks.exact_knn_sql(where), (*params, blob, k)).fetchall()
            return [r[0] for r in rows]
        where, params = vec_filter_sql(filters)
        rows = self.conn.execute(
            vec.knn_sql(table, where), (blob, min(k, KNN_MAX), *params)
        ).fetchall()
        return [r[0] for r in rows]

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
        cfg = self.config
        limit = limit or cfg.limit
        if limit < 1:
            raise SearchError("limit must be at least 1")
        filters = Filters(tuple(source_types or ()), _iso(since, "since"), _iso(until, "until"))
        filters = replace(filters, people=self._people(people or ()))
        warnings: list[str] = []
        query = query.replace("\x00", " ")[:2000]
        terms = fts.query_terms(query, cfg.stop_words)
        # A floor on the pool, so the head of a short list is the head of a long one.
        k = max(limit * cfg.overfetch, cfg.min_candidates)
        # One read transaction: every statement of this search sees the same snapshot,
        # so a commit by the writer mid-search cannot mix two states of the index.
        with self._lock, db.read_snapshot(self.conn):
            lists, mode = self._retrieve(query, terms, k, filters, mode, prefix, warnings)
            candidates = self._fuse(lists)
            rows = self._rows([c.key for c in candidates])
            candidates = _located(candidates, rows)
            candidates = self._rank(candidates, query, filters, now, limit)[:limit]
            results = self._dress(candidates, rows, terms, explain)
        took = (time.perf_counter() - started) * 1000
        return SearchResponse(query, mode, results, warnings, took)

    def _retrieve(
        self,
        query: str,
        terms: list[str],
        k: int,
        filters: Filters,
        mode: str,
        prefix: bool,
        warnings: list[str],
    ) -> tuple[dict[str, list[int]], str]:
        """Each retriever's ranked seqs, and the mode used (bm25 when the vector side
        cannot run: no model, a failing server, an empty query)."""
        lists: dict[str, list[int]] = {}
        if mode in ("hybrid", "bm25"):
            lists["bm25"] = self.bm25(terms, k, filters, prefix)
        if mode == "hybrid" and self.config.exact_weight > 0 and len(lists["bm25"]) > 0:
            # Chunks holding every query term are voted for once more, so vector noise
            # cannot push an exact match out of the head.
            lists["exact"] = self.bm25(terms, k, filters, prefix, require_all=True)
        if mode in ("hybrid", "vector"):
            qvec = self._query_vector(query, warnings) if query.strip() else None
            if qvec is not None:
                lists["vector"] = self.vector(qvec, k, filters)
                partial = self._coverage.warning()
                if partial:
                    warnings.append(partial)
            elif mode == "vector" or warnings:
                lists["bm25"] = self.bm25(terms, k, filters, prefix)
                lists.pop("exact", None)
                mode = "bm25"
        return lists, mode

    def _fuse(self, lists: dict[str, list[int]]) -> list[stages.Candidate]:
        cfg = self.config
        weights = {"bm25": cfg.bm25_weight, "vector": cfg.vector_weight, "exact": cfg.exact_weight}
        fused = stages.rrf_fuse(
            {n: [str(x) for x in v] for n, v in lists.items()}, cfg.rrf_k, weights
        )
        out = [
            stages.Candidate(
                key,
                score,
                ranks=ranks,
                explain={"rrf": round(score, 6), **{f"{n}_rank": r + 1 for n, r in ranks.items()}},
            )
            for key, (score, ranks) in fused.items()
        ]
        return sorted(out, key=lambda c: c.score, reverse=True)

    def _rank(
        self,
        candidates: list[stages.Candidate],
        query: str,
        filters: Filters,
        now: datetime | None,
        limit: int,
    ) -> list[stages.Candidate]:
        cfg, fixed_now = self.config, self.settings.now
        if cfg.recency:
            clock = now or (datetime.fromisoformat(fixed_now) if fixed_now else datetime.now())
            candidates = stages.apply_recency(
                candidates,
                clock,
                cfg.half_lives,
                cfg.default_half_life,
                cfg.decay_floor,
                cfg.recency_weight,
            )
        if cfg.entity_injection and not filters.source_types:
            person = self.matcher.find(query)
            profile = (
                None
                if person is None
                else stages.Candidate(f"profile:{person.slug}", 0.0, source_type="profile")
            )
            candidates = stages.inject_entity(candidates, profile, head=limit)
        if cfg.diversity:
            candidates = stages.mmr_diversify(
                candidates, cfg.mmr_top, cfg.mmr_lambda, cfg.max_per_type
            )
        return candidates

    def _rows(self, keys: list[str]) -> dict[int, dict[str, Any]]:
        seqs = [int(k) for k in keys if k.isdigit()]
        if not seqs:
            return {}
        cursor = self.conn.execute(chunks.rows_by_seq_sql(len(seqs)), seqs)
        names = (
            "seq",
            "id",
            "source_file",
            "source_type",
            "content",
            "content_date",
            "title",
            "location",
            "metadata",
        )
        return {row[0]: dict(zip(names, row, strict=True)) for row in cursor}

    def _highlights(self, terms: list[str], seqs: list[int]) -> dict[int, str]:
        expression = fts.match_expression(terms)
        if expression is None or not seqs:
            return {}
        try:
            return dict(self.conn.execute(fts.highlight_sql(len(seqs)), (expression, *seqs)))
        except apsw.Error:
            return {}

    def _dress(
        self,
        candidates: list[stages.Candidate],
        rows: dict[int, dict[str, Any]],
        terms: list[str],
        explain: bool,
    ) -> list[SearchResult]:
        seqs = [int(c.key) for c in candidates if c.key.isdigit()]
        marked = self._highlights(terms, seqs)
        results = []
        for c in candidates:
            if c.key.startswith("profile:"):
                results.append(self._profile_result(c, explain))
                continue
            row = rows[int(c.key)]
            snippet, matched = make_snippet(
                row["content"], marked.get(row["seq"]), self.config.snippet_chars
            )
            results.append(
                SearchResult(
                    id=row["id"],
                    content=row["content"],
                    source_file=row["source_file"],
                    source_type=row["source_type"],
                    score=c.score,
                    matched_terms=matched,
                    content_date=row["content_date"],
                    title=row["title"],
                    snippet=snippet,
                    location=row["location"],
                    profile=None,
                    explain=dict(c.explain) if explain else None,
                )
            )
        return results

    def _profile_result(self, c: stages.Candidate, explain: bool) -> SearchResult:
        slug = c.key.split(":", 1)[1]
        person = next(p for p in self.matcher.people if p.slug == slug)
        text = profile_text(person)
        return SearchResult(
            id=c.key,
            content=text,
            source_file=str(self.settings.people_file),
            source_type="profile",
            score=c.score,
            title=person.name,
            snippet=text[: self.config.snippet_chars],
            profile=person.as_dict(),
            explain=dict(c.explain) if explain else None,
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


def _iso(value: str | None, what: str) -> str | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.strip()).date().isoformat()
    except ValueError:
        raise SearchError(f"--{what} must be a date like 2026-05-31, got '{value}'") from None


def _located(
    candidates: list[stages.Candidate], rows: dict[int, dict[str, Any]]
) -> list[stages.Candidate]:
    """The candidates whose rows this snapshot holds, with their type, file and date (a
    vector hit from a cache a commit ahead may be missing here: it is dropped)."""
    return [
        replace(
            c,
            source_type=rows[int(c.key)]["source_type"],
            source_file=rows[int(c.key)]["source_file"],
            content_date=rows[int(c.key)]["content_date"],
        )
        for c in candidates
        if int(c.key) in rows
    ]


def _vector_cache(
    settings: Settings, wanted: VectorCache | bool | None
) -> tuple[VectorCache | None, bool]:
    """The cache a Searcher uses, and whether it is the Searcher's own (to close)."""
    if isinstance(wanted, VectorCache):
        return wanted, False
    if wanted if wanted is not None else settings.search.vector_cache:
        return VectorCache(settings.db_path), True
    return None, False
