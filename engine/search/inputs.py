"""What a search accepts: any text made safe, and the limit, dates and filters checked first.

A query, a person's name or a source type may hold whatever a terminal or a program sends
(lone surrogates from undecodable bytes, NUL characters); a limit or a date whatever a user
types. Each is made safe here, or refused with one sentence (`SearchError`), before SQLite,
the model or the date library sees it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from engine.search.response import SearchError
from engine.text import clean_text

MAX_LIMIT = 100_000  # results per search: past any screen, far below what SQLite can bind
MAX_QUERY_CHARS = 2000  # the rest of a longer query is dropped before embedding
MAX_PEOPLE = 50  # distinct names per search (each is two conditions on every chunk)
MAX_SOURCE_TYPES = 100  # distinct source types per search (about 25 exist)


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
) -> SearchInputs:
    """The arguments of `Searcher.search`, safe for SQL, JSON and printing; SearchError
    (one sentence) for a limit, a date or a number of filters it cannot honour."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise SearchError(f"limit must be a whole number from 1 to {MAX_LIMIT}, got {limit!r}")
    return SearchInputs(
        query=clean_text(str(query)).replace("\x00", " ")[:MAX_QUERY_CHARS],
        limit=limit,
        source_types=_distinct(source_types, MAX_SOURCE_TYPES, "source types", fold=False),
        since=iso_date(since, "since"),
        until=iso_date(until, "until"),
        people=_distinct(people, MAX_PEOPLE, "people", fold=True),
    )


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


def iso_date(value: str | None, what: str) -> str | None:
    """An ISO date (yyyy-mm-dd) from a date or datetime text; SearchError otherwise."""
    if not value:
        return None
    text = clean_text(str(value)).strip()
    try:
        return datetime.fromisoformat(text).date().isoformat()
    except ValueError:
        raise SearchError(f"--{what} must be a date like 2026-05-31, got '{text}'") from None
