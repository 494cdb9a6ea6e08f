"""The `chunks_fts` table: FTS5 external content over chunks (rowid = chunks.seq)."""

from __future__ import annotations

from engine.store.sql.base import placeholders

_MATCH_JOIN = "FROM chunks_fts JOIN chunks c ON c.seq = chunks_fts.rowid"
# The auxiliary function every connection registers (engine/store/db.py `terms_held`): the
# query phrases a matching row holds, as a bitmask.
HELD_FUNCTION = "memex_held"
# The weighted frequency of phrase 0 in the current row (engine/store/db.py
# `phrase_frequency`): Σ over the columns of the column's weight × the phrase's hits in it.
FREQUENCY_FUNCTION = "memex_frequency"
# BM25's column weights: content, title (a title names what a chunk is about).
COLUMN_WEIGHTS = (1.0, 2.0)
_BM25 = f"bm25({', '.join(str(w) for w in COLUMN_WEIGHTS)})"
# fts5vocab tables over chunks_fts, made in the temp schema of the connection that reads
# the index into memory (engine/search/retrieve/postings.py).
VOCAB_ROWS = "memex_vocab_rows"
VOCAB_INSTANCES = "memex_vocab_instances"


def bm25_sql(filter_sql: str) -> str:
    """Top-k BM25 over chunks_fts joined to chunks, with the filters pushed into the query.

    Bound: the MATCH expression, the filters' parameters, k.

    Title hits weigh double: a title names what a chunk is about. The weights go through
    FTS5's `rank` column (`rank MATCH 'bm25(…)'`) and the order is `ORDER BY rank`, so FTS5
    sorts its own matches and SQLite reads them in order, joining `chunks` only until the
    limit is met. `ORDER BY bm25(…)` returns the same list but makes SQLite join and sort
    every match, several times slower at 100k chunks (figures: docs/benchmarks.md).

    The third column is the terms each hit holds (`HELD_FUNCTION`), computed for the
    returned rows only: the coordination list's evidence at no extra query.
    """
    return (
        f"SELECT c.seq, chunks_fts.rank AS score, {HELD_FUNCTION}(chunks_fts) {_MATCH_JOIN} "
        f"WHERE chunks_fts MATCH ? AND chunks_fts.rank MATCH '{_BM25}'{filter_sql} "
        "ORDER BY chunks_fts.rank LIMIT ?"
    )


def highlight_sql(count: int) -> str:
    """Content with matches marked by char(2)/char(3), for `count` rowids: FTS5's own
    marks, which engine/search/present/highlight.py reproduces without a query (tests/
    test_highlight.py compares the two).

    Bound: the MATCH expression, the rowids.
    """
    return (
        "SELECT rowid, highlight(chunks_fts, 0, char(2), char(3)) FROM chunks_fts "
        f"WHERE chunks_fts MATCH ? AND rowid IN ({placeholders(count)})"
    )


def held_by_rowid_sql() -> str:
    """The terms one row holds (bound: the MATCH expression, the rowid); no row when it
    holds none. One query per row: used only for the few hits the BM25 query did not
    return (its third column has the rest)."""
    return (
        f"SELECT {HELD_FUNCTION}(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid = ?"
    )


def capped_frequency_sql() -> str:
    """How many documents match, counted up to a cap (bound: the MATCH expression, the cap):
    a common term costs no more than a rare one."""
    return "SELECT count(*) FROM (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)"


def type_counts_sql(filter_sql: str) -> str:
    """Matching chunks per source type (bound: the MATCH expression, the filters' parameters)."""
    return (
        f"SELECT c.source_type, count(*) {_MATCH_JOIN} "
        f"WHERE chunks_fts MATCH ?{filter_sql} GROUP BY c.source_type"
    )


def count_sql() -> str:
    """How many rows the FTS index holds (one docsize row per document)."""
    return "SELECT count(*) FROM chunks_fts_docsize"


def integrity_check_sql() -> str:
    """The rank=1 integrity-check, which also compares the index with its content table."""
    return "INSERT INTO chunks_fts(chunks_fts, rank) VALUES('integrity-check', 1)"


def rebuild_sql() -> str:
    """Rebuild the whole FTS index from chunks."""
    return "INSERT INTO chunks_fts(chunks_fts) VALUES('rebuild')"


def phrase_postings_sql() -> str:
    """Every row holding one phrase, with its weighted frequency (bound: the MATCH
    expression, a single quoted phrase): how the in-memory index scores a phrase of
    several words, which it holds no positions for."""
    return (
        f"SELECT rowid, {FREQUENCY_FUNCTION}(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?"
    )


def create_vocab_sql() -> list[str]:
    """The fts5vocab tables over chunks_fts, in the connection's temp schema: one row per
    term (documents, instances), and one per term instance (term, doc, col, offset)."""
    return [
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{VOCAB_ROWS} "
        "USING fts5vocab(main, chunks_fts, 'row')",
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{VOCAB_INSTANCES} "
        "USING fts5vocab(main, chunks_fts, 'instance')",
    ]


def vocab_terms_sql() -> str:
    """Each term of the index and its instance count, in the index's (binary) order."""
    return f"SELECT term, cnt FROM temp.{VOCAB_ROWS}"


def vocab_instances_sql() -> str:
    """The instances of the terms from one to another (bound: the first and last term,
    inclusive) as one string of numbers, doc × 2 + (1 in the title), in index order (term,
    doc, column, offset): millions of instances in one string per batch of terms, where a
    row each would cost Python a tuple each."""
    return (
        "SELECT group_concat(doc * 2 + (col = 'title'), ' ') "
        f"FROM temp.{VOCAB_INSTANCES} WHERE term >= ? AND term <= ?"
    )
