"""Keyword side: turning any user text into a safe FTS5 query, and the BM25 SQL."""

from __future__ import annotations

import re

STOP_WORDS = frozenset(["a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves", "did", "does", "what's", "whats", "aren", "couldn", "didn", "doesn", "don", "hadn", "hasn", "haven", "isn", "shouldn", "wasn", "weren", "wouldn"])

_TOKEN = re.compile(r"\w+", re.UNICODE)
# Characters that separate words in prose but never join the parts of an identifier.
_SEPARATORS = re.compile(r"[/\\,;!?()\[\]{}\"“”]+")
# An English possessive or contraction: "caroline's", "hadn't", "we’ll" -> the word before it.
_CLITIC = re.compile(r"^(\w+)['’](?:s|t|re|ve|ll|d|m)$", re.UNICODE)


def query_terms(query: str, drop_stop_words: bool = True) -> list[str]:
    """The terms of a query, lower-cased, stop words dropped (first three words if none left).

    A whitespace-separated token made of several word parts joined by punctuation
    (`E_SCHED_TIMEOUT`, `INV-2026-0417`, `10:30`) stays one term, a phrase of its parts, so
    an identifier matches as a whole instead of as its most common fragment. Prose
    punctuation (`artists/bands`, `(budget)`) splits words instead, and a possessive or
    contraction (`Caroline's`, `hadn't`) is the word before the apostrophe, not a phrase
    with a stray `s` or `t`.
    """
    terms: list[str] = []
    raw_words: list[str] = []
    for token in _SEPARATORS.sub(" ", query.lower()).split():
        token = token.strip(".:'’-")
        clitic = _CLITIC.match(token)
        if clitic:
            token = clitic.group(1)
        parts = _TOKEN.findall(token.replace("_", " "))
        raw_words += parts
        if len(parts) > 1:
            terms.append(" ".join(p[:64] for p in parts[:8]))
        elif parts and not (drop_stop_words and parts[0] in STOP_WORDS):
            terms.append(parts[0][:64])
    if not terms:
        terms = raw_words[:3]
    return list(dict.fromkeys(terms))[:32]


def quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def match_expression(terms: list[str], prefix_last: bool = False,
                     require_all: bool = False) -> str | None:
    """An FTS5 MATCH string that can never be a syntax error: every term quoted, OR-ed
    (or AND-ed with `require_all`)."""
    if not terms:
        return None
    quoted = [quote(t) for t in terms]
    if prefix_last and len(terms[-1]) >= 2:
        quoted[-1] = quoted[-1] + "*"
    return (" AND " if require_all else " OR ").join(quoted)


def bm25_sql(filter_sql: str) -> str:
    """Top-k BM25 over chunks_fts joined to chunks, with the filters pushed into the query.

    Title hits weigh double: a title names what a chunk is about. The weights go through
    FTS5's `rank` column (`rank MATCH 'bm25(…)'`) and the order is `ORDER BY rank`, so FTS5
    sorts its own matches and SQLite reads them in order, joining `chunks` only until the
    limit is met. `ORDER BY bm25(…)` returns the same list but makes SQLite join and sort
    every match: 200 ms against 41 ms p50 at 100k chunks (docs/benchmarks.md).
    """
    return (
        "SELECT c.seq, chunks_fts.rank AS score FROM chunks_fts "
        "JOIN chunks c ON c.seq = chunks_fts.rowid "
        f"WHERE chunks_fts MATCH ? AND chunks_fts.rank MATCH 'bm25(1.0, 2.0)'{filter_sql} "
        "ORDER BY chunks_fts.rank LIMIT ?"
    )


def highlight_sql(count: int) -> str:
    marks = ",".join("?" * count)
    return ("SELECT rowid, highlight(chunks_fts, 0, char(2), char(3)) FROM chunks_fts "
            f"WHERE chunks_fts MATCH ? AND rowid IN ({marks})")
