"""The in-memory keyword index: it follows the index and ranks as FTS5 inside whole searches
(its hits row for row against FTS5's: the keyword contract, tests/test_backends.py)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from engine.core import Engine
from engine.embedders import create_embedder
from engine.index.runs import reindex
from engine.records import Person
from engine.search import Searcher
from engine.search.query import fts
from engine.search.query.filters import Filters, chunk_filter_sql
from engine.search.retrieve import postings
from engine.search.retrieve.keyword_index import KeywordIndex
from engine.settings import Settings
from engine.store import db
from engine.store.sql import chunks as chunks_sql
from tests import test_vector_cache

QUERIES = (
    *test_vector_cache.QUERIES,
    "Priya said yeah ok",
    "INV-2026-0417 E_SCHED_TIMEOUT",  # identifiers: phrases of several tokens
    "10:30 follow-up call",
    "Renée café naïve",
    "zzzz-no-such-word qqqq",
    "the",  # every word a stop word
    "running runs ran",  # one stem, three phrases
)
FILTERS = (
    Filters(),
    Filters(("slack",)),
    Filters((), "2026-05-01"),
    Filters(("note", "journal"), None, "2025-12-31"),
    Filters(("no-such-type",)),
    Filters(people=(Person("Priya", "priya"),)),
)


def fts5_hits(
    conn: object, terms: list[str], k: int, filters: Filters, prefix: bool, every: bool
) -> list[tuple[int, float, int]]:
    """(seq, score, held) of FTS5's own BM25 query, as the one-shot path runs it."""
    expression = fts.match_expression(terms, prefix_last=prefix, require_all=every)
    if expression is None:
        return []
    where, params = chunk_filter_sql(filters, people_index=True)
    return conn.execute(fts.bm25_sql(where), (expression, *params, k)).fetchall()  # type: ignore[attr-defined, no-any-return]


def assert_same_ranking(
    index: KeywordIndex, conn: object, terms: list[str], k: int, filters: Filters, **how: bool
) -> None:
    prefix, every = how.get("prefix", False), how.get("require_all", False)
    hits = index.search(terms, k, filters, prefix, every)
    assert hits is not None
    expected = fts5_hits(conn, terms, k, filters, prefix, every)
    assert list(hits.top.items()) == [(seq, held) for seq, _, held in expected], terms


def test_whole_searches_rank_as_the_one_shot_path(demo_index: Settings) -> None:
    embedder = create_embedder(demo_index)
    plain = Searcher(demo_index, embedder=embedder, vector_cache=False, keyword_index=False)
    warm = Searcher(demo_index, embedder=embedder, vector_cache=False, keyword_index=True)
    assert plain.keyword_index is None and warm.keyword_index is not None
    for query in QUERIES:
        for mode in ("hybrid", "bm25"):
            for source in (None, ["slack"]):
                one = plain.search(query, 10, source, mode=mode, explain=True)
                two = warm.search(query, 10, source, mode=mode, explain=True)
                assert [r.id for r in one.results] == [r.id for r in two.results], query
                assert [r.explain for r in one.results] == [r.explain for r in two.results]
    typed = plain.search("espresso mach", prefix=True), warm.search("espresso mach", prefix=True)
    assert [r.id for r in typed[0].results] == [r.id for r in typed[1].results]
    plain.close(), warm.close()


@pytest.fixture
def small(settings_factory: Callable[..., Settings]) -> Settings:
    return notes_layer(settings_factory(embedder__name="hashing"))


def notes_layer(settings: Settings, aside: str = "scheduler aside") -> Settings:
    """A Slack channel of 12 messages and 40 notes, each ending with `aside`, indexed."""
    root = settings.roots[0]
    (root / "data" / "slack").mkdir(parents=True)
    (root / "data" / "slack" / "eng.jsonl").write_text(
        test_vector_cache.slack("eng", [f"the scheduler run {i} finished" for i in range(12)])
    )
    notes = root / "notes"
    notes.mkdir()
    for name in ("garden", "kitchen", "bikes", "ferry", "taxes", "books", "music", "trips"):
        for year in range(2020, 2025):  # 40 notes: a few changes stay below a quarter
            text = f"# {name.title()} {year}\nNotes on {name} in {year}, {aside}.\n"
            (notes / f"{name}-{year}.md").write_text(text)
    reindex(settings=settings)
    return settings


def check_all(index: KeywordIndex, settings: Settings) -> None:
    conn = db.connect(settings.db_path, create=False)
    for query in ("scheduler run finished", "ferry bikes", "tomatoes frost", "night ferry"):
        assert_same_ranking(index, conn, fts.query_terms(query), 20, Filters())
        assert_same_ranking(index, conn, fts.query_terms(query), 20, Filters(("note",)))
    conn.close()


def test_the_index_follows_additions_edits_and_deletions(small: Settings) -> None:
    index = KeywordIndex(small.db_path)
    assert index.refresh() and index.loads == 1
    assert not index.refresh()  # nothing committed since: the data_version check stops it
    count = len(index)
    check_all(index, small)

    notes = small.roots[0] / "notes"
    (notes / "tomatoes.md").write_text("# Tomatoes\nPlant after the last frost.\n")
    reindex(settings=small)
    assert index.refresh() and (index.loads, index.updates) == (1, 1)
    assert len(index) == count + 1
    check_all(index, small)

    # Editing the file indexed last deletes its chunk and inserts a new one, which SQLite
    # may give the same seq: the index notices by the chunk id.
    (notes / "tomatoes.md").write_text("# Ferry\nThe night ferry from Bodø was cancelled.\n")
    reindex(settings=small)
    assert index.refresh() and (index.loads, index.updates) == (1, 2)
    check_all(index, small)
    hits = index.search(fts.query_terms("night ferry cancelled"), 1)
    assert hits is not None and len(hits.top) == 1

    (notes / "garden-2020.md").unlink()
    reindex(settings=small)
    assert index.refresh() and index.loads == 1 and len(index) == count
    check_all(index, small)
    index.close()


