"""What happened in a search, as the response's fields (engine/search/outcome.py): the
fallback and its reason, the vector coverage, re-ranking, the filters and what they left
out. Warnings stay sentences; nothing here reads them to learn what happened."""

from __future__ import annotations

import io
import json
from datetime import datetime

from engine.cli import run
from engine.search import Searcher
from engine.search.outcome import FilterOutcome, RerankMiss, SearchOutcome, VectorMiss
from engine.settings import Settings
from tests.conftest import cli_args

NOW = datetime(2026, 6, 30, 12, 0)


def test_a_hybrid_search_says_its_vectors_ran_over_the_whole_index(
    demo_index: Settings,
) -> None:
    searcher = Searcher(demo_index)
    try:
        got = searcher.search("the ferry to the islands", 5, now=NOW).outcome
    finally:
        searcher.close()
    assert (got.mode_asked, got.vector_miss, got.fell_back) == ("hybrid", None, False)
    assert got.coverage is not None and got.coverage.complete and got.coverage.total > 0
    assert (got.reranked, got.rerank_miss) == (False, RerankMiss.OFF)
    assert got.filters == FilterOutcome()  # nothing narrowed it


def test_keywords_chosen_with_a_filter_suggestion_is_no_fallback(demo_index: Settings) -> None:
    searcher = Searcher(demo_index)
    try:
        response = searcher.search("standup", 5, ["slak"], mode="bm25", now=NOW)
    finally:
        searcher.close()
    got = response.outcome
    assert response.warnings  # "no source type 'slak' … did you mean 'slack'?"
    assert got.vector_miss is VectorMiss.KEYWORD_CHOSEN and not got.fell_back
    assert got.filters.unknown_types == ("slak",) and got.filters.source_types == ("slak",)
    # Nothing under the filter: the matches without it are counted, for the offer.
    assert not response.results and (got.filters.without_filters or 0) > 0


def test_an_empty_page_under_a_person_counts_the_matches_without_the_filter(
    demo_index: Settings,
) -> None:
    searcher = Searcher(demo_index)
    try:
        narrowed = searcher.search("standup", 5, people=["Nobody Known"], now=NOW)
        wide = searcher.search("standup", 5, now=NOW)
    finally:
        searcher.close()
    assert narrowed.outcome.filters.people == ("Nobody Known",)
    assert narrowed.outcome.filters.unknown_people == ("Nobody Known",)
    assert narrowed.outcome.filters.on and not wide.outcome.filters.on
    assert (narrowed.outcome.filters.without_filters or 0) >= len(wide.results) > 0
    assert wide.outcome.filters.without_filters is None  # not counted without a filter


def test_the_fallback_reasons_are_the_embedders_not_the_callers() -> None:
    assert SearchOutcome(vector_miss=VectorMiss.EMBEDDER_FAILED).fell_back
    assert SearchOutcome(vector_miss=VectorMiss.NO_VECTORS).fell_back
    assert not SearchOutcome(vector_miss=VectorMiss.KEYWORD_CHOSEN).fell_back
    assert not SearchOutcome(vector_miss=VectorMiss.EMPTY_QUERY).fell_back
    assert not SearchOutcome().fell_back


def test_json_and_the_cli_carry_the_outcome(demo_index: Settings) -> None:
    out, err = io.StringIO(), io.StringIO()
    argv = [*cli_args(demo_index), "--search", "standup", "--source", "slak", "--mode", "bm25"]
    assert run([*argv, "--json"], out, err) == 0, err.getvalue()
    outcome = json.loads(out.getvalue())["outcome"]
    assert outcome["vector_miss"] == "keyword_chosen" and outcome["fell_back"] is False
    assert outcome["filters"]["unknown_types"] == ["slak"]
    assert outcome["filters"]["without_filters"] > 0
    text = io.StringIO()
    assert run(argv, text, err) == 0, err.getvalue()
    assert "without the filters: " in text.getvalue() and "fell back" not in text.getvalue()
