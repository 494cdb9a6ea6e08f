"""The pipeline as data: typed hits, the declared stage order the Searcher walks, what
retrieval reports as fields, and `--explain`'s stage table."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from datetime import datetime

import numpy as np
import pytest

from engine.cli import run
from engine.people import PeopleMatcher
from engine.search import Searcher
from engine.search.context import Retrieved, SearchContext
from engine.search.hits import ChunkRow, Hit
from engine.search.order import STAGES
from engine.search.outcome import VectorMiss
from engine.search.query.filters import Filters
from engine.search.query.inputs import search_inputs
from engine.search.rank.fuse import Fuse
from engine.search.rank.stages import rrf_fuse
from engine.search.retrieve.keyword_share import Keywords
from engine.search.retrieve.retrieval import Retrieve
from engine.settings import Settings, load_settings
from tests.conftest import cli_args

NOW = datetime(2026, 6, 30, 12, 0)


def test_a_hit_is_a_chunk_or_a_person_never_a_string_key() -> None:
    row = ChunkRow(7, "c-7", "a.md", "note", "text", None, "A", "", '{"links": ["B"]}')
    chunk = Hit.chunk(7, 0.5, row=row, ranks={"bm25": 0, "vector": 2})
    profile = Hit.profile("ann-lee")
    assert chunk.key == ("chunk", 7) and profile.key == ("person", "ann-lee")
    assert chunk.result_id == "c-7" and profile.result_id == "profile:ann-lee"
    assert profile.seq is None and profile.source_type == "profile"
    scaled = chunk.scaled("recency", 0.5).noted(injected="median score")
    assert scaled.score == 0.25 and scaled.signals == {"recency": 0.5}
    assert scaled.explain() == {
        "recency": 0.5,
        "bm25_rank": 1,
        "vector_rank": 3,
        "injected": "median score",
    }
    assert row.meta() == {"links": ["B"]} and ChunkRow.meta_of("not json") == {}


def test_the_declared_stages_have_distinct_names_and_retrieval_comes_first() -> None:
    names = [s.name for s in STAGES]
    assert len(set(names)) == len(names)
    assert names[:3] == ["retrieve", "fuse", "locate"]
    assert names.index("floor") < names.index("page") < names.index("related")


class Held:
    """A keyword side that answers from a fixed list (what `Keywords` promises)."""

    def __init__(self, top: dict[int, int]) -> None:
        self.top = top

    def held(self, seqs: Sequence[int]) -> dict[int, int]:
        return {s: self.top.get(s, 0) for s in seqs}

    def weights(self) -> list[float]:
        return [1.0]


class Fixed:
    """Retrievers with fixed answers: the plumbing of `Retrieve`, not relevance."""

    def __init__(self, coverage: tuple[int, int] = (10, 10)) -> None:
        self._coverage = coverage

    def keywords(
        self,
        terms: list[str],
        k: int,
        filters: Filters,
        prefix: bool = False,
        require_all: bool = False,
    ) -> Keywords:
        return Held({3: 1, 1: 1})

    def vector(self, qvec: np.ndarray, k: int, filters: Filters) -> list[tuple[int, float]]:
        return [(1, 0.9), (2, 0.5)]

    def coverage(self) -> tuple[int, int]:
        return self._coverage

    def rows(self, seqs: Sequence[int]) -> dict[int, ChunkRow]:
        return {}


def context(mode: str, vector: np.ndarray | None, retrievers: Fixed) -> SearchContext:
    settings = load_settings(env={}, search__coverage_weight=0.0)
    asked = search_inputs("ferry", 5, None, None, None, None, NOW)
    return SearchContext(
        query="ferry",
        inputs=asked,
        filters=Filters(),
        clock=NOW,
        settings=settings,
        matcher=PeopleMatcher([]),
        conn=None,  # type: ignore[arg-type]  # no stage here reads the index
        terms=["ferry"],
        mode=mode,
        prefix=False,
        dated=None,
        floored=True,
        retrievers=retrievers,
        reranker=None,  # type: ignore[arg-type]
        embedding=lambda: vector,
    )


def test_retrieval_says_what_happened_as_fields() -> None:
    qvec = np.ones(4, dtype=np.float32)
    ctx = context("hybrid", qvec, Fixed(coverage=(4, 10)))
    hits = Retrieve()(ctx, [])
    got = ctx.retrieved
    assert got.mode == "hybrid" and not got.fell_back and got.coverage == (4, 10)
    assert got.lists == {"bm25": [3, 1], "vector": [1, 2]} and got.cosines == {1: 0.9, 2: 0.5}
    assert [(h.seq, dict(h.ranks)) for h in hits] == [
        (3, {"bm25": 0}),
        (1, {"bm25": 1, "vector": 0}),
        (2, {"vector": 1}),
    ]
    # A partial vector coverage is a message for the user, built from the field.
    assert ctx.warnings == [
        "vectors cover 40% of the index so far (4 of 10 chunks; the rest are being "
        "embedded): those are found by keywords only"
    ]


def test_without_a_query_vector_retrieval_falls_back_to_keywords() -> None:
    ctx = context("vector", None, Fixed())
    said = "embedder failed, keyword results only: the server is down"
    ctx.vector_misses.append((VectorMiss.EMBEDDER_FAILED, said))  # as the embedder writes it
    Retrieve()(ctx, [])
    miss = VectorMiss.EMBEDDER_FAILED
    keywords = ctx.retrieved.keywords
    assert ctx.retrieved == Retrieved({"bm25": [3, 1]}, "bm25", True, keywords=keywords, miss=miss)
    assert ctx.warnings == [said]  # the embedder's sentence, passed on for people


def test_fusion_scores_the_ranks_as_rrf_does() -> None:
    ctx = context("hybrid", np.ones(4, dtype=np.float32), Fixed())
    fused = Fuse()(ctx, Retrieve()(ctx, []))
    cfg = ctx.cfg
    weights = {"bm25": cfg.bm25_weight, "vector": cfg.vector_weight}
    expected = rrf_fuse(ctx.retrieved.lists, cfg.rrf_k, weights)
    assert [h.seq for h in fused] == sorted(expected, key=lambda s: -expected[s][0])
    assert all(h.score == pytest.approx(expected[h.seq or 0][0]) for h in fused)
    assert fused[0].seq == 1 and fused[0].signals["rrf"] == round(fused[0].score, 6)


def test_each_search_reports_every_stage_in_order(demo_index: Settings) -> None:
    searcher = Searcher(demo_index)
    try:
        response = searcher.search("the ferry to the islands", 5, now=NOW)
        # A Searcher walks its own list: a stage left out does not run.
        searcher.stages = tuple(s for s in searcher.stages if s.name != "floor")
        unfloored = searcher.search("the ferry to the islands", 5, now=NOW)
    finally:
        searcher.close()
    assert [t.name for t in response.stages] == ["query", *(s.name for s in STAGES), "dress"]
    kept = {t.name: t.kept for t in response.stages}
    assert kept["retrieve"] >= kept["fuse"] >= kept["locate"] > 0
    assert kept["page"] <= 5 and kept["dress"] == len(response.results) > 0
    assert all(t.ms >= 0 for t in response.stages)
    assert "floor" not in [t.name for t in unfloored.stages]


def test_explain_prints_the_stage_table(demo_index: Settings) -> None:
    out, err = io.StringIO(), io.StringIO()
    argv = [*cli_args(demo_index), "--search", "standup moved", "--explain"]
    assert run(argv, out, err) == 0, err.getvalue()
    text = out.getvalue()
    table = text[text.index("stages:\n") :].splitlines()[1:]
    assert [line.split()[0] for line in table] == ["query", *(s.name for s in STAGES), "dress"]
    assert all(" ms " in line and line.endswith("kept") for line in table)
    out = io.StringIO()
    assert run([*argv, "--json"], out, err) == 0, err.getvalue()
    stages = json.loads(out.getvalue())["stages"]
    assert [s["stage"] for s in stages][:3] == ["query", "retrieve", "fuse"]
    plain = io.StringIO()
    assert run([*cli_args(demo_index), "--search", "standup moved"], plain, err) == 0
    assert "stages:" not in plain.getvalue()
