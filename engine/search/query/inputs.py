"""What a search accepts: any text made safe, and the limit, dates and filters checked first.

A query, a person's name or a source type may hold whatever a terminal or a program sends
(lone surrogates from undecodable bytes, NUL characters); a limit or a date whatever a user
types. Each is made safe here, or refused with one sentence (`SearchError`), before SQLite,
the model or the date library sees it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from engine.search.errors import SearchError
from engine.search.query import dates
from engine.text import clean_text

MAX_LIMIT = 100_000  # results per search: past any screen, far below what SQLite can bind
MAX_QUERY_CHARS = 2000  # the rest of a longer query is dropped before embedding
MAX_PEOPLE = 50  # distinct names per search (each is two conditions on every chunk)
MAX_SOURCE_TYPES = 100  # distinct source types per search (about 25 exist)
MAX_DATE_CHARS = 100  # a date phrase longer than this is not a date
# yyyy-mm-dd that fromisoformat refused (2026-13-45): wrong, not a phrase for dateparser,
# which would read it another way round (2026-13-01 as 13 January)
ISO_LIKE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}")


@dataclass(frozen=True)
class SearchInputs:
    """A search's arguments, made safe and checked."""

    query: str
    limit: int
    source_types: tuple[str, ...]
    since: str | None  # ISO date
    until: str | None  # ISO date, inclusive
    people: tuple[str, ...]


def search_inputs(
    query: str,
    limit: int,
    source_types: Sequence[str] | None,
    since: str | None,
    until: str | None,
    people: Sequence[str] | None,
    now: datetime,
) -> SearchInputs:
    """The arguments of `Searcher.search`, safe for SQL, JSON and printing; SearchError
    (one sentence) for a limit, a date or a number of filters it cannot honour. `now`: the
    clock that relative dates ("yesterday", "last week") count from."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise SearchError(f"limit must be a whole number from 1 to {MAX_LIMIT}, got {limit!r}")
    return SearchInputs(
        query=safe_query(query),
        limit=limit,
        source_types=_distinct(source_types, MAX_SOURCE_TYPES, "source types", fold=False),
        since=date_bound(since, "since", now),
        until=date_bound(until, "until", now),
        people=_distinct(people, MAX_PEOPLE, "people", fold=True),
    )


def safe_query(query: str) -> str:
    """The query as a search reads it: clean text, no NUL, at most MAX_QUERY_CHARS."""
    return clean_text(str(query)).replace("\x00", " ")[:MAX_QUERY_CHARS]


def _distinct(values: Iterable[str] | None, most: int, what: str, *, fold: bool) -> tuple[str, ...]:
    """Clean values without repeats (`fold`: ignoring case, the first spelling kept; names
    match case-insensitively, source types exactly); SearchError past `most`."""
    seen: dict[str, str] = {}
    for value in values or ():
        text = clean_text(str(value)).replace("\x00", " ").strip()
        if text:
            seen.setdefault(text.casefold() if fold else text, text)
    if len(seen) > most:
        raise SearchError(f"a search takes at most {most} {what}, got {len(seen)}")
    return tuple(seen.values())


def date_bound(value: str | None, what: str, now: datetime) -> str | None:
    """The ISO day (yyyy-mm-dd) a `since` or `until` text names: an ISO date or datetime, a
    month (2026-06) or year (2026), or a phrase ("yesterday", "last week", "March 2026"),
    which names a range: `since` is its first day, `until` its last. SearchError otherwise."""
    if not value:
        return None
    text = clean_text(str(value)).replace("\x00", " ").strip()
    try:
        return datetime.fromisoformat(text).date().isoformat()
    except ValueError:
        pass
    days = None if ISO_LIKE.match(text) else dates.parse_range(text[:MAX_DATE_CHARS], now)
    if days is None:
        raise SearchError(
            f"--{what} must be a date like 2026-05-31, 2026-05, 2026 or 'last week', "
            f"got '{text[:MAX_DATE_CHARS]}'"
        )
    return (days[0] if what == "since" else days[1]).isoformat()