def test_many_changes_read_the_postings_anew(small: Settings) -> None:
    index = KeywordIndex(small.db_path)
    index.refresh()
    notes = small.roots[0] / "notes"
    for i in range(16):  # more than a quarter of the ~40 chunks
        (notes / f"extra{i}.md").write_text(f"# Extra {i}\nA ferry timetable, page {i}.\n")
    reindex(settings=small)
    assert index.refresh() and index.loads == 2
    check_all(index, small)
    index.close()


def test_postings_that_cannot_be_read_leave_the_search_to_fts5(
    small: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    def disagree(*_: object) -> postings.Loaded:
        raise postings.PostingsError("the FTS index changed while it was read")

    from engine.search.retrieve import keyword_index

    monkeypatch.setattr(keyword_index, "read_index", disagree)
    warm = Searcher(small, keyword_index=True, vector_cache=False)
    plain = Searcher(small, keyword_index=False, vector_cache=False)
    assert warm.keyword_index is not None
    assert warm.keyword_index.search(["scheduler"], 5) is None  # not read: FTS5 answers
    query = "scheduler run finished"
    one, two = plain.search(query, mode="bm25"), warm.search(query, mode="bm25")
    assert [r.id for r in one.results] == [r.id for r in two.results] and one.results
    warm.close(), plain.close()


def test_one_index_per_engine_serves_every_reader_thread(small: Settings) -> None:
    with Engine(small) as engine:
        first = engine.searcher()
        with ThreadPoolExecutor(1) as pool:
            second = pool.submit(engine.searcher).result()
        assert first.keyword_index is second.keyword_index is not None
        hits = first.search("scheduler run finished", mode="bm25").results
        assert hits and first.keyword_index.loads == 1
        assert second.search("scheduler run finished", mode="bm25").results[0].id == hits[0].id
        assert first.keyword_index.loads == 1


def test_a_segment_adds_repeated_pairs_and_finds_a_term() -> None:
    segment = postings.Segment.of(
        np.array([3, 1, 3, 1, 3]), np.array([7, 2, 7, 5, 1]), np.array([1, 1, 2, 1, 1.0])
    )
    rows, freqs = segment.postings(3) or (None, None)
    assert rows is not None and freqs is not None
    assert rows.tolist() == [1, 7] and freqs.tolist() == [1.0, 3.0]
    assert segment.postings(2) is None and segment.postings(99) is None
    merged = postings.Segment.merged([segment, postings.Segment.of(*(np.array([2]),) * 3)])
    found = merged.postings(2)
    assert found is not None and found[0].tolist() == [2]


def test_a_vocabulary_finds_every_term_a_prefix_begins() -> None:
    words = postings.Vocabulary(["ferries", "ferry", "fest", "zebra"])
    words.id("ferryman")  # met later: kept in a sorted list of its own
    assert sorted(words.term(i) for i in words.prefixed("ferr")) == [
        "ferries",
        "ferry",
        "ferryman",
    ]
    assert words.prefixed("q") == [] and words.id("fest") == 2
    assert words.find("ferryman") == 4 and words.find("ferr") is None


def test_postings_read_in_many_batches_rank_the_same(
    demo_index: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postings, "BATCH_INSTANCES", 97)  # hundreds of term ranges
    assert len(postings._batches(np.full(1000, 10))) > 50
    index = KeywordIndex(demo_index.db_path, keep_file=False)  # read, not mapped
    conn = db.connect(demo_index.db_path, create=False)
    for query in QUERIES:
        assert_same_ranking(index, conn, fts.query_terms(query), 30, Filters())
    index.close(), conn.close()


def test_after_a_load_the_page_cache_is_freed(demo_index: Settings) -> None:
    import apsw

    index = KeywordIndex(demo_index.db_path, keep_file=False)  # read, not mapped
    # Past the first 256 MB of a file (mmap_size) pages are read into the page cache; the
    # demo's file is smaller, so no mmap here, as for the rest of a 100k index.
    index.conn.execute("PRAGMA mmap_size=0")
    conn = db.connect(demo_index.db_path, create=False)
    conn.execute("PRAGMA mmap_size=0")
    rows = conn.execute(chunks_sql.keyword_rows_sql()).fetchall()
    row_of = np.full(max(r[0] for r in rows) + 1, -1, dtype=np.int32)
    row_of[[r[0] for r in rows]] = np.arange(len(rows), dtype=np.int32)
    assert postings.read_index(conn, row_of, len(rows)).segment.rows.shape[0]
    read = conn.status(apsw.SQLITE_DBSTATUS_CACHE_USED)[0]
    assert read > 1_000_000  # what reading the postings leaves in a page cache
    assert index.refresh() and index.loads == 1
    assert index.conn.status(apsw.SQLITE_DBSTATUS_CACHE_USED)[0] < read / 10
    assert index.search(["ferry"], 5) is not None  # the connection goes on serving
    index.close(), conn.close()
