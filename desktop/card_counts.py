"""The counts on a person card's actions, counted as the searches they open count.

"Only <name>" keeps the query, the chips and the dates and turns the person filter on;
"All mentions" opens every chunk that names the person: their name as the query, the
person filter on, no chip, any time. Each action's number is the keyword matches of the
request its click makes, counted by `keyword_counts` — the one function the window's
chips and status line read for every search — so a click shows that same number in the
footer ("… · 244 keyword matches") and across the chips. Hits found by meaning are shown
beside them, under the same person filter, so they name the person too.
"""

from __future__ import annotations

from dataclasses import replace

from desktop.formatting import keyword_matches
from desktop.requests import CardCounts, SearchRequest
from engine.search import Searcher
from engine.search.present import facets


def keyword_counts(searcher: Searcher, request: SearchRequest, stop_words: bool) -> dict[str, int]:
    """The request's keyword matches per source type (the chips' counts): the same date
    and person filters as its search, the source-type filter left out."""
    return facets.type_counts(
        searcher.conn,
        request.query,
        matcher=searcher.matcher,
        since=request.since,
        until=request.until,
        people=request.people,
        prefix=request.prefix,
        stop_words=stop_words,
    )


def only_person_request(request: SearchRequest, name: str) -> SearchRequest:
    """What "Only <name>" searches: this request, with the person filter on."""
    return replace(request, people=(name,))


def all_mentions_request(name: str, limit: int) -> SearchRequest:
    """What "All mentions" searches: the name, the person filter on, no chip, any time."""
    return SearchRequest(name, (), None, None, (name,), limit, prefix=True)


def card_counts(
    searcher: Searcher, request: SearchRequest, name: str, stop_words: bool
) -> CardCounts:
    """The keyword matches each action's search will count (None: a query of no keywords)."""
    only = only_person_request(request, name)
    everything = all_mentions_request(name, request.limit)
    only_counts = keyword_counts(searcher, only, stop_words)
    all_counts = keyword_counts(searcher, everything, stop_words)
    return CardCounts(
        all_mentions=keyword_matches(all_counts, everything.source_types),
        only=keyword_matches(only_counts, only.source_types),
    )
