"""The filters in the query line, and the way out of them.

A chip, a date range or a person that is on shows in the query line ("Signal · Last 7
days ✕"; a click turns them all off). When a search under a filter comes back empty or
near-empty and the query has keyword matches without it (the engine counts them:
`SearchOutcome.filters.without_filters`), a button offers that search.

The reset rule: the filters stay on while the query is edited; clearing the query, or
typing or pasting over all of it (it is selected whenever the window opens), turns them
off, so a new question starts unfiltered (docs/desktop.md).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton, QToolButton

from desktop.filters import FilterBar
from desktop.formatting import plural
from engine.search.outcome import NEAR_EMPTY, FilterOutcome


class FilterScope:
    """The query line's filter button and the result's "without the filters" offer."""

    def __init__(self, filters: FilterBar, clear: Callable[[], None]) -> None:
        self.filters = filters
        self.button = QToolButton(objectName="scope")
        self.button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.button.clicked.connect(clear)
        self.button.hide()
        self.widen = QPushButton(objectName="widen")
        self.widen.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.widen.clicked.connect(clear)
        self.widen.hide()

    def show_state(self) -> None:
        """The filters that are on, in the query line (hidden when none is)."""
        words = self.filters.describe()
        self.button.setVisible(bool(words))
        self.button.setText(f"{words}  ✕")
        self.button.setToolTip(f"Searching only: {words}. Click to search everything.")

    def show_outcome(self, outcome: FilterOutcome, direct: int, matches: int | None) -> None:
        """Offer the search without the filters when they left (almost) nothing: fewer than
        `NEAR_EMPTY` hits, or none holding the query's words (`matches`, the keyword
        matches under the filters), while the query has more without them."""
        unfiltered = outcome.without_filters or 0
        words = self.filters.describe()
        narrow = direct < NEAR_EMPTY or not matches
        offer = bool(words) and narrow and unfiltered > (matches or 0)
        self.widen.setVisible(offer)
        if offer:
            shown = plural(direct, "hit")
            held = "" if direct < NEAR_EMPTY else ", none with the query's words"
            total = plural(unfiltered, "keyword match", "keyword matches")
            self.widen.setText(f"{shown} under {words}{held}. Search without filters: {total}")
