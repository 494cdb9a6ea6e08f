"""The relevance floor: hits with neither keyword nor semantic evidence are not shown."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from engine.index.runs import reindex
from engine.search import Searcher
from engine.search.hits import Hit
from engine.search.rank import floor
from engine.search.retrieve.keyword_share import by_share, keyword_shares
from engine.settings import Settings
from engine.store import db

ABSENT = ("quantum chromodynamics lattice gauge", "submarine periscope")


def search(settings: Settings, query: str, **kwargs: object):  # type: ignore[no-untyped-def]
    searcher = Searcher(settings)
    try:
        return searcher.search(query, 10, **kwargs)  # type: ignore[arg-type]
    finally:
        searcher.close()


def test_a_query_about_nothing_in_the_index_shows_at_most_one_hit(demo_index: Settings) -> None:
    for query in ABSENT:
        assert len(search(demo_index, query).results) <= 1, query
        unfloored = search(demo_index.with_values(search__floor=False), query).results
        assert len(unfloored) == 10  # what the page held before: ten unrelated hits


def test_explain_shows_why_each_hit_passed(demo_index: Settings) -> None:
    cfg = demo_index.search
    hits = search(demo_index, "the espresso appliance at work is broken", explain=True).results
    assert hits and any("coffee machine" in h.content for h in hits[:3])
    for hit in hits:
        notes = hit.explain or {}
        if hit.source_type == "profile":
            continue
        assert "keyword_share" in notes and "cosine" in notes
        assert notes["keyword_share"] >= cfg.floor_keyword or notes["cosine"] >= notes["cosine_cut"]
        assert notes["cosine_cut"] <= cfg.floor_cosine and notes["cosine_rule"]


def test_keyword_only_search_is_not_floored(demo_index: Settings) -> None:
    query = "the day"
    floored = search(demo_index, query, mode="bm25")
    assert floored.mode == "bm25" and len(floored.results) == 10


def test_a_rare_missing_term_outweighs_a_common_one(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory(embedder__name="hashing")
    folder = settings.roots[0] / "data" / "identity"
    folder.mkdir(parents=True)
    texts = [f"The capital of country {i} has a busy old market" for i in range(12)]
    texts.append("Ulaanbaatar is the capital of Mongolia")
    (folder / "quotes.jsonl").write_text(
        "\n".join(
            json.dumps({"id": f"q-{i}", "text": t, "context": "A"}) for i, t in enumerate(texts)
        )
        + "\n"
    )
    assert not reindex(settings=settings).errors
    conn = db.connect(settings.db_path, create=False)
    seqs = [r[0] for r in conn.execute("SELECT seq FROM chunks ORDER BY seq")]
    shares = keyword_shares(conn, ["capital", "mongolia"], seqs)
    assert len(seqs) == 13 and shares[seqs[-1]] == 1.0
    common = [shares[s] for s in seqs[:-1]]
    assert len(common) == 12 and max(common) < 0.35  # "capital" alone: weak evidence
    assert keyword_shares(conn, [], seqs) == dict.fromkeys(seqs, 0.0)
    # The coverage list: the chunk holding both terms first, the rest in their order.
    ranked = by_share(seqs, shares)
    assert ranked[0] == seqs[-1] and ranked[1:] == seqs[:-1]
    conn.close()


# -- the query-relative cosine cut (literal lists) ------------------------------------------

RULE = floor.CosineRule(absolute=0.35, low=0.3, margin=0.03, spread=0.15)  # the defaults


def test_a_hit_below_the_absolute_cut_but_near_a_standout_best_passes() -> None:
    # "espresso appliance": best 0.357, the coffee-machine story 0.340, a median near 0.2.
    cosines = [0.357, 0.340, *([0.195] * 48)]
    cut = floor.cosine_cut(cosines, RULE)
    assert cut.cut == pytest.approx(0.327) and "margin" in cut.rule
    story = Hit.chunk(7, 1.0)
    found = {7: floor.Evidence(keyword=0.0, cosine=0.340)}
    kept = floor.passing([story], found, 0.35, cut)
    assert [c.seq for c in kept] == [7]
    assert kept[0].notes["cosine_cut"] == pytest.approx(0.327)
    assert kept[0].signals["cosine"] == pytest.approx(0.34)
    assert floor.passing([story], found, 0.35, floor.cosine_cut(cosines, ABSOLUTE)) == []


def test_a_query_whose_best_is_weak_shows_nothing() -> None:
    # Standing out from a low background is not enough: the cut never goes below `low`.
    weak = [0.29, 0.28, *([0.1] * 48)]
    assert floor.cosine_cut(weak, RULE).cut == pytest.approx(0.3)
    hits = [Hit.chunk(i, 1.0) for i in (1, 2)]
    found = {1: floor.Evidence(0.0, 0.29), 2: floor.Evidence(0.1, 0.28)}
    assert floor.passing(hits, found, 0.35, floor.cosine_cut(weak, RULE)) == []


def test_a_flat_distribution_keeps_the_absolute_cut() -> None:
    # A query about nothing in the index: the best barely stands above the median.
    flat = [0.34, 0.33, 0.33, *([0.2] * 47)]  # best - median 0.14 < 0.15
    cut = floor.cosine_cut(flat, RULE)
    assert cut.cut == 0.35 and cut.rule == "absolute 0.35"
    assert floor.cosine_cut([], RULE).cut == 0.35
    # A best far above the absolute cut: best - margin is above it, the absolute cut holds.
    assert floor.cosine_cut([0.7, *([0.2] * 49)], RULE).cut == 0.35


def test_keyword_evidence_still_passes_below_any_cosine_cut() -> None:
    hit = Hit.chunk(3, 1.0)
    found = {3: floor.Evidence(keyword=0.6, cosine=0.05)}
    kept = floor.passing([hit], found, 0.35, floor.cosine_cut([0.9, 0.1, 0.1], RULE))
    assert [c.seq for c in kept] == [3] and kept[0].signals["keyword_share"] == 0.6
    profile = Hit.profile("jonas", 1.0)
    assert floor.passing([profile], {}, 0.35, floor.cosine_cut([], RULE)) == [profile]


ABSOLUTE = floor.CosineRule(absolute=0.35, low=0.35, margin=0.0, spread=0.0)
