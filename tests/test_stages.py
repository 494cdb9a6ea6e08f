"""Each ranking stage on literal lists."""

from __future__ import annotations

from datetime import datetime

import pytest

from engine.people import PeopleMatcher
from engine.records import Person
from engine.search.hits import Hit
from engine.search.query import fts
from engine.search.rank.stages import (
    apply_recency,
    inject_entity,
    mmr_diversify,
    recency_factor,
    rrf_fuse,
)


def test_rrf_is_the_sum_of_reciprocal_ranks() -> None:
    fused = rrf_fuse({"bm25": ["a", "b"], "vector": ["b", "c"]}, k=60)
    assert fused["a"][0] == pytest.approx(1 / 61)
    assert fused["b"][0] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["c"][0] == pytest.approx(1 / 62)
    assert fused["b"][1] == {"bm25": 1, "vector": 0}


def test_rrf_weights_scale_each_list() -> None:
    fused = rrf_fuse({"bm25": ["a"], "vector": ["b"]}, k=60, weights={"bm25": 2.0, "vector": 0.5})
    assert fused["a"][0] == pytest.approx(2 / 61)
    assert fused["b"][0] == pytest.approx(0.5 / 61)


def test_rrf_scales_weigh_each_key_of_a_list() -> None:
    # The coverage list: a chunk holding a fifth of the query gets a fifth of a vote.
    lists = {"bm25": ["a", "b"], "coverage": ["a", "b"]}
    fused = rrf_fuse(lists, k=10, scales={"coverage": {"a": 1.0, "b": 0.2}})
    assert fused["a"][0] == pytest.approx(2 / 11)
    assert fused["b"][0] == pytest.approx(1 / 12 + 0.2 / 12)
    assert fused["b"][1] == {"bm25": 1, "coverage": 1}


def test_recency_halves_at_the_half_life_and_stops_at_the_floor() -> None:
    assert recency_factor(0, 35, 0.25) == 1.0
    assert recency_factor(35, 35, 0.25) == pytest.approx(0.5)
    assert recency_factor(70, 35, 0.25) == pytest.approx(0.25)
    assert recency_factor(3650, 35, 0.25) == 0.25
    assert recency_factor(None, 35, 0.25) == 1.0


def test_apply_recency_reorders_by_decayed_score() -> None:
    now = datetime(2026, 6, 30)
    old = Hit.chunk(1, 1.0, source_type="slack", content_date="2025-06-30")
    new = Hit.chunk(2, 0.6, source_type="slack", content_date="2026-06-29")
    ranked = apply_recency([old, new], now, {"slack": 35}, 60, 0.25)
    assert [c.seq for c in ranked] == [2, 1]
    assert ranked[1].score == pytest.approx(0.25)
    assert ranked[1].signals["recency"] == 0.25


def test_entity_injection_uses_the_median_and_happens_once() -> None:
    cands = [Hit.chunk(i, s) for i, s in enumerate([0.9, 0.5, 0.3, 0.1])]
    profile = Hit.profile("ann")
    out = inject_entity(cands, profile)
    assert [c.seq for c in out] == [0, 1, None, 2, 3] and out[2].person == "ann"
    assert out[2].source_type == "profile" and out[2].notes["injected"] == "median score"
    assert out[2].score == pytest.approx(0.4)
    assert inject_entity(out, profile) == out


def test_mmr_caps_each_type_in_the_head() -> None:
    cands = [
        Hit.chunk(i, 1.0 - i * 0.01, source_type="slack", source_file=f"f{i}") for i in range(6)
    ]
    cands.append(Hit.chunk(10, 0.5, source_type="note", source_file="n"))
    out = mmr_diversify(cands, top=5, lam=0.7, max_per_type=3)
    head_types = [c.source_type for c in out[:5]]
    assert head_types.count("slack") <= 4  # only slack and one note remain to fill the head
    assert out[:4].count(cands[-1]) == 0 or "note" in head_types
    assert "note" in head_types
    assert sorted(c.seq or 0 for c in out) == sorted(c.seq or 0 for c in cands)


def test_mmr_prefers_another_file_over_the_same_file() -> None:
    a1 = Hit.chunk(1, 1.0, source_type="slack", source_file="a")
    a2 = Hit.chunk(2, 0.95, source_type="slack", source_file="a")
    b1 = Hit.chunk(3, 0.9, source_type="slack", source_file="b")
    out = mmr_diversify([a1, a2, b1], top=3, lam=0.7, max_per_type=3)
    assert [c.seq for c in out] == [1, 3, 2]


def test_people_match_longest_name_first_on_word_boundaries() -> None:
    ann = Person("Ann", "ann")
    ann_lee = Person("Ann Lee", "ann-lee", aliases=("Annie",))
    matcher = PeopleMatcher([ann, ann_lee])
    assert matcher.find("lunch with ann lee tomorrow") == ann_lee
    assert matcher.find("what did ANN say") == ann
    assert matcher.find("annual review") is None
    assert matcher.find("call Annie") == ann_lee
    assert matcher.by_name("annie") == ann_lee


@pytest.mark.parametrize(
    "query",
    [
        'c++ AND "unbalanced',
        "NEAR(a b)",
        "foo-bar",
        "*",
        "(((",
        "AND OR NOT",
        '"',
        "",
        "col:value ^start",
        "emoji 🎉 test",
        "a" * 10000,
        "x\x00y",
    ],
)
def test_sanitiser_always_makes_a_valid_expression(query: str) -> None:
    expression = fts.match_expression(fts.query_terms(query))
    if expression is not None:
        import apsw

        conn = apsw.Connection(":memory:")
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        conn.execute("INSERT INTO t VALUES ('some text')")
        list(conn.execute("SELECT * FROM t WHERE t MATCH ?", (expression,)))


def test_stop_words_are_dropped_unless_nothing_is_left() -> None:
    assert fts.query_terms("what did she say about the budget") == ["say", "budget"]
    assert fts.query_terms("what is it") == ["what", "is", "it"]


def test_recency_weight_blends_the_decay_so_old_matches_are_not_crushed() -> None:
    now = datetime(2026, 6, 30)
    old = Hit.chunk(1, 1.0, source_type="slack", content_date="2025-06-30")  # decay 0.25
    new = Hit.chunk(2, 0.8, source_type="slack", content_date="2026-06-30")  # decay 1.0
    gentle = apply_recency([old, new], now, {"slack": 35}, 60, 0.25, weight=0.2)
    assert [c.seq for c in gentle] == [1, 2]
    assert gentle[0].score == pytest.approx(0.8 + 0.2 * 0.25)
    assert gentle[0].signals["recency"] == pytest.approx(0.85)
    full = apply_recency([old, new], now, {"slack": 35}, 60, 0.25, weight=1.0)
    assert [c.seq for c in full] == [2, 1]
    assert apply_recency([old], now, {"slack": 35}, 60, 0.25, weight=0.0)[0].score == 1.0


def test_possessives_contractions_and_prose_punctuation_split_into_words() -> None:
    assert fts.query_terms("What is Caroline's identity?") == ["caroline", "identity"]
    assert fts.query_terms("Melanie’s daughter's birthday") == ["melanie", "daughter", "birthday"]
    assert fts.query_terms("which artists/bands hadn't she seen") == ["artists", "bands", "seen"]
    assert fts.query_terms("(budget), review!") == ["budget", "review"]
    # identifiers still stay whole phrases
    assert fts.query_terms("E_SCHED_TIMEOUT at 10:30") == ["e sched timeout", "10 30"]
    assert fts.query_terms("INV-2026-0417 O'Brien") == ["inv 2026 0417", "o brien"]
