"""Keyword side: turning any user text into a safe FTS5 query.

The BM25 and highlight SQL live with the other chunks_fts statements in
engine/store/sql/fts.py; they are re-exported here for callers of `fts.bm25_sql`.
"""

from __future__ import annotations

import re

from engine.store.sql.fts import bm25_sql as bm25_sql
from engine.store.sql.fts import highlight_sql as highlight_sql

STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "did",
        "does",
        "what's",
        "whats",
        "aren",
        "couldn",
        "didn",
        "doesn",
        "don",
        "hadn",
        "hasn",
        "haven",
        "isn",
        "shouldn",
        "wasn",
        "weren",
        "wouldn",
    ]
)

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


def match_expression(
    terms: list[str], prefix_last: bool = False, require_all: bool = False
) -> str | None:
    """An FTS5 MATCH string that can never be a syntax error: every term quoted, OR-ed
    (or AND-ed with `require_all`)."""
    if not terms:
        return None
    quoted = [quote(t) for t in terms]
    if prefix_last and len(terms[-1]) >= 2:
        quoted[-1] = quoted[-1] + "*"
    return (" AND " if require_all else " OR ").join(quoted)
