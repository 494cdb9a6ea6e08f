"""Memex's search engine: pure Python, no Qt.

    from engine import search, reindex
    for hit in search("when did I last see Priya?"):
        print(hit.title, hit.snippet)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from engine.index.indexer import Reporter
from engine.index.runs import reindex as _reindex
from engine.records import Chunk, IndexStats, Person, SearchResult
from engine.search import SearchResponse, cached_searcher
from engine.settings import Settings, load_settings

__version__ = "0.1.0"


def search(query: str, limit: int | None = None, source_types: Sequence[str] | None = None, *,
           since: str | None = None, until: str | None = None,
           people: Sequence[str] | None = None, mode: str = "hybrid",
           settings: Settings | None = None) -> list[SearchResult]:
    """Hybrid search over the configured index; see `search_response` for warnings and timing."""
    return search_response(query, limit, source_types, since=since, until=until, people=people,
                           mode=mode, settings=settings).results


def search_response(query: str, limit: int | None = None,
                    source_types: Sequence[str] | None = None, *, since: str | None = None,
                    until: str | None = None, people: Sequence[str] | None = None,
                    mode: str = "hybrid", explain: bool = False,
                    settings: Settings | None = None) -> SearchResponse:
    settings = settings or _default_settings()
    return cached_searcher(settings).search(query, limit, source_types, since=since,
                                            until=until, people=people, mode=mode,
                                            explain=explain)


def reindex(paths: Iterable[str | Path] | None = None, *, settings: Settings | None = None,
            reporter: Reporter | None = None, full: bool = False) -> IndexStats:
    """Index what changed under the configured roots (or only `paths`)."""
    return _reindex(paths, settings=settings or _default_settings(), reporter=reporter, full=full)


_DEFAULT: list[Settings] = []


def _default_settings() -> Settings:
    if not _DEFAULT:
        _DEFAULT.append(load_settings())
    return _DEFAULT[0]


__all__ = ["Chunk", "IndexStats", "Person", "SearchResult", "SearchResponse", "Settings",
           "load_settings", "reindex", "search", "search_response"]
