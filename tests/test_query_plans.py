"""The keyword query must let FTS5 order its own matches (no temp B-tree sort of every match).

`ORDER BY bm25(…)` returned the same lists but made SQLite join and sort every matching row
(200 ms against 41 ms at 100k chunks, docs/benchmarks.md). A plan is a fact that does not
depend on timing, so it is what the test pins.
"""

from __future__ import annotations

from engine.search import Searcher, fts
from engine.search.filters import Filters, chunk_filter_sql
from engine.settings import Settings
from engine.store import db


def plan(conn: object, sql: str, params: tuple[object, ...]) -> str:
    rows = conn.execute("EXPLAIN QUERY PLAN " + sql, params).fetchall()  # type: ignore[attr-defined]
    return "\n".join(str(r[3]) for r in rows)


def test_bm25_sql_uses_the_fts5_order_with_and_without_filters(demo_index: Settings) -> None:
    conn = db.connect(demo_index.db_path, create=False)
    for filters in (Filters((), None, None, ()), Filters(("slack",), "2026-01-01", None, ())):
        where, params = chunk_filter_sql(filters)
        text = plan(conn, fts.bm25_sql(where), ("coffee", *params, 10))
        assert "TEMP B-TREE" not in text, text
        assert "chunks_fts" in text
    # The slow form, for contrast: the check above can fail.
    slow = ("SELECT c.seq, bm25(chunks_fts, 1.0, 2.0) AS score FROM chunks_fts "
            "JOIN chunks c ON c.seq = chunks_fts.rowid WHERE chunks_fts MATCH ? "
            "ORDER BY score LIMIT ?")
    assert "TEMP B-TREE" in plan(conn, slow, ("coffee", 10))
    conn.close()


def test_bm25_order_is_the_weighted_bm25_order(demo_index: Settings) -> None:
    """The rank column carries the title weight: same list as ordering by bm25(1, 2)."""
    searcher = Searcher(demo_index)
    slow = ("SELECT c.seq FROM chunks_fts JOIN chunks c ON c.seq = chunks_fts.rowid "
            "WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts, 1.0, 2.0), c.seq LIMIT ?")
    for query in ("coffee machine broken", "standup time", "Lofoten ferry bikes", "invoice"):
        terms = fts.query_terms(query)
        fast = searcher.bm25(terms, 30, Filters((), None, None, ()))
        expected = [r[0] for r in searcher.conn.execute(
            slow, (fts.match_expression(terms), 30)).fetchall()]
        assert fast and set(fast) == set(expected)
        assert fast[:5] == expected[:5]
    searcher.close()
