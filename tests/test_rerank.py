"""The re-ranking stage on literal lists: what is sent, the order scores give, the answer
shapes understood, and how the stage rests after a failure (engine/search/rerank/)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pytest

from engine.search.hits import ChunkRow, Hit
from engine.search.outcome import RerankMiss
from engine.search.rerank import Reranker, RerankError, Scores
from engine.search.rerank.http import endpoint, parse_scores, request_body
from engine.search.rerank.stage import document_text, head_positions, reorder
from engine.settings import load_settings


def row(seq: int, title: str = "", content: str = "text") -> ChunkRow:
    return ChunkRow(seq, f"id-{seq}", "n.md", "note", content, None, title, "", None)


def chunk(seq: int, score: float = 1.0) -> Hit:
    return Hit.chunk(seq, score, source_type="note", row=row(seq))


PROFILE = Hit.profile("dana")


def keys(candidates: Sequence[Hit]) -> list[int | None]:
    return [c.seq for c in candidates]


def test_document_text_is_the_title_then_the_text_without_header_lines() -> None:
    sync = row(
        1, "Weekly sync", "Meeting: Weekly sync\nTags: work, planning\n\nDana: we ship on Friday."
    )
    assert document_text(sync, 1000) == "Weekly sync\nDana: we ship on Friday."
    assert document_text(sync, 11) == "Weekly sync"
    assert document_text(row(2, "", "Just text"), 100) == "Just text"
    # A chunk that is nothing but header lines keeps them (there is no other text).
    assert document_text(row(3, "", "Note: Garden\n"), 100) == "Note: Garden"


def test_head_positions_are_chunks_with_rows_within_the_depth() -> None:
    unlocated = Hit.chunk(3, 1.0)  # its row is not in this snapshot
    pool = [chunk(1), PROFILE, chunk(2), unlocated, chunk(4)]
    assert head_positions(pool, 4) == [0, 2]
    assert head_positions(pool, 5) == [0, 2, 4]
    assert head_positions(pool, 1) == [0]


def test_reorder_sorts_the_sent_chunks_and_leaves_everything_else_in_place() -> None:
    pool = [chunk(1), PROFILE, chunk(2), chunk(3), chunk(9)]
    positions = [0, 2, 3]  # 9 is past the depth
    out = reorder(pool, positions, {0: 0.1, 1: 2.5, 2: 0.7})
    assert keys(out) == [2, None, 3, 1, 9]
    assert out[1] is pool[1] and out[4] is pool[4]
    assert out[0].explain() == {"rank_before_rerank": 3, "rerank_score": 2.5, "rerank_rank": 1}
    assert out[2].notes["rerank_rank"] == 2 and out[3].notes["rerank_rank"] == 3
    assert [c.score for c in out] == [1.0, 0.0, 1.0, 1.0, 1.0]  # the pool's scores are kept


def test_unscored_and_non_finite_go_after_the_scored_in_their_order() -> None:
    pool = [chunk(i) for i in range(5)]
    out = reorder(pool, [0, 1, 2, 3, 4], {1: 1.0, 3: math.nan, 4: 3.0, 7: 9.0})
    assert keys(out) == [4, 1, 0, 2, 3]
    assert "rerank_score" not in out[2].notes and out[2].notes["rank_before_rerank"] == 1
    ties = reorder(pool[:3], [0, 1, 2], {0: 1.0, 1: 1.0, 2: 1.0})
    assert keys(ties) == [0, 1, 2]


@pytest.mark.parametrize(
    "payload",
    [
        {"results": [{"index": 1, "relevance_score": 0.9}, {"index": 0, "relevance_score": 0.2}]},
        [{"index": 1, "score": 0.9}, {"index": 0, "score": 0.2}],  # text-embeddings-inference
        {
            "id": "x",
            "results": [
                {"index": 1, "relevance_score": 0.9, "document": {"text": "b"}},
                {"index": 0, "relevance_score": 0.2},
            ],
        },  # fmt: skip
    ],
)
def test_every_answer_shape_gives_the_same_scores(payload: Any) -> None:
    assert parse_scores(payload, 2) == {1: 0.9, 0: 0.2}


@pytest.mark.parametrize(
    "payload",
    [
        {"error": "overloaded"},
        {"results": [{"relevance_score": 0.9}]},
        {"results": [{"index": 2, "relevance_score": 0.9}]},  # out of range
        {"results": [{"index": True, "relevance_score": 0.9}]},
        {"results": [{"index": 0, "relevance_score": "high"}]},
        [[0, 0.9]],
        "ok",
    ],
)
def test_any_other_answer_is_a_rerank_error(payload: Any) -> None:
    with pytest.raises(RerankError):
        parse_scores(payload, 2)


def test_request_bodies_of_each_family() -> None:
    assert request_body("q", ["a", "b"], "", "texts") == {
        "query": "q",
        "texts": ["a", "b"],
        "truncate": True,
    }
    assert request_body("q", ["a"], "rerank-v3.5", "documents") == {
        "query": "q",
        "documents": ["a"],
        "top_n": 1,
        "model": "rerank-v3.5",
    }
    assert "model" not in request_body("q", ["a"], "", "documents")


def test_endpoint_appends_rerank_to_an_http_base_url() -> None:
    assert endpoint("http://127.0.0.1:8080/v1/") == "http://127.0.0.1:8080/v1/rerank"
    assert endpoint("https://api.cohere.com/v2") == "https://api.cohere.com/v2/rerank"
    for bad in ("", "ftp://host/v1", "127.0.0.1:8080", "http://[::1"):
        with pytest.raises(RerankError):
            endpoint(bad)


class ListBackend:
    """A backend answering from a list of outcomes: Scores, or a RerankError to raise."""

    name = "list"

    def __init__(self, outcomes: list[Any]) -> None:
        self.outcomes = outcomes
        self.calls: list[tuple[str, list[str]]] = []

    def scores(self, query: str, documents: Sequence[str]) -> Scores:
        self.calls.append((query, list(documents)))
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return dict(outcome)


ROWS = {1: row(1, "one", "first"), 2: row(2, "", "second")}


def sent(seq: int) -> Hit:
    """A chunk with its row from ROWS (without one, when ROWS has none: never sent)."""
    return Hit.chunk(seq, 1.0, source_type="note", row=ROWS.get(seq))


def stage(backend: ListBackend, now: list[float], **values: Any) -> Reranker:
    settings = load_settings(env={}, **{"rerank__backend": "http", **values})
    made: list[int] = []

    def factory(_: Any) -> ListBackend:
        made.append(1)
        return backend

    reranker = Reranker(settings, backends={"http": factory}, clock=lambda: now[0])
    reranker.made = made  # type: ignore[attr-defined]
    return reranker


def test_the_stage_makes_nothing_while_off_and_skips_an_empty_query() -> None:
    backend = ListBackend([])
    pool = [sent(1), sent(2)]
    off = stage(backend, [0.0], rerank__backend="off")
    answer = off.apply(pool, "q")
    assert answer.hits is pool and answer.miss is RerankMiss.OFF and off.backend is None
    on = stage(backend, [0.0])
    answer = on.apply(pool, "  ")
    assert answer.hits is pool and answer.miss is RerankMiss.EMPTY_QUERY
    assert on.made == []  # type: ignore[attr-defined]


def test_the_stage_sends_the_head_and_orders_by_the_scores() -> None:
    backend = ListBackend([{0: 0.1, 1: 0.8}])
    reranker = stage(backend, [0.0], rerank__depth=2)
    answer = reranker.apply([sent(1), sent(2), sent(7)], "query")
    assert keys(answer.hits) == [2, 1, 7] and answer.miss is None and answer.said is None
    assert backend.calls == [("query", ["one\nfirst", "second"])]


def test_after_a_failure_the_stage_rests_then_tries_again() -> None:
    now = [100.0]
    backend = ListBackend([RerankError("the server is down"), {0: 0.1, 1: 0.8}])
    reranker = stage(backend, now, rerank__cooldown_seconds=30)
    pool = [sent(1), sent(2)]
    failed = reranker.apply(pool, "q")
    assert failed.hits is pool and failed.miss is RerankMiss.FAILED
    assert failed.said == "the server is down; results are not re-ranked."
    now[0] = 110.0
    resting = reranker.apply(pool, "q")
    assert resting.hits is pool and resting.miss is RerankMiss.RESTING
    assert len(backend.calls) == 1 and resting.said is not None
    assert resting.said.endswith("(next try in 20 s); results are not re-ranked.")
    now[0] = 131.0
    again = reranker.apply(pool, "q")
    assert keys(again.hits) == [2, 1] and again.miss is None
    assert len(backend.calls) == 2
    assert reranker.made == [1]  # type: ignore[attr-defined]


def test_a_backend_that_cannot_be_made_is_a_warning_too() -> None:
    settings = load_settings(env={}, rerank__backend="onnx", rerank__model_path="")
    pool = [sent(1)]
    answer = Reranker(settings).apply(pool, "q")
    assert answer.hits is pool and answer.miss is RerankMiss.FAILED
    assert answer.said == (
        "rerank.backend is onnx but rerank.model_path is empty; results are not re-ranked."
    )
