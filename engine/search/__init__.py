"""Hybrid search over the index."""

from engine.search.pipeline import Searcher
from engine.search.response import (
    MODES,
    NoIndexError,
    SearchError,
    SearchOptions,
    SearchResponse,
)

__all__ = ["MODES", "NoIndexError", "SearchError", "SearchOptions", "Searcher", "SearchResponse"]
