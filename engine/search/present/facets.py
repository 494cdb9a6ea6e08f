"""Facet counts: how many chunks of each source type match a query's keywords.

Front ends show them on the source-type chips. One GROUP BY over the FTS5 match, with the
same date and people filters as the search, so the counts follow the other filters; the
source-type filter itself is left out (a chip shows what selecting it would give).
"""

from __future__ import annotations

from collections.abc import Sequence

import apsw

from engine.people import PeopleMatcher
from engine.records import Person
from engine.search.query import forms, fts
from engine.search.query.filters import Filters, chunk_filter_sql
from engine.store.sql.fts import type_counts_sql


def type_counts(
    conn: apsw.Connection,
    query: str,
    *,
    matcher: PeopleMatcher | None = None,
    since: str | None = None,
    until: str | None = None,
    people: Sequence[str] = (),
    prefix: bool = False,
    stop_words: bool = True,
) -> dict[str, int]:
    """Matching chunks per source type, most first; {} for a query with no keywords."""
    terms = forms.keyword_terms(conn, query, stop_words)
    expression = fts.match_expression(terms, prefix_last=prefix)
    if expression is None:
        return {}
    persons = tuple(_person(name, matcher) for name in people)
    where, params = chunk_filter_sql(Filters((), since, until, persons), people_index=True)
    try:
        rows = conn.execute(type_counts_sql(where), (expression, *params)).fetchall()
    except apsw.Error:
        return {}
    return dict(sorted(((str(t), int(n)) for t, n in rows), key=lambda tn: (-tn[1], tn[0])))


def _person(name: str, matcher: PeopleMatcher | None) -> Person:
    found = matcher.by_name(name) if matcher else None
    return found or Person(name=name, slug=name.lower())
