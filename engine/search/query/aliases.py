"""Name-alias expansion: a query naming a known person also matches, on the keyword side,
that person's other names and aliases from the people directory."""

from __future__ import annotations

from engine.people.matcher import PeopleMatcher
from engine.search.query.fts import query_terms


def alias_terms(query: str, matcher: PeopleMatcher) -> list[str]:
    """The keyword terms of the other names of the person the query names (a name of
    several words as one phrase term); empty when it names nobody."""
    person = matcher.find(query)
    if person is None:
        return []
    out = []
    for name in person.names:
        words = query_terms(name.replace(" ", "_"), drop_stop_words=False)
        out += words[:1]
    return out


def expanded_terms(terms: list[str], query: str, matcher: PeopleMatcher) -> list[str]:
    """`terms` and, OR-ed after them, the aliases of the person the query names."""
    return list(dict.fromkeys([*terms, *alias_terms(query, matcher)]))
