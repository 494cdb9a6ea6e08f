"""The relevance floor: hits with neither keyword nor semantic evidence are not shown."""

from __future__ import annotations

import json
from collections.abc import Callable

from engine.index.runs import reindex
from engine.search import Searcher
from engine.search.coordination import by_share, keyword_shares
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
        assert notes["keyword_share"] >= cfg.floor_keyword or notes["cosine"] >= cfg.floor_cosine


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
    # The coordination list: the chunk holding both terms first, the rest in their order.
    ranked = by_share(seqs, shares)
    assert ranked[0] == seqs[-1] and ranked[1:] == seqs[:-1]
    conn.close()
