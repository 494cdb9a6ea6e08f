"""Hybrid search over the index."""

from engine.search.pipeline import MODES, NoIndexError, Searcher, SearchError, SearchResponse

__all__ = ["MODES", "NoIndexError", "SearchError", "Searcher", "SearchResponse"]
