"""One contract per side, run against each of its backends (engine/search/retrieve/backends.py).

Keyword: FTS5 over SQL and the in-memory postings (engine/search/retrieve/keyword_index.py) must
both return FTS5's own BM25 query row for row. Vector: vec0, the in-memory matrix
(engine/search/retrieve/vector_cache.py) and the one kept beside the index
(engine/search/retrieve/saved_vectors.py) must all return the chunks nearest by their best part,
as an exact scan of the stored part vectors finds them. Every backend must see a commit made
after it was opened.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import apsw
import numpy as np
import pytest

from engine.embedders import create_embedder
from engine.index.runs import reindex
from engine.search.query import fts
from engine.search.query.filters import Filters, chunk_filter_sql
from engine.search.retrieve import keyword_share, part_vectors
from engine.search.retrieve.backends import Fts5Backend, KeywordBackend, Vec0Backend, VectorBackend
from engine.search.retrieve.keyword_index import KeywordIndex
from engine.search.retrieve.saved_vectors import OneShotVectors, SavedVectors
from engine.search.retrieve.vector_cache import VectorCache
from engine.settings import Settings
from engine.store import db
from engine.store.sql import chunks as chunks_sql
from tests import test_keyword_index, test_vector_cache
from tests.test_keyword_index import FILTERS, QUERIES, fts5_hits

Opened = tuple[Any, apsw.Connection]
KEYWORD_BACKENDS: dict[str, Callable[[Settings, apsw.Connection], KeywordBackend]] = {
    "fts5": lambda settings, conn: Fts5Backend(conn),
    "memory": lambda settings, conn: KeywordIndex(settings.db_path),
}
VECTOR_BACKENDS: dict[str, Callable[[Settings, apsw.Connection], VectorBackend]] = {
    "vec0": lambda settings, conn: Vec0Backend(conn),
    "matrix": lambda settings, conn: VectorCache(settings.db_path, "exact"),
    "saved": lambda settings, conn: saved_matrix(settings, conn),
}
small = test_keyword_index.small  # ~50 chunks on the hashing embedder


def saved_matrix(settings: Settings, conn: apsw.Connection) -> OneShotVectors:
    """A one-shot's vector side after a warm process kept its matrix beside the index: the
    file while the index holds its state, vec0 after a commit (until a warm process
    writes the file anew)."""
    cache = VectorCache(settings.db_path, "exact")
    cache.refresh()
    cache.close()
    backend = OneShotVectors(conn, settings.db_path)
    assert isinstance(backend.backend(), SavedVectors)
    return backend


def opened(
    make: Callable[[Settings, apsw.Connection], Any], settings: Settings
) -> Iterator[Opened]:
    conn = db.connect(settings.db_path, create=False)
    backend = make(settings, conn)
    yield backend, conn
    if hasattr(backend, "close"):
        backend.close()
    conn.close()


@pytest.fixture(params=sorted(KEYWORD_BACKENDS))
def keywords(request: pytest.FixtureRequest, demo_index: Settings) -> Iterator[Opened]:
    yield from opened(KEYWORD_BACKENDS[request.param], demo_index)


@pytest.fixture(params=sorted(VECTOR_BACKENDS))
def vectors(request: pytest.FixtureRequest, demo_index: Settings) -> Iterator[Opened]:
    yield from opened(VECTOR_BACKENDS[request.param], demo_index)


def top_of(backend: KeywordBackend, terms: list[str], k: int, filters: Filters, **how: bool) -> Any:
    hits = backend.search(
        terms, k, filters, how.get("prefix", False), how.get("require_all", False)
    )
    assert hits is not None
    return hits


def assert_fts5_ranking(
    backend: KeywordBackend,
    conn: apsw.Connection,
    terms: list[str],
    k: int,
    filters: Filters,
    **how: bool,
) -> None:
    hits = top_of(backend, terms, k, filters, **how)
    every, prefix = how.get("require_all", False), how.get("prefix", False)
    expected = fts5_hits(conn, terms, k, filters, prefix, every)
    assert list(hits.top.items()) == [(seq, held) for seq, _, held in expected], terms


# -- keyword ----------------------------------------------------------------------------------


def test_keyword_hits_are_fts5s_bm25_ranking(keywords: Opened) -> None:
    backend, conn = keywords
    for query in QUERIES:
        terms = fts.query_terms(query)
        for filters in FILTERS:
            for k in (1, 10, 50):
                assert_fts5_ranking(backend, conn, terms, k, filters)
        assert_fts5_ranking(backend, conn, terms, 20, Filters(), prefix=True)
        assert_fts5_ranking(backend, conn, terms, 20, Filters(), require_all=True)
    # Prefixes while typing: the last word's every continuation.
    for typed in ("stand", "espr", "fer", "inv", "pri", "the bl", "zq"):
        assert_fts5_ranking(backend, conn, fts.query_terms(typed), 30, Filters(), prefix=True)


def test_keyword_hits_say_what_any_chunk_holds_and_weigh_terms_as_fts5(keywords: Opened) -> None:
    backend, conn = keywords
    seqs = [r[0] for r in conn.execute("SELECT seq FROM chunks ORDER BY seq")]
    held_any = False
    for query in QUERIES[:8]:
        terms = fts.query_terms(query)
        hits = top_of(backend, terms, 10, Filters())
        # Any chunk, hit or not: the same bitmask as FTS5's row-by-row lookup.
        held = hits.held(seqs)
        assert held == keyword_share.held_terms(conn, terms, seqs)
        assert hits.weights() == pytest.approx(keyword_share.term_weights(conn, terms))
        held_any = held_any or any(held.values())
    assert held_any


def passing(conn: apsw.Connection, filters: Filters, embedded: bool = False) -> set[int]:
    where, params = chunk_filter_sql(filters, people_index=True)
    sql = (
        chunks_sql.embedded_seqs_where_sql(where) if embedded else chunks_sql.seqs_where_sql(where)
    )
    return {r[0] for r in conn.execute(sql, params)}


def test_keyword_hits_pass_their_filters_and_hold_every_term_when_asked(keywords: Opened) -> None:
    backend, conn = keywords
    for filters in FILTERS:
        allowed = passing(conn, filters)
        for query in QUERIES[:6]:
            terms = fts.query_terms(query)
            hits = top_of(backend, terms, 50, filters)
            assert set(hits.top) <= allowed and len(hits.top) <= 50
            every = top_of(backend, terms, 50, filters, require_all=True)
            assert all(h == (1 << len(terms)) - 1 for h in every.top.values()), query
            assert set(every.top) <= set(hits.top) | allowed


@pytest.mark.parametrize("name", sorted(KEYWORD_BACKENDS))
def test_keyword_backend_sees_each_commit(name: str, small: Settings) -> None:
    for backend, _ in opened(KEYWORD_BACKENDS[name], small):
        terms = fts.query_terms("tomatoes frost")
        assert not top_of(backend, terms, 5, Filters()).top
        note = small.roots[0] / "notes" / "tomatoes.md"
        note.write_text("# Tomatoes\nPlant after the last frost.\n")
        reindex(settings=small)
        found = top_of(backend, terms, 5, Filters()).top
        assert len(found) == 1 and next(iter(found.values())) == 0b11
        note.unlink()
        reindex(settings=small)
        assert not top_of(backend, terms, 5, Filters()).top


# -- vector -----------------------------------------------------------------------------------


def exact_neighbours(
    conn: apsw.Connection, qvec: np.ndarray, k: int, filters: Filters
) -> list[tuple[int, float]]:
    """The reference: every passing chunk's best-part cosine, from its stored vectors."""
    where, params = chunk_filter_sql(filters, people_index=True)
    rows = conn.execute(chunks_sql.embedded_where_sql(where), params)
    return part_vectors.best_chunks(rows, qvec, k)


