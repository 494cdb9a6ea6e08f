"""What the window asks the task manager for, and what comes back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.search import NoIndexError, SearchResponse
from engine.store.db import NoIndexYet, NotMemexIndex


@dataclass(frozen=True)
class SearchRequest:
    """What the window asks for: the query and every filter pushed into the engine."""

    query: str
    source_types: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None
    people: tuple[str, ...] = ()
    limit: int = 30
    prefix: bool = True


@dataclass(frozen=True)
class CardCounts:
    """The keyword matches a person card's actions open (desktop/card_counts.py); None
    when that search has no keyword to count."""

    all_mentions: int | None = None
    only: int | None = None


@dataclass(frozen=True)
class SearchAnswer:
    """A search's results, the chip counts and the person the query names (for the card)."""

    request: SearchRequest
    response: SearchResponse | None
    counts: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    person: dict[str, Any] | None = None
    card_counts: CardCounts = field(default_factory=CardCounts)
    no_index: bool = False  # the search failed because there is no index yet

    @classmethod
    def failed(cls, request: SearchRequest, error: BaseException) -> SearchAnswer:
        """A search that raised: its sentence, and whether it is only that there is no index
        yet (told by the exception's class, never by its words)."""
        return cls(request, None, error=str(error), no_index=no_index_yet(error))


def no_index_yet(error: BaseException) -> bool:
    """No index at the configured path yet: no file, an empty one, or a database without
    Memex's tables; another program's file is a failure of its own, said in its words."""
    missing = isinstance(error, NoIndexError | NoIndexYet)
    return missing and not isinstance(error, NotMemexIndex)
