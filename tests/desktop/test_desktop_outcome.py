"""The window reads the search's outcome, never its warnings' text (engine/search/outcome.py)."""

from __future__ import annotations

from typing import Any

from desktop_helpers import type_query

from desktop.controller import MemexApp
from desktop.requests import SearchAnswer
from engine.search import Searcher


def test_keywords_chosen_with_a_suggestion_is_not_called_a_fallback(
    qtbot: Any, memex: MemexApp, searcher: Searcher
) -> None:
    """A filter suggestion on a keyword search is shown as it is, without "Keyword results
    only", which only a fallback of the vector side earns."""
    memex.tasks.search_fn = lambda r: SearchAnswer(
        r, searcher.search(r.query, r.limit, ["slak"], mode="bm25", prefix=r.prefix), {}
    )
    type_query(qtbot, memex, "standup")
    window = memex.window
    assert window.last_answer is not None and window.last_answer.response is not None
    assert window.last_answer.response.mode == "bm25" and window.last_answer.response.warnings
    assert window.banner.isVisible() and "did you mean 'slack'" in window.banner.text()
    assert "Keyword results only" not in window.banner.text()