def test_vector_hits_are_the_exact_best_part_neighbours(
    vectors: Opened, demo_index: Settings
) -> None:
    backend, conn = vectors
    embedder = create_embedder(demo_index)
    for query in test_vector_cache.QUERIES:
        qvec = embedder.embed_query(query)
        for filters in FILTERS:
            expected = exact_neighbours(conn, qvec, 20, filters)
            got = backend.knn(qvec, 20, filters)
            assert len(got) == len(expected), (query, filters)
            # vec0 fetches a few parts per chunk wanted: at most one neighbour may differ.
            seqs, wanted = [s for s, _ in got], dict(expected)
            assert len(set(seqs) & set(wanted)) >= len(expected) - 1
            assert set(seqs[:3]) == {s for s, _ in expected[:3]}
            assert [c for _, c in got] == sorted((c for _, c in got), reverse=True)
            for seq, cosine in got:
                assert seq not in wanted or cosine == pytest.approx(wanted[seq], abs=1e-5)
            assert set(seqs) <= passing(conn, filters, embedded=True)


@pytest.mark.parametrize("name", sorted(VECTOR_BACKENDS))
def test_vector_backend_sees_each_commit(name: str, small: Settings) -> None:
    for backend, conn in opened(VECTOR_BACKENDS[name], small):
        note = small.roots[0] / "notes" / "tomatoes.md"
        note.write_text("# Tomatoes\nPlant after the last frost.\n")
        reindex(settings=small)
        seq, blob = conn.execute(
            "SELECT seq, embedding FROM chunks WHERE source_file LIKE '%tomatoes.md'"
        ).fetchone()
        qvec = np.frombuffer(blob, dtype=np.float32)[:64].copy()
        assert backend.knn(qvec, 1)[0][0] == seq
        assert backend.knn(qvec, 1)[0][1] == pytest.approx(1.0, abs=1e-5)
        note.unlink()
        reindex(settings=small)
        assert seq not in [s for s, _ in backend.knn(qvec, 5)]


@pytest.mark.parametrize("name", sorted(VECTOR_BACKENDS))
def test_vector_backend_finds_nothing_when_nothing_is_asked_or_passes(
    name: str, small: Settings
) -> None:
    for backend, _ in opened(VECTOR_BACKENDS[name], small):
        qvec = np.ones(64, dtype=np.float32) / 8.0
        assert len(backend.knn(qvec, 3)) == 3
        assert backend.knn(qvec, 0) == []
        assert backend.knn(qvec, 5, Filters(("no-such-type",))) == []
        assert backend.knn(qvec, 5, Filters((), "2999-01-01")) == []
