"""Hybrid search over the index."""

from engine.search.pipeline import (
    MODES,
    NoIndexError,
    Searcher,
    SearchError,
    SearchResponse,
    cached_searcher,
)

__all__ = ["MODES", "NoIndexError", "SearchError", "Searcher", "SearchResponse", "cached_searcher"]
