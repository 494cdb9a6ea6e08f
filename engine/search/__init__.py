"""Hybrid search over the index.

Its names load on first use (PEP 562), so importing the package costs nothing: that lets
`engine/__init__.py` import it before it defines its `search` function (see there) without
slowing `import engine.settings`, which the warm `memex --search` client depends on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.lazy import lazy_names

if TYPE_CHECKING:
    from engine.search.pipeline import Searcher
    from engine.search.present.response import (
        MODES,
        NoIndexError,
        SearchError,
        SearchOptions,
        SearchResponse,
    )

_LAZY = {
    "Searcher": "engine.search.pipeline",
    "MODES": "engine.search.present.response",
    "NoIndexError": "engine.search.present.response",
    "SearchError": "engine.search.present.response",
    "SearchOptions": "engine.search.present.response",
    "SearchResponse": "engine.search.present.response",
}


__getattr__ = lazy_names(__name__, globals(), _LAZY)


__all__ = ["MODES", "NoIndexError", "SearchError", "SearchOptions", "SearchResponse", "Searcher"]
