"""Hybrid search over the index."""

from engine.search.pipeline import (
    MODES,
    NoIndexError,
    Searcher,
    SearchError,
    SearchOptions,
    SearchResponse,
)

__all__ = ["MODES", "NoIndexError", "SearchError", "SearchOptions", "Searcher", "SearchResponse"]
