"""Known queries over the real demo index, with the real local model."""

from __future__ import annotations

from engine.search import Searcher
from engine.search.query import fts
from engine.search.query.filters import Filters
from engine.search.retrieve import keyword_share
from engine.settings import Settings


def top(settings: Settings, query: str, limit: int = 10, **kwargs: object) -> list:
    searcher = Searcher(settings)
    try:
        return searcher.search(query, limit, **kwargs).results  # type: ignore[arg-type]
    finally:
        searcher.close()


def test_exact_identifiers_rank_first(demo_index: Settings) -> None:
    for identifier in ("E_SCHED_TIMEOUT", "SK4411", "INV-2026-0417"):
        hits = top(demo_index, identifier)
        assert identifier in hits[0].content, (identifier, [h.title for h in hits[:3]])
        assert (
            identifier.lower()
            in " ".join(hits[0].matched_terms).replace(" ", "_").replace("_", "-").replace("-", "_")
            or hits[0].snippet.count("**") >= 2
        )


def test_a_paraphrase_finds_the_story_without_shared_words(demo_index: Settings) -> None:
    hits = top(demo_index, "the espresso appliance at work is broken", limit=5)
    assert any("coffee machine" in h.content for h in hits[:3]), [h.title for h in hits]


def test_date_filter_keeps_only_that_day_and_finds_the_flight(demo_index: Settings) -> None:
    hits = top(demo_index, "where was I flying", since="2026-05-22", until="2026-05-22")
    assert hits and all((h.content_date or "")[:10] == "2026-05-22" for h in hits)
    assert any("SK4411" in h.content or "Arlanda" in h.content for h in hits[:3])


def test_a_person_query_injects_the_profile(demo_index: Settings) -> None:
    hits = top(demo_index, "what is Priya working on", limit=10)
    profiles = [h for h in hits if h.source_type == "profile"]
    assert len(profiles) == 1 and profiles[0].id == "profile:priya-raman"
    assert profiles[0].profile is not None and profiles[0].profile["name"] == "Priya Raman"


def test_a_narrow_source_filter_still_fills_the_list(demo_index: Settings) -> None:
    # The retrieval plumbing, without the relevance floor (a vague query about a narrow
    # source has little evidence: tests/test_floor.py).
    unfloored = demo_index.with_values(search__floor=False)
    for source_type in ("garmin", "quote", "signal"):
        hits = top(unfloored, "a hard day", limit=8, source_types=[source_type])
        assert len(hits) == 8 and {h.source_type for h in hits} == {source_type}


def test_person_filter_narrows_to_chunks_about_that_person(demo_index: Settings) -> None:
    hits = top(demo_index, "long ride", limit=6, people=["Lasse"])
    assert len(hits) == 6
    assert all("Lasse" in h.content or "Lars" in h.content for h in hits)


def test_modes_differ_and_report_themselves(demo_index: Settings) -> None:
    searcher = Searcher(demo_index)
    try:
        for mode in ("bm25", "vector", "hybrid"):
            response = searcher.search("gravel ride with friends", 5, mode=mode)
            assert response.mode == mode and len(response.results) == 5
    finally:
        searcher.close()


def test_the_terms_each_bm25_hit_holds_match_a_lookup_row_by_row(demo_index: Settings) -> None:
    # The coverage list's evidence comes back with the BM25 query (an FTS5 auxiliary
    # function); the floor looks up other hits one row at a time. Both must agree.
    searcher = Searcher(demo_index)
    try:
        terms = fts.query_terms("ferry bikes Lofoten budget coffee")
        held = searcher.keywords(terms, 50, Filters()).top
        seqs = list(held)
        from_query = keyword_share.keyword_shares(searcher.conn, terms, seqs, held=held)
        row_by_row = keyword_share.keyword_shares(searcher.conn, terms, seqs)
    finally:
        searcher.close()
    assert len(seqs) > 5 and from_query == row_by_row
    assert max(from_query.values()) > min(from_query.values()) > 0
    ranked = keyword_share.by_share(seqs, from_query)
    assert [from_query[s] for s in ranked] == sorted(from_query.values(), reverse=True)


def test_a_hybrid_hit_shows_its_coverage_vote(demo_index: Settings) -> None:
    hits = top(demo_index, "Lofoten ferry bikes", explain=True)
    assert hits and hits[0].explain and hits[0].explain.get("coverage_rank") == 1
    plain = top(
        demo_index.with_values(search__coverage_weight=0.0), "Lofoten ferry bikes", explain=True
    )
    assert plain and all("coverage_rank" not in (h.explain or {}) for h in plain)
