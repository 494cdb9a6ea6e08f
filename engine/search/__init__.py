"""Hybrid search over the index.

Its names load on first use (PEP 562), so importing the package costs nothing: that lets
`engine/__init__.py` import it before it defines its `search` function (see there) without
slowing `import engine.settings`, which the warm `memex --search` client depends on.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'engine.search' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


__all__ = ["MODES", "NoIndexError", "SearchError", "SearchOptions", "SearchResponse", "Searcher"]
