"""What happened in a search, as fields: `SearchOutcome`.

A front end decides what to show from these fields (the window's "Keyword results only"
banner, the empty result's "search without the filter" offer, the CLI's lines, `--json`
and MCP's `outcome` object); the response's warnings are sentences for people and are
never parsed. Each field is written by the stage that knows it (engine/search/context.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


@dataclass(frozen=True)
class StageTiming:
    """One stage of one search: its name, its time and how many hits it kept."""

    name: str
    ms: float
    kept: int


class VectorMiss(StrEnum):
    """Why the vector side of a search did not run, or found nothing."""

    KEYWORD_CHOSEN = "keyword_chosen"  # the caller asked for bm25
    EMPTY_QUERY = "empty_query"  # nothing to embed
    EMBEDDER_UNAVAILABLE = "embedder_unavailable"  # no model, no key, cannot load
    EMBEDDER_FAILED = "embedder_failed"  # the model or server failed on this query
    EMBEDDER_RESTING = "embedder_resting"  # it failed moments ago; not asked again yet
    OTHER_MODEL = "other_model"  # the index was embedded by another model
    DIMENSIONS_DIFFER = "dimensions_differ"  # the query's vector does not fit the index
    NO_VECTORS = "no_vectors"  # the index holds no vector yet (indexing is keyword first)


# Fewer direct hits than this under a filter: the outcome counts the matches without it.
NEAR_EMPTY = 3

# Why a query has no vector, and the sentence that tells the user.
Missed = tuple[VectorMiss, str]

# The misses after which the search fell back to keywords although vectors were asked for.
FALLBACKS = frozenset(VectorMiss) - {VectorMiss.KEYWORD_CHOSEN, VectorMiss.EMPTY_QUERY}


class RerankMiss(StrEnum):
    """Why the head of the results was not re-ranked."""

    OFF = "off"  # rerank.backend = off
    EMPTY_QUERY = "empty_query"
    NOTHING_TO_SEND = "nothing_to_send"  # no chunk in the head (only profiles, or no hits)
    FAILED = "failed"  # the backend failed on this query
    RESTING = "resting"  # it failed moments ago; not asked again yet


@dataclass(frozen=True)
class Coverage:
    """How much of the index the vector side could see: chunks with a vector, of all."""

    embedded: int
    total: int

    @property
    def complete(self) -> bool:
        return self.embedded >= self.total


@dataclass(frozen=True)
class FilterOutcome:
    """The filters a search applied, which of their names the index does not know, and how
    many keyword matches the query has without any filter (counted only when a filter is on
    and the page came out near-empty or without a keyword match, so a front end can offer
    the search without it)."""

    source_types: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None
    people: tuple[str, ...] = ()
    from_query: bool = False  # the date range came from the query's own words
    unknown_types: tuple[str, ...] = ()
    unknown_people: tuple[str, ...] = ()
    without_filters: int | None = None

    @property
    def on(self) -> bool:
        """Whether the caller narrowed the search (the query's own dates do not count)."""
        dated = (self.since or self.until) and not self.from_query
        return bool(self.source_types or self.people or dated)


@dataclass(frozen=True)
class SearchOutcome:
    """What happened: the mode asked for, why the vector side did not run (None: it ran),
    its coverage of the index, whether the head was re-ranked or why not, and the filters."""

    mode_asked: str = "hybrid"
    vector_miss: VectorMiss | None = None
    coverage: Coverage | None = None
    reranked: bool = False
    rerank_miss: RerankMiss | None = RerankMiss.OFF
    filters: FilterOutcome = field(default_factory=FilterOutcome)

    @property
    def fell_back(self) -> bool:
        """Vectors were asked for but the results are by keywords alone."""
        return self.vector_miss in FALLBACKS

    def as_json(self) -> dict[str, Any]:
        f = self.filters
        return {
            "mode_asked": self.mode_asked,
            "fell_back": self.fell_back,
            "vector_miss": self.vector_miss,
            "coverage": None
            if self.coverage is None
            else {"embedded": self.coverage.embedded, "total": self.coverage.total},
            "reranked": self.reranked,
            "rerank_miss": self.rerank_miss,
            "filters": {
                "source_types": list(f.source_types),
                "since": f.since,
                "until": f.until,
                "people": list(f.people),
                "from_query": f.from_query,
                "unknown_types": list(f.unknown_types),
                "unknown_people": list(f.unknown_people),
                "without_filters": f.without_filters,
            },
        }
