"""Memex's search engine: pure Python, no Qt.

    from engine import search, reindex
    for hit in search("when did I last see Priya?"):
        print(hit.title, hit.snippet)

`search` and `reindex` go through one default `Engine` for the default Settings (config
file, then environment), or for the `settings=` given; passing other settings replaces it
(the old one is closed). Long-lived programs make their own `Engine` and close it.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Unpack

from engine.lazy import lazy_names

if TYPE_CHECKING:
    from engine.core import Engine
    from engine.index.indexer import Reporter
    from engine.records import Chunk, IndexStats, Person, SearchResult
    from engine.search import SearchOptions, SearchResponse
    from engine.settings import Settings, load_settings

# The subpackage `engine.search` first, so that the function `search` below is what the name
# `engine.search` holds: the import system sets a package's attribute to a subpackage once,
# when the subpackage first loads, and never again (later `import engine.search.pipeline`
# sets attributes on `engine.search` itself). The subpackage is light (numpy and the model
# load with its `Searcher`), and is still reached as `from engine.search import Searcher`.
importlib.import_module("engine.search")

__version__ = "0.1.0"

# Imported on first use (PEP 562), so that `import engine.settings` stays light: the warm
# `memex --search` client (engine/warm/) must reach its socket without numpy or the model.
_LAZY = {
    "Engine": "engine.core",
    "Reporter": "engine.index.indexer",
    "Chunk": "engine.records",
    "IndexStats": "engine.records",
    "Person": "engine.records",
    "SearchResult": "engine.records",
    "SearchOptions": "engine.search",
    "SearchResponse": "engine.search",
    "Settings": "engine.settings",
    "load_settings": "engine.settings",
}


__getattr__ = lazy_names(__name__, globals(), _LAZY)


class _DefaultEngine:
    """The one engine behind the module functions, made on first use."""

    def __init__(self) -> None:
        self._engine: Engine | None = None
        self._defaults: Settings | None = None  # loaded once, like the engine
        self._lock = threading.Lock()

    def get(self, settings: Settings | None) -> Engine:
        from engine.core import Engine
        from engine.settings import load_settings

        with self._lock:
            if settings is None:
                self._defaults = settings = self._defaults or load_settings()
            current = self._engine
            if current is not None and settings == current.settings:
                return current
            self._engine = Engine(settings)
        if current is not None:
            current.close()
        return self._engine

    def close(self) -> None:
        with self._lock:
            current, self._engine = self._engine, None
        if current is not None:
            current.close()


_default = _DefaultEngine()


def search(
    query: str,
    limit: int | None = None,
    source_types: Sequence[str] | None = None,
    *,
    settings: Settings | None = None,
    **options: Unpack[SearchOptions],
) -> list[SearchResult]:
    """Hybrid search over the configured index; see `search_response` for warnings and timing.
    `options`: since, until (a day, month, year or phrase: "2026-05", "last week"), people,
    mode (hybrid | vector | bm25), explain, prefix."""
    return search_response(query, limit, source_types, settings=settings, **options).results


def search_response(
    query: str,
    limit: int | None = None,
    source_types: Sequence[str] | None = None,
    *,
    settings: Settings | None = None,
    **options: Unpack[SearchOptions],
) -> SearchResponse:
    """The results with the mode used, warnings and timing."""
    return _default.get(settings).search(query, limit, source_types, **options)


def reindex(
    paths: Iterable[str | Path] | None = None,
    *,
    settings: Settings | None = None,
    reporter: Reporter | None = None,
    full: bool = False,
) -> IndexStats:
    """Index what changed under the configured roots (or only `paths`)."""
    return _default.get(settings).reindex(paths, reporter=reporter, full=full)


def close() -> None:
    """Close the default engine (its connections, vector cache and models)."""
    _default.close()


__all__ = [
    "Chunk",
    "Engine",
    "IndexStats",
    "Person",
    "SearchResult",
    "SearchResponse",
    "Settings",
    "close",
    "load_settings",
    "reindex",
    "search",
    "search_response",
]
